"""FAILOVER: a coordinated switch of roles with a replica, without losing writes.

As Redis's: writes are paused (their clients wait), the target replica (given
with TO, or the first one to catch up) is waited for until it has acknowledged
every byte, then this server becomes its replica and sends `PSYNC <replid>
<offset> FAILOVER`, which makes the target promote itself before it answers;
it continues partially under the new ID, and the paused writes are released
(they now get READONLY). With TIMEOUT the wait is bounded: past it the
failover is aborted, or with FORCE goes ahead anyway.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from rillet.memory import may_replicate
from rillet.state import Block

if TYPE_CHECKING:
    from rillet.replication.core import Replication

log = logging.getLogger("rillet")

NO_FAILOVER = "no-failover"
WAITING_FOR_SYNC = "waiting-for-sync"
IN_PROGRESS = "failover-in-progress"

# Paused writers are parked on this key; unpausing marks it ready in every db.
PAUSE_KEY = b"\x00rillet:failover-pause"
_CHECK_S = 0.01


class Failover:
    def __init__(self, replication: Replication) -> None:
        self.repl = replication
        self.state = NO_FAILOVER
        self.host: str | None = None
        self.port = 0
        self.force = False
        self.deadline = 0.0  # monotonic; 0: none
        self.offset = 0
        self._timer: Any = None

    @property
    def paused(self) -> bool:
        return self.state != NO_FAILOVER

    def start(self, host: str | None, port: int, timeout_ms: int, force: bool) -> None:
        repl = self.repl
        self.host, self.port, self.force = host, port, force
        self.deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else 0.0
        self.state = WAITING_FOR_SYNC
        repl.flush_out()
        self.offset = repl.master_repl_offset
        repl.update_guard()  # the gate must be on for the pause to be seen
        repl.master_side.request_ack()
        log.info("FAILOVER requested to %s.", f"{host}:{port}" if host else "any replica")
        self._schedule()

    def _schedule(self) -> None:
        loop = self.repl.server.loop
        if loop is not None and self.state == WAITING_FOR_SYNC:
            self._timer = loop.call_later(_CHECK_S, self.check)

    def check(self) -> None:
        """Go ahead once the target has acknowledged everything (called on ACKs and a timer)."""
        self._timer = None
        if self.state != WAITING_FOR_SYNC:
            return
        side = self.repl.master_side
        target = None
        for entry in side.online():
            if entry.state != "online":
                continue
            if self.host is not None and (entry.ip, entry.port) != (self.host, self.port):
                continue
            if entry.ack_offset >= self.offset:
                target = entry
                break
        if target is None and self.deadline and time.monotonic() >= self.deadline:
            if self.force and self.host is not None:
                log.info("FAILOVER timeout reached, forcing the failover to %s:%d",
                         self.host, self.port)
                self._go(self.host, self.port)
                return
            self.abort("Replica never caught up before timeout")
            return
        if target is not None:
            self._go(target.ip, target.port)
            return
        if len(side.online()) == 0 and self.host is None:
            self.abort("No replica left")
            return
        self._schedule()

    def _go(self, host: str, port: int) -> None:
        log.info("Failover target %s:%d is synced, failing over.", host, port)
        self.state = IN_PROGRESS
        self.host, self.port = host, port
        self.repl.replicaof(host, port, failover=True)

    def psync_answered(self, ok: bool) -> None:
        """The target answered our PSYNC ... FAILOVER (MasterLink)."""
        if self.state != IN_PROGRESS:
            return
        if ok:
            log.info("Failover target accepted the PSYNC: failover complete.")
            self._clear()
        else:
            self.abort("Failover target rejected psync request")

    def abort(self, reason: str) -> None:
        if self.state == NO_FAILOVER:
            return
        if self.host:
            log.info("FAILOVER to %s:%d aborted: %s", self.host, self.port, reason)
        else:
            log.info("FAILOVER aborted: %s", reason)
        was = self.state
        self._clear()
        if was == IN_PROGRESS:
            self.repl.replicaof(None)

    def _clear(self) -> None:
        self.state = NO_FAILOVER
        self.host = None
        self.force = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.repl.update_guard()
        self.release_paused()

    def release_paused(self) -> None:
        """The writes `hold` parked run now (they may wait again if a pause remains)."""
        self.repl.state.wake_parked(PAUSE_KEY)
        self.repl.server.serve_ready()

    def hold(self, client: Any, spec: Any, argv: list[bytes]) -> Block | None:
        """A write arriving while paused (by a failover, or a shutdown waiting for
        replicas: Replication.command_guard asks) waits; the dispatcher parks the client.
        As Redis's write pause: whatever may replicate (PUBLISH, a script that may
        write, EXEC of a transaction holding one), not only write commands."""
        if client.in_exec or not may_replicate(self.repl.state, client, spec, argv):
            return None
        return Block([PAUSE_KEY], 0, argv, None)
