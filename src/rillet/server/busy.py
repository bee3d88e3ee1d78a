"""Serving clients while a script runs past busy-reply-threshold.

The event loop is blocked inside the script, so the script's hook calls
`serve_others` now and then: it reads what other clients have sent (a poll
with no wait, then a non-blocking read of each readable socket) and feeds it
to their connections as a normal read. The state is gated meanwhile, so they
get BUSY for everything but SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE and
the other `allow_busy` commands.

New connections are accepted meanwhile too, as Redis does (TCP and unix
listeners; TLS ones wait for the script's end): the accepted socket gets a
`BusyTransport` that writes straight to it, and once the loop runs again
(`call_soon` runs only after the script) the socket is handed to the event
loop with the same connection and client (`adopt`).
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rillet.server.server import Server
    from rillet.state import Client

# At most this much is read from one client per pass.
READ_CHUNK = 64 * 1024
# A reply to a client accepted while busy is written in blocking mode, this long at most.
SEND_TIMEOUT_S = 5.0


def serve_others(server: Server, running: Client) -> None:
    _accept_new(server)
    by_fd = {}
    for conn in server.connections:
        if conn.client is not None and conn.client is not running and conn.fd >= 0 \
                and not conn._closed:
            by_fd[conn.fd] = conn
    if not by_fd:
        return
    try:
        readable, _, _ = select.select(list(by_fd), [], [], 0)
    except (OSError, ValueError):
        return
    for fd in readable:
        conn = by_fd[fd]
        try:
            data = os.read(fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            continue
        if data:  # an empty read (EOF) is left for the event loop to see later
            conn.data_received(data)
    if readable:
        # Pub/sub frames leave at the end of a loop turn, which waits for the
        # script: after the reads served here, as Redis's processEventsWhileBlocked.
        server.state.pubsub.flush()


class BusyTransport:
    """The little of asyncio.Transport a ClientConnection uses, over a socket the
    event loop does not know yet (accepted while a script is busy)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "socket":
            return self.sock
        try:
            if name == "peername":
                return self.sock.getpeername()
            if name == "sockname":
                return self.sock.getsockname()
        except OSError:
            return default
        return default

    def write(self, data: bytes) -> None:
        if self.closing:
            return
        try:
            self.sock.settimeout(SEND_TIMEOUT_S)
            self.sock.sendall(data)
        except OSError:
            self.closing = True
        finally:
            try:
                self.sock.setblocking(False)
            except OSError:
                pass

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True


class _Adopted(asyncio.Protocol):
    """The event loop's protocol for a connection accepted while busy: its events go
    to the ClientConnection that has served it since."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.conn.adopt(transport)

    def data_received(self, data: bytes) -> None:
        self.conn.data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.conn.connection_lost(exc)

    def pause_writing(self) -> None:
        self.conn.pause_writing()

    def resume_writing(self) -> None:
        self.conn.resume_writing()


def _listening_sockets(server: Server) -> list[socket.socket]:
    """Our own handles (dup'ed once) on the plain TCP and unix listening sockets."""
    handles = server.busy_listeners
    if handles is None:
        handles = server.busy_listeners = []
        for listener in server.plain_listeners:
            for sock in listener.sockets or ():
                try:
                    handle = socket.socket(sock.family, sock.type, fileno=os.dup(sock.fileno()))
                    handle.setblocking(False)
                except OSError:
                    continue
                handles.append(handle)
    return handles


def _accept_new(server: Server) -> None:
    listeners = _listening_sockets(server)
    if not listeners or server.loop is None:
        return
    try:
        readable, _, _ = select.select(listeners, [], [], 0)
    except (OSError, ValueError):
        return
    from rillet.server.connection import ClientConnection

    for listener in readable:
        try:
            sock, _ = listener.accept()
        except (BlockingIOError, InterruptedError, OSError):
            continue
        sock.setblocking(False)
        if sock.family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = ClientConnection(server)
        transport = BusyTransport(sock)
        conn.connection_made(transport)  # type: ignore[arg-type]  # a socket stand-in
        server.loop.call_soon(_adopt, server, conn, transport)


def _adopt(server: Server, conn: Any, transport: BusyTransport) -> None:
    """The script is over: the event loop takes the socket over (same client)."""
    loop = server.loop
    if conn.client is None or conn._closed or transport.closing or loop is None:
        if conn.client is not None:
            conn.connection_lost(None)
        transport.sock.close()
        return

    async def hand_over() -> None:
        try:
            await loop.connect_accepted_socket(lambda: _Adopted(conn), transport.sock)
        except OSError:
            conn.connection_lost(None)
            transport.sock.close()

    loop.create_task(hand_over())
