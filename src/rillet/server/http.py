"""The console's HTTP/1.1 listener (`http-port`, `http-bind`), on the server's event loop.

A deliberately small HTTP/1.1: GET and HEAD, no request bodies, keep-alive (a
Prometheus scraper and a browser reuse their connection), pipelined requests
answered in order. What a request gets is `rillet.console.Console`'s business;
this module owns sockets, limits and timers. A large answer is made a slice per
event-loop turn (`Response.steps`), so RESP clients are served in between.

Protected mode applies as on the RESP port (a peer off loopback is refused while
the default user has no password: 403 with Redis's DENIED text). While the console
asks no credentials, a request must name an address or localhost (DNS rebinding). With `tls-port`
configured the console speaks HTTPS with the same certificates.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Generator
from http import HTTPStatus
from typing import TYPE_CHECKING

from rillet import errors
from rillet.console import Console, Response, run_steps
from rillet.console.history import PERIOD_MS
from rillet.server import protected
from rillet.server.tls import server_context

if TYPE_CHECKING:
    from rillet.server.server import Server

log = logging.getLogger("rillet")

MAX_HEAD = 16 * 1024  # request line and headers
MAX_CONNECTIONS = 128
# Pipelined requests answered per event-loop turn (the rest on the next turns).
REQUESTS_PER_TURN = 16
IDLE_TIMEOUT_S = 60.0


class HttpListener:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.console = Console(server.state)
        self.connections: set[HttpConnection] = set()
        self.ports: list[int] = []
        self._timer: asyncio.TimerHandle | None = None
        self._sampling: Generator[None, None, None] | None = None

    async def bind(self) -> list[asyncio.base_events.Server]:
        """Bind every `http-bind` address (not accepting yet: Server.start starts them all)."""
        server = self.server
        config = server.config
        loop = asyncio.get_running_loop()
        context = None
        if config["tls-port"]:
            context = server.tls_context or server_context(config)
        port = int(config["http-port"])
        bound = []
        for host in str(config["http-bind"]).split():
            # A port taken is logged and exits 1 as the RESP port's (Redis's two lines).
            listener = await server._bind(loop.create_server(
                lambda: HttpConnection(self), host.lstrip("-"), port, reuse_address=True,
                ssl=context, backlog=int(config["tcp-backlog"]),
                start_serving=False), host.lstrip("-"), port, "http")
            bound.append(listener)
            self.ports.append(listener.sockets[0].getsockname()[1])
        scheme = "https" if context is not None else "http"
        log.info("Console and /metrics on %s://%s:%d/", scheme,
                 str(config["http-bind"]).split()[0].lstrip("-"), self.ports[0])
        self._tick()
        return bound

    def _tick(self, steps: Generator[None, None, None] | None = None) -> None:
        """The page's throughput samples, taken whether or not anyone is looking, so a
        page opened now shows the last minutes: a slice of the streams a loop turn,
        the next sample PERIOD_MS after this one began."""
        loop = self.server.loop
        if steps is None:
            if loop is not None:
                self._timer = loop.call_later(PERIOD_MS / 1000, self._tick)
            if self._sampling:
                return  # the last one is still walking: one sample at a time
            steps = self._sampling = self.console.tick_steps()
        try:
            next(steps)
        except StopIteration:
            self._sampling = None
            return
        except Exception:  # the console must never take the server down
            self._sampling = None
            log.exception("console: throughput sample failed")
            return
        if loop is not None:
            loop.call_soon(self._tick, steps)
        else:
            run_steps(steps)
            self._sampling = None

    def refuses(self, host: str) -> bool:
        """Redis's protected mode, as the RESP listener applies it."""
        return protected.refuses(self.server.state, host)

    def refuses_name(self, host_header: str) -> bool:
        """A console that asks no credentials is readable by a browser that reaches
        it, and a page from elsewhere could reach it through a DNS name it points at
        the bound address (DNS rebinding), whatever protected mode says. Such a
        request names that host; the console's own pages name an address or localhost."""
        if self.console.auth_required() or not host_header:
            return False
        name = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
        name = name.strip("[]").lower()
        if name == "localhost" or name.endswith(".localhost"):
            return False
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return True
        return False


