"""One client connection: bytes in, commands through the dispatcher, replies out.

All replies produced by one read go out in one transport write (pipelining
costs one syscall). A client parked on a blocking command keeps its later
commands in a backlog, as Redis does, until it is served or times out.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING

from rillet import errors
from rillet.resp.encoder import INT_REPLIES, SIMPLE_REPLIES, encode_into
from rillet.resp.parser import RequestError, RequestParser
from rillet.resp.types import SimpleString
from rillet.state import Block, BlockedClient, Connection

if TYPE_CHECKING:
    from rillet.server.server import Server

log = logging.getLogger("rillet")

try:
    # The compiled command loop (see _fastpath.pyx); optional: without it, or
    # with RILLET_PURE set, `data_received` and `_run` below run as written.
    if os.environ.get("RILLET_PURE"):
        raise ImportError("RILLET_PURE is set")
    from rillet.server import _fastpath
except ImportError:
    _fastpath = None


class ClientConnection(asyncio.Protocol, Connection):
    __slots__ = (
        "server", "state", "transport", "client", "parser", "backlog", "_addr", "_laddr", "_fd",
        "_paused", "_closed", "held", "net_in", "net_out", "commands", "unix", "_now_ms",
        "_execute", "_peer_host",
    )

    def __init__(self, server: Server) -> None:
        self.server = server
        self.state = server.state
        # Bound methods looked up once: both are used on every request.
        self._now_ms = server.state.clock.now_ms
        self._execute = server.dispatcher.execute
        self.transport: asyncio.Transport | None = None
        self.client = None
        self.parser: RequestParser | None = None
        self.backlog: list[list[bytes]] = []
        self._addr = ""
        self._laddr = ""
        self._fd = -1
        self._peer_host = ""
        self._paused = False
        self._closed = False
        # Per-client totals for CLIENT LIST (tot-net-in, tot-net-out, tot-cmds).
        self.net_in = 0
        self.net_out = 0
        self.commands = 0
        self.unix = False
        # (ticket, reply) pairs waiting for the server's durability gate (Server.hold).
        self.held: list[tuple[int, bytes]] | None = None

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

    def pending_output(self) -> int:
        transport = self.transport
        return transport.get_write_buffer_size() if transport is not None else 0

    def abort(self) -> None:
        if self.transport is not None and not self._closed:
            self._closed = True
            self.held = None
            self.transport.abort()

    def send(self, payload: bytes) -> None:
        if self.transport is not None and not self._closed:
            self.state.stats.net_output_bytes += len(payload)
            self.net_out += len(payload)
            server = self.server
            if self.held is not None:
                self.held.append((server.reply_ticket, payload))  # keep replies in order
            elif server.hold_replies or (
                server.flush_before_send and not server.durability.flush_for_send()  # type: ignore[union-attr]
            ):
                self.held = [(server.reply_ticket, payload)]
                server.hold(self)
            else:
                self.transport.write(payload)

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
        return False

    def authenticated(self) -> None:
        if self.parser is not None:
            self.parser.authenticated = True

    # --- asyncio.Protocol ------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
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
        if len(state.clients) >= state.config["maxclients"]:  # type: ignore[operator]
            self._refuse(errors.MAXCLIENTS)
            return
        if self._protected_mode_denies():
            self._refuse(errors.PROTECTED_MODE_DENIED)
            return
        self.client = state.new_client(self)
        config = state.config
        self.parser = RequestParser(config["proto-max-bulk-len"], config["client-query-buffer-limit"])  # type: ignore[arg-type]
        self.parser.authenticated = self.client.authenticated
        # Back-pressure: a client that does not read its replies stops being read.
        transport.set_write_buffer_limits(high=4 * 1024 * 1024)  # type: ignore[attr-defined]
        self.server.connections.add(self)

    def _protected_mode_denies(self) -> bool:
        """Redis's protected mode: no password for the default user, and a peer off loopback.

        Loopback here is Redis's connIsLocal (any 127.x or ::1, or a unix socket),
        wider than `is_local`, which is Redis's islocalClient.
        """
        config = self.state.config
        if not config["protected-mode"] or config["requirepass"] or self.unix:
            return False
        return not (self._peer_host.startswith("127.") or self._peer_host == "::1")

    def _refuse(self, message: str) -> None:
        self.state.stats.rejected_connections += 1
        self.transport.write(b"-%s\r\n" % message.encode())  # type: ignore[union-attr]
        self._closed = True
        self.transport.close()  # type: ignore[union-attr]

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.server.connections.discard(self)
        if self.client is not None:
            self.state.remove_client(self.client)
            self.server.cancel_block_timer(self.client)

    def pause_writing(self) -> None:
        if self.transport is not None and not self._paused:
            self._paused = True
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and self._paused:
            self._paused = False
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        # `_fastpath.data_received` replaces this when built: keep the two in step.
        client = self.client
        if client is None or self._closed:
            return
        state = self.state
        size = len(data)
        state.stats.net_input_bytes += size
        self.net_in += size
        parser = self.parser
        # RESET (or a changed requirepass) can take authentication away again;
        # the unauthenticated request-size limits must follow.
        parser.authenticated = client.authenticated  # type: ignore[union-attr]
        commands, error = parser.feed(data)  # type: ignore[union-attr]
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
            if self.held is None and not (
                server.hold_replies or server.flush_before_send or self._closed
            ):
                size = len(out)
                state.stats.net_output_bytes += size
                self.net_out += size
                self.transport.write(out)  # type: ignore[union-attr]
            else:
                self.send(out)
        if client.closing:
            self.close()
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
        self.client.closing = True  # type: ignore[union-attr]

    def _run(self, commands: list[list[bytes]], out: bytearray) -> None:
        """Execute commands in order until one blocks; the rest wait in the backlog.

        `_fastpath.run` replaces this when built: keep the two in step.
        """
        client = self.client
        execute = self._execute
        # A plain counter, not enumerate(): cheaper for the one-command reads
        # of unpipelined clients.
        done = 0
        for argv in commands:
            done += 1
            reply = execute(client, argv)
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
                self.park_rest(commands, done, reply)  # type: ignore[arg-type]
                return
            else:
                encode_into(out, reply, client.resp3)  # type: ignore[union-attr]
            if client.closing:  # type: ignore[union-attr]
                self.commands += done
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

    def unblocked(self, entry: BlockedClient, reply: object) -> None:
        """The parked command got its answer: send it, then run what queued behind it."""
        out = bytearray()
        encode_into(out, reply, self.client.resp3)  # type: ignore[union-attr]
        if self.backlog and not self.client.closing:  # type: ignore[union-attr]
            pending, self.backlog = self.backlog, []
            self._run(pending, out)
        self.send(out)
        if self.client.closing:  # type: ignore[union-attr]
            self.close()


def _format_addr(addr: object) -> str:
    if isinstance(addr, tuple) and len(addr) >= 2:
        host = addr[0]
        return f"[{host}]:{addr[1]}" if ":" in str(host) else f"{host}:{addr[1]}"
    if isinstance(addr, str):
        return addr or "/unixsocket"
    return ""
