"""Server state without I/O: the keyspace, clients, blocked clients, effects, stats.

`ServerState` is what command handlers reach through `ctx.server`; the asyncio
layer (server/) owns sockets and timers and drives this object. Keeping it
free of asyncio lets tests run commands through `Dispatcher` with a fake clock.
"""

from __future__ import annotations

import heapq
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rillet import __version__
from rillet.acl import Acl, User
from rillet.clock import Clock, SystemClock
from rillet.compiled import as_slots
from rillet.config import Config
from rillet.engine.keyspace import Database, Keyspace
from rillet.hotkeys import Hotkeys
from rillet.memory import Memory
from rillet.notify import (
    EXPIRED,
    KEY_MISS,
    KEYEVENT,
    KEYSPACE,
    NEW,
    OVERWRITTEN,
    SUBKEY_CHANNELS,
    TYPE_CHANGED,
    read_key_indexes,
    subkey_messages,
)
from rillet.observe import EventLoop, Instantaneous, LatencyMonitor, Slowlog, monitor_line
from rillet.pubsub import PubSub, Subscriptions
from rillet.resp.parser import RequestParser
from rillet.tracking import ClientTracking, Tracking

if TYPE_CHECKING:
    from rillet.replication.core import Replication
    from rillet.scripting.engine import LuaEngine

# The key a client parked by CLIENT PAUSE waits on (no real key can be signalled with it:
# it is never written).
PAUSE_KEY = b"\x00rillet:client-pause"
# Pause purposes (Redis's PAUSE_BY_CLIENT_COMMAND, PAUSE_BY_CLUSTER_MFAILOVER).
PAUSE_BY_CLIENT = "client"
PAUSE_BY_MANUAL_FAILOVER = "cluster-manual-failover"
# (db index, argv): one deterministic command to replay. A compiled body may give
# argv already encoded as one RESP array of bulk strings (`bytes`, never a list
# otherwise): XADD's, whose list would cost more to build, encode and free than
# the rest of the command (commands/_writes.pyx). `effect_argv` reads either form.
Effect = tuple[int, "list[bytes] | bytes"]
EffectSink = Callable[[list[Effect]], None]
# ServerState._effects once a compiled body has written its one effect straight
# into every sink (each an EffectStream: commands/_writes.pyx, XADD): published
# already, so the publish step has nothing left to do.
PUBLISHED: tuple[()] = ()
# The db of the MULTI that opens a transaction's effects: none of its own, so the
# encoders put no SELECT before it and the first command inside selects its db
# (Redis propagates MULTI with dbid -1: a replica sees MULTI, then SELECT).
ANY_DB = -1


def effect_argv(argv: list[bytes] | bytes) -> list[bytes]:
    """An effect's argv as a list, whichever form it came in (see Effect)."""
    if argv.__class__ is not bytes:
        return argv  # type: ignore[return-value]  # a list: not bytes
    commands, error = RequestParser().feed(argv)
    if error is not None or len(commands) != 1:
        raise ValueError(f"not one encoded command: {argv!r}")
    return commands[0]


class FsyncStatus(Protocol):
    @property
    def fsync_pending(self) -> int: ...


class AofStatus(Protocol):
    """What replication reads of the AOF writer (persistence/aof.py's AofWriter): its
    offsets, for WAITAOF and the replica's AOF acks (replication/master.py)."""

    written_total: int
    synced_total: int
    incr_size: int
    synced_size: int
    flush_ns: int  # the loop's time writing and fsyncing it (INFO debug)

    @property
    def status_errno(self) -> int: ...
    @property
    def fed_total(self) -> int: ...
    @property
    def bio(self) -> FsyncStatus: ...


class Persistence(Protocol):
    """What commands and replication may ask of persistence (persistence/manager.py
    provides it)."""

    lastsave: int
    last_bgsave_ok: bool
    aof: AofStatus
    aof_state: str  # "off", "on" or "wait_rewrite" (INFO's aof_enabled, WAITAOF)
    fault_targets: tuple[str, ...]  # DEBUG FAULT's targets
    after_load: list[Callable[[Any], None]]  # (the start-up load's LoadProgress)

    def save(self) -> None: ...
    def bgsave(self, schedule: bool = False) -> bytes: ...
    def bgrewriteaof(self, in_exec: bool = False) -> bytes: ...
    def debug_reload(self, save: bool = True, flush: bool = True) -> None: ...
    def debug_loadaof(self) -> None: ...
    def digest(self) -> str: ...
    def key_digest(self, db: Any, key: bytes) -> str: ...
    def set_fault(self, target: str, count: int, code: int, op: str) -> None: ...
    def clear_faults(self) -> None: ...
    def set_aof_flush_sleep(self, usec: int) -> None: ...
    def update_guard(self) -> None: ...  # re-arm the write guard (MISCONF) after a change


class Transactions(Protocol):
    """What EXEC needs of the dispatcher: run its queue as one transaction."""

    def run_transaction(self, client: Client, queued: list[tuple[Any, list[bytes]]]) -> list[object]: ...
    def call(self, client: Client, spec: Any, argv: list[bytes]) -> object: ...
    # A handler's exception as the reply Dispatcher.call makes of it (stats, log):
    # redis.call's common case runs handlers itself (scripting/engine.py).
    def _failed(self, spec: Any, argv: list[bytes], error: Exception) -> object: ...
    # An error reply counted in INFO errorstats (a script's, as it makes its reply).
    def _count_error(self, message: str) -> None: ...