def _error(status: int, text: str) -> Response:
    return Response(status, text.encode() + b"\n")


def _encode(response: Response, keep_alive: bool, head_only: bool) -> bytes:
    reason = HTTPStatus(response.status).phrase
    lines = [f"HTTP/1.1 {response.status} {reason}",
             f"Content-Type: {response.content_type}",
             f"Content-Length: {len(response.body)}",
             "X-Content-Type-Options: nosniff",
             f"Connection: {'keep-alive' if keep_alive else 'close'}"]
    lines += [f"{name}: {value}" for name, value in response.headers]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + response.body


class HttpConnection(asyncio.Protocol):
    def __init__(self, listener: HttpListener) -> None:
        self.listener = listener
        self.transport: asyncio.Transport | None = None
        # What was read; requests before `offset` are answered (the buffer is compacted
        # once that part is the larger half, so a long pipeline costs linear time).
        self.buffer = bytearray()
        self.offset = 0
        self.peer = ""
        self.local = ""
        self._idle: asyncio.TimerHandle | None = None
        self._closed = False
        self._busy = False  # an answer is being made in steps
        self._write_paused = False  # the peer is not reading its answers
        self._reading_paused = False
        self._again: asyncio.Handle | None = None  # the next turn's _process
        self._eof = False  # the peer has sent all it will

    # --- asyncio ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername") or ("", 0)
        sock = transport.get_extra_info("sockname") or ("", 0)
        self.peer = f"{peer[0]}:{peer[1]}"
        self.local = f"{sock[0]}:{sock[1]}"
        listener = self.listener
        if len(listener.connections) >= MAX_CONNECTIONS:
            self._reply(_error(503, errors.HTTP_TOO_MANY), keep_alive=False)
            return
        if listener.refuses(str(peer[0])):
            self._reply(_error(403, errors.PROTECTED_MODE_DENIED),
                        keep_alive=False)
            return
        listener.connections.add(self)
        self._arm_idle()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.listener.connections.discard(self)
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self._again is not None:
            self._again.cancel()
            self._again = None

    def data_received(self, data: bytes) -> None:
        if self._closed:
            return
        self.buffer += data
        self._arm_idle()
        if self._again is None:
            self._process()
        else:
            self._flow()

    def eof_received(self) -> bool:
        # A client may send its requests and shut its side: it still gets the answers
        # (not over TLS, where asyncio closes on EOF whatever this returns).
        self._eof = True
        self._process()
        return self.transport is not None and self.transport.get_extra_info("sslcontext") is None

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._again is None:
            self._process()

    def _process(self) -> None:
        """Answer the complete requests in the buffer, in order, REQUESTS_PER_TURN a loop
        turn; one whose answer is made in steps holds the rest until it is sent, and so
        does a peer that is not reading its answers (until resume_writing)."""
        self._again = None
        answered = 0
        buffer = self.buffer
        while not self._closed and not self._busy and not self._write_paused:
            end = buffer.find(b"\r\n\r\n", self.offset)
            if end - self.offset > MAX_HEAD or (end < 0 and len(buffer) - self.offset > MAX_HEAD):
                self._reply(_error(431, errors.HTTP_HEAD_TOO_LARGE), keep_alive=False)
                return
            if end < 0:
                break
            loop = self.listener.server.loop
            if answered == REQUESTS_PER_TURN and loop is not None:
                self._again = loop.call_soon(self._process)
                break
            head = bytes(buffer[self.offset:end])
            self.offset = end + 4
            self._request(head)
            answered += 1
        if self.offset * 2 >= len(buffer):
            del buffer[:self.offset]
            self.offset = 0
        if (self._eof and self._again is None and not self._busy and not self._closed
                and buffer.find(b"\r\n\r\n", self.offset) < 0):
            self._close()
            return
        self._flow()

    def _flow(self) -> None:
        """Read on only while requests are being answered and what waits is less than
        one head: the buffer stays bounded whatever the peer sends."""
        transport = self.transport
        if transport is None or self._closed:
            return
        pause = self._busy or len(self.buffer) - self.offset > MAX_HEAD
        if pause != self._reading_paused:
            self._reading_paused = pause
            if pause:
                transport.pause_reading()
            else:
                transport.resume_reading()

    # --- one request -----------------------------------------------------------------
    def _request(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
            self._reply(_error(400, errors.HTTP_BAD_REQUEST), keep_alive=False)
            return
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                self._reply(_error(400, errors.HTTP_BAD_REQUEST), keep_alive=False)
                return
            headers[name.strip().lower()] = value.strip()
        if headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
            # Nothing here takes a body; not reading it would misframe what follows.
            self._reply(_error(413, errors.HTTP_BODY), keep_alive=False)
            return
        if self.listener.refuses_name(headers.get("host", "")):
            self._reply(_error(403, errors.HTTP_HOST_DENIED), keep_alive=False)
            return
        connection = headers.get("connection", "").lower()
        keep_alive = (connection != "close") if version == "HTTP/1.1" else (connection == "keep-alive")
        try:
            response = self.listener.console.handle(
                method, target, headers.get("authorization"), self._client_info(method, target))
        except Exception:
            log.exception("console: error answering %s %s", method, target)
            response = _error(500, errors.HTTP_INTERNAL)
        if response.steps is None:
            self._reply(response, keep_alive, head_only=method == "HEAD")
            return
        self._busy = True
        self._flow()
        self._step(response, keep_alive, method == "HEAD")

    def _step(self, response: Response, keep_alive: bool, head_only: bool) -> None:
        """One slice of a large answer per loop turn (RESP reads are served in between)."""
        if self._closed:
            return
        steps = response.steps
        assert steps is not None
        try:
            next(steps)
        except StopIteration as done:
            response.body, response.steps = done.value, None
        except Exception:
            log.exception("console: error answering")
            response, keep_alive = _error(500, errors.HTTP_INTERNAL), False
        else:
            loop = self.listener.server.loop
            if loop is not None:
                loop.call_soon(self._step, response, keep_alive, head_only)
                return
            response.finish()
        self._busy = False
        self._reply(response, keep_alive, head_only)
        self._process()

    def _client_info(self, method: str, target: str) -> str:
        # ACL LOG's client-info for a refused request: the fields a client line has
        # that an HTTP request has too.
        return f"id=0 addr={self.peer} laddr={self.local} fd=-1 name= user= cmd=http-{method.lower()}"

    def _reply(self, response: Response, keep_alive: bool, head_only: bool = False) -> None:
        transport = self.transport
        if transport is None or self._closed:
            return
        transport.write(_encode(response, keep_alive, head_only))
        if not keep_alive:
            self._closed = True
            transport.close()

    def _arm_idle(self) -> None:
        if self._closed:
            return
        if self._idle is not None:
            self._idle.cancel()
        loop = self.listener.server.loop
        if loop is not None:
            self._idle = loop.call_later(IDLE_TIMEOUT_S, self._idle_out)

    def _idle_out(self) -> None:
        self._idle = None
        self._close()

    def _close(self) -> None:
        if self.transport is not None and not self._closed:
            self._closed = True
            self.transport.close()


def attach(server: Server) -> HttpListener | None:
    """Start the console with the server when `http-port` is set."""
    if not server.config["http-port"]:
        return None
    listener = HttpListener(server)
    server.http = listener  # type: ignore[attr-defined]
    server.bind_hooks.append(listener.bind)
    return listener
