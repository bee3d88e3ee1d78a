"""The array type (Redis 8.8): a sparse map from u64 indexes to strings.

Elements live in slices of 4096 consecutive indexes, each a dict of
offset -> value, with a sorted list of the slice ids in use: memory follows
the elements, never the span of the indexes (ARSET k 0 a; ARSET k 2^63 b
holds two slices). Lookups are O(1); a range walks only the slices it
touches.

Beside the content, the model follows Redis's sparsearray.c layout decisions
that ARINFO reports: each slice's encoding (sparse: sorted offsets, capacity
growing 4 -> 10; dense: a power-of-two window), the flat directory's size and
the switch to the super-directory once a slice id reaches 2048. Those only
feed ARINFO; no command's answer depends on them.

`insert_idx` is ARINSERT/ARRING's cursor: the last index written, or None
(Redis's AR_INSERT_IDX_NONE: the next insert goes to 0).
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator

U64_MAX = (1 << 64) - 1
SLICE_BITS = 12
SLICE_SIZE = 1 << SLICE_BITS  # AR_SLICE_SIZE_DEFAULT
_OFF_MASK = SLICE_SIZE - 1
SUPER_BLOCK_SLOTS = 2048  # AR_SUPER_BLOCK_SLOTS
SPARSE_KMAX = 10  # AR_SPARSE_KMAX_DEFAULT
SPARSE_KMIN = 5  # AR_SPARSE_KMIN_DEFAULT
MIN_ALLOC = 8  # AR_SLICE_MIN_ALLOC

# The tags Redis's RDB writes per element (AR_RDB_TAG_*), from the value's in-memory form.
TAG_SDS, TAG_INT, TAG_FLOAT, TAG_SMALLSTR = 0, 1, 2, 3
_INT_MIN, _INT_MAX = -(1 << 61), (1 << 61) - 1  # arIntFits on 64-bit builds
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_D = struct.Struct("<d")
_Q = struct.Struct("<Q")


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def canonical_int(value: bytes) -> int | None:
    """Redis's string2ll: the int64 a canonical decimal spells, else None."""
    n = len(value)
    if n == 0 or n > 20:
        return None
    negative = value[0] == 45
    body = value[1:] if negative else value
    if not body.isdigit() or (body[0] == 48 and (len(body) > 1 or negative)):
        return None
    number = int(value)
    return number if _I64_MIN <= number <= _I64_MAX else None


def float_tag_value(value: bytes, d2string) -> float | None:
    """arTryEncodeFloat: the double kept inline for `value`, or None.

    Only digits with one '.', and only if the double with its 2 low bits
    cleared prints back (d2string, or d2string + ".0") as exactly `value`.
    """
    body = value[1:] if value[:1] == b"-" else value
    if not body or body.count(b".") != 1 or not body.replace(b".", b"").isdigit():
        return None
    try:
        d = float(value)
    except ValueError:
        return None
    if d != d or d in (float("inf"), float("-inf")):
        return None
    (bits,) = _Q.unpack(_D.pack(d))
    (trunc,) = _D.unpack(_Q.pack(bits & ~3))
    text = d2string(trunc)
    if text == value or text + b".0" == value:
        return trunc
    return None


def value_tag(value: bytes, d2string) -> tuple[int, object]:
    """arEncode's choice for `value`, as the RDB tag and its payload (int, float or bytes)."""
    number = canonical_int(value)
    if number is not None and _INT_MIN <= number <= _INT_MAX:
        return TAG_INT, number
    d = float_tag_value(value, d2string)
    if d is not None:
        return TAG_FLOAT, d
    return (TAG_SMALLSTR if len(value) <= 7 else TAG_SDS), value


