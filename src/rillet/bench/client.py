"""A minimal RESP2 client for the benchmarks: blocking and asyncio, both on hiredis.

The load generators must not be the bottleneck, so they speak RESP directly
(commands pre-encoded, replies parsed by hiredis) instead of going through
redis-py's connection pool and response callbacks.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import hiredis

Arg = bytes | str | int | float


class RespError(Exception):
    """An error reply from the server (the text after '-')."""


@dataclass(frozen=True)
class Endpoint:
    host: str = "127.0.0.1"
    port: int = 6379
    password: str | None = None
    username: str | None = None
    db: int = 0

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"

    @property
    def is_local(self) -> bool:
        return self.host in ("127.0.0.1", "localhost", "::1", "0.0.0.0")


def parse_url(url: str) -> Endpoint:
    """Parse redis://[user:pass@]host[:port][/db]; a bare 'host:port' or 'port' also works."""
    if "://" not in url:
        if url.isdigit():
            return Endpoint(port=int(url))
        host, _, port = url.rpartition(":")
        return Endpoint(host=host or "127.0.0.1", port=int(port or 6379))
    parsed = urlparse(url)
    if parsed.scheme not in ("redis", "tcp"):
        raise ValueError(f"unsupported URL scheme {parsed.scheme!r} (use redis://host:port)")
    db = 0
    if parsed.path and parsed.path != "/":
        db = int(parsed.path.lstrip("/"))
    return Endpoint(
        host=parsed.hostname or "127.0.0.1",
        port=parsed.port or 6379,
        password=unquote(parsed.password) if parsed.password else None,
        username=unquote(parsed.username) if parsed.username else None,
        db=db,
    )


def _as_bytes(arg: Arg) -> bytes:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, float):
        return repr(arg).encode()
    return str(arg).encode()


def encode_command(args: Sequence[Arg]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = _as_bytes(arg)
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def _auth_commands(endpoint: Endpoint) -> list[list[Arg]]:
    commands: list[list[Arg]] = []
    if endpoint.password is not None:
        if endpoint.username:
            commands.append(["AUTH", endpoint.username, endpoint.password])
        else:
            commands.append(["AUTH", endpoint.password])
    if endpoint.db:
        commands.append(["SELECT", endpoint.db])
    return commands


class SyncClient:
    """One blocking connection. `call` raises RespError on an error reply."""

    def __init__(self, endpoint: Endpoint, timeout_s: float | None = 30.0) -> None:
        self.endpoint = endpoint
        self.sock = socket.create_connection((endpoint.host, endpoint.port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = hiredis.Reader()
        for command in _auth_commands(endpoint):
            self.call(*command)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def settimeout(self, timeout_s: float | None) -> None:
        self.sock.settimeout(timeout_s)

    def read_reply(self) -> object:
        reply = self.reader.gets()
        while reply is False:
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("server closed the connection")
            self.reader.feed(data)
            reply = self.reader.gets()
        return reply

    def call(self, *args: Arg) -> Any:  # (a decoded reply: its caller knows its shape)
        self.sock.sendall(encode_command(args))
        reply = self.read_reply()
        if isinstance(reply, hiredis.ReplyError):
            raise RespError(str(reply))
        return reply

    def pipeline(self, commands: Iterable[Sequence[Arg]], raise_errors: bool = True) -> list:
        commands = list(commands)
        payload = b"".join(encode_command(c) for c in commands)
        return self.send_raw(payload, len(commands), raise_errors)

    def send_raw(self, payload: bytes, replies: int, raise_errors: bool = True) -> list:
        """Send pre-encoded commands and read `replies` replies."""
        self.sock.sendall(payload)
        out = []
        for _ in range(replies):
            reply = self.read_reply()
            if raise_errors and isinstance(reply, hiredis.ReplyError):
                raise RespError(str(reply))
            out.append(reply)
        return out

    def send_raw_count_errors(self, payload: bytes, replies: int) -> tuple[int, str | None]:
        """Send pre-encoded commands, drain `replies` replies, return (errors, first error)."""
        self.sock.sendall(payload)
        errors, first = 0, None
        reader = self.reader
        got = 0
        while got < replies:
            reply = reader.gets()
            if reply is False:
                data = self.sock.recv(1 << 18)
                if not data:
                    raise ConnectionError("server closed the connection")
                reader.feed(data)
                continue
            got += 1
            if isinstance(reply, hiredis.ReplyError):
                errors += 1
                first = first or str(reply)
        return errors, first


def connect_when_ready(endpoint: Endpoint, timeout_s: float = 20.0) -> SyncClient:
    """Connect and wait until PING answers (not -LOADING)."""
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            client = SyncClient(endpoint, timeout_s=5.0)
        except OSError as exc:
            last = exc
            time.sleep(0.05)
            continue
        try:
            client.call("PING")
            return client
        except (RespError, OSError) as exc:
            last = exc
            client.close()
            time.sleep(0.05)
    raise TimeoutError(f"{endpoint.host}:{endpoint.port} not ready after {timeout_s:.0f} s: {last}")


class AsyncClient:
    """One asyncio connection with hiredis parsing; used by the latency consumers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._stream = reader
        self._writer = writer
        self._parser = hiredis.Reader()

    @classmethod
    async def open(cls, endpoint: Endpoint) -> AsyncClient:
        reader, writer = await asyncio.open_connection(endpoint.host, endpoint.port)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls(reader, writer)
        for command in _auth_commands(endpoint):
            await client.call(*command)
        return client

    async def call(self, *args: Arg) -> Any:  # (a decoded reply)
        self._writer.write(encode_command(args))
        parser = self._parser
        reply = parser.gets()
        while reply is False:
            data = await self._stream.read(1 << 16)
            if not data:
                raise ConnectionError("server closed the connection")
            parser.feed(data)
            reply = parser.gets()
        if isinstance(reply, hiredis.ReplyError):
            raise RespError(str(reply))
        return reply

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, ConnectionError):
            pass