class Connection:
    """What the state needs from a client's transport; server/ provides the real one."""

    def send(self, payload: bytes) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def addr(self) -> str:
        return ""

    @property
    def laddr(self) -> str:
        return ""

    @property
    def fd(self) -> int:
        return -1

    @property
    def is_local(self) -> bool:
        """Redis's islocalClient: a unix socket, or a TCP peer at exactly 127.0.0.1 or ::1."""
        return False

    @property
    def output_buffer_size(self) -> int:
        """Reply bytes queued and not yet sent (CLIENT LIST omem)."""
        return 0

    @property
    def query_buffer_size(self) -> int:
        """Request bytes received and not yet parsed into commands (CLIENT LIST qbuf)."""
        return 0

    def output_limits_changed(self) -> None:
        """The client's output class or the limits changed (server/ applies them)."""


class Client:
    """Per-connection state; it is the `ctx` every handler receives."""

    __slots__ = (
        "id", "server", "conn", "db", "resp3", "_authenticated", "name", "lib_name", "lib_ver",
        "_multi", "gated", "multi_error", "watched", "dirty_cas", "created_ms", "last_interaction_ms",
        "last_command", "blocked", "closing", "in_exec", "blocked_retry", "flags",
        "is_internal", "user", "restricted", "obuf_class", "pubsub", "reply_mode", "tracking",
        "replaying",
        "no_evict", "no_touch", "cluster_asking", "cluster_readonly",
    )

    def __init__(self, server: ServerState, conn: Connection | None, client_id: int) -> None:
        self.id = client_id
        self.server = server
        self.conn = conn
        self.db: Database = server.keyspace[0]
        self.resp3 = False
        # `gated`: this client is off the common path (not authenticated, in
        # MULTI) or the server is (ServerState.gated: loading, writes refused).
        # The dispatcher reads only this flag; `authenticated` and `multi` are
        # properties that keep it current, and the server updates every client
        # when its own gate changes.
        self.gated = False
        # The AOF loader's client (ServerState.replay_client): the server's gate
        # (loading, a write guard, MONITOR, a pause) does not apply to it.
        self.replaying = False
        # (Any: a CommandSpec, of commands/, above the state)
        self._multi: list[tuple[Any, list[bytes]]] | None = None
        # The ACL user; `restricted` (its rules limit something) puts the
        # client on the gated path, where the dispatcher checks permissions.
        self.user: User = server.acl.default
        self.restricted = not self.user.unrestricted
        # pubsub.Subscriptions once the client subscribes to anything, else None.
        self.pubsub: Subscriptions | None = None
        # tracking.ClientTracking while CLIENT TRACKING is on (the client is then gated).
        self.tracking: ClientTracking | None = None
        # CLIENT REPLY: 0 on, 1 off, 2 skip the next command's reply.
        self.reply_mode = 0
        # CLIENT NO-EVICT / NO-TOUCH, shown by CLIENT LIST (rillet evicts no client,
        # and its commands record key accesses all the same: docs/compat.md).
        self.no_evict = False
        self.no_touch = False
        # ASKING (for its next command, or its transaction) and READONLY, in cluster mode.
        self.cluster_asking = False
        self.cluster_readonly = False
        self.authenticated = server.acl.default_open
        self.name = b""
        self.lib_name = b""
        self.lib_ver = b""
        self.multi_error = False
        self.watched: set[tuple[int, bytes]] = set()
        self.dirty_cas = False
        now = server.clock.now_ms()
        self.created_ms = now
        self.last_interaction_ms = now
        self.last_command = b"NULL"
        self.blocked: BlockedClient | None = None
        self.closing = False
        self.in_exec = False
        # True while a parked command is re-run after a key it waits on changed:
        # the handler must answer or say "keep waiting", never block again.
        self.blocked_retry = False
        self.flags = "N"
        self.is_internal = False
        # Which client-output-buffer-limit class applies: normal, replica, pubsub.
        self.obuf_class = "normal"

    @property
    def authenticated(self) -> bool:
        return self._authenticated

    @authenticated.setter
    def authenticated(self, value: bool) -> None:
        self._authenticated = value
        self.update_gate()

    @property
    def multi(self) -> list[tuple[Any, list[bytes]]] | None:
        """Commands queued since MULTI, or None outside a transaction."""
        return self._multi

    @multi.setter
    def multi(self, queue: list[tuple[Any, list[bytes]]] | None) -> None:
        self._multi = queue
        self.update_gate()

    def update_gate(self) -> None:
        self.gated = (not self._authenticated or self._multi is not None or self.restricted
                      or (self.server.gated and not self.replaying) or self.pubsub is not None
                      or self.reply_mode != 0 or self.tracking is not None)

    def set_output_class(self, name: str) -> None:
        """client-output-buffer-limit's class for this client: normal, replica or pubsub."""
        if name != self.obuf_class:
            self.obuf_class = name
            if self.conn is not None:
                self.conn.output_limits_changed()

    def set_user(self, user: User) -> None:
        """AUTH/HELLO succeeded as `user` (or an ACL change touched it): recompute the gate."""
        self.user = user
        self.restricted = not user.unrestricted and not self.is_internal
        self.update_gate()

    # Helpers handlers use so that every mutation is seen by WATCH and by
    # blocked clients, and counted for INFO / save rules.
    def modified(self, key: bytes, changes: int = 1) -> None:
        self.server.key_modified(self.db.index, key, changes)

    def changed(self, changes: int = 1) -> None:
        """A change Redis does not signal to WATCH or blocked readers (XACK, a group's state).

        Counted for the save rules; like `modified`, it makes the command's own
        argv its effect unless the handler `propagate`s explicit ones.
        """
        self.server.dirty += changes

    def notify(self, event_class: int, event: bytes, key: bytes,
               subkeys: list[bytes] | None = None) -> None:
        """A keyspace notification for `key` in this client's db (Redis's notifyKeyspaceEvent,
        notifyKeyspaceEventWithSubkeys when the hash fields it touched are given)."""
        if subkeys is None:  # (the compiled bodies' call, argument for argument)
            self.server.notify(event_class, event, key, self.db.index)
        else:
            self.server.notify(event_class, event, key, self.db.index, subkeys)

    def propagate(self, argv: list[bytes]) -> None:
        """Replace this command's default effect (its own argv) with explicit ones.

        They gather in the server's `_effects` until the publish step
        (ServerState.publish_write) takes them when the command returns.
        """
        server = self.server
        if not server._effects:  # (None, or PUBLISHED: that one has left already)
            server._effects = [(self.db.index, argv)]
        else:
            server._effects.append((self.db.index, argv))

    @property
    def clock(self) -> Clock:
        return self.server.clock

    def protected_action_allowed(self, setting: str) -> bool:
        """Redis's allowProtectedAction for `enable-debug-command` and its kin (no|yes|local)."""
        mode = self.server.config[setting]
        if mode == "yes" or self.is_internal:
            return True
        return mode == "local" and self.conn is not None and self.conn.is_local


