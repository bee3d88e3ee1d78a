"""A fake replica: what a master propagates, as the commands a replica receives.

It attaches with a bare `PSYNC ? -1` (no `capa eof`, so Redis sends its RDB from
disk with a length, as rillet does), skips the payload, and reads the stream up
to the master's `master_repl_offset`, so nothing is waited for by time.
"""

from __future__ import annotations

import socket

from tests.helpers.wire import Wire


def master_offset(port: int) -> int:
    with Wire(port) as wire:
        text = wire.call("INFO", "replication").decode()
    for line in text.split("\r\n"):
        if line.startswith("master_repl_offset:"):
            return int(line.split(":", 1)[1])
    raise AssertionError(text)


class FakeReplica:
    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        self.sock.sendall(b"PSYNC ? -1\r\n")
        line = self._reply_line()
        assert line.startswith(b"+FULLRESYNC "), line
        self.offset = int(line.split()[2])
        line = self._reply_line()
        assert line.startswith(b"$"), line
        self._take(int(line[1:]))  # the RDB payload (no CRLF after it)

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the master closed the link")
        self.buf += data

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply_line(self) -> bytes:
        # A master preparing the payload sends bare newlines to keep the link alive.
        while True:
            while b"\n" not in self.buf:
                self._fill()
            line, self.buf = self.buf.split(b"\n", 1)
            if line.rstrip(b"\r"):
                return line.rstrip(b"\r")

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def commands(self) -> list[list[bytes]]:
        """The commands propagated since the last call, up to the master's offset now
        (its keep-alive PINGs left out)."""
        target = master_offset(self.port)
        out = []
        while self.offset < target:
            line = self._line()
            assert line.startswith(b"*"), line
            used = len(line) + 2
            argv = []
            for _ in range(int(line[1:])):
                header = self._line()
                size = int(header[1:])
                argv.append(self._take(size))
                self._take(2)
                used += len(header) + 2 + size + 2
            self.offset += used
            if argv != [b"PING"]:
                out.append(argv)
        return out

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> FakeReplica:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
