"""Raw RESP over a socket: send argv, get back the exact reply bytes.

Differential tests compare these bytes, not client-parsed values: redis-py
hides differences such as `-ERR BUSYGROUP` vs `-BUSYGROUP`.
"""

from __future__ import annotations

import socket


def encode_command(*args: bytes | str | int) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, int):
            arg = str(arg).encode()
        elif isinstance(arg, str):
            arg = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


class ReplyReader:
    """Reads exactly one RESP2/RESP3 reply and returns its raw bytes."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed")
        self.buf += chunk

    def _line(self, pos: int) -> int:
        while True:
            end = self.buf.find(b"\r\n", pos)
            if end >= 0:
                return end
            self._fill()

    def _skip(self, pos: int) -> int:
        end = self._line(pos)
        kind = self.buf[pos : pos + 1]
        header = self.buf[pos + 1 : end]
        pos = end + 2
        if kind in (b"$", b"=", b"!"):
            size = int(header)
            if size < 0:
                return pos
            while len(self.buf) < pos + size + 2:
                self._fill()
            return pos + size + 2
        if kind in (b"*", b"~", b">"):
            for _ in range(max(0, int(header))):
                pos = self._skip(pos)
            return pos
        if kind == b"%" or kind == b"|":
            for _ in range(2 * int(header)):
                pos = self._skip(pos)
            return pos
        return pos

    def read(self) -> bytes:
        end = self._skip(0)
        raw, self.buf = self.buf[:end], self.buf[end:]
        return raw


class Wire:
    """A raw connection: `call(*args)` returns the reply bytes."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.reader = ReplyReader(self.sock)

    def call(self, *args: bytes | str | int) -> bytes:
        self.sock.sendall(encode_command(*args))
        return self.reader.read()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_reply(self) -> bytes:
        return self.reader.read()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
