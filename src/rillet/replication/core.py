"""`Replication`: one server's replication state, as Redis keeps it in `server.repl_*`.

Both roles live here: the replication IDs and offset, the backlog, the
replicas attached to us (master side, master.py's `ReplicaEntry`), and the
link to our master when we are a replica (replica.py's `MasterLink`). A
replica keeps serving its own replicas: it forwards its master's bytes
unchanged, so every server of a chain has the same offsets and IDs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from rillet import errors
from rillet.replication import resume
from rillet.replication.backlog import Backlog
from rillet.replication.failover import Failover
from rillet.replication.master import MasterSide
from rillet.replication.own_expiry import OwnExpiries
from rillet.replication.protocol import EffectStream, encode_command
from rillet.replication.shutdown import ShutdownWait

if TYPE_CHECKING:
    from rillet.persistence.loader import LoadProgress
    from rillet.replication.replica import MasterLink
    from rillet.state import Block, BlockedClient, Client, Effect, ServerState

log = logging.getLogger("rillet")

NO_ID = "0" * 40

# Database.expire_mode values (engine/keyspace.py): how a replica sees TTLs.
EXPIRE_NORMAL = 0
EXPIRE_REPLICA_READ = 1  # clients: a due key reads as missing, nothing is deleted
EXPIRE_MASTER_STREAM = 2  # the master's stream: a due key is still there (its DEL follows)


def new_replid() -> str:
    return os.urandom(20).hex()


class Dispatch(Protocol):
    """What the replica's apply loop runs commands through (dispatch.py's Dispatcher)."""

    @property
    def run_replicated(self) -> Callable[..., int] | None:
        """server/_fastpath.pyx's compiled apply loop, when built."""

    def execute(self, client: Client, argv: list[bytes]) -> object: ...


class Host(Protocol):
    """What replication uses of the server that attaches it (server/server.py's Server):
    replication imports neither server/ nor the dispatcher, it is handed this."""

    @property
    def state(self) -> ServerState: ...
    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...
    @property
    def dispatcher(self) -> Dispatch: ...

    before_flush: list[Callable[[], None]]
    on_shutdown: list[Callable[[bool | None], None]]
    # Asked before shutting down: True if it will call the callback (the shutdown) later.
    shutdown_gate: Callable[[Callable[[], None]], bool] | None
    cron_hooks: list[Callable[[], None]]
    startup_tasks: list[Callable[[], Awaitable[None]]]

    def after_batch(self) -> None: ...
    def serve_ready(self) -> None: ...
    def _deliver(self, client: Client, entry: BlockedClient, reply: object) -> None: ...


