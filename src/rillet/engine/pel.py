"""Pending-entries-list building blocks: `SortedIndex`, `PendingEntry`, ID keys.

A consumer group files every pending entry in three ordered indexes at once:
the group PEL and the owner's PEL (both by ID) and the idle index (by last
delivery time). `SortedIndex` is the one ordered int-keyed map behind all
three, so XACK, claims and lookups are O(log P) and a page is O(log P + COUNT).
"""

from __future__ import annotations

import os
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any

from rillet.engine.ids import StreamID

# An ID is keyed as one int, ms << 64 | seq: int comparison and hashing are
# several times cheaper than tuple comparison, and one int object is shared by
# every index that holds the entry.
SEQ_BITS = 64
SEQ_MASK = (1 << SEQ_BITS) - 1
MAX_ID_KEY = (1 << 128) - 1

# The idle index is keyed by delivery_time << TOUCH_BITS | touch sequence: the
# sequence breaks ties in touch order, which is Redis's list order (it appends
# each touched entry at the tail of its time-ordered list) and keeps XNACKed
# entries (all at time 0) first-in first-out.
TOUCH_BITS = 40
TOUCH_MASK = (1 << TOUCH_BITS) - 1


_tuple_new = tuple.__new__


def id_key(sid: Any) -> int:
    """The int key of a stream ID given as any (ms, seq) pair."""
    return (sid[0] << SEQ_BITS) | sid[1]


class PendingEntry:
    """One delivered, not yet acknowledged entry of a consumer group.

    `owner` is the owning consumer's name (bytes), or None once XNACK released
    it to the group. A name, not the `Consumer`: the consumer's PEL holds the
    entry, so a pointer back would make every pending entry a reference cycle
    that only the cycle collector frees once its stream leaves the keyspace.
    The delivery time lives inside `tkey` (the idle-index key) so that an
    entry costs one object and two ints; read it as `delivery_time_ms`.
    """

    __slots__ = ("key", "tkey", "owner", "delivery_count")

    def __init__(self, key: int, tkey: int, owner: bytes | None, delivery_count: int) -> None:
        self.key = key
        self.tkey = tkey
        self.owner = owner
        self.delivery_count = delivery_count

    @property
    def id(self) -> StreamID:
        return _tuple_new(StreamID, (self.key >> SEQ_BITS, self.key & SEQ_MASK))

    @property
    def id_pair(self) -> tuple[int, int]:
        return self.key >> SEQ_BITS, self.key & SEQ_MASK

    @property
    def delivery_time_ms(self) -> int:
        return self.tkey >> TOUCH_BITS

    def idle_ms(self, now_ms: int) -> int:
        """Milliseconds since the last delivery, as XPENDING reports it.

        Never negative, except -1 for an entry released by XNACK (no owner),
        which is what redis.io's XNACK page shows XPENDING answering.
        """
        if self.owner is None:
            return -1
        idle = now_ms - (self.tkey >> TOUCH_BITS)
        return idle if idle > 0 else 0

    def __repr__(self) -> str:
        ms, seq = self.id_pair
        owner = self.owner
        return (
            f"PendingEntry({ms}-{seq}, owner={owner!r}, "
            f"time={self.delivery_time_ms}, count={self.delivery_count})"
        )