@dataclass(eq=False)
class BlockedClient:
    client: Client
    keys: list[tuple[int, bytes]]
    argv: list[bytes]
    deadline_ms: int  # 0 = forever
    timeout_reply: object
    timer: object = None  # set by the server layer (its cancellable timer handle)
    # What to send if the key the client waits on is deleted (None: keep waiting).
    on_key_deleted: object = None
    # The command as the slow log shows it and the time its runs took so far: it is
    # logged once, when unblocked (Redis's updateStatsOnUnblock); None: a pause.
    shown_argv: list[bytes] | None = None
    duration_ns: int = 0


def _type_of(value: object) -> bytes:
    return b"string" if value.__class__ is bytes else getattr(value, "TYPE_NAME", b"none")


@dataclass
class Block:
    """A handler's request to park the client until `keys` change or the timeout passes.

    `argv` is the command to run again on wake-up, with inputs pinned (e.g.
    XREAD's `$` replaced by the IDs current at block time).
    """

    keys: list[bytes]
    timeout_ms: int
    argv: list[bytes]
    timeout_reply: object
    on_key_deleted: object = None
    # Set by the dispatcher (Dispatcher.timed): see BlockedClient.
    shown_argv: list[bytes] | None = None
    duration_ns: int = 0


class KeepWaiting:
    """Returned by a handler re-run for a blocked client that still has nothing."""

    __slots__ = ()


KEEP_WAITING = KeepWaiting()


@dataclass
class Stats:
    start_time: float = field(default_factory=time.time)
    connections_received: int = 0
    rejected_connections: int = 0
    expired_keys: int = 0
    evicted_keys: int = 0
    eviction_exceeded_us: int = 0  # time spent over maxmemory (total_eviction_exceeded_time)
    net_input_bytes: int = 0
    net_output_bytes: int = 0
    # Reads taken and replies handed to the transport, counted beside the bytes
    # (Redis's total_reads/writes_processed, one I/O thread).
    total_reads_processed: int = 0
    total_writes_processed: int = 0
    # Replication traffic, apart from the clients' (as Redis 7+): the stream and the
    # snapshots a master sends its replicas, and what a replica reads from its master.
    net_repl_input_bytes: int = 0
    net_repl_output_bytes: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    total_error_replies: int = 0
    unexpected_error_replies: int = 0
    keyspace_hits: int = 0
    keyspace_misses: int = 0
    blocked_clients: int = 0
    output_buffer_limit_disconnections: int = 0
    query_buffer_limit_disconnections: int = 0
    lazyfreed_objects: int = 0
    # rillet's stream policies (commands/policies.py): entries trimmed for their age,
    # entries moved to a dead-letter stream.
    stream_retention_trimmed: int = 0
    stream_deadlettered: int = 0

    def count_error(self, message: str) -> None:
        """An error reply (INFO errorstats: counted by its code). afterErrorReply: the
        code ends at a space within the reply's first 32 bytes (its "-" included);
        without one it is ERR."""
        space = message.find(" ", 0, 31)
        code = message[:space] if space >= 0 else "ERR"
        self.errors[code] = self.errors.get(code, 0) + 1
        self.total_error_replies += 1


