"""The sorted set type: member -> score, ordered by (score, member).

`scores` maps member to score; `order` is the sorted (score, member) pairs in
sortedcontainers' chunked `SortedList` (bisect for ranks and ranges, bounded
inserts), or the compiled `_zorder.ZOrder` with the same API. OBJECT ENCODING:
`listpack` while the count fits zset-max-listpack-entries and members fit
zset-max-listpack-value, `skiplist` after (back to `listpack` only when a
command builds a new set, as Redis's zsetTypeCreate does).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from sortedcontainers import SortedList

from rillet.compiled import as_slots, compiled

# The order's class: the compiled one for (score, member) pairs (engine/_zorder.pyx,
# same API and answers, checked by tests/engine/test_zorder.py) when rillet/compiled.py
# gives it; SortedList, the reference, otherwise.
_zorder = compiled("rillet.engine._zorder")
Order: type = SortedList if _zorder is None else _zorder.ZOrder


class ZSet:
    TYPE_NAME = b"zset"
    __slots__ = ("scores", "order", "big")

    def __init__(self) -> None:
        self.scores: dict[bytes, float] = {}
        self.order = Order()
        self.big = False

    @classmethod
    def from_dict(cls, scores: dict[bytes, float], big: bool = False) -> ZSet:
        z = cls()
        z.scores = dict(scores)
        z.order = Order([(s, m) for m, s in z.scores.items()])
        z.big = big
        return z

    def to_dict(self) -> dict[bytes, float]:
        return dict(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    def score(self, member: bytes) -> float | None:
        return self.scores.get(member)

    def add(self, member: bytes, score: float) -> bool:
        """Set `member`'s score; True if it is new."""
        old = self.scores.get(member)
        if old is not None:
            if old == score:
                return False
            self.order.remove((old, member))
            self.scores[member] = score
            self.order.add((score, member))
            return False
        self.scores[member] = score
        self.order.add((score, member))
        return True

    def remove(self, member: bytes) -> bool:
        old = self.scores.pop(member, None)
        if old is None:
            return False
        self.order.remove((old, member))
        return True

    def rank(self, member: bytes) -> int | None:
        s = self.scores.get(member)
        if s is None:
            return None
        return self.order.bisect_left((s, member))

    # --- ranges: each returns a slice [lo, hi) of `order` ------------------------
    def score_bounds(self, low: float, low_ex: bool, high: float, high_ex: bool) -> tuple[int, int]:
        order = self.order
        lo = _score_right(order, low) if low_ex else _score_left(order, low)
        hi = _score_left(order, high) if high_ex else _score_right(order, high)
        return lo, max(lo, hi)

    def lex_bounds(self, low: tuple[int, bytes], high: tuple[int, bytes],
                   reverse: bool = False) -> tuple[int, int]:
        """Lex range, a bound being (kind, member): kind -1 = '-', 1 = '+', 0 inclusive, 2 exclusive.

        Redis defines it on equal scores (bisect then); with mixed scores this walks
        the order as its listpack code does (zzlFirstInLexRange / zzlLastInLexRange),
        from the head, or from the tail for a reverse range.
        """
        order = self.order
        n = len(order)
        if not n:
            return 0, 0
        if order[0][0] == order[-1][0]:
            members = [m for _, m in order]
            lo = _lex_left(members, low)
            hi = _lex_right(members, high)
            return lo, max(lo, hi)
        if not (_gte_min(order[-1][1], low) and _lte_max(order[0][1], high)):
            return 0, 0
        if reverse:
            hi = n
            while hi > 0 and not _lte_max(order[hi - 1][1], high):
                hi -= 1
            if hi == 0 or not _gte_min(order[hi - 1][1], low):
                return 0, 0
            lo = hi - 1
            while lo > 0 and _gte_min(order[lo - 1][1], low):
                lo -= 1
            return lo, hi
        lo = 0
        while lo < n and not _gte_min(order[lo][1], low):
            lo += 1
        if lo == n or not _lte_max(order[lo][1], high):
            return 0, 0
        hi = lo + 1
        while hi < n and _lte_max(order[hi][1], high):
            hi += 1
        return lo, hi

    def note_sizes(self, max_entries: int, max_value: int, added: list[bytes]) -> None:
        if not self.big and (len(self.scores) > max_entries
                             or any(len(m) > max_value for m in added)):
            self.big = True

    def fresh_big(self, max_entries: int, max_value: int) -> bool:
        return len(self.scores) > max_entries or any(len(m) > max_value for m in self.scores)

    def copy(self) -> ZSet:
        value = ZSet()
        value.scores = dict(self.scores)
        value.order = self.order.copy()
        value.big = self.big
        return value

    def encoding(self) -> bytes:
        return b"skiplist" if self.big else b"listpack"

    def memory_usage(self) -> int:
        return 64 + sum(len(m) + 40 for m in self.scores)

    def pairs(self, lo: int, hi: int, reverse: bool = False) -> Iterable[tuple[float, bytes]]:
        if reverse:
            return reversed(self.order[lo:hi])
        return self.order[lo:hi]


# (score, _TOP) sorts after every (score, member): members are bytes, never above this.
class _Top:
    __slots__ = ()

    def __gt__(self, other: object) -> bool:
        return True

    def __lt__(self, other: object) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return other is self

    __hash__ = object.__hash__


_TOP = _Top()


def _score_left(order: SortedList, score: float) -> int:
    """First index with score >= `score`."""
    return order.bisect_left((score,))


def _score_right(order: SortedList, score: float) -> int:
    """First index with score > `score`."""
    return order.bisect_left((score, _TOP))


def _lex_left(members: list[bytes], bound: tuple[int, bytes]) -> int:
    kind, value = bound
    if kind == -1:
        return 0
    if kind == 1:
        return len(members)
    return bisect_left(members, value) if kind == 0 else bisect_right(members, value)


def _lex_right(members: list[bytes], bound: tuple[int, bytes]) -> int:
    kind, value = bound
    if kind == -1:
        return 0
    if kind == 1:
        return len(members)
    return bisect_right(members, value) if kind == 0 else bisect_left(members, value)


def _gte_min(member: bytes, bound: tuple[int, bytes]) -> bool:
    kind, value = bound
    if kind == -1:
        return True
    if kind == 1:
        return False
    return member >= value if kind == 0 else member > value


def _lte_max(member: bytes, bound: tuple[int, bytes]) -> bool:
    kind, value = bound
    if kind == 1:
        return True
    if kind == -1:
        return False
    return member <= value if kind == 0 else member < value

# (Compiled: an extension type, engine/zsets.pxd; its fields read as slots from Python.)
as_slots(ZSet)