class SortedIndex:
    """An ordered map from int keys to values, stored as blocks of sorted lists.

    Two levels like sortedcontainers' SortedList (a bisect over the blocks'
    last keys, then a bisect inside one block), but holding values next to the
    keys so a lookup needs no side dict. Appending past the end, the common
    case for new deliveries and fresh delivery times, touches only the last
    block. Iterators must not outlive a mutation of the same index; the
    `range_values` form returns a list and has no such restriction.
    """

    __slots__ = ("_keys", "_vals", "_maxes", "_len")

    LOAD = 512  # a block splits at 2*LOAD entries; merges when small

    def __init__(self) -> None:
        self._keys: list[list[int]] = []
        self._vals: list[list[Any]] = []
        self._maxes: list[int] = []
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __contains__(self, key: int) -> bool:
        return self.get(key) is not None

    def fill_sorted(self, keys: list[int], values: list[Any]) -> None:
        """Fill an empty index from keys already in ascending order, a block at a time."""
        if self._len:
            raise ValueError("fill_sorted needs an empty index")
        step = self.LOAD
        for start in range(0, len(keys), step):
            block_keys = keys[start : start + step]
            self._keys.append(block_keys)
            self._vals.append(values[start : start + step])
            self._maxes.append(block_keys[-1])
        self._len = len(keys)

    def get(self, key: int) -> Any:
        maxes = self._maxes
        pos = bisect_left(maxes, key)
        if pos == len(maxes):
            return None
        keys = self._keys[pos]
        i = bisect_left(keys, key)
        if keys[i] == key:  # i < len(keys): maxes[pos] >= key
            return self._vals[pos][i]
        return None

    def insert(self, key: int, value: Any) -> None:
        """Add `key` (which must not be present) with `value`."""
        maxes = self._maxes
        self._len += 1
        if not maxes:
            self._keys.append([key])
            self._vals.append([value])
            maxes.append(key)
            return
        if key > maxes[-1]:
            pos = len(maxes) - 1
            keys = self._keys[pos]
            keys.append(key)
            self._vals[pos].append(value)
            maxes[pos] = key
        else:
            pos = bisect_left(maxes, key)
            keys = self._keys[pos]
            i = bisect_left(keys, key)
            keys.insert(i, key)
            self._vals[pos].insert(i, value)
        if len(keys) > 2 * self.LOAD:
            self._split(pos)

    def pop(self, key: int) -> Any:
        """Remove `key` and return its value, or None if absent."""
        maxes = self._maxes
        pos = bisect_left(maxes, key)
        if pos == len(maxes):
            return None
        keys = self._keys[pos]
        i = bisect_left(keys, key)
        if keys[i] != key:
            return None
        del keys[i]
        value = self._vals[pos].pop(i)
        self._len -= 1
        if not keys:
            del self._keys[pos], self._vals[pos], maxes[pos]
        else:
            if i == len(keys):
                maxes[pos] = keys[-1]
            if len(keys) < self.LOAD // 4:
                self._maybe_merge(pos)
        return value

    def first(self) -> Any:
        """The value with the smallest key, or None when empty."""
        return self._vals[0][0] if self._vals else None

    def first_key(self) -> int | None:
        return self._keys[0][0] if self._keys else None

    def last_key(self) -> int | None:
        return self._maxes[-1] if self._maxes else None

    def range_values(self, lo: int, hi: int = MAX_ID_KEY, limit: int | None = None) -> list[Any]:
        """Values with lo <= key <= hi in key order, at most `limit` of them."""
        out: list[Any] = []
        if limit is not None and limit <= 0:
            return out
        maxes = self._maxes
        pos = bisect_left(maxes, lo)
        nblocks = len(maxes)
        if pos == nblocks:
            return out
        keys, vals = self._keys, self._vals
        i = bisect_left(keys[pos], lo)
        while pos < nblocks:
            block = keys[pos]
            j = len(block) if maxes[pos] <= hi else bisect_right(block, hi)
            if limit is not None:
                j = min(j, i + limit - len(out))
            out.extend(vals[pos][i:j])
            if j < len(block) or (limit is not None and len(out) >= limit):
                break
            pos += 1
            i = 0
        return out

    def iter_values(self, lo: int = 0, hi: int = MAX_ID_KEY) -> Iterator[Any]:
        """Lazily yield values with lo <= key <= hi; do not mutate meanwhile."""
        maxes = self._maxes
        pos = bisect_left(maxes, lo)
        if pos == len(maxes):
            return
        keys, vals = self._keys, self._vals
        i = bisect_left(keys[pos], lo)
        for p in range(pos, len(maxes)):
            block = keys[p]
            j = len(block) if maxes[p] <= hi else bisect_right(block, hi)
            yield from vals[p][i:j]
            if j < len(block):
                return
            i = 0

    def __iter__(self) -> Iterator[Any]:
        for block in self._vals:
            yield from block

    def keys(self) -> Iterator[int]:
        for block in self._keys:
            yield from block

    def clear(self) -> None:
        self._keys.clear()
        self._vals.clear()
        self._maxes.clear()
        self._len = 0

    def _split(self, pos: int) -> None:
        half = self.LOAD
        keys, vals = self._keys[pos], self._vals[pos]
        self._keys.insert(pos + 1, keys[half:])
        self._vals.insert(pos + 1, vals[half:])
        del keys[half:], vals[half:]
        self._maxes.insert(pos, keys[-1])

    def _maybe_merge(self, pos: int) -> None:
        # Joining a small block into its right neighbour keeps the block count
        # proportional to the size after mass deletions (XACK of a backlog).
        if pos + 1 == len(self._keys):
            pos -= 1  # the last block joins its left neighbour instead
            if pos < 0:
                return
        nxt = pos + 1
        if len(self._keys[pos]) + len(self._keys[nxt]) > self.LOAD:
            return
        self._keys[pos].extend(self._keys[nxt])
        self._vals[pos].extend(self._vals[nxt])
        self._maxes[pos] = self._maxes[nxt]
        del self._keys[nxt], self._vals[nxt], self._maxes[nxt]

    def check(self) -> None:
        """Assert the structural invariants (for tests)."""
        assert len(self._keys) == len(self._vals) == len(self._maxes)
        total = 0
        prev = -1
        for keys, vals, mx in zip(self._keys, self._vals, self._maxes, strict=True):
            assert keys and len(keys) == len(vals) and keys[-1] == mx
            for k in keys:
                assert k > prev
                prev = k
            total += len(keys)
        assert total == self._len


# The Python classes above are the reference; the compiled form in _pelindex.pyx
# (packed 128-bit keys, same API and answers, checked by
# tests/engine/test_pelindex.py) replaces it when built, unless RILLET_PURE is set.
# The same holds for PendingEntry, whose compiled form keeps both keys packed
# inside the object (which pays for the index's 16-byte keys).
PySortedIndex, PyPendingEntry = SortedIndex, PendingEntry
if not os.environ.get("RILLET_PURE"):
    try:
        from rillet.engine._pelindex import (  # type: ignore[no-redef]
            PendingEntry,
            SortedIndex,
        )
    except ImportError:
        pass