class ServerState:
    # The attributes every write reads or writes are slots, typed fields once
    # compiled (state.pxd): the compiled hot path (server/_fastpath.pyx,
    # commands/_bodies.pxi) reads them directly, where an instance-dict lookup cost
    # ~110 instructions each, a dozen per SET. Everything else stays in the instance dict.
    __slots__ = (
        "dirty", "_effects", "_tx_effects", "effect_sinks", "watched_keys", "blocking",
        "tracking", "config", "clock", "memory", "gated", "stats", "keyspace",
        "key_wakeups", "ready_keys", "shutdown_requested", "notify_flags", "slow_ns", "__dict__",
        "__weakref__",
    )

    def __init__(self, config: Config | None = None, clock: Clock | None = None) -> None:
        self.config = config or Config()
        self.clock = clock or SystemClock()
        # Users and permissions; `requirepass` is the default user's password.
        self.acl = Acl(pubsub_default_all=self.config["acl-pubsub-default"] == "allchannels")
        self.acl.set_default_password(self.config["requirepass"])
        self.config.watch("requirepass", self.acl.set_default_password)
        self.config.watch("acl-pubsub-default", self._pubsub_default_changed)
        self.acl.on_change.append(self._users_changed)
        self.keyspace = Keyspace(self.config["databases"], self.clock)
        for db in self.keyspace.dbs:
            db.on_expire = self._on_expire
        limits = self.keyspace.stream_limits
        limits.node_max_entries = self.config["stream-node-max-entries"]
        limits.node_max_bytes = self.config["stream-node-max-bytes"]
        self.config.watch("stream-node-max-entries", lambda v: setattr(limits, "node_max_entries", v))
        self.config.watch("stream-node-max-bytes", lambda v: setattr(limits, "node_max_bytes", v))
        self.clients: dict[int, Client] = {}
        self._next_client_id = 1
        self.stats = Stats()
        self.run_id = os.urandom(20).hex()
        self.version = __version__
        self.dirty = 0  # changes since the last save (rdb_changes_since_last_save)
        # `loading` and `write_guard` are properties: setting either updates
        # `gated`, and every client's (Client.gated, the single flag the
        # dispatcher's hot path reads).
        self.gated = False
        self._loading = False
        # cluster-enabled yes: the node table (rillet.cluster.state.ClusterState), set
        # once at start; while set, every client takes the gated path, where the
        # dispatcher routes keyed commands by slot.
        self.cluster: Any = None
        self._write_guard: Callable[[], str | None] | None = None
        # The script running past busy-reply-threshold (scripting.engine.Run), or
        # None; while set, clients get BUSY for all but allow_busy commands.
        self._script_busy: Any = None
        self.pubsub = PubSub(self)
        self.instant = Instantaneous()  # INFO's instantaneous_* (commands/server.py)
        self.event_loop = EventLoop()  # INFO's eventloop_* (the cron and commands/server.py)
        self.tracking = Tracking(self)
        # notify-keyspace-events' `m` class: while on, every client is gated and
        # Dispatcher.call reports the keys a command reads and finds missing.
        self.keymiss = False
        # HOTKEYS START's session (rillet/hotkeys.py): while active, every client is
        # gated so that Dispatcher.call measures each command.
        self.hotkeys: Hotkeys | None = None
        self.config.watch("notify-keyspace-events", self._notify_classes_changed)
        self._notify_classes_changed(self.config["notify-keyspace-events"])
        # MONITOR clients (while any, every client takes the dispatcher's gated path,
        # where commands are fed to them) and the slow log.
        self.monitors: dict[Client, None] = {}
        self.slowlog = Slowlog()
        self.latency = LatencyMonitor()
        # What every call's duration is compared with (_fastpath.pyx reads its
        # field): a call this slow (ns) goes to the slow log or the latency monitor.
        self.slow_ns = 0
        self.config.watch("slowlog-log-slower-than", self._slow_thresholds_changed)
        self.config.watch("latency-monitor-threshold", self._slow_thresholds_changed)
        self._slow_thresholds_changed(0)
        # CLIENT PAUSE and a cluster manual failover's pause, each held and ended on its
        # own (Redis's pause purposes): purpose -> (until when in ms, whether reads pause
        # too). Clients see their union: the latest end, and ALL if any is.
        self.pauses: dict[str, tuple[int, bool]] = {}
        self.pause_end_ms = 0
        self.pause_all = False
        # The Lua engine (scripting.engine.LuaEngine), created on first use.
        self.scripting: LuaEngine | None = None
        # The write path (see "effects" below). Effects of the command being
        # executed, None when it set none itself; those of a running EXEC,
        # published together; the consumers (AOF, replication).
        self._effects: list[Effect] | None = None
        self._tx_effects: list[Effect] | None = None
        self.effect_sinks: list[EffectSink] = []
        # WATCH: (db, key) -> clients watching it.
        self.watched_keys: dict[tuple[int, bytes], set[Client]] = {}
        # Blocking: (db, key) -> FIFO of parked clients; keys signalled since the last serve.
        self.blocking: dict[tuple[int, bytes], deque[BlockedClient]] = {}
        self.ready_keys: dict[tuple[int, bytes], None] = {}
        # (due_ms, db, key): keys to mark ready at a time, for waits that end
        # by the clock rather than a write (XREADGROUP ... CLAIM min-idle).
        self.key_wakeups: list[tuple[int, int, bytes]] = []
        # Set by SHUTDOWN; the server layer polls it after each batch.
        self.shutdown_requested: dict[str, bool] | None = None  # SHUTDOWN's save/nosave/now
        # Hooks the server layer or persistence install (e.g. for INFO sections).
        self.info_providers: dict[str, Callable[[], list[tuple[str, object]]]] = {}
        # Wiring set by the layers above, typed so handlers need no casts.
        self.persistence: Persistence | None = None
        self.transactions: Transactions | None = None
        # Delivers a reply to a client unblocked from outside (CLIENT UNBLOCK).
        self.on_unblocked: Callable[[Client, BlockedClient, object], None] | None = None
        # Replication (replication/core.py's Replication, set by replication.attach),
        # and its dispatcher hook: (client, spec, argv) -> an error, a Block or None.
        self.replication: Replication | None = None
        self.command_guard: Callable[[Client, Any, list[bytes]], Block | str | None] | None = None
        # Loads a function library's code found in a snapshot (commands/functions.py).
        self.library_loader: Callable[[bytes], None] | None = None
        # DEBUG SET-ACTIVE-EXPIRE 0 stops the cron's expiry of keys and hash fields;
        # DEBUG PAUSE-CRON 1 all of its work.
        self.active_expire_enabled = True
        self.cron_paused = False
        # Serves other clients while a script is busy (server/busy.py); the script's client is skipped.
        self.serve_while_busy: Callable[[Client], None] | None = None
        # maxmemory (memory.py): accounting, the OOM check and eviction.
        # `pre_command_oom`: memory was over the limit when the running command
        # started (scripts' first write obeys it); `script_flags` gives an
        # EVAL/EVALSHA/FCALL's shebang or function flags (commands/scripting.py).
        self.pre_command_oom = False
        self.script_flags: Callable[[str, list[bytes]], frozenset[str] | None] | None = None
        self.memory = Memory(self)

    @property
    def loading(self) -> bool:
        return self._loading

    @loading.setter
    def loading(self, value: bool) -> None:
        self._loading = value
        self._regate()

    @property
    def write_guard(self) -> Callable[[], str | None] | None:
        """While set, write commands are refused with the error it returns (MISCONF)."""
        return self._write_guard

    @write_guard.setter
    def write_guard(self, guard: Callable[[], str | None] | None) -> None:
        self._write_guard = guard
        self._regate()

    def _regate(self) -> None:
        self._set_gated(self._loading or self._write_guard is not None
                        or self._script_busy is not None or bool(self.monitors)
                        or self.pause_end_ms > 0 or self.keymiss or self.cluster is not None
                        or (self.hotkeys is not None and self.hotkeys.active))

    def enable_cluster(self, cluster: Any) -> None:
        """cluster-enabled yes (at start): commands are routed by slot from now on."""
        self.cluster = cluster
        self._regate()

    def hotkeys_changed(self) -> None:
        """A HOTKEYS session started or stopped: the gate follows it."""
        self._regate()

    def pause(self, end_ms: int, pause_all: bool, purpose: str = PAUSE_BY_CLIENT) -> None:
        """A pause for `purpose`: a new one replaces a shorter or weaker one of the same
        purpose, never shortens it."""
        held = self.pauses.get(purpose)
        if held is not None and self.clock.now_ms() < held[0]:
            end_ms, pause_all = max(held[0], end_ms), held[1] or pause_all
        self.pauses[purpose] = (end_ms, pause_all)
        self._pauses_changed()

    def unpause(self, purpose: str | None = None) -> None:
        """`purpose`'s pause ended (CLIENT UNPAUSE ends only CLIENT PAUSE's); None: every
        pause, whose time is up. Clients parked by it re-run their commands (and park
        again if another pause remains)."""
        if purpose is None:
            self.pauses.clear()
        else:
            self.pauses.pop(purpose, None)
        self._pauses_changed()

    def _pauses_changed(self) -> None:
        old_end, old_all = self.pause_end_ms, self.pause_all
        pauses = self.pauses.values()
        self.pause_end_ms = max((end for end, _ in pauses), default=0)
        self.pause_all = any(every for _, every in pauses)
        self._regate()
        self._pause_expiry(bool(self.pause_end_ms))
        if old_end and (self.pause_end_ms < old_end or old_all and not self.pause_all):
            self.wake_parked(PAUSE_KEY)  # a pause ended or weakened

    def wake_parked(self, key: bytes) -> None:
        """Clients parked on a pause's `key` re-run their commands (they may park again
        if another pause remains)."""
        for slot in self.blocking:
            if slot[1] == key:
                self.ready_keys[slot] = None

    def _pause_expiry(self, paused: bool) -> None:
        for db in self.keyspace.dbs:
            db.expiry_paused = paused

    def add_monitor(self, client: Client) -> None:
        self.monitors[client] = None
        self._set_gated(True)

    def remove_monitor(self, client: Client) -> None:
        if self.monitors.pop(client, 1) is None:
            self._regate()

    def _slow_thresholds_changed(self, _value: object) -> None:
        slower_than_us = self.config.values["slowlog-log-slower-than"]
        latency_ms = self.config.values["latency-monitor-threshold"]
        self.slow_ns = min(slower_than_us * 1000 if slower_than_us >= 0 else 1 << 62,
                           latency_ms * 1_000_000 if latency_ms > 0 else 1 << 62)

    def latency_sample(self, event: str, elapsed_ns: int) -> None:
        """Redis's latencyAddSampleIfNeeded: kept if over latency-monitor-threshold (ms)."""
        threshold = self.config.values["latency-monitor-threshold"]
        if threshold and elapsed_ns // 1_000_000 >= threshold:
            self.latency.add(event, elapsed_ns // 1_000_000, self.clock.now_ms() // 1000)

    def log_slow(self, client: Client, shown: list[bytes], elapsed_ns: int) -> None:
        """A call that took `elapsed_ns` (a blocked command's, when it was unblocked)
        into the slow log, if that is slow enough; `shown` is its argv as shown."""
        if elapsed_ns >= self.config.values["slowlog-log-slower-than"] * 1000 >= 0:
            conn = client.conn
            self.slowlog.add(shown, elapsed_ns // 1000, conn.addr if conn is not None else "",
                             client.name, self.config.values["slowlog-max-len"])

    def feed_monitors(self, client: Client, argv: list[bytes]) -> None:
        """Redis's replicationFeedMonitors, after the command ran."""
        conn = client.conn
        in_script = self.scripting is not None and self.scripting.current is not None
        origin = "lua" if in_script or conn is None else conn.addr
        line = monitor_line(client.db.index, origin, argv)
        for monitor in list(self.monitors):
            if monitor.conn is not None and not monitor.closing:
                monitor.conn.send(line)

    @property
    def script_busy(self) -> Any:
        return self._script_busy

    @script_busy.setter
    def script_busy(self, run: Any) -> None:
        self._script_busy = run
        self._regate()

    def _set_gated(self, gated: bool) -> None:
        if gated != self.gated:
            self.gated = gated
            # Internal clients (loading) are not in `clients`: the checks they
            # would take on the gated path all let them through anyway.
            for client in self.clients.values():
                client.update_gate()

    def _pubsub_default_changed(self, value: object) -> None:
        # For users and selectors created from now on, as in Redis.
        self.acl.pubsub_default_all = value == "allchannels"

    def _users_changed(self, user: User | None) -> None:
        """An ACL user's rules changed: its clients' gates follow (ACL DELUSER and
        ACL LOAD disconnect the clients of users that went, commands/acl.py)."""
        for client in self.clients.values():
            if user is None or client.user is user:
                client.set_user(client.user)

    # --- clients --------------------------------------------------------------
    def new_client(self, conn: Connection | None) -> Client:
        client = Client(self, conn, self._next_client_id)
        self._next_client_id += 1
        self.clients[client.id] = client
        return client

    def internal_client(self) -> Client:
        """A client for loading and replication: authenticated, not in `clients`."""
        client = Client(self, None, 0)
        client.is_internal = True
        client.restricted = False  # loading replays what was allowed when it was written
        client.authenticated = True
        return client

    def replay_client(self) -> Client:
        """The AOF loader's client: internal, and ungated outside MULTI, so replayed
        commands take the plain path (the compiled one when built) while the server
        is gated for loading, as Redis runs an AOF's command bodies directly. The
        gate's checks skip internal clients anyway (-LOADING, write guard, pause),
        and the effects still go nowhere: ServerState.publish drops them while loading.
        """
        client = self.internal_client()
        client.replaying = True
        client.update_gate()
        return client

    def remove_client(self, client: Client) -> None:
        self.clients.pop(client.id, None)
        if client.pubsub is not None:
            self.pubsub.forget(client)
        if client.tracking is not None:
            self.tracking.disable(client)
        if client in self.monitors:
            self.remove_monitor(client)
        self.unwatch_all(client)
        if client.blocked is not None:
            self.unblock(client)

    # --- mutations ------------------------------------------------------------
    def key_modified(self, db_index: int, key: bytes, changes: int = 1) -> None:
        """Redis's signalModifiedKey plus the change count: WATCH, blocked readers, save rules."""
        self.dirty += changes
        db = self.keyspace.dbs[db_index]
        # Its memory estimate is redone when next asked for (memory.py), never here.
        db.pending[key] = None
        if db.lrm and key in db.data:
            db.access[key] = db.lru_now  # LRM: a write is what moves the clock
        if self.tracking.clients:
            self.tracking.invalidate(key)
        # Most writes happen with nobody watching or waiting: two reads, no tuple.
        if not (self.watched_keys or self.blocking):
            return
        slot = (db_index, key)
        watchers = self.watched_keys.get(slot)
        if watchers:
            for client in watchers:
                client.dirty_cas = True
        if slot in self.blocking:
            self.ready_keys[slot] = None

    def notify(self, event_class: int, event: bytes, key: bytes, db_index: int,
               subkeys: list[bytes] | None = None) -> None:
        """Publish a keyspace event if its class is enabled (notify-keyspace-events), and
        the subkey channels' messages when it names subkeys (Redis 8.8)."""
        flags = self.notify_flags
        if not flags & event_class:
            return
        if flags & KEYSPACE:
            self.pubsub.publish(b"__keyspace@%d__:%s" % (db_index, key), event)
        if flags & KEYEVENT:
            self.pubsub.publish(b"__keyevent@%d__:%s" % (db_index, event), key)
        if subkeys and flags & SUBKEY_CHANNELS:
            for channel, message in subkey_messages(flags, event, key, db_index, subkeys):
                self.pubsub.publish(channel, message)

    # --- keyspace notifications beyond the handlers' own events -------------------
    def _notify_classes_changed(self, flags: int) -> None:
        """notify-keyspace-events changed: arm the hooks of the classes no handler emits
        itself (new, overwritten, type_changed, keymiss) only while they are on."""
        value = int(flags)
        # The classes as an int in a field: every write asks whether any is on
        # (_bodies.pxi _notify_on), where config.values cost a string-keyed lookup.
        self.notify_flags = value
        routed = bool(value & (KEYSPACE | KEYEVENT))
        on_new = self._key_new if routed and value & NEW else None
        on_overwrite = self.key_overwritten if routed and value & (OVERWRITTEN | TYPE_CHANGED) else None
        for db in self.keyspace.dbs:
            db.on_new = on_new
            db.on_overwrite = on_overwrite
        keymiss = routed and bool(value & KEY_MISS)
        if keymiss != self.keymiss:
            self.keymiss = keymiss
            self._regate()

    def _key_new(self, db: Database, key: bytes) -> None:
        self.notify(NEW, b"new", key, db.index)

    def key_overwritten(self, db: Database, key: bytes, old: object, new: object) -> None:
        """Redis 8.2's `overwritten` event, and `type_changed` when the type differs."""
        self.notify(OVERWRITTEN, b"overwritten", key, db.index)
        if _type_of(old) != _type_of(new):
            self.notify(TYPE_CHANGED, b"type_changed", key, db.index)

    def key_misses(self, client: Client, spec: Any, argv: list[bytes]) -> None:
        """The `keymiss` events of a command about to run: the keys it reads (Redis's
        lookupKeyRead) that do not exist, in order. A due key expires first."""
        indexes = read_key_indexes(spec, argv)
        if indexes:
            db = client.db
            for index in indexes:
                if db.get(argv[index]) is None:
                    self.notify(KEY_MISS, b"keymiss", argv[index], db.index)

    def count_reads(self, client: Client, spec: Any, argv: list[bytes]) -> None:
        """keyspace_hits/misses for the keys a command is about to look up for reading
        (notify.READS_BEFORE; a due key is a miss, as in lookupKeyRead). Looked at,
        not up: the command's own lookup expires it, and touches it."""
        db = client.db
        data, expires = db.data, db.expires
        stats = self.stats
        # XREADGROUP looks a stream up again to read it once its group is found.
        found = 2 if spec.name == "xreadgroup" else 1
        for index in read_key_indexes(spec, argv, counted=True):
            key = argv[index]
            if key in data and not (key in expires and expires[key] <= self.clock.now_ms()):
                stats.keyspace_hits += found
            else:
                stats.keyspace_misses += 1

    def count_reads_after(self, client: Client, spec: Any, argv: list[bytes]) -> None:
        """keyspace_hits/misses of a read-only command that ran (notify.READS_AFTER)."""
        data = client.db.data
        stats = self.stats
        argc = len(argv)
        last = spec.last_key if spec.last_key >= 0 else argc + spec.last_key
        for index in range(spec.first_key, min(last, argc - 1) + 1, spec.key_step or 1):
            if argv[index] in data:
                stats.keyspace_hits += 1
            else:
                stats.keyspace_misses += 1

    def db_flushed(self, db_index: int | None, replaced_with: int | None = None) -> None:
        """Call just BEFORE FLUSHDB/FLUSHALL empties db `db_index` (None: all), or
        SWAPDB gives it the contents of db `replaced_with`.

        Redis 7+ (touchAllWatchedKeysInDb) dirties only the WATCHed keys that
        exist, or that the swap brings in, so this must see the keyspace as it was.
        """
        keyspace = self.keyspace
        for (index, key), watchers in self.watched_keys.items():
            if (db_index is None or index == db_index) and (
                    keyspace[index].get(key) is not None
                    or (replaced_with is not None and keyspace[replaced_with].get(key) is not None)):
                for client in watchers:
                    client.dirty_cas = True
        for slot in self.blocking:
            if db_index is None or slot[0] == db_index:
                self.ready_keys[slot] = None

    def _on_expire(self, db: Database, key: bytes) -> None:
        self.stats.expired_keys += 1
        self.key_modified(db.index, key, 0)
        self.notify(EXPIRED, b"expired", key, db.index)
        self.publish([(db.index, [b"DEL", key])])

    # --- effects: the one write path --------------------------------------------
    # Every change leaves here as deterministic effects, (db, argv) commands
    # that replay to the same state: a command's through publish_write (the
    # dispatcher and its compiled fast path call it after every write
    # command), a transaction's at end_transaction, an expiry's DEL through
    # publish. The sinks (AOF, replication) see nothing else.
    def publish_write(self, db_index: int, argv: list[bytes], dirty_before: int) -> None:
        """A write command returned: publish its effects, or queue them inside EXEC.

        The effects are what the handler gave `propagate`, else the command's
        own argv if it changed anything (`dirty` moved, through `modified` or
        `changed`), as Redis does. server/_fastpath.pyx tests the "nothing to
        publish" case inline before calling this (keep in step).
        """
        effects = self._effects
        if effects is not None:
            self._effects = None
            if effects is PUBLISHED:
                return
        elif self.dirty == dirty_before or not self.effect_sinks:
            return
        else:
            effects = [(db_index, argv)]
        if len(effects) == 1 and self._tx_effects is None and not self.gated:
            # publish()'s common case inline (keep in step): one effect, outside
            # a transaction, not loading. A Python frame less per write.
            for sink in self.effect_sinks:
                sink(effects)
            return
        self.publish(effects)

    def drop_effects(self) -> None:
        """The command failed: whatever it propagated must not leave."""
        self._effects = None

    @property
    def in_transaction(self) -> bool:
        """True while a transaction's effects gather (EXEC, or a script's run)."""
        return self._tx_effects is not None

    def effects_mark(self) -> int:
        """How many effects the open transaction holds (for drop_effects_since)."""
        return len(self._tx_effects) if self._tx_effects is not None else 0

    def drop_effects_since(self, mark: int) -> None:
        """redis.set_repl(REPL_NONE): the effects gathered after `mark` do not leave."""
        if self._tx_effects is not None:
            del self._tx_effects[mark:]

    def begin_transaction(self) -> None:
        self._tx_effects = []

    def end_transaction(self) -> None:
        effects, self._tx_effects = self._tx_effects, None
        if effects:
            self.publish(effects)

    def publish(self, effects: list[Effect]) -> None:
        """Hand effects to the sinks (inside EXEC: to the transaction's), several
        wrapped in MULTI/EXEC so that a replica or a torn AOF never applies half.

        Not while loading: replayed commands are already in the files being loaded.
        (`gated` is False whenever not loading: it spares the property call.)
        """
        sinks = self.effect_sinks
        if not sinks or (self.gated and self._loading):
            return
        if self._tx_effects is not None:
            self._tx_effects.extend(effects)  # an expiry inside EXEC joins the transaction
            return
        if len(effects) > 1:
            effects = [(ANY_DB, [b"MULTI"]), *effects, (effects[-1][0], [b"EXEC"])]
        for sink in sinks:
            sink(effects)

    # --- WATCH ----------------------------------------------------------------
    def watch(self, client: Client, key: bytes) -> None:
        slot = (client.db.index, key)
        client.watched.add(slot)
        self.watched_keys.setdefault(slot, set()).add(client)

    def unwatch_all(self, client: Client) -> None:
        for slot in client.watched:
            watchers = self.watched_keys.get(slot)
            if watchers is not None:
                watchers.discard(client)
                if not watchers:
                    del self.watched_keys[slot]
        client.watched.clear()
        client.dirty_cas = False

    # --- blocking -------------------------------------------------------------
    def block(self, client: Client, request: Block) -> BlockedClient:
        deadline = 0
        if request.timeout_ms > 0:
            deadline = self.clock.now_ms() + request.timeout_ms
        slots = [(client.db.index, key) for key in request.keys]
        entry = BlockedClient(client, slots, request.argv, deadline, request.timeout_reply,
                              on_key_deleted=request.on_key_deleted,
                              shown_argv=request.shown_argv, duration_ns=request.duration_ns)
        client.blocked = entry
        for slot in slots:
            self.blocking.setdefault(slot, deque()).append(entry)
        self.stats.blocked_clients += 1
        return entry

    def unblock(self, client: Client) -> BlockedClient | None:
        entry = client.blocked
        if entry is None:
            return None
        client.blocked = None
        for slot in entry.keys:
            queue = self.blocking.get(slot)
            if queue is not None:
                try:
                    queue.remove(entry)
                except ValueError:
                    pass
                if not queue:
                    del self.blocking[slot]
                    self.ready_keys.pop(slot, None)
        self.stats.blocked_clients -= 1
        return entry

    def wake_key_at(self, due_ms: int, db_index: int, key: bytes) -> None:
        """Mark `key` ready at `due_ms`, so clients parked on it re-run their command."""
        heapq.heappush(self.key_wakeups, (due_ms, db_index, key))

    def fire_due_wakeups(self) -> int | None:
        """Mark due keys ready; returns the next due time, or None if none is left."""
        wakeups = self.key_wakeups
        now = self.clock.now_ms()
        while wakeups and wakeups[0][0] <= now:
            _, db_index, key = heapq.heappop(wakeups)
            slot = (db_index, key)
            if slot in self.blocking:
                self.ready_keys[slot] = None
        return wakeups[0][0] if wakeups else None

    def blocked_count(self) -> int:
        return self.stats.blocked_clients

    def info_uptime(self) -> int:
        return int(time.time() - self.stats.start_time)


# (Compiled: extension types, state.pxd; their fields read as slots from Python.)
as_slots(Client, ServerState)
