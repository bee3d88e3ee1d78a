"""Model-based tests: list and sorted set commands, run in-process, against naive models.

Hypothesis drives random commands (with out-of-range indexes, negative
counts, inf scores, exclusive and lexical bounds) through the dispatcher and
compares every reply with what a plain Python list / dict computes.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from rillet.errors import ReplyError
from tests.persistence.support import InProcess

ELEMS = st.sampled_from([b"a", b"b", b"c", b"", b"1", b"x" * 70])
INDEX = st.integers(-8, 8)


def _norm(n: int, start: int, stop: int) -> tuple[int, int]:
    if start < 0:
        start = max(start + n, 0)
    if stop < 0:
        stop += n
    if start > stop or start >= n:
        return 0, 0
    return start, min(stop, n - 1) + 1


class ListMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = InProcess()
        self.model: list[bytes] = []

    def run(self, *argv: object) -> object:
        reply = self.server.run(*argv)
        return reply.message if isinstance(reply, ReplyError) else reply

    @rule(items=st.lists(ELEMS, min_size=1, max_size=5), left=st.booleans())
    def push(self, items: list[bytes], left: bool) -> None:
        assert self.run(b"LPUSH" if left else b"RPUSH", b"l", *items) == len(self.model) + len(items)
        for item in items:
            if left:
                self.model.insert(0, item)
            else:
                self.model.append(item)

    @rule(left=st.booleans(), count=st.one_of(st.none(), st.integers(0, 6)))
    def pop(self, left: bool, count: int | None) -> None:
        args = [] if count is None else [count]
        reply = self.run(b"LPOP" if left else b"RPOP", b"l", *args)
        if not self.model:
            assert reply is None or reply.__class__.__name__ == "NullArray"
            return
        take = 1 if count is None else min(count, len(self.model))
        taken = [self.model.pop(0 if left else -1) for _ in range(take)]
        assert reply == (taken[0] if count is None else taken)

    @rule(start=INDEX, stop=INDEX)
    def lrange(self, start: int, stop: int) -> None:
        lo, hi = _norm(len(self.model), start, stop)
        assert self.run(b"LRANGE", b"l", start, stop) == self.model[lo:hi]

    @rule(start=INDEX, stop=INDEX)
    def ltrim(self, start: int, stop: int) -> None:
        lo, hi = _norm(len(self.model), start, stop)
        self.run(b"LTRIM", b"l", start, stop)
        self.model = self.model[lo:hi]

    @rule(index=INDEX, value=ELEMS)
    def lset_lindex(self, index: int, value: bytes) -> None:
        n = len(self.model)
        ok = -n <= index < n
        assert self.run(b"LINDEX", b"l", index) == (self.model[index] if ok else None)
        reply = self.run(b"LSET", b"l", index, value)
        if ok:
            self.model[index] = value
        else:
            assert reply in ("ERR no such key", "ERR index out of range")

    @rule(count=st.integers(-3, 3), value=ELEMS)
    def lrem(self, count: int, value: bytes) -> None:
        idxs = [i for i, x in enumerate(self.model) if x == value]
        if count < 0:
            idxs = idxs[::-1]
        if count:
            idxs = idxs[:abs(count)]
        assert self.run(b"LREM", b"l", count, value) == len(idxs)
        self.model = [x for i, x in enumerate(self.model) if i not in set(idxs)]

    @rule(value=ELEMS, rank=st.sampled_from([1, 2, -1, -2]), count=st.integers(0, 3), maxlen=st.integers(0, 5))
    def lpos(self, value: bytes, rank: int, count: int, maxlen: int) -> None:
        order = list(range(len(self.model)))
        if rank < 0:
            order.reverse()
        if maxlen:
            order = order[:maxlen]
        hits = [i for i in order if self.model[i] == value][abs(rank) - 1:]
        if count:
            hits = hits[:count]
        assert self.run(b"LPOS", b"l", value, b"RANK", rank, b"COUNT", count, b"MAXLEN", maxlen) == hits

    @invariant()
    def length(self) -> None:
        assert self.run(b"LLEN", b"l") == len(self.model)
        assert self.run(b"EXISTS", b"l") == (1 if self.model else 0)


MEMBERS = st.sampled_from([b"a", b"b", b"c", b"d", b"aa", b""])
SCORES = st.sampled_from([0.0, 1.0, 1.5, -2.0, math.inf, -math.inf, 1e300])


def _fmt(score: float) -> bytes:
    if score == math.inf:
        return b"+inf"
    if score == -math.inf:
        return b"-inf"
    return repr(score).encode()


class ZSetMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = InProcess()
        self.model: dict[bytes, float] = {}

    def run(self, *argv: object) -> object:
        reply = self.server.run(*argv)
        return reply.message if isinstance(reply, ReplyError) else reply

    def ordered(self) -> list[tuple[bytes, float]]:
        return sorted(self.model.items(), key=lambda p: (p[1], p[0]))

    @rule(pairs=st.lists(st.tuples(SCORES, MEMBERS), min_size=1, max_size=4),
          flag=st.sampled_from([None, b"NX", b"XX", b"GT", b"LT"]))
    def zadd(self, pairs: list[tuple[float, bytes]], flag: bytes | None) -> None:
        args = [x for s, m in pairs for x in (_fmt(s), m)]
        added = 0
        for s, m in pairs:
            old = self.model.get(m)
            if old is None:
                if flag != b"XX":
                    self.model[m] = s
                    added += 1
            elif flag != b"NX" and not (flag == b"GT" and s <= old) and not (flag == b"LT" and s >= old):
                self.model[m] = s
        assert self.run(b"ZADD", b"z", *([flag] if flag else []), *args) == added

    @rule(member=MEMBERS)
    def zrem(self, member: bytes) -> None:
        assert self.run(b"ZREM", b"z", member) == (1 if self.model.pop(member, None) is not None else 0)

    @rule(start=INDEX, stop=INDEX, rev=st.booleans())
    def zrange_rank(self, start: int, stop: int, rev: bool) -> None:
        items = self.ordered()
        if rev:
            items.reverse()
        lo, hi = _norm(len(items), start, stop)
        args = [b"REV"] if rev else []
        assert self.run(b"ZRANGE", b"z", start, stop, *args) == [m for m, _ in items[lo:hi]]

    @rule(low=SCORES, high=SCORES, lex=st.booleans(), hex_=st.booleans(), rev=st.booleans(),
          offset=st.integers(0, 3), count=st.integers(-1, 3))
    def zrange_score(self, low: float, high: float, lex: bool, hex_: bool, rev: bool,
                     offset: int, count: int) -> None:
        def inside(s: float) -> bool:
            return (low < s if lex else low <= s) and (s < high if hex_ else s <= high)

        items = [p for p in self.ordered() if inside(p[1])]
        if rev:
            items.reverse()
        items = items[offset:] if count < 0 else items[offset:offset + count]
        lo = (b"(" if lex else b"") + _fmt(low)
        hi = (b"(" if hex_ else b"") + _fmt(high)
        bounds = [hi, lo] if rev else [lo, hi]
        args = [b"BYSCORE", *([b"REV"] if rev else []), b"LIMIT", offset, count]
        assert self.run(b"ZRANGE", b"z", *bounds, *args) == [m for m, _ in items]
        assert self.run(b"ZCOUNT", b"z", lo, hi) == len([p for p in self.model.values() if inside(p)])

    @rule(low=MEMBERS, high=MEMBERS, lex=st.booleans(), hex_=st.booleans())
    def zrangebylex(self, low: bytes, high: bytes, lex: bool, hex_: bool) -> None:
        if len(set(self.model.values())) > 1:
            return  # lex ranges are defined on equal scores only
        members = sorted(self.model)
        want = [m for m in members if (low < m if lex else low <= m) and (m < high if hex_ else m <= high)]
        lo = (b"(" if lex else b"[") + low
        hi = (b"(" if hex_ else b"[") + high
        assert self.run(b"ZRANGEBYLEX", b"z", lo, hi) == want
        assert self.run(b"ZLEXCOUNT", b"z", lo, hi) == len(want)

    @rule(member=MEMBERS)
    def rank_and_score(self, member: bytes) -> None:
        items = [m for m, _ in self.ordered()]
        rank = items.index(member) if member in self.model else None
        assert self.run(b"ZRANK", b"z", member) == rank
        assert self.run(b"ZSCORE", b"z", member) == self.model.get(member)

    @rule(count=st.integers(1, 3), maximum=st.booleans())
    def pop(self, count: int, maximum: bool) -> None:
        items = self.ordered()
        taken = (items[::-1] if maximum else items)[:count]
        for m, _ in taken:
            del self.model[m]
        reply = self.run(b"ZPOPMAX" if maximum else b"ZPOPMIN", b"z", count)
        assert reply == [x for m, s in taken for x in (m, s)]

    @invariant()
    def card(self) -> None:
        assert self.run(b"ZCARD", b"z") == len(self.model)


_SETTINGS = settings(max_examples=60, stateful_step_count=40, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])
TestListModel = ListMachine.TestCase
TestListModel.settings = _SETTINGS
TestZSetModel = ZSetMachine.TestCase
TestZSetModel.settings = _SETTINGS
