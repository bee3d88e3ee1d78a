"""Wire helpers: RESP encoding of the stream, and a parser that counts bytes per command.

A replica's offset is the number of stream bytes it has applied, so the
parser returns each command together with its exact encoded length.
"""

from __future__ import annotations

from rillet.persistence.aof import EffectStream
from rillet.persistence.aoflog import encode_command, encode_select

__all__ = ["StreamParser", "StreamError", "EffectStream", "encode_command", "encode_select",
           "encoded_size"]


# A leftover up to this size is joined with the next read into one `bytes`.
_JOIN_MAX = 1 << 16


class StreamError(Exception):
    """The master sent something that is not a RESP array of bulk strings."""


class StreamParser:
    """Incremental parser of the replication stream (arrays of bulk strings only)."""

    __slots__ = ("buf", "pos", "_last")

    def __init__(self) -> None:
        # A read's own bytes while nothing is left over (no copy); a short leftover
        # (the head of a command cut by the read's end) joined with the next read
        # as `bytes` (one copy, which rest() then hands out as is); a long one, a
        # bytearray that the reads are appended to (a command far larger than a
        # read is not copied again on every read).
        self.buf: bytes | bytearray = b""
        self.pos = 0
        self._last = 0  # where the last command() began

    def feed(self, data: bytes | bytearray) -> None:
        buf, pos = self.buf, self.pos
        left = len(buf) - pos
        if not left:
            self.buf = bytes(data)
            self.pos = 0
            return
        if left <= _JOIN_MAX:
            self.buf = b"".join((memoryview(buf)[pos:], data))
            self.pos = 0
            return
        if buf.__class__ is bytes or pos > 65536:
            self.buf = bytearray(memoryview(buf)[pos:])
            self.pos = 0
        self.buf += data

    def rest(self) -> bytes:
        """The unread bytes (the read itself when it is all that is buffered)."""
        buf, pos = self.buf, self.pos
        if pos == 0 and buf.__class__ is bytes:
            return buf
        return bytes(memoryview(buf)[pos:])

    def last(self) -> bytes:
        """The bytes of the command the last command() returned."""
        return bytes(memoryview(self.buf)[self._last : self.pos])

    def take(self, n: int) -> bytes:
        """The next `n` raw bytes (the snapshot payload), or fewer if not yet here."""
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += len(out)
        return out

    def pending(self) -> int:
        return len(self.buf) - self.pos

    def line(self) -> bytes | None:
        """One CRLF-terminated line (without CRLF), or None if incomplete."""
        end = self.buf.find(b"\r\n", self.pos)
        if end < 0:
            return None
        out = bytes(self.buf[self.pos : end])
        self.pos = end + 2
        return out

    def command(self) -> tuple[list[bytes], int] | None:
        """The next complete command and its size in bytes, or None if incomplete."""
        buf = self.buf
        start = pos = self.pos
        size = len(buf)
        if pos >= size:
            return None
        if buf[pos] != 0x2A:  # '*'
            if buf[pos] == 0x0A:  # a lone newline: a keepalive of the full-sync preamble
                self.pos = pos + 1
                return [], 1
            raise StreamError(f"unexpected byte {buf[pos]!r} in the replication stream")
        end = buf.find(b"\r\n", pos)
        if end < 0:
            return None
        try:
            count = int(buf[pos + 1 : end])
        except ValueError:
            raise StreamError("bad multibulk length") from None
        pos = end + 2
        argv = []
        for _ in range(count):
            if pos >= size:
                return None
            if buf[pos] != 0x24:  # '$'
                raise StreamError("expected a bulk string")
            end = buf.find(b"\r\n", pos)
            if end < 0:
                return None
            try:
                n = int(buf[pos + 1 : end])
            except ValueError:
                raise StreamError("bad bulk length") from None
            pos = end + 2
            if pos + n + 2 > size:
                return None
            argv.append(bytes(buf[pos : pos + n]))
            pos += n + 2
        self._last = start
        self.pos = pos
        return argv, pos - start


def encoded_size(argv: list[bytes]) -> int:
    """The size of `argv` as a canonical RESP array of bulk strings (what encode_command makes)."""
    size = 3 + len(str(len(argv)))
    for arg in argv:
        n = len(arg)
        size += 5 + len(str(n)) + n
    return size
