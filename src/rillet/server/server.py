"""The network server: listeners, blocked-client wake-ups, timers, shutdown.

`Server` wires a `ServerState` and a `Dispatcher` to asyncio (uvloop when
available). After every read batch it serves clients blocked on keys that
became ready, FIFO per key, before the loop goes back to waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import socket
import ssl
import sys
from collections.abc import Awaitable, Callable, Coroutine
from time import perf_counter_ns
from typing import Any, Protocol

from rillet import REDIS_COMPAT_VERSION, __version__, errors, gcpolicy, serverlog
from rillet.acl import RuleError
from rillet.clock import Clock
from rillet.commands import table
from rillet.commands.acl import load_startup_users
from rillet.commands.functions import restore_library
from rillet.commands.hashes import active_expire_fields
from rillet.commands.policies import RetentionCycle
from rillet.commands.server import sample_instantaneous
from rillet.config import Config, ConfigError, signal_save
from rillet.dispatch import Dispatcher
from rillet.errors import ReplyError
from rillet.server import busy
from rillet.server.connection import ClientConnection, _fastpath
from rillet.server.tls import TlsConfigError, server_context
from rillet.state import KEEP_WAITING, Block, BlockedClient, Client, ServerState

log = logging.getLogger("rillet")


class Durability(Protocol):
    """The AOF's gate on replies (persistence/manager.py provides it; see Server.__init__)."""

    def flush_for_send(self) -> bool: ...
    def seal(self, ticket: int) -> bool: ...


class ListenError(Exception):
    """A port could not be bound at start (logged as Redis logs it): the server exits 1."""


