"""Wire helpers: RESP encoding of the stream, and a parser that counts bytes per command.

A replica's offset is the number of stream bytes it has applied, so the
parser returns each command together with its exact encoded length.
"""

from __future__ import annotations

from rillet.compiled import compiled
from rillet.persistence.aoflog import encode_command, encode_select

__all__ = ["StreamParser", "StreamError", "encode_command", "encode_select", "encode_effects",
           "encode_batch", "encoded_size"]

# The AOF's compiled encoder (rillet/compiled.py): the replication stream is the same RESP.
_aofenc = compiled("rillet.persistence._aofenc")
_compiled = _aofenc.encode_effects if _aofenc is not None else None
_compiled_batch = _aofenc.encode_batch if _aofenc is not None else None


def encode_effects(out: bytearray, effects: list[tuple[int, list[bytes]]],
                   selected_db: int) -> int:
    """Append RESP for `effects` to `out`, SELECT before each change of db; returns the db."""
    if _compiled is not None:
        return _compiled(out, effects, selected_db, encode_select, encode_command)
    for db_index, argv in effects:
        if db_index != selected_db:
            out += encode_select(db_index)
            selected_db = db_index
        out += encode_command(argv)
    return selected_db


def encode_batch(effects: list[tuple[int, list[bytes]]], selected_db: int) -> tuple[bytes, int]:
    """`effects` as one `bytes` (SELECT before each change of db), and the db selected after."""
    if _compiled_batch is not None:
        return _compiled_batch(effects, selected_db, encode_select, encode_command)
    out = bytearray()
    selected_db = encode_effects(out, effects, selected_db)
    return bytes(out), selected_db


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
        self.buf += data  # type: ignore[operator]

    def rest(self) -> bytes:
        """The unread bytes (the read itself when it is all that is buffered)."""
        buf, pos = self.buf, self.pos
        if pos == 0 and buf.__class__ is bytes:
            return buf  # type: ignore[return-value]
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
