"""The list type: packed chunks between two open ends, like Redis's quicklist.

A deque of bytes objects cost ~57 bytes of object header and pointers per
element over the element itself (3.9x Redis's listpacks for a 1M-element
list). Here the middle of the list is a deque of packed chunks, each one bytes
blob plus a compact array of offsets (~element length + 1-4 bytes a element),
and the two ends are open: plain Python lists (`head`, `tail`, both in list
reversed, `tail` in list order) so that pushes and pops at either end are list
appends and pops. An end that reaches
OPEN_MAX elements seals its inner elements into chunks of CHUNK, keeping CHUNK
open (so alternating pushes and pops at a boundary do not pack and unpack);
a pop from an empty end reopens the nearest chunk. As engine/stream_node.py
does for a stream's open node. Edits in the middle (LSET, LINSERT, LREM)
unpack, change and repack the one chunk they touch.

OBJECT ENCODING follows Redis 7.2+: `listpack` while the elements fit one
listpack node under list-max-listpack-size (negative: a byte budget of
4/8/16/32/64 KB; positive: an entry count), `quicklist` beyond; a quicklist
goes back to `listpack` when it shrinks under half the limit. The byte size
is the listpack encoding's (engine/listpack_size.py), kept as a running sum;
it has nothing to do with the chunks above, which are our own layout.

commands/_lists.pyx repeats push/pop at the open ends for LPUSH/RPUSH/LPOP/RPOP
(keep in step: the slots, OPEN_MAX, `seal` and `reopen`).
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import accumulate, chain, islice

from rillet.compiled import as_slots, compiled
from rillet.engine.listpack_size import LISTPACK_EMPTY_SIZE, element_size

_SIZE_LIMITS = {-1: 4096, -2: 8192, -3: 16384, -4: 32768, -5: 65536}
_SAFETY_LIMIT = 8192  # quicklist's SIZE_SAFETY_LIMIT for count-limited nodes

# Elements per sealed chunk, and the length at which an open end seals. Module
# globals read at each use, so that tests can make them small.
CHUNK = 128
OPEN_MAX = 2 * CHUNK

_size_of = element_size  # not the memoising ELEMENT_SIZES: list elements are mostly distinct
Chunk = tuple  # (data: bytes, offs: array), offs[i]:offs[i+1] the i-th element's bytes


def _exceeds(max_size: int, nbytes: int, count: int) -> bool:
    """quicklistNodeExceedsLimit."""
    if max_size < 0:
        return nbytes > _SIZE_LIMITS.get(max_size, 8192)
    return nbytes > _SAFETY_LIMIT or count > max_size


def pack(items: list[bytes]) -> Chunk:
    data = b"".join(items)
    top = len(data)  # the last and largest offset: the narrowest array that holds it
    code = "B" if top < 256 else "H" if top < 65536 else "I" if top < 4294967296 else "Q"
    return (data, array(code, list(accumulate(map(len, items), initial=0))))


def unpack(chunk: Chunk) -> list[bytes]:
    data, offs = chunk
    bounds = offs.tolist()
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


# The Python forms are the reference; engine/_listchunks.pyx compiles them (same
# chunks, tests/engine/test_list_packed.py) and replaces them when rillet/compiled.py
# gives it.
py_pack, py_unpack = pack, unpack
_listchunks = compiled("rillet.engine._listchunks")
if _listchunks is not None:
    pack, unpack = _listchunks.pack, _listchunks.unpack


def _count(chunk: Chunk) -> int:
    return len(chunk[1]) - 1


class List:
    TYPE_NAME = b"list"
    __slots__ = ("head", "chunks", "tail", "mid", "nbytes", "big")

    def __init__(self, items: Iterable[bytes] = ()) -> None:
        self.head: list[bytes] = []  # open left end, reversed: head[-1] is the first element
        self.chunks: deque[Chunk] = deque()  # the packed middle, in list order
        self.tail: list[bytes] = []  # open right end, in list order
        self.mid = 0  # elements in chunks
        self.nbytes = LISTPACK_EMPTY_SIZE
        self.big = False
        values = list(items)
        if values:
            self._load(values)

    def _load(self, values: list[bytes]) -> None:
        """Fill an empty list: all but the last CHUNK..OPEN_MAX-1 elements packed."""
        self.nbytes += sum(map(_size_of, values))
        n = len(values)
        if n < OPEN_MAX:
            self.tail = values
            return
        sealed = (n - CHUNK) // CHUNK * CHUNK
        self.chunks = deque(pack(values[i:i + CHUNK]) for i in range(0, sealed, CHUNK))
        self.mid = sealed
        self.tail = values[sealed:]

    @classmethod
    def from_list(cls, items: Iterable[bytes], max_size: int = -2) -> List:
        value = cls(items)
        value.note_size(max_size)
        return value

    def replace(self, items: Iterable[bytes]) -> None:
        self.head, self.chunks, self.tail, self.mid = [], deque(), [], 0
        self.nbytes = LISTPACK_EMPTY_SIZE
        values = list(items)
        if values:
            self._load(values)

    def copy(self) -> List:
        value = List.__new__(List)
        value.head = self.head[:]
        value.chunks = self.chunks.copy()  # chunks are immutable: shared
        value.tail = self.tail[:]
        value.mid = self.mid
        value.nbytes = self.nbytes
        value.big = self.big
        return value

    # --- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.head) + self.mid + len(self.tail)

    def __iter__(self) -> Iterator[bytes]:
        return chain(reversed(self.head), chain.from_iterable(map(unpack, self.chunks)), self.tail)

    def __reversed__(self) -> Iterator[bytes]:
        inner = chain.from_iterable(reversed(unpack(c)) for c in reversed(self.chunks))
        return chain(reversed(self.tail), inner, self.head)

    def to_list(self) -> list[bytes]:
        return list(self)

    def open_count(self) -> int:
        """Elements held as Python objects (memory estimates)."""
        return len(self.head) + len(self.tail)

    def _locate(self, i: int) -> tuple[int, int]:
        """For 0 <= i < mid: (chunk index, index in that chunk), walking from the nearer end."""
        chunks = self.chunks
        if i < self.mid >> 1:
            for ci, (_, offs) in enumerate(chunks):
                c = len(offs) - 1
                if i < c:
                    return ci, i
                i -= c
        else:
            back = self.mid - i  # 1 for the last element
            ci = len(chunks)
            for _, offs in reversed(chunks):
                ci -= 1
                c = len(offs) - 1
                if back <= c:
                    return ci, c - back
                back -= c
        raise IndexError(i)

    def get(self, index: int) -> bytes:
        """The element at 0 <= index < len."""
        h = len(self.head)
        if index < h:
            return self.head[h - 1 - index]
        index -= h
        if index >= self.mid:
            return self.tail[index - self.mid]
        ci, j = self._locate(index)
        data, offs = self.chunks[ci]
        return data[offs[j]:offs[j + 1]]

    def _segments(self) -> Iterator[tuple[int, list[bytes] | Chunk]]:
        """(index of its first element, segment) for head (a copy in list order), each
        chunk, tail (itself)."""
        start = 0
        yield start, self.head[::-1]
        start += len(self.head)
        for chunk in self.chunks:
            yield start, chunk
            start += len(chunk[1]) - 1
        yield start, self.tail

    def _segments_reversed(self) -> Iterator[tuple[int, list[bytes] | Chunk]]:
        start = len(self) - len(self.tail)
        yield start, self.tail
        for chunk in reversed(self.chunks):
            start -= len(chunk[1]) - 1
            yield start, chunk
        yield 0, self.head[::-1]

    def range(self, lo: int, hi: int) -> list[bytes]:
        """The elements at lo <= index < hi (both within 0..len)."""
        out: list[bytes] = []
        if lo >= hi:
            return out
        for start, seg in self._segments():
            if start >= hi:
                break
            if seg.__class__ is tuple:
                end = start + len(seg[1]) - 1
                if end <= lo:
                    continue
                data, offs = seg
                a, b = max(lo - start, 0), min(hi, end) - start
                out += map(data.__getitem__, map(slice, islice(offs, a, b), islice(offs, a + 1, b + 1)))
            else:
                end = start + len(seg)
                if end > lo:
                    out += seg[max(lo - start, 0):min(hi, end) - start]
        return out

    def positions(self, value: bytes, reverse: bool = False) -> Iterator[int]:
        """Indexes of the elements equal to `value`, from the left (or the right)."""
        segments = self._segments_reversed() if reverse else self._segments()
        for start, seg in segments:
            if seg.__class__ is tuple:
                if value not in seg[0]:  # an equal element is a substring of the blob
                    continue
                items = unpack(seg)
            else:
                items = seg  # type: ignore[assignment]  # a plain segment is its list
            if reverse:
                for j in range(len(items) - 1, -1, -1):
                    if items[j] == value:
                        yield start + j
            else:
                for j, item in enumerate(items):
                    if item == value:
                        yield start + j

    def index(self, value: bytes) -> int:
        """Index of the first element equal to `value`, -1 if none."""
        return next(self.positions(value), -1)

    # --- the open ends ---------------------------------------------------------------

    def push(self, values: list[bytes], left: bool) -> None:
        self.nbytes += sum(map(_size_of, values))
        if left:
            head = self.head
            head += values
            if len(head) >= OPEN_MAX:
                self.seal(True)
        else:
            tail = self.tail
            tail += values
            if len(tail) >= OPEN_MAX:
                self.seal(False)

    def seal(self, left: bool) -> None:
        """Pack an open end's inner elements, keeping CHUNK..OPEN_MAX-1 open."""
        side = self.head if left else self.tail
        n = len(side)
        sealed = (n - CHUNK) // CHUNK * CHUNK
        if sealed <= 0:
            return
        if left:
            inner = side[sealed - 1::-1]  # the head's innermost elements, in list order
            packs = [pack(inner[i:i + CHUNK]) for i in range(0, sealed, CHUNK)]
            self.chunks.extendleft(reversed(packs))
            del side[:sealed]
        else:
            self.chunks.extend(pack(side[i:i + CHUNK]) for i in range(0, sealed, CHUNK))
            del side[:sealed]
        self.mid += sealed

    def reopen(self, left: bool) -> None:
        """An empty open end takes the nearest chunk's elements (chunks must not be empty)."""
        if left:
            head = unpack(self.chunks.popleft())
            head.reverse()
            self.head = head
            self.mid -= len(head)
        else:
            self.tail = unpack(self.chunks.pop())
            self.mid -= len(self.tail)

    def pop(self, left: bool) -> bytes:
        if left:
            if not self.head and self.chunks:
                self.reopen(True)
            value = self.head.pop() if self.head else self.tail.pop(0)
        else:
            if not self.tail and self.chunks:
                self.reopen(False)
            value = self.tail.pop() if self.tail else self.head.pop(0)
        self.nbytes -= _size_of(value)
        return value

    def pop_many(self, left: bool, count: int) -> list[bytes]:
        pop = self.pop
        return [pop(left) for _ in range(min(count, len(self)))]

    # --- edits anywhere --------------------------------------------------------------

    def _put_chunk(self, ci: int, items: list[bytes]) -> None:
        """Chunk `ci` now holds `items`: repacked, split if it grew to OPEN_MAX, dropped if empty."""
        chunks = self.chunks
        if not items:
            del chunks[ci]
        elif len(items) >= OPEN_MAX:
            half = len(items) // 2
            chunks[ci] = pack(items[:half])
            chunks.insert(ci + 1, pack(items[half:]))
        else:
            chunks[ci] = pack(items)

    def set_at(self, index: int, value: bytes) -> None:
        h = len(self.head)
        if index < h:
            i = h - 1 - index
            old, self.head[i] = self.head[i], value
        elif index - h >= self.mid:
            i = index - h - self.mid
            old, self.tail[i] = self.tail[i], value
        else:
            ci, j = self._locate(index - h)
            items = unpack(self.chunks[ci])
            old, items[j] = items[j], value
            self._put_chunk(ci, items)
        self.nbytes += _size_of(value) - _size_of(old)

    def insert(self, index: int, value: bytes) -> None:
        """Insert before the element at `index` (0 <= index <= len)."""
        self.nbytes += _size_of(value)
        h = len(self.head)
        if index <= h:
            self.head.insert(h - index, value)
            if len(self.head) >= OPEN_MAX:
                self.seal(True)
        elif index - h >= self.mid:
            self.tail.insert(index - h - self.mid, value)
            if len(self.tail) >= OPEN_MAX:
                self.seal(False)
        else:
            ci, j = self._locate(index - h)
            items = unpack(self.chunks[ci])
            items.insert(j, value)
            self.mid += 1
            self._put_chunk(ci, items)

    def remove(self, value: bytes, count: int) -> int:
        """LREM: drop up to |count| elements equal to `value` (all for 0), from the
        right for a negative count. Returns how many went."""
        found = self.positions(value, count < 0)
        drop = sorted(found if count == 0 else islice(found, abs(count)))
        if not drop:
            return 0
        # Per segment, the positions in it; chunks edited from the last so indexes hold.
        edits: list[tuple[int, list[bytes] | Chunk, list[int]]] = []
        k = 0
        ci = -1
        for start, seg in self._segments():
            end = start + (len(seg[1]) - 1 if seg.__class__ is tuple else len(seg))
            here = []
            while k < len(drop) and drop[k] < end:
                here.append(drop[k] - start)
                k += 1
            if here:
                edits.append((ci, seg, here))
            ci += 1
        for ci, seg, here in reversed(edits):
            items = unpack(seg) if seg.__class__ is tuple else seg
            for j in reversed(here):
                del items[j]
            if seg.__class__ is tuple:
                self.mid -= len(here)
                self._put_chunk(ci, items)
            elif ci < 0:
                self.head = items[::-1]  # edited a copy in list order
            # the tail (ci == number of chunks) was edited in place
        self.nbytes -= _size_of(value) * len(drop)
        return len(drop)

    def _drop_front(self, k: int) -> None:
        head = self.head
        if k <= len(head):
            if k:
                self.nbytes -= sum(map(_size_of, head[-k:]))
                del head[-k:]
            return
        self.nbytes -= sum(map(_size_of, head))
        k -= len(head)
        head.clear()
        chunks = self.chunks
        while chunks and k:
            items = unpack(chunks.popleft())
            self.mid -= len(items)
            if k < len(items):
                self.nbytes -= sum(map(_size_of, items[:k]))
                self.head = items[k:][::-1]
                return
            self.nbytes -= sum(map(_size_of, items))
            k -= len(items)
        if k:
            self.nbytes -= sum(map(_size_of, self.tail[:k]))
            del self.tail[:k]

    def _drop_back(self, k: int) -> None:
        tail = self.tail
        if k <= len(tail):
            if k:
                self.nbytes -= sum(map(_size_of, tail[-k:]))
                del tail[-k:]
            return
        self.nbytes -= sum(map(_size_of, tail))
        k -= len(tail)
        tail.clear()
        chunks = self.chunks
        while chunks and k:
            items = unpack(chunks.pop())
            self.mid -= len(items)
            if k < len(items):
                self.nbytes -= sum(map(_size_of, items[-k:]))
                self.tail = items[:-k]
                return
            self.nbytes -= sum(map(_size_of, items))
            k -= len(items)
        if k:
            self.nbytes -= sum(map(_size_of, self.head[:k]))
            del self.head[:k]

    def trim(self, lo: int, hi: int) -> None:
        """LTRIM: keep the elements at lo <= index < hi (0 <= lo, hi <= len)."""
        n = len(self)
        if hi <= lo:
            self.replace(())
            return
        self._drop_back(n - hi)
        self._drop_front(lo)

    # --- encoding --------------------------------------------------------------------

    def note_size(self, max_size: int) -> None:
        """For a list built whole (loading): the encoding its content gets."""
        self.big = _exceeds(max_size, self.nbytes, len(self))

    def will_add(self, values: list[bytes], max_size: int) -> None:
        """Before adding `values`: Redis's listTypeTryConvertListpack (raw lengths, checked first)."""
        if not self.big and _exceeds(max_size, self.nbytes + sum(map(len, values)),
                                     len(self) + len(values)):
            self.big = True

    def shrunk(self, max_size: int) -> None:
        """After removing: listTypeTryConvertQuicklist back under half the limit."""
        if not self.big:
            return
        if max_size < 0:
            small = self.nbytes <= _SIZE_LIMITS.get(max_size, 8192) // 2
        else:
            small = len(self) <= max_size // 2 and self.nbytes <= _SAFETY_LIMIT // 2
        if small:
            self.big = False

    def encoding(self) -> bytes:
        return b"quicklist" if self.big else b"listpack"

    def memory_usage(self) -> int:
        return 64 + self.nbytes

    def check(self) -> None:
        """Invariants (tests): counts agree, chunks non-empty, open ends below OPEN_MAX."""
        assert self.mid == sum(map(_count, self.chunks))
        assert all(_count(c) > 0 and isinstance(c[1], array) for c in self.chunks)
        assert len(self.head) < OPEN_MAX and len(self.tail) < OPEN_MAX
        assert self.nbytes == LISTPACK_EMPTY_SIZE + sum(map(_size_of, self))

# (Compiled: an extension type, engine/lists.pxd; its fields read as slots from Python.)
as_slots(List)
