"""The replication backlog: the last `repl-backlog-size` bytes of the stream.

Offsets are Redis's: the stream's first byte has offset 1, and the backlog
holds bytes [first_byte_offset, first_byte_offset + histlen). It is a ring of
the `bytes` chunks the stream was sent in (one per event-loop turn): appending
keeps a reference to the chunk every replica was sent, nothing is copied, and
trimming drops whole chunks from the front (the first one is read from `skip`
on, so the bytes held are exactly the last `size`, as Redis reports them).
Only a partial resync, which is rare, joins chunks.
"""

from __future__ import annotations

from collections import deque


class Backlog:
    __slots__ = ("chunks", "skip", "histlen", "size", "first_byte_offset", "created_s")

    def __init__(self, size: int, next_offset: int, now_s: float) -> None:
        self.chunks: deque[bytes] = deque()
        self.skip = 0  # bytes of chunks[0] already trimmed away
        self.histlen = 0
        self.size = size
        # Redis creates the backlog with first byte = master_repl_offset + 1.
        self.first_byte_offset = next_offset
        self.created_s = now_s

    def append(self, data: bytes) -> None:
        if not data:
            return
        self.chunks.append(data)
        self.histlen += len(data)
        if self.histlen > self.size:
            self._trim()

    def _trim(self) -> None:
        excess = self.histlen - self.size
        self.histlen = self.size
        self.first_byte_offset += excess
        chunks = self.chunks
        excess += self.skip
        while chunks and len(chunks[0]) <= excess:
            excess -= len(chunks.popleft())
        self.skip = excess

    def resize(self, size: int) -> None:
        self.size = size
        if self.histlen > size:
            self._trim()

    def covers(self, offset: int) -> bool:
        """True if every byte from `offset` on is here (offset = one past the end is fine)."""
        return self.first_byte_offset <= offset <= self.first_byte_offset + self.histlen

    def read_from(self, offset: int) -> bytes:
        start = offset - self.first_byte_offset + self.skip  # into the chunks
        parts = []
        for chunk in self.chunks:
            if start >= len(chunk):
                start -= len(chunk)
                continue
            parts.append(chunk[start:] if start else chunk)
            start = 0
        return b"".join(parts)
