"""Shutting down with replicas: wait (up to `shutdown-timeout`) until they have it all.

As Redis's prepareForShutdown/isReadyToShutdown/finishShutdown: when some
replica has not acknowledged the whole stream, a shutdown (SIGTERM, SIGINT,
SHUTDOWN without NOW) pauses writes (their clients wait), asks every replica
for its offset (REPLCONF GETACK), and goes on once they all report the
master's offset or the timeout passes, logging the replicas that lag. Reads
and new connections are served meanwhile; SHUTDOWN ABORT cancels it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rillet.replication.master import STATE_NAMES

if TYPE_CHECKING:
    from rillet.replication.core import Replication

log = logging.getLogger("rillet")


class ShutdownWait:
    def __init__(self, replication: Replication) -> None:
        self.repl = replication
        self._finish: Callable[[], None] | None = None
        self._deadline = 0.0
        self._decided = False  # the replicas are in sync (or timed out): finishing soon

    @property
    def waiting(self) -> bool:
        return self._finish is not None

    def start(self, finish: Callable[[], None]) -> bool:
        """Wait before `finish` (the shutdown itself) if a replica lags; False: go on now."""
        if self._finish is not None:
            return True  # (already waiting: one shutdown at a time, as Redis)
        timeout = int(self.repl.config["shutdown-timeout"])
        if timeout == 0 or self._ready():
            self._log_replicas()
            return False
        self._finish = finish
        self._deadline = time.monotonic() + timeout
        self.repl.update_guard()  # (writes pause: see Replication.command_guard)
        self.repl.master_side.request_ack()
        log.info("Waiting for replicas before shutting down.")
        return True

    def _ready(self) -> bool:
        offset = self.repl.master_repl_offset
        return all(entry.ack_offset == offset for entry in self.repl.master_side.online())

    def check(self) -> None:
        """Every cron tick while waiting: shut down once every replica has caught up,
        or the timeout has passed."""
        if self._finish is None or self._decided:
            return
        if not self._ready() and time.monotonic() < self._deadline:
            return
        loop = self.repl.server.loop
        if loop is None:
            self._finish_now()
        else:
            # Not inside the cron's hooks, which go on after this; writes stay paused
            # (`waiting`) until the shutdown runs, so none lands after the verdict.
            self._decided = True
            loop.call_soon(self._finish_now)

    def _finish_now(self) -> None:
        finish = self._finish
        if finish is None:
            return  # (aborted, or SHUTDOWN NOW went first)
        self.cancel()
        self._log_replicas()
        finish()

    def abort(self) -> bool:
        """SHUTDOWN ABORT: False if no shutdown is waiting."""
        if self._finish is None:
            return False
        self.cancel()
        log.info("Shutdown manually aborted.")
        self.repl.update_guard()
        self.repl.failover.release_paused()
        return True

    def cancel(self) -> None:
        self._finish = None
        self._decided = False

    def _log_replicas(self) -> None:
        entries = self.repl.master_side.online()
        if not entries:
            return
        offset = self.repl.master_repl_offset
        now = time.monotonic()
        lagging = 0
        for entry in entries:
            if entry.ack_offset == offset:
                continue
            lagging += 1
            state = STATE_NAMES[entry.state]
            lag = int(now - entry.ack_time) if state == "online" else 0
            log.info("Lagging replica %s:%d reported offset %d behind master, lag=%d, "
                     "state=%s.", entry.ip, entry.port, offset - entry.ack_offset, lag, state)
        log.info("%d of %d replicas are in sync when shutting down.", len(entries) - lagging,
                 len(entries))