class _Slice:
    """One slice: its elements and the layout Redis would give it."""

    __slots__ = ("items", "dense", "offset", "winsize", "cap")

    def __init__(self, dense: bool = False, rel: int = 0) -> None:
        self.items: dict[int, bytes] = {}
        self.dense = dense
        self.cap = min(SPARSE_KMAX, 4)
        self.offset = 0
        self.winsize = 0
        if dense:
            self.winsize = MIN_ALLOC
            self.offset = min(rel, SLICE_SIZE - MIN_ALLOC)

    def copy(self) -> _Slice:
        s = _Slice.__new__(_Slice)
        s.items = dict(self.items)
        s.dense, s.offset, s.winsize, s.cap = self.dense, self.offset, self.winsize, self.cap
        return s

    # -- layout (sparsearray.c) ----------------------------------------------------------

    def promote(self) -> None:
        """arSparsePromote: a window around the offsets in use."""
        self.dense = True
        if not self.items:
            self.offset, self.winsize = 0, MIN_ALLOC
            return
        lo, hi = min(self.items), max(self.items)
        winsize = max(_next_pow2(hi - lo + 1), MIN_ALLOC)
        offset = lo
        if winsize >= SLICE_SIZE:
            winsize, offset = SLICE_SIZE, 0
        elif offset + winsize > SLICE_SIZE:
            offset = SLICE_SIZE - winsize
        self.offset, self.winsize = offset, winsize

    def grow_to(self, rel: int) -> None:
        """arSliceDenseGrowIfNeeded."""
        if rel >= self.offset + self.winsize:
            winsize = self.winsize
            while rel >= self.offset + winsize and winsize < SLICE_SIZE:
                winsize <<= 1
            offset = self.offset
            if winsize >= SLICE_SIZE:
                winsize, offset = SLICE_SIZE, 0
            elif offset + winsize > SLICE_SIZE:
                offset = SLICE_SIZE - winsize
            self.offset, self.winsize = offset, winsize
        elif rel < self.offset:
            end = self.offset + self.winsize
            winsize = min(max(_next_pow2(end - rel), MIN_ALLOC), SLICE_SIZE)
            offset = max(end - winsize, 0)
            if winsize == SLICE_SIZE:
                offset = 0
            self.offset, self.winsize = offset, winsize

    def maybe_demote(self) -> None:
        """arDenseMaybeDemote: few elements in a big window go back to sparse."""
        n = len(self.items)
        if n > SPARSE_KMIN or self.winsize == MIN_ALLOC or self.winsize < 4 * SPARSE_KMIN:
            return
        if 32 + 8 * self.winsize < (32 + 56) * 5 // 4:
            return
        self.dense = False
        self.cap = SPARSE_KMIN
        self.offset = self.winsize = 0

    def put(self, rel: int, value: bytes) -> bool:
        """arSet within the slice; True if the slot was empty."""
        items = self.items
        new = rel not in items
        if self.dense:
            self.grow_to(rel)
        elif new:
            if len(items) >= SPARSE_KMAX:
                self.promote()
                self.grow_to(rel)
            elif len(items) >= self.cap:
                self.cap = min(self.cap * 2, SPARSE_KMAX)
        items[rel] = value
        return new


