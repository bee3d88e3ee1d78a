"""The replication backlog: the last `repl-backlog-size` bytes of the stream.

Offsets are Redis's: the stream's first byte has offset 1, and the backlog
holds bytes [first_byte_offset, first_byte_offset + histlen). It is a ring of
the `bytes` chunks the stream was sent in (one per event-loop turn): appending
keeps a reference to the chunk every replica was sent, nothing is copied, and
trimming drops whole chunks from the front (the first one is read from `skip`
on, so the bytes held are exactly the last `size`, as Redis reports them).

A replica that resyncs partially reads it through a `Cursor`, a piece at a
time as it takes them (master.py): a piece is a chunk as it is, or a join of
small ones, never the whole missing stream at once. Chunks live in a list whose
dropped front is cut off now and then, so a cursor finds its chunk by number.
"""

from __future__ import annotations

_COMPACT = 1024  # dropped chunks at the list's front before it is cut (amortised)


class Cursor:
    """A reader's place: the next byte's offset, and the chunk (by number) it starts."""

    __slots__ = ("offset", "chunk", "pos")

    def __init__(self, offset: int, chunk: int, pos: int) -> None:
        self.offset = offset
        self.chunk = chunk
        self.pos = pos  # into that chunk; 0 after the first read


class Backlog:
    __slots__ = ("chunks", "head", "dropped", "skip", "histlen", "size", "first_byte_offset",
                 "created_s")

    def __init__(self, size: int, next_offset: int, now_s: float) -> None:
        # chunks[head:] are held; chunk number n is chunks[n - dropped].
        self.chunks: list[bytes] = []
        self.head = 0
        self.dropped = 0
        self.skip = 0  # bytes of chunks[head] already trimmed away
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
        head = self.head
        excess += self.skip
        while head < len(chunks) and len(chunks[head]) <= excess:
            excess -= len(chunks[head])
            chunks[head] = b""  # (freed now, cut from the list later)
            head += 1
        self.skip = excess
        if head >= _COMPACT and 2 * head >= len(chunks):
            del chunks[:head]
            self.dropped += head
            head = 0
        self.head = head

    def resize(self, size: int) -> None:
        self.size = size
        if self.histlen > size:
            self._trim()

    def covers(self, offset: int) -> bool:
        """True if every byte from `offset` on is here (offset = one past the end is fine)."""
        return self.first_byte_offset <= offset <= self.first_byte_offset + self.histlen

    def cursor(self, offset: int) -> Cursor:
        """A reader starting at `offset`, which the backlog covers."""
        start = offset - self.first_byte_offset + self.skip  # into the chunks
        chunks = self.chunks
        index = self.head
        while index < len(chunks) and start >= len(chunks[index]):
            start -= len(chunks[index])
            index += 1
        return Cursor(offset, index + self.dropped, start)

    def read(self, cursor: Cursor, limit: int) -> bytes | memoryview | None:
        """The next bytes for `cursor` (whole chunks, about `limit` of them, at least
        one), moving it on; b"" at the end; None if trimming took them away."""
        if cursor.offset < self.first_byte_offset:
            return None
        chunks = self.chunks
        index = cursor.chunk - self.dropped
        pos = cursor.pos
        parts: list[bytes | memoryview] = []
        total = 0
        while index < len(chunks) and total < limit:
            chunk = chunks[index]
            part = memoryview(chunk)[pos:] if pos else chunk
            parts.append(part)
            total += len(part)
            index += 1
            pos = 0
        cursor.chunk = index + self.dropped
        cursor.pos = 0
        cursor.offset += total
        if len(parts) == 1:
            return parts[0]  # as it is: no copy
        return b"".join(parts)
