"""One client connection: bytes in, commands through the dispatcher, replies out.

All replies produced by one read go out in one transport write (pipelining
costs one syscall). A client parked on a blocking command keeps its later
commands in a backlog, as Redis does, until it is served or times out.

One client must not hold the loop: once a read's replies pass REPLY_CHUNK,
its remaining commands wait in the backlog for a later loop turn (other
clients are served between), and while the client does not read what it
was sent (the transport is over its high-water mark) they wait until it
does. `client-output-buffer-limit` closes a client whose unsent replies pass
the hard limit, or stay past the soft one for its seconds, as in Redis.

A connection can also be fed from a source (`stream`): the next piece is asked
for whenever the client has room below its high-water mark, so a replica that
resyncs partially is sent the backlog as fast as it reads it, not all at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from rillet import errors
from rillet.commands.connection import client_info_line
from rillet.compiled import compiled
from rillet.resp.encoder import INT_REPLIES, SIMPLE_REPLIES, encode_into
from rillet.resp.parser import YIELD_PENDING, RequestError, RequestParser
from rillet.resp.types import SimpleString
from rillet.server import protected
from rillet.state import Block, BlockedClient, Client, Connection

if TYPE_CHECKING:
    from rillet.server.server import Server

log = logging.getLogger("rillet")

# Past this many reply bytes in one turn, a client's remaining commands wait
# for the next turn (at 64 pipelined small commands a read stays far below).
REPLY_CHUNK = 256 * 1024
# Redis's PROTO_REPLY_CHUNK_BYTES: a client's reply buffer, outside the limits.
REPLY_BUFFER_BYTES = 16 * 1024
# Unsent bytes at which a client with no output limit stops being served.
NO_LIMIT_HIGH_WATER = 4 * 1024 * 1024

# The compiled command loop (see _fastpath.pyx and rillet/compiled.py); without
# it `data_received` and `_run` below run as written.
_fastpath = compiled("rillet.server._fastpath")


class ClientConnection(asyncio.Protocol, Connection):
    __slots__ = (
        "server", "state", "transport", "client", "parser", "backlog", "_addr", "_laddr", "_fd",
        "_paused", "_closed", "held", "net_in", "net_out", "commands", "unix", "_now_ms",
        "_execute", "_peer_host", "obuf_limited", "_soft_since", "reply_chunk", "source",
        "high_water", "_yielding",
    )

    def __init__(self, server: Server) -> None:
        self.server = server
        self.state = server.state
        # Bound methods looked up once: both are used on every request.
        self._now_ms = server.state.clock.now_ms
        self._execute = server.dispatcher.execute
        self.transport: asyncio.Transport | None = None
        self.client: Client | None = None
        self.parser: RequestParser | None = None
        self.backlog: list[list[bytes]] = []
        self._addr = ""
        self._laddr = ""
        self._fd = -1
        self._peer_host = ""
        self._paused = False
        self._yielding = False  # reading paused until the next loop turn (yield_reads)
        self._closed = False
        # Per-client totals for CLIENT LIST (tot-net-in, tot-net-out, tot-cmds).
        self.net_in = 0
        self.net_out = 0
        self.commands = 0
        self.unix = False
        # (ticket, reply) pairs waiting for the server's durability gate (Server.hold).
        self.held: list[tuple[int, bytes | bytearray | memoryview]] | None = None
        # True when this client's class has an output limit: replies then go
        # through send(), which checks it (the inline write path reads only this).
        self.obuf_limited = False
        self._soft_since = 0  # ms when the soft output limit was first seen passed
        # Without an event loop (a connection driven by hand) there is no later
        # turn to defer to, and no other client to serve meanwhile.
        self.reply_chunk = REPLY_CHUNK if server.loop is not None else 1 << 62
        self.source: Callable[[], bytes | memoryview | None] | None = None  # see stream()
        self.high_water = NO_LIMIT_HIGH_WATER

    # --- Connection interface used by handlers (CLIENT LIST/KILL) ---------------
    @property
    def addr(self) -> str:
        return self._addr

    @property
    def laddr(self) -> str:
        return self._laddr

    @property
    def fd(self) -> int:
        return self._fd

    @property
    def is_local(self) -> bool:
        return self.unix or self._peer_host in ("127.0.0.1", "::1")

    @property
    def output_buffer_size(self) -> int:
        """Reply bytes not yet taken by the socket (CLIENT LIST omem)."""
        transport = self.transport
        if transport is None or self._closed:
            return 0
        held = sum(len(payload) for _, payload in self.held) if self.held else 0
        return transport.get_write_buffer_size() + held

    @property
    def query_buffer_size(self) -> int:
        return self.parser.pending_size if self.parser is not None else 0

    def output_limits_changed(self) -> None:
        """Config or client class changed: re-read this client's limits and high-water mark."""
        client = self.client
        if client is None or self.transport is None:
            return
        hard, soft, _ = self.state.config["client-output-buffer-limit"][client.obuf_class]
        self.obuf_limited = bool(hard or soft)
        # Back-pressure: a client that does not read stops being served at the
        # high-water mark; with a limit set, not before the limit can be seen.
        high = max(hard, 2 * soft) if self.obuf_limited else NO_LIMIT_HIGH_WATER
        self.high_water = high
        self.transport.set_write_buffer_limits(high=high)

    def over_output_limit(self, pending: int = 0) -> bool:
        """Redis's checkClientOutputBufferLimits with `pending` more reply bytes."""
        client = self.client
        if client is None:
            return False
        hard: int
        soft: int
        soft_seconds: int
        hard, soft, soft_seconds = self.state.config["client-output-buffer-limit"][client.obuf_class]
        # Redis counts only its reply list, not the 16 kB buffer before it: a
        # small reply never trips a limit, however low.
        used = max(0, pending + self.output_buffer_size - REPLY_BUFFER_BYTES)
        if hard and used >= hard:
            return True
        if not (soft and used >= soft):
            self._soft_since = 0
            return False
        now = self._now_ms()
        if not self._soft_since:
            self._soft_since = now
            return False
        return (now - self._soft_since) // 1000 > soft_seconds

    def close_for_output_limit(self) -> None:
        """Over the limit: drop what is queued and close at once, as Redis frees the client."""
        client = self.client
        log.warning("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.",
                    client_description(client))
        self.state.stats.output_buffer_limit_disconnections += 1
        self.held = None
        self.backlog = []
        self._closed = True
        if client is not None:
            client.closing = True
        if self.transport is not None:
            self.transport.abort()

    def send(self, payload: bytes | bytearray | memoryview) -> None:
        if self.transport is not None and not self._closed:
            if self.obuf_limited and self.over_output_limit(len(payload)):
                self.close_for_output_limit()
                return
            client = self.client
            stats = self.state.stats
            stats.total_writes_processed += 1
            if client is not None and "S" in client.flags:
                stats.net_repl_output_bytes += len(payload)
            else:
                stats.net_output_bytes += len(payload)
            self.net_out += len(payload)
            server = self.server
            if self.held is not None:
                self.held.append((server.reply_ticket, payload))  # keep replies in order
                # This turn's ticket must be sealed too, or these bytes wait for
                # some other client's write (a replica's stream behind its fsync).
                server.schedule_flush()
            elif server.hold_replies or (
                server.flush_before_send and not server.durability.flush_for_send()  # type: ignore[union-attr]  # set with it
            ):
                self.held = [(server.reply_ticket, payload)]
                server.hold(self)
            else:
                self.transport.write(payload)

    def stream(self, source: Callable[[], bytes | memoryview | None]) -> None:
        """Send what `source()` returns, piece by piece, until it returns None: a piece
        whenever the client has room (under the high-water mark, counting held
        replies), now, as the transport drains, and as held replies go out."""
        self.source = source
        self.pull()

    def pull(self) -> None:
        """Take pieces from the source while there is room."""
        source = self.source
        while source is not None and not (self._paused or self._closed) and \
                self.output_buffer_size <= self.high_water:
            # (One more piece takes it past the mark: the transport then pauses us,
            # and resume_writing comes back here.)
            piece = source()
            if piece is None:
                if self.source is source:
                    self.source = None
                return
            self.send(piece)

    def close(self) -> None:
        if self.transport is not None and not self._closed:
            self._closed = True
            if self.held is None:  # else release_through closes after the last reply
                self.transport.close()

    def release_through(self, ticket: int) -> bool:
        """Send held replies up to `ticket`; True if later ones are still held."""
        held = self.held
        if held is None:
            return False
        n = 0
        while n < len(held) and held[n][0] <= ticket:
            n += 1
        out = [payload for _, payload in held[:n]]
        rest = held[n:]
        self.held = rest or None
        transport = self.transport
        if transport is None or transport.is_closing():
            self.held = None
            return False
        if out:
            transport.write(b"".join(out))
        if rest:
            return True
        if self._closed:
            transport.close()
        elif self.source is not None:
            self.pull()  # (what it holds now, send() handed to the server)
        return False

    def authenticated(self) -> None:
        if self.parser is not None:
            self.parser.authenticated = True

    # --- asyncio.Protocol ------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (a stream's is one)
        state = self.state
        state.stats.connections_received += 1
        peer = transport.get_extra_info("peername")
        sock = transport.get_extra_info("sockname")
        if isinstance(sock, str):
            # A unix socket client: Redis shows the socket path, port 0, for both.
            self._addr = self._laddr = f"{sock}:0"
            self.unix = True
        else:
            self._addr = _format_addr(peer)
            self._laddr = _format_addr(sock)
            if isinstance(peer, tuple):
                self._peer_host = str(peer[0])
        socket = transport.get_extra_info("socket")
        self._fd = socket.fileno() if socket is not None else -1
        # Redis's order: the client limit at accept, then protected mode.
        if len(state.clients) >= state.config["maxclients"]:
            self._refuse(errors.MAXCLIENTS)
            return
        if self._protected_mode_denies():
            self._refuse(errors.PROTECTED_MODE_DENIED)
            return
        self.client = state.new_client(self)
        config = state.config
        self.parser = RequestParser(config["proto-max-bulk-len"], config["client-query-buffer-limit"])
        if config["tls-auth-clients-user"] != "off":
            self._certificate_login(transport)
        self.parser.authenticated = self.client.authenticated
        self.output_limits_changed()
        self.server.connections.add(self)

    def _certificate_login(self, transport: asyncio.BaseTransport) -> None:
        """Redis 8.6's `tls-auth-clients-user CN`: the Common Name of the client's verified
        certificate names the ACL user the connection starts as, with no AUTH. A name
        with no enabled user leaves the connection as it was (the default user) and
        is denied in the ACL LOG (reason tls-cert) and INFO's acl_access_denied_tls_cert."""
        cert = transport.get_extra_info("peercert")  # (only a verified one; None without TLS)
        if not cert:
            return
        # The subject's first commonName, as Redis's X509_NAME_get_index_by_NID.
        name = next((value for rdn in cert.get("subject", ()) for key, value in rdn
                     if key == "commonName"), None)
        if name is None:
            return
        client = self.client
        assert client is not None
        username = name.encode("utf-8", "surrogateescape")
        acl = self.state.acl
        user = acl.users.get(username)
        if user is not None and user.enabled:
            client.set_user(user)
            client.authenticated = True
            return
        now = self.state.clock.now_ms()
        acl.add_log("tls-cert", "toplevel", b"", username, client_info_line(client, now), now,
                    self.state.config["acllog-max-len"])

    def adopt(self, transport: asyncio.BaseTransport) -> None:
        """The event loop takes over a connection accepted while a script was busy
        (server/busy.py): same client, the loop's transport from now on."""
        self.transport = cast(asyncio.Transport, transport)
        self.output_limits_changed()

    def _protected_mode_denies(self) -> bool:
        """Redis's protected mode (server/protected.py, the console's rule too)."""
        return protected.refuses(self.state, self._peer_host, self.unix)

    def _refuse(self, message: str) -> None:
        self.state.stats.rejected_connections += 1
        transport = self.transport
        if transport is None:
            return
        transport.write(b"-%s\r\n" % message.encode())
        self._closed = True
        transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.server.connections.discard(self)
        if self.client is not None:
            self.state.remove_client(self.client)
            self.server.cancel_block_timer(self.client)
            # The client and this protocol, and the transport and this protocol, refer
            # to each other: with both links cut a closed connection is freed by
            # reference counting. Left to the cycle collector it would not be once
            # frozen (rillet/gcpolicy.py freezes long-lived objects out of its reach).
            # Whoever still holds the client (a replica entry, a WAIT) keeps a
            # connection whose sends do nothing; the protocol lets go of the client
            # once this loop turn is over (a busy script's turn may still use it).
            loop = self.server.loop
            if loop is None:
                self.client = None
            else:
                loop.call_soon(self._forget_client)
        self.transport = None
        self.source = None  # (it refers to this client's replica entry)

    def _forget_client(self) -> None:
        self.client = None

    def pause_writing(self) -> None:
        if self.transport is not None and not self._paused:
            self._paused = True
            self.transport.pause_reading()

    def yield_reads(self) -> None:
        """A big command is still arriving: its next read waits for the next loop turn.

        Redis reads a client once per event-loop turn, so the others are served
        between the reads of one big command; uvloop reads a socket up to 32
        times in one callback, which let a 20 MB command hold the loop whole.
        """
        loop = self.server.loop
        if loop is None or self._yielding or self.transport is None:
            return
        self._yielding = True
        self.transport.pause_reading()
        loop.call_soon(self._end_yield)

    def _end_yield(self) -> None:
        self._yielding = False
        if self.transport is not None and not self._paused and not self._closed:
            self.transport.resume_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and self._paused:
            self._paused = False
            self.transport.resume_reading()
            if self.backlog:
                self.server.run_later(self)
            if self.source is not None:
                self.pull()

    def data_received(self, data: bytes) -> None:
        # `_fastpath.data_received` replaces this when built: keep the two in step.
        client = self.client
        parser = self.parser
        if client is None or parser is None or self._closed:
            return
        state = self.state
        size = len(data)
        stats = state.stats
        stats.net_input_bytes += size
        stats.total_reads_processed += 1
        self.net_in += size
        # RESET (or a changed requirepass) can take authentication away again;
        # the unauthenticated request-size limits must follow.
        parser.authenticated = client.authenticated
        commands, error = parser.feed(data)
        client.last_interaction_ms = self._now_ms()
        out = bytearray()
        if commands:
            if client.blocked is not None or self.backlog:
                self.backlog.extend(commands)
            else:
                self._run(commands, out)
        if error is not None and not client.closing:
            self.protocol_error(error, out)
        server = self.server
        if out:
            # send()'s common case inline (no reply held, no durability gate
            # armed): at one command per read each Python call is ~5% of the cost.
            if self.held is None and self.transport is not None and not (
                server.hold_replies or server.flush_before_send or self._closed
                or self.obuf_limited
            ):
                size = len(out)
                stats.net_output_bytes += size
                stats.total_writes_processed += 1
                self.net_out += size
                self.transport.write(out)
            else:
                self.send(out)
        if client.closing:
            self.close()
        elif parser.pending_size > YIELD_PENDING:
            self.yield_reads()
        # Server.after_batch's triggers, tested here so that a read with nothing
        # for it to do costs no call (keep in step with after_batch).
        if (
            state.key_wakeups
            or state.ready_keys
            or server.before_flush
            or state.shutdown_requested is not None
        ):
            server.after_batch()

    def protocol_error(self, error: RequestError, out: bytearray) -> None:
        """The request stream broke: its error (if it has one) is the last reply."""
        if error.message:
            out += b"-%s\r\n" % error.message.encode("utf-8", "surrogateescape")
        if error.log:  # the query buffer limit
            log.warning("%s (client %s)", error.log, self._addr)
            self.state.stats.query_buffer_limit_disconnections += 1
        if self.client is not None:
            self.client.closing = True

    def _run(self, commands: list[list[bytes]], out: bytearray) -> None:
        """Execute commands in order until one blocks; the rest wait in the backlog.

        `_fastpath.run` replaces this when built: keep the two in step.
        """
        client = self.client
        if client is None:
            return
        execute = self._execute
        state = self.state
        # A plain counter, not enumerate(): cheaper for the one-command reads
        # of unpipelined clients.
        done = 0
        for argv in commands:
            done += 1
            # Any: the branches below test its class through `kind`, which mypy cannot follow.
            reply: Any = execute(client, argv)
            if state.ready_keys:
                # Clients parked on a key this command readied are served before
                # the pipeline's next command runs, as in Redis.
                self.server.serve_ready()
            kind = reply.__class__
            # The three commonest reply kinds are encoded inline: a call to the
            # generic encoder costs as much as a whole PING.
            if kind is bytes:
                out += b"$%d\r\n%s\r\n" % (len(reply), reply)
            elif kind is SimpleString:
                out += SIMPLE_REPLIES.get(reply) or b"+%s\r\n" % reply
            elif kind is int and 0 <= reply < 1024:
                out += INT_REPLIES[reply]
            elif kind is Block:
                self.park_rest(commands, done, reply)
                return
            else:
                encode_into(out, reply, client.resp3)
            if client.closing:
                self.commands += done
                return
            if len(out) > self.reply_chunk and done < len(commands):
                self.defer_rest(commands, done)
                return
        self.commands += done

    if _fastpath is not None:
        # The same two methods, compiled (see _fastpath.pyx).
        data_received = _fastpath.data_received  # noqa: F811
        _run = _fastpath.run  # noqa: F811

    def park_rest(self, commands: list[list[bytes]], done: int, request: Block) -> None:
        """The `done`-th command blocked: park the client, keep the rest in the backlog."""
        self.commands += done
        self.backlog = commands[done:]
        self.server.park(self, request)

    def defer_rest(self, commands: list[list[bytes]], done: int) -> None:
        """This read's replies passed REPLY_CHUNK: the rest waits for a later loop turn."""
        self.commands += done
        self.backlog = commands[done:]
        self.server.run_later(self)

    def run_backlog(self) -> None:
        """Run deferred commands, unless the client is parked, gone, or not reading."""
        client = self.client
        if (client is None or self._closed or self._paused or client.blocked is not None
                or not self.backlog):
            return
        out = bytearray()
        self._run_backlog_into(out)
        if out:
            self.send(out)
        if client.closing:
            self.close()

    def _run_backlog_into(self, out: bytearray) -> None:
        pending, self.backlog = self.backlog, []
        self._run(pending, out)

    def unblocked(self, entry: BlockedClient, reply: object) -> None:
        """The parked command got its answer: send it, then run what queued behind it."""
        if self.client is None:  # gone (connection_lost)
            return
        out = bytearray()
        encode_into(out, reply, self.client.resp3)
        if self.backlog and not self.client.closing:
            self._run_backlog_into(out)
        self.send(out)
        if self.client.closing:
            self.close()


def client_description(client: Client | None) -> str:
    """The CLIENT LIST line Redis logs for a client it closes."""
    if client is None:
        return "(unknown)"
    return client_info_line(client, client.server.clock.now_ms())


def _format_addr(addr: object) -> str:
    if isinstance(addr, tuple) and len(addr) >= 2:
        host = addr[0]
        return f"[{host}]:{addr[1]}" if ":" in str(host) else f"{host}:{addr[1]}"
    if isinstance(addr, str):
        return addr or "/unixsocket"
    return ""