class Array:
    TYPE_NAME = b"array"
    ENCODING = b"sliced-array"
    __slots__ = ("slices", "sids", "count", "insert_idx", "superdir", "dir_alloc", "sdir_cap")

    def __init__(self) -> None:
        self.slices: dict[int, _Slice] = {}
        self.sids: list[int] = []  # slice ids in use, ascending
        self.count = 0
        self.insert_idx: int | None = None
        self.superdir = False
        self.dir_alloc = 0
        self.sdir_cap = 0

    def __len__(self) -> int:
        return self.count

    def encoding(self) -> bytes:
        return self.ENCODING

    def copy(self) -> Array:
        a = Array.__new__(Array)
        a.slices = {sid: s.copy() for sid, s in self.slices.items()}
        a.sids = list(self.sids)
        a.count, a.insert_idx = self.count, self.insert_idx
        a.superdir, a.dir_alloc, a.sdir_cap = self.superdir, self.dir_alloc, self.sdir_cap
        return a

    # -- directory (arDirGrow, arSetSlice, arDirMaybeShrink) -----------------------------------

    def _blocks(self) -> int:
        sids = self.sids
        if not sids:
            return 0
        count, last = 0, -1
        for sid in sids:
            block = sid // SUPER_BLOCK_SLOTS
            if block != last:
                count, last = count + 1, block
        return count

    def _dir_grow(self, sid: int) -> None:
        if not self.superdir and sid >= SUPER_BLOCK_SLOTS:
            self.superdir = True
            self.sdir_cap = 4
            self.dir_alloc = 0
        if self.superdir or sid < self.dir_alloc:
            return
        alloc = self.dir_alloc or 1
        while alloc <= sid:
            alloc <<= 1
        self.dir_alloc = alloc

    def _add_slice(self, sid: int, s: _Slice) -> None:
        if self.superdir:
            block = sid // SUPER_BLOCK_SLOTS
            i = bisect_left(self.sids, block * SUPER_BLOCK_SLOTS)
            if i == len(self.sids) or self.sids[i] // SUPER_BLOCK_SLOTS != block:
                if self._blocks() >= self.sdir_cap:
                    self.sdir_cap = self.sdir_cap * 2 if self.sdir_cap else 4
        self.slices[sid] = s
        insort(self.sids, sid)

    def _drop_slice(self, sid: int) -> None:
        del self.slices[sid]
        del self.sids[bisect_left(self.sids, sid)]

    def _dir_maybe_shrink(self) -> None:
        if self.superdir or not self.count:
            return
        highest = self.sids[-1]
        if highest >= self.dir_alloc * 9 // 10:
            return
        alloc = 1
        while alloc <= highest:
            alloc <<= 1
        if alloc < self.dir_alloc:
            self.dir_alloc = alloc

    # -- elements ----------------------------------------------------------------------------

    def get(self, idx: int) -> bytes | None:
        s = self.slices.get(idx >> SLICE_BITS)
        return None if s is None else s.items.get(idx & _OFF_MASK)

    def set(self, idx: int, value: bytes) -> bool:
        """Store `value` at `idx` (< U64_MAX); True if the slot was empty."""
        sid = idx >> SLICE_BITS
        self._dir_grow(sid)
        s = self.slices.get(sid)
        if s is None:
            s = _Slice()
            self._add_slice(sid, s)
        if s.put(idx & _OFF_MASK, value):
            self.count += 1
            return True
        return False

    def prepare_range(self, lo: int, hi: int) -> None:
        """arMayPromoteToDenseForRangeSet before a bulk write of [lo, hi]."""
        first, last = lo >> SLICE_BITS, hi >> SLICE_BITS
        self._dir_grow(last)
        for sid in range(first, last + 1):
            start = (lo if sid == first else sid << SLICE_BITS) & _OFF_MASK
            end = (hi if sid == last else ((sid + 1) << SLICE_BITS) - 1) & _OFF_MASK
            size = end - start + 1
            s = self.slices.get(sid)
            if s is None:
                if size > SPARSE_KMAX:
                    self._add_slice(sid, _Slice(True, start))
                continue
            if s.dense:
                continue
            existing = sum(1 for off in s.items if start <= off <= end)
            if size > SPARSE_KMAX or len(s.items) + size - existing > SPARSE_KMAX:
                s.promote()

    def delete(self, idx: int) -> bool:
        sid = idx >> SLICE_BITS
        s = self.slices.get(sid)
        if s is None or s.items.pop(idx & _OFF_MASK, None) is None:
            return False
        self.count -= 1
        if s.items:
            if s.dense:
                s.maybe_demote()
        else:
            self._drop_slice(sid)
            self._dir_maybe_shrink()
        return True

    def delete_range(self, lo: int, hi: int) -> int:
        """Delete every element in [lo, hi]: work follows the slices in use, not the span."""
        if not self.count or lo > hi:
            return 0
        first, last = lo >> SLICE_BITS, hi >> SLICE_BITS
        i, j = bisect_left(self.sids, first), bisect_right(self.sids, last)
        deleted = 0
        for sid in self.sids[i:j]:
            s = self.slices[sid]
            start = lo & _OFF_MASK if sid == first else 0
            end = hi & _OFF_MASK if sid == last else _OFF_MASK
            if start == 0 and end == _OFF_MASK and first < sid < last:
                gone = list(s.items)
            else:
                gone = [off for off in s.items if start <= off <= end]
            for off in gone:
                del s.items[off]
            deleted += len(gone)
            if not s.items:
                self._drop_slice(sid)
            elif s.dense and (sid == first or sid == last):
                s.maybe_demote()  # arDeleteSliceRange: boundary slices, even if nothing went
        self.count -= deleted
        self._dir_maybe_shrink()
        return deleted

    # -- queries -----------------------------------------------------------------------------

    def length(self) -> int:
        """ARLEN: the highest index in use plus one (0 when empty)."""
        if not self.count:
            return 0
        sid = self.sids[-1]
        return (sid << SLICE_BITS) + max(self.slices[sid].items) + 1

    def scan(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """Elements with an index between start and end, from start towards end."""
        reverse = start > end
        lo, hi = (end, start) if reverse else (start, end)
        first, last = lo >> SLICE_BITS, hi >> SLICE_BITS
        sids = self.sids[bisect_left(self.sids, first):bisect_right(self.sids, last)]
        if reverse:
            sids.reverse()
        for sid in sids:
            base = sid << SLICE_BITS
            items = self.slices[sid].items
            offs = sorted(items, reverse=reverse)
            for off in offs:
                idx = base + off
                if lo <= idx <= hi:
                    yield idx, items[off]

    def items(self) -> Iterator[tuple[int, bytes]]:
        for sid in self.sids:
            base = sid << SLICE_BITS
            items = self.slices[sid].items
            for off in sorted(items):
                yield base + off, items[off]

    def info(self) -> dict[str, int]:
        """ARINFO's layout figures (slices, directory, FULL's per-encoding sums)."""
        dense = [s for s in self.slices.values() if s.dense]
        sparse = [s for s in self.slices.values() if not s.dense]
        return {
            "slices": len(self.sids),
            "directory-size": self.sdir_cap if self.superdir else self.dir_alloc,
            "super-dir-entries": self._blocks() if self.superdir else 0,
            "dense": len(dense),
            "sparse": len(sparse),
            "dense-winsize": sum(s.winsize for s in dense),
            "dense-count": sum(len(s.items) for s in dense),
            "sparse-cap": sum(s.cap for s in sparse),
        }

    def memory_usage(self) -> int:
        return 96 + sum(48 + 24 * len(s.items) + sum(len(v) for v in s.items.values())
                        for s in self.slices.values())


def ring_rework(array: Array, old_span: int, keep_span: int) -> Array:
    """arRingRework: the newest contiguous run (at most keep_span) repacked from index 0."""
    fresh = Array()
    anchor = old_span - 1 if array.insert_idx is None else array.insert_idx % old_span
    retained = 0
    src = anchor
    while retained < keep_span:
        if array.get(src) is None:
            break
        retained += 1
        src = old_span - 1 if src == 0 else src - 1
    src += 1
    if src == old_span:
        src = 0
    for dst in range(retained):
        fresh.set(dst, array.get(src))  # type: ignore[arg-type]  # set: checked above
        src += 1
        if src == old_span:
            src = 0
    if retained:
        fresh.insert_idx = retained - 1
    return fresh


def ring_needs_rework(array: Array, size: int) -> tuple[int, int] | None:
    """arRingNeedsRework: (old span, span to keep) when ARRING must repack first."""
    span = array.length()
    if span == 0 or size == span:
        return None
    if size < span:
        return span, size
    if array.insert_idx is None:
        return None
    if array.insert_idx + 1 < span:
        return span, span
    return None
