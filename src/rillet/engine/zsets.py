"""The sorted set type: member -> score, ordered by (score, member).

`scores` maps member to score; `order` is the sorted list of (score, member)
pairs (bisect for ranks and ranges, memmove inserts). OBJECT ENCODING:
`listpack` while the count fits zset-max-listpack-entries and members fit
zset-max-listpack-value, `skiplist` after (back to `listpack` only when a
command builds a new set, as Redis's zsetTypeCreate does).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

_INF = float("inf")
_MAX_MEMBER = b"\xff" * 8  # only used with explicit exclusivity flags below


class ZSet:
    TYPE_NAME = b"zset"
    __slots__ = ("scores", "order", "big")

    def __init__(self) -> None:
        self.scores: dict[bytes, float] = {}
        self.order: list[tuple[float, bytes]] = []
        self.big = False

    @classmethod
    def from_dict(cls, scores: dict[bytes, float], big: bool = False) -> ZSet:
        z = cls()
        z.scores = dict(scores)
        z.order = sorted((s, m) for m, s in z.scores.items())
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
            del self.order[bisect_left(self.order, (old, member))]
            self.scores[member] = score
            self.order.insert(bisect_left(self.order, (score, member)), (score, member))
            return False
        self.scores[member] = score
        self.order.insert(bisect_left(self.order, (score, member)), (score, member))
        return True

    def remove(self, member: bytes) -> bool:
        old = self.scores.pop(member, None)
        if old is None:
            return False
        del self.order[bisect_left(self.order, (old, member))]
        return True

    def rank(self, member: bytes) -> int | None:
        s = self.scores.get(member)
        if s is None:
            return None
        return bisect_left(self.order, (s, member))

    # --- ranges: each returns a slice [lo, hi) of `order` ------------------------
    def score_bounds(self, low: float, low_ex: bool, high: float, high_ex: bool) -> tuple[int, int]:
        order = self.order
        lo = _score_right(order, low) if low_ex else _score_left(order, low)
        hi = _score_left(order, high) if high_ex else _score_right(order, high)
        return lo, max(lo, hi)

    def lex_bounds(self, low: tuple[int, bytes], high: tuple[int, bytes]) -> tuple[int, int]:
        """Lex range over a set whose scores are all equal (else unspecified, as in Redis).

        A bound is (kind, member): kind -1 = '-', 1 = '+', 0 inclusive, 2 exclusive.
        """
        members = [m for _, m in self.order]
        lo = _lex_left(members, low)
        hi = _lex_right(members, high)
        return lo, max(lo, hi)

    def note_sizes(self, max_entries: int, max_value: int, added: list[bytes]) -> None:
        if not self.big and (len(self.scores) > max_entries
                             or any(len(m) > max_value for m in added)):
            self.big = True

    def fresh_big(self, max_entries: int, max_value: int) -> bool:
        return len(self.scores) > max_entries or any(len(m) > max_value for m in self.scores)

    def copy(self) -> ZSet:
        value = ZSet()
        value.scores = dict(self.scores)
        value.order = list(self.order)
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


def _score_left(order: list[tuple[float, bytes]], score: float) -> int:
    """First index with score >= `score`."""
    return bisect_left(order, (score,))


def _score_right(order: list[tuple[float, bytes]], score: float) -> int:
    """First index with score > `score`."""
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        if order[mid][0] <= score:
            lo = mid + 1
        else:
            hi = mid
    return lo


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