class Server:
    def __init__(self, config: Config | None = None, clock: Clock | None = None) -> None:
        self.state = ServerState(config, clock)
        self.config = self.state.config
        self.dispatcher = Dispatcher(self.state)
        if _fastpath is not None:
            self.dispatcher.run_replicated = _fastpath.run_replicated
        self.state.on_unblocked = self._deliver
        self.state.serve_while_busy = lambda running: busy.serve_others(self, running)
        self.state.pubsub.on_pending = self._pubsub_pending
        self.state.library_loader = functools.partial(restore_library, self.state)
        self.connections: set[ClientConnection] = set()
        self._listeners: list[asyncio.base_events.Server] = []
        # The TCP and unix listeners (not TLS): busy.py accepts on them while a
        # script is busy, through handles of its own (made on first use).
        self.plain_listeners: list[asyncio.base_events.Server] = []
        self.tcp_listeners: list[asyncio.base_events.Server] = []  # on `port`
        self.busy_listeners: list[socket.socket] | None = None
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._wakeup_timer: asyncio.TimerHandle | None = None
        self._wakeup_due = 0
        self._field_expiry_cursors: dict[int, int] = {}  # db index -> the hash-field sweep's SCAN cursor
        self._retention = RetentionCycle()  # commands/policies.py: RILLET.XRETENTION in the cron
        self._stopped: asyncio.Event | None = None
        self._tasks: list[asyncio.Future[None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0
        self.tls_port = 0
        self.tls_context: ssl.SSLContext | None = None  # built by run() before the loop starts
        # Called once per event-loop batch before replies are flushed (persistence).
        self.before_flush: list[Callable[[], None]] = []
        # Called with SHUTDOWN's choice: True (SAVE), False (NOSAVE), None (default:
        # save if save points are configured, as on SIGTERM).
        self.on_shutdown: list[Callable[[bool | None], None]] = []
        # Durability gate (persistence installs `durability`), so no client sees a
        # reply to a write the AOF does not hold yet:
        # - `flush_before_send`: write the AOF buffer before the next reply goes
        #   out (appendfsync everysec/no): `durability.flush_for_send() -> bool`.
        # - `hold_replies`: replies wait in their connection, tagged with
        #   `reply_ticket`; once per event-loop turn `flush_held` seals the ticket
        #   (`durability.seal(ticket) -> bool`, True if durable now) and sends the
        #   replies, else persistence calls `release_through(ticket)` when the
        #   fsync is done (appendfsync always: one fsync per turn, overlapped).
        self.durability: Durability | None = None
        self.flush_before_send = False
        self.hold_replies = False
        self.reply_ticket = 1
        self._held: list[ClientConnection] = []
        self._flush_scheduled = False
        self._serving_ready = False  # serve_ready is running (it does not nest)
        self.cron_hooks: list[Callable[[], None]] = []  # run on every cron tick
        self.cron_hooks.append(self.state.memory.cron)  # LRU/LFU clocks, eviction carried on
        self.cron_hooks.append(functools.partial(sample_instantaneous, self.state))  # INFO's rates
        self.config.watch("client-output-buffer-limit", lambda _value: self._output_limits_changed())
        self.config.watch("port", self._port_changed)
        self.startup_tasks: list[Callable[[], Awaitable[None]]] = []  # started once listening
        # Bind more listeners (the console's: server/http.py) beside the RESP ones,
        # before any of them accepts; each returns what it bound.
        self.bind_hooks: list[Callable[[], Awaitable[list[asyncio.base_events.Server]]]] = []
        # Loads the dataset once listening (clients get -LOADING meanwhile); False if it
        # failed and the server is exiting. The server is ready when it returns True.
        self.load_dataset: Callable[[], Awaitable[bool]] | None = None
        # Asked before a shutdown (replication: lagging replicas are waited for);
        # True if it calls the shutdown back itself.
        self.shutdown_gate: Callable[[Callable[[], None]], bool] | None = None
        self.exit_code = 0

    # --- start / stop -----------------------------------------------------------
    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        # (Redis logs it before it binds: a port it cannot bind is logged after it.)
        serverlog.announce_mode(self.config, self.config["port"] or self.config["tls-port"],
                                f"{__version__} (Redis {REDIS_COMPAT_VERSION} compatible)")
        try:
            tcp = await self._create_listeners()
            for bind in self.bind_hooks:
                self._listeners.extend(await bind())
        except BaseException:
            for listener in self._listeners:
                listener.close()
            raise
        # Every listener is bound before any of them accepts (Redis binds them all
        # before its event loop runs): a client that got PONG on the plain port
        # finds the TLS port and the unix socket open too. The plain TCP ones
        # start last, as asyncio's start_serving yields to the loop after each.
        for listener in sorted(self._listeners, key=lambda each: each in tcp):
            await listener.start_serving()
        log.info("Server initialized")
        self._tasks.append(asyncio.ensure_future(self._cron()))
        for task in self.startup_tasks:
            self._tasks.append(asyncio.ensure_future(task()))
        self._tasks.append(asyncio.ensure_future(self._load_then_announce()))

    async def _load_then_announce(self) -> None:
        # As Redis: "ready to accept connections" once the data is loaded, never
        # before a load that fails.
        if self.load_dataset is not None and not await self.load_dataset():
            return
        # One line per kind of listener, in Redis's order (its connection types').
        for kind, listening in (("tcp", self.port), ("unix", self.config["unixsocket"]),
                                ("tls", self.tls_port)):
            if listening:
                log.info("Ready to accept connections %s", kind)

    async def _create_listeners(self) -> list[asyncio.base_events.Server]:
        """Bind every listener (`start_serving=False`: none accepts yet) into
        `_listeners`; returns the plain TCP ones."""
        config = self.config
        loop = asyncio.get_running_loop()
        tcp: list[asyncio.base_events.Server] = []
        backlog = config["tcp-backlog"]
        port = config["port"]
        if port:
            for host in str(config["bind"]).split():
                listener = await self._bind(loop.create_server(
                    lambda: ClientConnection(self), host.lstrip("-"), port, backlog=backlog,
                    reuse_address=True, start_serving=False,
                ), host.lstrip("-"), port, "tcp")
                self._listeners.append(listener)
                self.plain_listeners.append(listener)
                self.tcp_listeners.append(listener)
                tcp.append(listener)
                if not self.port:
                    self.port = listener.sockets[0].getsockname()[1]
        tls_port = config["tls-port"]
        if tls_port:
            context = self.tls_context or server_context(config)
            for host in str(config["bind"]).split():
                listener = await self._bind(loop.create_server(
                    lambda: ClientConnection(self), host.lstrip("-"), tls_port, backlog=backlog,
                    reuse_address=True, ssl=context, start_serving=False,
                ), host.lstrip("-"), tls_port, "tls")
                self._listeners.append(listener)
                if not self.tls_port:
                    self.tls_port = listener.sockets[0].getsockname()[1]
        if config["unixsocket"]:
            path = str(config["unixsocket"])
            if os.path.exists(path):
                os.unlink(path)
            listener = await loop.create_unix_server(
                lambda: ClientConnection(self), path, backlog=backlog, start_serving=False,
            )
            if config["unixsocketperm"]:
                os.chmod(path, config["unixsocketperm"])
            self._listeners.append(listener)
            self.plain_listeners.append(listener)
        return tcp

    @staticmethod
    async def _bind(creating: Awaitable[asyncio.base_events.Server], host: str, port: int,
                    kind: str) -> asyncio.base_events.Server:
        try:
            return await creating
        except OSError as error:
            log.warning("Warning: Could not create server TCP listening socket %s:%d: bind: %s",
                        host, port, os.strerror(error.errno or 0))
            log.warning("Failed listening on port %d (%s), aborting.", port, kind)
            raise ListenError(port) from None

    def _port_changed(self, port: int) -> None:
        """CONFIG SET port: bind the new port now (a failure is CONFIG SET's error and
        the old port stays), then close the old one, as Redis's changeListener."""
        if self.loop is None or self._stopped is None or self._stopped.is_set() or port == self.port:
            return
        config = self.config
        sockets: list[socket.socket] = []
        if port:
            for host in str(config["bind"]).split():
                host = host.lstrip("-")
                try:
                    sockets.append(socket.create_server(
                        (host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                        backlog=config["tcp-backlog"]))
                except OSError as error:
                    for sock in sockets:
                        sock.close()
                    log.warning("Warning: Could not create server TCP listening socket %s:%d:"
                                " bind: %s", host, port, os.strerror(error.errno or 0))
                    raise ConfigError(errors.CONFIG_PORT_UNUSABLE) from None
        for listener in self.tcp_listeners:
            listener.close()
            self._listeners.remove(listener)
            self.plain_listeners.remove(listener)
        self.tcp_listeners = []
        for handle in self.busy_listeners or ():  # busy.py's own handles on the old sockets
            handle.close()
        self.busy_listeners = None
        self.port = port
        for sock in sockets:
            self._tasks.append(asyncio.ensure_future(self._serve_on(sock)))

    async def _serve_on(self, sock: socket.socket) -> None:
        # Already listening: clients that connect meanwhile wait in the backlog.
        listener = await asyncio.get_running_loop().create_server(
            lambda: ClientConnection(self), sock=sock, backlog=self.config["tcp-backlog"])
        if self._stopped is not None and self._stopped.is_set():
            listener.close()
            return
        self._listeners.append(listener)
        self.plain_listeners.append(listener)
        self.tcp_listeners.append(listener)
        self.busy_listeners = None

    async def wait_closed(self) -> None:
        assert self._stopped is not None
        await self._stopped.wait()

    def request_shutdown(self, save: bool | None = None, now: bool = False) -> None:
        """Shut down, once the shutdown gate lets it (unless `now`: SHUTDOWN NOW)."""
        if self._stopped is None or self._stopped.is_set():
            return
        log.info("User requested shutdown...")
        gate = self.shutdown_gate
        if not now and gate is not None and gate(lambda: self._shut_down(save)):
            return
        self._shut_down(save)

    def _shut_down(self, save: bool | None) -> None:
        if self._stopped is None or self._stopped.is_set():
            return
        self._close_listeners()
        for hook in self.on_shutdown:
            try:
                hook(save)
            except Exception:
                log.exception("error during shutdown hook")
        pidfile = str(self.config["pidfile"])
        if pidfile:
            log.info("Removing the pid file.")
            with contextlib.suppress(OSError):
                os.unlink(pidfile)
        self._close_down(announce=True)
        log.warning("rillet is now ready to exit, bye bye...")
        self._stopped.set()

    def abort(self, exit_code: int) -> None:
        """Stop without a shutdown (no hooks, no save): Redis's exit() where it cannot go on."""
        if self._stopped is None or self._stopped.is_set():
            return
        self.exit_code = exit_code
        self._close_listeners()
        self._close_down()
        self._stopped.set()

    def _close_listeners(self) -> None:
        for listener in self._listeners:
            listener.close()
        for handle in self.busy_listeners or ():
            handle.close()
        self.busy_listeners = []

    def _close_down(self, announce: bool = False) -> None:
        for conn in list(self.connections):
            conn.close()
        for task in self._tasks:
            task.cancel()
        if self.config["unixsocket"] and os.path.exists(str(self.config["unixsocket"])):
            if announce:
                log.info("Removing the unix socket file.")
            os.unlink(str(self.config["unixsocket"]))

    # --- batches and blocking ------------------------------------------------------
    def after_batch(self) -> None:
        """End of one read: wake blocked clients, flush persistence, honour SHUTDOWN.

        ClientConnection.data_received calls this only when one of the triggers
        tested below is set: a new trigger must be added to its test too.
        """
        if self.state.key_wakeups:
            self._schedule_wakeups()
        if self.state.ready_keys:
            self.serve_ready()
        for hook in tuple(self.before_flush):  # a hook may remove itself (_flush_pubsub)
            hook()
        if self.state.shutdown_requested is not None:
            request, self.state.shutdown_requested = self.state.shutdown_requested, None
            save = True if request.get("save") else (False if request.get("nosave") else None)
            self.request_shutdown(save=save, now=bool(request.get("now")))

    # --- pub/sub ------------------------------------------------------------------------
    def _pubsub_pending(self) -> None:
        """A message waits for a subscriber: flush at the end of this loop turn, after
        every read of the poll (Redis's beforeSleep: at -P 64 with many publishers, one
        write per subscriber for several reads); without a loop, at the end of the read.
        A subscriber's own commands flush first (PubSub.enter), so its replies stay
        behind the messages it was sent before them."""
        if self.loop is not None:
            self.loop.call_soon(self.state.pubsub.flush)
        else:
            self.before_flush.append(self._flush_pubsub)

    def _flush_pubsub(self) -> None:
        if self._flush_pubsub in self.before_flush:
            self.before_flush.remove(self._flush_pubsub)
            self.state.pubsub.flush()

    # --- durability gate -------------------------------------------------------------
    def hold(self, conn: ClientConnection) -> None:
        """`conn` started holding replies: make sure this turn's ticket gets sealed."""
        self._held.append(conn)
        self.schedule_flush()

    def schedule_flush(self) -> None:
        if self._flush_scheduled:
            return
        self._flush_scheduled = True
        if self.loop is None:
            self.flush_held()
        else:
            # Runs after every read callback of this loop iteration: one AOF write
            # and one fsync serve all the clients and pipelines of the turn.
            self.loop.call_soon(self.flush_held)

    def flush_held(self) -> None:
        self._flush_scheduled = False
        ticket = self.reply_ticket
        self.reply_ticket = ticket + 1
        durability = self.durability
        if durability is None or durability.seal(ticket):
            self.release_through(ticket)

    def release_through(self, ticket: int) -> None:
        """Send every held reply tagged `ticket` or earlier."""
        keep = []
        for conn in self._held:
            if conn.release_through(ticket):
                keep.append(conn)
        self._held = keep

    # --- clients that must wait their turn -------------------------------------------
    def run_later(self, conn: ClientConnection) -> None:
        """Run `conn`'s deferred commands in a later loop turn, after other clients' reads."""
        assert self.loop is not None, "connections without a loop never defer"
        self.loop.call_soon(self._run_deferred, conn)

    def _run_deferred(self, conn: ClientConnection) -> None:
        conn.run_backlog()
        self.after_batch()  # its writes may have readied keys, or need the AOF flushed

    def _output_limits_changed(self) -> None:
        for conn in self.connections:
            conn.output_limits_changed()

    def _check_output_limits(self) -> None:
        """A soft limit's time runs while a client reads nothing: the cron looks too."""
        for conn in list(self.connections):
            if conn.obuf_limited and conn.output_buffer_size and conn.over_output_limit():
                conn.close_for_output_limit()

    def _schedule_wakeups(self) -> None:
        """Fire due clock-based key wake-ups; arm one timer for the next one."""
        next_due = self.state.fire_due_wakeups()
        if next_due is None or self.loop is None:
            return
        if self._wakeup_timer is not None:
            if self._wakeup_due <= next_due:
                return
            self._wakeup_timer.cancel()
        delay = max(0, next_due - self.state.clock.now_ms()) / 1000
        self._wakeup_due = next_due
        self._wakeup_timer = self.loop.call_later(delay, self._wakeup_fired)

    def _wakeup_fired(self) -> None:
        self._wakeup_timer = None
        self.after_batch()

    def park(self, conn: ClientConnection, request: Block) -> None:
        state = self.state
        client = conn.client
        if client is None:  # gone: nothing to park
            return
        entry = state.block(client, request)
        if request.timeout_ms > 0 and self.loop is not None:
            self._timers[client.id] = self.loop.call_later(
                request.timeout_ms / 1000, self._timed_out, client, entry
            )

    def cancel_block_timer(self, client: Client) -> None:
        timer = self._timers.pop(client.id, None)
        if timer is not None:
            timer.cancel()

    def _timed_out(self, client: Client, entry: BlockedClient) -> None:
        self._timers.pop(client.id, None)
        if client.blocked is not entry:
            return
        self.state.unblock(client)
        self._deliver(client, entry, entry.timeout_reply)
        self.after_batch()

    def _deliver(self, client: Client, entry: BlockedClient, reply: object) -> None:
        self.cancel_block_timer(client)
        if entry.shown_argv is not None:  # a blocked command reaches the slow log now
            self.state.log_slow(client, entry.shown_argv, entry.duration_ns)
        conn = client.conn
        if isinstance(conn, ClientConnection):
            conn.unblocked(entry, reply)

    def serve_ready(self) -> None:
        """Re-run the commands of clients parked on ready keys, FIFO per key.

        Called after each command that readied a key (ClientConnection._run), as
        Redis's processCommand calls handleClientsBlockedOnKeys, so a pipeline's
        next command cannot take what a parked client was waiting for. Like
        Redis's, it does not nest (a served client's backlog readying keys is
        served by the loop below) and does not run while a busy script yields
        to other clients: their BUSY replies must not reach parked clients.
        """
        state = self.state
        if self._serving_ready or state.script_busy is not None:
            return
        self._serving_ready = True
        try:
            self._serve_ready()
        finally:
            self._serving_ready = False

    def _serve_ready(self) -> None:
        state = self.state
        execute = self.dispatcher.execute
        rounds = 0
        while state.ready_keys and rounds < 1000:
            rounds += 1
            ready = list(state.ready_keys)
            state.ready_keys.clear()
            for slot in ready:
                queue = state.blocking.get(slot)
                if not queue:
                    continue
                for entry in list(queue):
                    client = entry.client
                    if client.blocked is not entry:
                        continue
                    client.blocked_retry = True
                    try:
                        reply = execute(client, entry.argv)
                    finally:
                        client.blocked_retry = False
                    if reply is KEEP_WAITING:
                        continue
                    if reply.__class__ is Block:
                        # A handler must not block again on a retry; treat as still waiting.
                        continue
                    state.unblock(client)
                    self._deliver(client, entry, reply)

    # --- periodic work ---------------------------------------------------------------
    async def _cron(self) -> None:
        """Redis's serverCron: active expiry, idle clients, GC freezing."""
        ticks = 0
        loop = asyncio.get_running_loop()
        gc_cron = gcpolicy.GcCron(self.config.__getitem__)
        while True:
            hz = int(self.config["hz"])
            due_ns = perf_counter_ns() + 1_000_000_000 // hz
            await asyncio.sleep(1 / hz)
            if self.state.cron_paused:
                continue
            ticks += 1
            tick_started = perf_counter_ns()
            try:
                state = self.state
                if state.pause_end_ms and state.clock.now_ms() >= state.pause_end_ms:
                    state.unpause()  # a pause no command came to end (expiry waits on it)
                started = perf_counter_ns()
                for db in self.state.keyspace.dbs if self.state.active_expire_enabled else ():
                    if db.expires or db.avg_ttl:  # (no TTL left: avg_ttl drops to 0)
                        db.active_expire()
                    if len(db):
                        # Hash fields past their TTL (`hexpired`, HDEL), a slice per tick.
                        cursors = self._field_expiry_cursors
                        cursors[db.index] = active_expire_fields(self.state, db, cursors.get(db.index, 0), 200)
                        self._retention.run(self.state, db)  # RILLET.XRETENTION's aged entries
                state.latency_sample("expire-cycle", perf_counter_ns() - started)
                if self.state.ready_keys:
                    self.serve_ready()
                timeout = int(self.config["timeout"])
                if ticks % hz == 0:
                    if timeout:
                        self._close_idle(timeout)
                    self._check_output_limits()
                gc_cron.tick(loop.time())  # gcpolicy.py: freezing, and its safety net
                for hook in tuple(self.before_flush):
                    hook()
                for hook in self.cron_hooks:
                    hook()
                # INFO debug's eventloop_duration_cron_sum/_max: a timer late by more
                # than libuv's millisecond rounding was held up by a long cycle.
                state.event_loop.cron_ran((perf_counter_ns() - tick_started) // 1000,
                                          max(tick_started - due_ns - 1_000_000, 0) // 1000)
            except Exception:
                log.exception("error in periodic task")

    def _close_idle(self, timeout_s: int) -> None:
        now = self.state.clock.now_ms()
        for conn in list(self.connections):
            client = conn.client
            if client is None or client.blocked is not None:
                continue
            if (now - client.last_interaction_ms) // 1000 > timeout_s:
                conn.close()


def configure_interpreter() -> None:
    """Interpreter settings for a server process (run() applies them)."""
    # The collector's thresholds, and what startup built frozen (gcpolicy.py).
    gcpolicy.start()
    # The AOF's fsync thread needs the GIL to pick up a job and again to
    # report it done; with the default 5 ms switch interval a busy event loop
    # kept it waiting up to 5 ms each time, so under `appendfsync always` an
    # fsync cycle took ~15 ms for 0.1 ms of fsync (62 fsyncs/s, held replies
    # waiting). The interval only matters while another thread wants the GIL.
    sys.setswitchinterval(0.0005)


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine on uvloop when it is installed, else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency; keep working without it
        asyncio.run(main)
        return
    uvloop.run(main)


def _request_shutdown(server: Server, setting: str) -> None:
    serverlog.log_signal(setting.removeprefix("shutdown-on-").upper())
    flags = server.config[setting]
    server.request_shutdown(save=signal_save(flags), now="now" in flags)


async def serve(server: Server, ready: Callable[[Server], None] | None = None) -> None:
    try:
        await server.start()
    except ListenError:
        server.exit_code = 1
        return
    loop = asyncio.get_running_loop()
    for sig, setting in ((signal.SIGTERM, "shutdown-on-sigterm"),
                         (signal.SIGINT, "shutdown-on-sigint")):
        try:
            # Read when the signal comes: CONFIG SET may have changed it.
            loop.add_signal_handler(sig, _request_shutdown, server, setting)
        except (NotImplementedError, RuntimeError):
            pass
    if ready is not None:
        ready(server)
    await server.wait_closed()


def _enable_cluster(server: Server) -> bool:
    """cluster-enabled yes: the node table from nodes.conf (made if missing), its state
    kept current by the cron, as Redis's clusterCron; False if it cannot be had."""
    from rillet.cluster.state import ConfigFileError
    from rillet.commands.cluster import attach_bus, enable

    try:
        enable(server.state)
    except ConfigFileError as error:
        log.error('Unrecoverable error: corrupted cluster config file "%s".', error)
        return False
    except OSError as error:
        log.error("Fatal: can't update cluster config file: %s", error)
        return False
    bus = attach_bus(server.state)  # cluster/bus.py: links to the other nodes, its cron
    server.bind_hooks.append(bus.bind)
    server.cron_hooks.append(bus.cron)
    return True


def run(config: Config) -> int:
    """Run a server until SHUTDOWN or a signal; returns the process exit code."""
    configure_interpreter()
    # `replicaof` follows REPLICAOF (replication/core.py): S from then on, as in Redis.
    serverlog.server_started(lambda: bool(config["replicaof"]))
    log.info("monotonic clock: POSIX clock_gettime")
    for old, new in config.renamed_commands:
        problem = table.rename(old, new)
        if problem is not None:
            log.error("%s", problem)
            return 1
    server = Server(config)
    try:
        load_startup_users(server.state.acl, config)
    except RuleError as error:
        log.error("Aborting Redis startup because of ACL errors: %s", error.reason)
        return 1
    if config["tls-port"]:
        try:
            server.tls_context = server_context(config)
        except TlsConfigError as error:
            log.error("%s", error)
            log.error("Failed to configure TLS. Check logs for more info.")
            return 1
    if config["cluster-enabled"] and not _enable_cluster(server):
        return 1
    from rillet.persistence import attach as attach_persistence

    try:
        attach_persistence(server)
    except ReplyError as error:
        log.error("%s", error.message)
        return 1
    if server.state.persistence is not None:
        # What an AOF's replay ran is not counted in INFO commandstats/latencystats.
        server.state.persistence.after_load.append(lambda _progress: table.reset_call_stats())
    from rillet.replication import attach as attach_replication

    attach_replication(server)  # replication hook: roles, backlog, WAIT (rillet/replication)
    if config["http-port"]:  # (immutable; the console's modules load only for it)
        from rillet.server.http import attach as attach_console

        attach_console(server)  # the web console and /metrics
    run_loop(serve(server))
    return server.exit_code
