"""Wire helpers: RESP encoding of the stream, and a parser that counts bytes per command.

A replica's offset is the number of stream bytes it has applied, so the
parser returns each command together with its exact encoded length.
"""

from __future__ import annotations

import os

from rillet.persistence.aoflog import encode_command, encode_select

__all__ = ["StreamParser", "StreamError", "encode_command", "encode_select", "encode_effects"]

try:
    # The AOF's compiled encoder: the replication stream is the same RESP.
    if os.environ.get("RILLET_PURE"):
        raise ImportError("RILLET_PURE is set")
    from rillet.persistence._aofenc import encode_effects as _compiled
except ImportError:
    _compiled = None


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


class StreamError(Exception):
    """The master sent something that is not a RESP array of bulk strings."""


class StreamParser:
    """Incremental parser of the replication stream (arrays of bulk strings only)."""

    __slots__ = ("buf", "pos")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.pos = 0

    def feed(self, data: bytes | bytearray) -> None:
        if self.pos and self.pos == len(self.buf):
            self.buf.clear()
            self.pos = 0
        elif self.pos > 65536:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += data

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
        self.pos = pos
        return argv, pos - start
