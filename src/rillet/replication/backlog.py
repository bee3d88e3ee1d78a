"""The replication backlog: the last `repl-backlog-size` bytes of the stream.

Offsets are Redis's: the stream's first byte has offset 1, and the backlog
holds bytes [first_byte_offset, first_byte_offset + histlen). A bytearray
trimmed from the front is amortised O(1) in CPython (it moves its start).
"""

from __future__ import annotations


class Backlog:
    __slots__ = ("buf", "size", "first_byte_offset", "created_s")

    def __init__(self, size: int, next_offset: int, now_s: float) -> None:
        self.buf = bytearray()
        self.size = size
        # Redis creates the backlog with first byte = master_repl_offset + 1.
        self.first_byte_offset = next_offset
        self.created_s = now_s

    @property
    def histlen(self) -> int:
        return len(self.buf)

    def append(self, data: bytes | bytearray | memoryview) -> None:
        buf = self.buf
        buf += data
        excess = len(buf) - self.size
        if excess > 0:
            del buf[:excess]
            self.first_byte_offset += excess

    def resize(self, size: int) -> None:
        self.size = size
        excess = len(self.buf) - size
        if excess > 0:
            del self.buf[:excess]
            self.first_byte_offset += excess

    def covers(self, offset: int) -> bool:
        """True if every byte from `offset` on is here (offset = one past the end is fine)."""
        return self.first_byte_offset <= offset <= self.first_byte_offset + len(self.buf)

    def read_from(self, offset: int) -> bytes:
        return bytes(self.buf[offset - self.first_byte_offset:])