class Replication:
    def __init__(self, server: Host) -> None:
        self.server = server
        self.state = server.state
        self.config = server.state.config
        self.replid = new_replid()
        self.replid2 = NO_ID
        self.second_repl_offset = -1
        # Writes' effects of this event-loop turn, encoded as they are published
        # (the sink is the EffectStream itself: no Python frame per write, and
        # the compiled XADD writes its effect straight in). The turn's bytes
        # leave at flush_out, scheduled once per turn (every read of the turn,
        # one write per replica), or are counted when an offset is read. Only a
        # master has the sink: a replica forwards its master's bytes.
        self._stream = EffectStream()
        self._sink = self._stream
        self._offset = 0  # master_repl_offset without what is pending
        self._write_offset = 0  # see write_offset
        self.backlog: Backlog | None = None
        # Role: None when master; else our master's address and the link to it.
        self.master_host: str | None = None
        self.master_port = 0
        self.link: MasterLink | None = None
        # Whether our ID and offset name data we hold (Redis's cached master): a
        # former master, or a replica that synced. Else PSYNC asks "? -1".
        self.has_history = False
        self.stream_db = 0  # see replicaof(): where a continued stream starts
        self.master_side = MasterSide(self)
        self.failover = Failover(self)
        self.shutdown = ShutdownWait(self)
        self.own_expiries = OwnExpiries(self.state)
        self.sync_full = 0
        self.sync_partial_ok = 0
        self.sync_partial_err = 0
        self.no_replicas_since = time.monotonic()
        self._sink_registered = False
        self._hooks_registered = False
        self._ticks = 0
        # Stream bytes of this event-loop turn (bytes chunks), sent (and added
        # to the backlog) in one go by flush_out: one write per replica per turn.
        self._out: list[bytes] = []
        self._flush_scheduled = False
        # A replica's (replid, offset, stream db) from the snapshot it loaded at start.
        self._loaded_history: tuple[str, int, int] | None = None

    # --- wiring ---------------------------------------------------------------------
    def install(self) -> None:
        state = self.state
        server = self.server
        state.replication = self
        state.command_guard = self.command_guard
        state.info_providers["replication"] = self.info
        state.info_providers["replication_stats"] = self.info_stats
        server.cron_hooks.append(self.cron)
        server.startup_tasks.append(self.startup)
        # (After persistence's hook: it has closed the AOF / saved by then.)
        server.on_shutdown.append(self.on_shutdown)
        server.shutdown_gate = self.shutdown.start
        if state.persistence is not None:
            state.persistence.after_load.append(self._dataset_loaded)
        self.config.watch("repl-backlog-size", self._backlog_size_changed)
        self.config.watch("min-replicas-to-write", lambda _v: self.update_guard())
        self.config.watch("replica-read-only", lambda _v: self.update_guard())
        configured = str(self.config["replicaof"]).split()
        if len(configured) == 2:
            # Set now so clients connecting before the link is up see a replica.
            self.master_host, self.master_port = configured[0], int(configured[1])
            self._set_expire_mode(EXPIRE_REPLICA_READ)
            self.update_guard()

    async def startup(self) -> None:
        """Connect to the configured master once the local dataset is loaded."""
        import asyncio

        while self.state.loading:
            await asyncio.sleep(0.05)
        saved = resume.take(str(self.config["dir"])) or self._loaded_history
        self._loaded_history = None
        if saved is not None and self.master_host is not None:
            # Our data is what it was at this offset: ask to continue from there.
            self.replid, self.master_repl_offset, self.stream_db = saved
            self.has_history = True
            self.create_backlog()
            log.info("Replication state loaded: ID %s, offset %d", self.replid,
                     self.master_repl_offset)
        if self.master_host is not None and self.link is None:
            self._start_link()

    def _dataset_loaded(self, loaded: LoadProgress) -> None:
        """The start-up load is done (persistence's after_load; no client has written
        yet). A snapshot saved with replication fields holds the data of that ID at
        that offset: continue it (Redis's loadDataFromDisk), so replicas of the
        server before its restart resync partially."""
        history = loaded.repl
        if history is None:
            return
        if self.master_host is not None:
            self._loaded_history = history  # startup() asks our master to continue it
            return
        # A master: a new ID, the file's as the secondary one (PSYNC2 accepts it up
        # to its offset), and an empty backlog that starts just after it.
        replid, offset, _stream_db = history
        self.replid2 = replid
        self.second_repl_offset = offset + 1
        self.master_repl_offset = offset
        self.create_backlog()
        self.no_replicas_since = time.monotonic()
        expired = loaded.expired_keys
        if expired:
            # Keys the load skipped as expired: replicas that continue must drop them too.
            verb = b"UNLINK" if self.config["lazyfree-lazy-expire"] else b"DEL"
            self.feed([(db, [verb, key]) for db, key in expired])
        log.info("Replication history loaded: ID %s up to offset %d", replid, offset)

    def save_info(self) -> tuple[int, str, int] | None:
        """(repl-stream-db, repl-id, repl-offset) for a snapshot, or None when we hold no
        history a restart could continue (Redis's rdbPopulateSaveInfo): a master with
        a backlog, or a replica whose data is its master's at our offset."""
        if self.master_host is None:
            if self.backlog is None:
                return None
            offset = self.master_repl_offset  # (encodes what is pending: the db is current)
            return max(0, self.selected_db), self.replid, offset
        link = self.link
        if link is None or link.client is None or link.syncing or not self.has_history:
            return None
        return link.client.db.index, self.replid, self.master_repl_offset

    def on_shutdown(self, save: bool | None) -> None:
        self.shutdown.cancel()  # (SHUTDOWN NOW while waiting for replicas)
        # The last writes' bytes go to the replicas' sockets before they close.
        self.flush_out()
        link = self.link
        if self.master_host is None or link is None or link.client is None or link.syncing:
            return
        persistence = self.state.persistence
        if persistence is None or self.state.loading:
            return
        aof_ok = persistence.aof_state == "on" and not persistence.aof.status_errno
        saved = save is True or (save is None and bool(self.config["save"]))
        if aof_ok or (saved and persistence.last_bgsave_ok):
            resume.save(str(self.config["dir"]), self.replid, self.master_repl_offset,
                        link.client.db.index)

    def _backlog_size_changed(self, value: int) -> None:
        if self.backlog is not None:
            self.backlog.resize(int(value))

    @property
    def is_replica(self) -> bool:
        return self.master_host is not None

    # --- the stream -----------------------------------------------------------------
    @property
    def master_repl_offset(self) -> int:
        if self._stream:
            self._encode_pending()
        return self._offset

    @master_repl_offset.setter
    def master_repl_offset(self, value: int) -> None:
        self._offset = value

    @property
    def write_offset(self) -> int:
        """The offset just after the last write's effects (not our PINGs and
        GETACKs): what WAIT waits for, as Redis's per-client woff would."""
        if self._stream:
            self._encode_pending()
        return self._write_offset

    @property
    def selected_db(self) -> int:
        """Redis's server.slaveseldb: the db the stream is in after its last byte."""
        return self._stream.selected_db

    @selected_db.setter
    def selected_db(self, value: int) -> None:
        self._stream.selected_db = value

    def feed(self, effects: list[Effect]) -> None:
        """Effects from outside the write path (the sink itself is `_sink`)."""
        self._stream(effects)
        if not self._flush_scheduled:
            self._schedule_flush()

    def _encode_pending(self) -> None:
        data = self._stream.take()
        if self.master_host is not None:
            # A replica forwards its master's bytes instead (see MasterLink.apply);
            # a writable replica's own writes stay local, as in Redis.
            return
        self._out.append(data)
        self._offset += len(data)
        self._write_offset = self._offset

    def replicate_only(self, db_index: int, argv: list[bytes]) -> None:
        """A command that changes no data but reaches replicas (PUBLISH): Redis's PROPAGATE_REPL."""
        if self.backlog is not None and self.master_host is None:
            self.feed([(db_index, argv)])

    def feed_raw(self, data: bytes) -> None:
        """Append stream bytes: counted now; backlog and replicas get them at flush_out."""
        if self.backlog is None:
            return
        if self._stream:
            self._encode_pending()  # (they came first)
        self._out.append(bytes(data))
        self._offset += len(data)
        if not self._flush_scheduled:
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        loop = self.server.loop
        if loop is None:
            self.flush_out()
        else:
            self._flush_scheduled = True
            loop.call_soon(self.flush_out)

    def _turn_done(self) -> None:
        """A before_flush hook (the end of each read): the turn's bytes leave once,
        after every read of this turn of the loop (Redis's beforeSleep)."""
        if (self._stream or self._out) and not self._flush_scheduled:
            self._schedule_flush()

    def flush_out(self) -> None:
        """Move this turn's stream bytes to the backlog and every replica.

        Also called before anything reads the backlog or starts a replica's
        buffer (PSYNC, a fork), so no byte is sent twice or missed.
        """
        self._flush_scheduled = False
        if self._stream:
            self._encode_pending()
        out = self._out
        if not out:
            return
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
        if self.backlog is not None:
            self.backlog.append(data)
        self.master_side.send_all(data)

    def create_backlog(self) -> None:
        if self.backlog is None:
            self.backlog = Backlog(int(self.config["repl-backlog-size"]),
                                   self.master_repl_offset + 1, time.monotonic())
        self._wire()

    def free_backlog(self) -> None:
        self.flush_out()
        self.backlog = None
        self._wire()

    def _wire(self) -> None:
        """The effect sink while we are a master with a backlog (a replica's
        writes, when it takes any, stay local, as in Redis: its stream is its
        master's bytes, forwarded by feed_raw); the end-of-read hook while there
        is a backlog, in either role."""
        sink = self.backlog is not None and self.master_host is None
        if sink != self._sink_registered:
            if sink:
                self.state.effect_sinks.append(self._sink)
            else:
                self.state.effect_sinks.remove(self._sink)
                self._stream.take()
            self._sink_registered = sink
        hooks = self.backlog is not None
        if hooks != self._hooks_registered:
            if hooks:
                self.server.before_flush.append(self._turn_done)
            else:
                self.server.before_flush.remove(self._turn_done)
            self._hooks_registered = hooks

    def shift_replid(self) -> None:
        """Redis's shiftReplicationId: our history so far stays reachable under replid2."""
        self.replid2 = self.replid
        self.second_repl_offset = self.master_repl_offset + 1
        self.replid = new_replid()
        log.info("Setting secondary replication ID to %s, valid up to offset: %d. "
                 "New replication ID is %s", self.replid2, self.second_repl_offset, self.replid)

    def change_ids(self) -> None:
        """DEBUG CHANGE-REPL-ID: Redis's changeReplicationId and clearReplicationId2."""
        log.info("Changing replication IDs after receiving DEBUG change-repl-id")
        self.replid = new_replid()
        self.replid2 = NO_ID
        self.second_repl_offset = -1

    # --- roles ------------------------------------------------------------------------
    def replicaof(self, host: str | None, port: int = 0, failover: bool = False,
                  cause: str = "") -> bool:
        """REPLICAOF host port (host None: NO ONE); False if already replicating that master.

        `failover`: FAILOVER's hand-over (our PSYNC asks the target to promote itself).
        `cause`: who asked for a promotion, for Redis's "MASTER MODE enabled" line.
        """
        self.flush_out()  # this turn's writes, in the role they were made in
        if host is None:
            if self.master_host is None:
                return True
            self._stop_link()
            self.master_host = None
            self.master_port = 0
            self._set_expire_mode(EXPIRE_NORMAL)
            self.shift_replid()
            self.selected_db = -1
            # Replicas reconnect and continue partially under the new ID (PSYNC2).
            self.master_side.disconnect_all()
            self.create_backlog()  # (or, when there is one, its sink: we are a master now)
            self.no_replicas_since = time.monotonic()
            self.update_guard()
            self.config.values["replicaof"] = ""
            if cause:
                log.info("MASTER MODE enabled (%s)", cause)  # (as M: the role has changed)
            return True
        if self.master_host == host and self.master_port == port and self.link is not None:
            return False
        was_master = self.master_host is None
        # The db the stream is in at our offset, for a partial resync with the new
        # master: our old master client's, or (a demoted master) our own stream's.
        old = self.link
        if old is not None and old.client is not None:
            self.stream_db = old.client.db.index
        elif was_master:
            self.stream_db = max(0, self.selected_db)
        self._stop_link()
        self.master_host = host
        self.master_port = port
        self._wire()  # a replica forwards its master's stream: no sink of its own
        self.config.values["replicaof"] = f"{host} {port}"
        if was_master:
            self._set_expire_mode(EXPIRE_REPLICA_READ)
            self.has_history = True
        self.master_side.disconnect_all()
        self.master_side.abort_waits()
        self.update_guard()
        if not self.state.loading:
            self._start_link(failover)
        return True

    def _start_link(self, failover: bool = False) -> None:
        from rillet.replication.replica import MasterLink

        if self.master_host is None:  # (callers have set it: we are a replica)
            return
        log.info("Connecting to MASTER %s:%d", self.master_host, self.master_port)
        self.link = MasterLink(self, self.master_host, self.master_port, failover)
        self.link.start()

    def _stop_link(self) -> None:
        link, self.link = self.link, None
        if link is not None:
            link.stop()

    def _set_expire_mode(self, mode: int) -> None:
        for db in self.state.keyspace.dbs:
            db.expire_mode = mode

    # --- full sync results (called by MasterLink) -----------------------------------------
    def synced_full(self, replid: str, offset: int) -> None:
        self._stream.take()
        self._out.clear()
        self.replid = replid
        self.replid2 = NO_ID
        self.second_repl_offset = -1
        self.master_repl_offset = offset
        self.has_history = True
        self.backlog = None
        self.create_backlog()
        self.master_side.disconnect_all()
        self.own_expiries.clear()  # (the data they named is gone)

    def continued(self, replid: str | None) -> None:
        if replid and replid != self.replid:
            self.replid2 = self.replid
            self.second_repl_offset = self.master_repl_offset + 1
            self.replid = replid
            # Our replicas must learn the new ID; they continue partially.
            self.master_side.disconnect_all()
        if self.backlog is None:
            self.create_backlog()

    def sync_failed(self) -> None:
        """A full sync broke after the dataset was flushed: forget our history."""
        self.replid = new_replid()
        self.replid2 = NO_ID
        self.second_repl_offset = -1
        self.master_repl_offset = 0
        self.has_history = False
        self.free_backlog()

    # --- guards -------------------------------------------------------------------------
    def update_guard(self) -> None:
        """Install the write guard while it may refuse something (replica, min-replicas),
        and on a writable replica the hook that remembers its own clients' TTLs."""
        state = self.state
        needed = (self.master_host is not None or bool(self.config["min-replicas-to-write"])
                  or self.failover.paused or self.shutdown.waiting)
        state.write_guard = self.write_guard if needed else None
        self.own_expiries.arm(self.master_host is not None and not self.config["replica-read-only"])
        persistence = state.persistence
        if persistence is not None:
            persistence.update_guard()  # re-chains its MISCONF guard over ours

    def write_guard(self) -> str | None:
        if self.master_host is not None:
            return errors.READONLY_REPLICA if self.config["replica-read-only"] else None
        needed = int(self.config["min-replicas-to-write"])
        if needed and self.master_side.good_replicas() < needed:
            return errors.NOREPLICAS
        return None

    def command_guard(self, client: Any, spec: Any, argv: list[bytes]) -> Block | str | None:
        """The dispatcher's replication hook: an error, a Block (paused write) or None."""
        if (self.master_host is not None and not self.config["replica-serve-stale-data"]
                and ("stale" not in spec.flags or (spec.name == "exec" and any(
                    "stale" not in queued.flags for queued, _ in client.multi or ())))
                and (self.link is None or not self.link.up)):
            return errors.MASTERDOWN  # (EXEC too, if it holds a command that is not `stale`)
        if self.failover.paused or self.shutdown.waiting:
            return self.failover.hold(client, spec, argv)
        return None

    # --- periodic work ----------------------------------------------------------------------
    def cron(self) -> None:
        if self.shutdown.waiting:
            self.shutdown.check()  # (every tick, as Redis's serverCron)
        if self.master_host is not None:
            self.own_expiries.cron()  # (every tick, as Redis's databasesCron)
        hz = int(self.config["hz"])
        self._ticks += 1
        if self._ticks % max(1, hz) != 0:
            return
        # Once a second, as Redis's replicationCron.
        now = time.monotonic()
        side = self.master_side
        side.cron(now)
        if self.master_host is None and self.backlog is not None:
            period = int(self.config["repl-ping-replica-period"])
            if side.entries and (self._ticks // max(1, hz)) % period == 0:
                self.feed_raw(encode_command([b"PING"]))
            ttl = int(self.config["repl-backlog-ttl"])
            if side.entries:
                self.no_replicas_since = now
            elif ttl and now - self.no_replicas_since > ttl:
                log.info("Replication backlog freed after %d seconds without connected replicas.",
                         ttl)
                # A new ID: a replica must not continue from history we dropped.
                self.shift_replid()
                self.free_backlog()
        if self.link is not None:
            self.link.cron(now)

    # --- INFO ---------------------------------------------------------------------------------
    def info(self) -> list[tuple[str, object]]:
        self.flush_out()  # (the backlog's figures include this turn's bytes)
        fields: list[tuple[str, object]] = []
        link = self.link
        if self.master_host is not None:
            now = time.monotonic()
            up = link is not None and link.up
            fields += [
                ("role", "slave"),
                ("master_host", self.master_host),
                ("master_port", self.master_port),
                ("master_link_status", "up" if up else "down"),
                ("master_last_io_seconds_ago",
                 int(now - link.last_io) if link is not None and link.last_io else -1),
                ("master_sync_in_progress", 1 if link is not None and link.syncing else 0),
                ("slave_read_repl_offset", self.master_repl_offset),
                ("slave_repl_offset", self.master_repl_offset),
            ]
            if link is not None and link.syncing:
                total = link.sync_total
                done = link.sync_read
                fields += [
                    ("master_sync_total_bytes", total),
                    ("master_sync_read_bytes", done),
                    ("master_sync_left_bytes", max(0, total - done)),
                    ("master_sync_perc", "%.2f" % (done * 100 / total if total > 0 else 0)),
                    ("master_sync_last_io_seconds_ago", int(now - link.last_io)),
                ]
            fields += [
                ("replica_full_sync_buffer_size", 0),
                ("replica_full_sync_buffer_peak", 0),
                ("master_current_sync_attempts", link.current_attempts if link else 0),
                ("master_total_sync_attempts", link.total_attempts if link else 0),
            ]
            if up and link is not None:  # (up means a link)
                fields.append(("master_link_up_since_seconds", int(now - link.up_since)))
            else:
                since = link.down_since if link is not None else now
                fields.append(("master_link_down_since_seconds", int(now - since)))
            fields += [
                ("total_disconnect_time_sec", int(link.disconnected_total(now)) if link else 0),
                ("slave_priority", self.config["replica-priority"]),
                ("slave_read_only", 1 if self.config["replica-read-only"] else 0),
                ("replica_announced", 1 if self.config["replica-announced"] else 0),
            ]
        else:
            fields.append(("role", "master"))
        fields += self.master_side.info_lines()
        backlog = self.backlog
        fields += [
            ("master_failover_state", self.failover.state),
            ("master_replid", self.replid),
            ("master_replid2", self.replid2),
            ("master_repl_offset", self.master_repl_offset),
            ("second_repl_offset", self.second_repl_offset),
            ("repl_backlog_active", 1 if backlog is not None else 0),
            ("repl_backlog_size", int(self.config["repl-backlog-size"])),
            ("repl_backlog_first_byte_offset", backlog.first_byte_offset if backlog else 0),
            ("repl_backlog_histlen", backlog.histlen if backlog else 0),
        ]
        return fields

    def info_stats(self) -> list[tuple[str, object]]:
        return [
            ("sync_full", self.sync_full),
            ("sync_partial_ok", self.sync_partial_ok),
            ("sync_partial_err", self.sync_partial_err),
        ]
