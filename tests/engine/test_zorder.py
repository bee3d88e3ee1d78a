"""The compiled sorted-set order (engine/_zorder.pyx) answers as the Python reference.

Generated operation sequences on (score, member) pairs run against
`sortedcontainers.SortedList` (the reference) and the compiled `ZOrder`, with
tiny chunk loads on both so that splits and emptied chunks happen every few operations;
every answer must be equal. Scores include -0.0/0.0, infinities and ties,
members share prefixes, so both comparison levels are exercised.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedList

from rillet.engine.zsets import _TOP

compiled = pytest.importorskip("rillet.engine._zorder")
ZOrder = compiled.ZOrder

scores = st.sampled_from([0.0, -0.0, 1.0, 1.5, -2.0, 3.0, math.inf, -math.inf, 1e300, 5e-324])
members = st.sampled_from([b"", b"a", b"ab", b"abc", b"b", b"\x00", b"\xff", b"a\x00", b"zz"])
pairs = st.tuples(scores, members)
keys = st.one_of(pairs, scores.map(lambda s: (s,)), scores.map(lambda s: (s, _TOP)))
OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), pairs), st.tuples(st.just("remove"), pairs),
    st.tuples(st.just("del"), st.tuples(st.integers(-12, 30), st.integers(-12, 30))),
    st.tuples(st.just("delone"), st.integers(-30, 30)),
    st.tuples(st.just("get"), st.integers(-30, 30)),
    st.tuples(st.just("slice"), st.tuples(st.integers(-12, 30), st.integers(-12, 30),
                                          st.sampled_from([None, 1, 2, -1]))),
    st.tuples(st.just("bisect"), keys),
    st.tuples(st.just("copy"), st.none()),
), max_size=120)


def _same(a: list, b: list) -> None:
    assert a == b
    # -0.0 == 0.0: the sign of a score is kept too (ZRANGE prints it).
    assert [math.copysign(1, s) for s, _ in a] == [math.copysign(1, s) for s, _ in b]


@settings(max_examples=200, deadline=None)
@given(initial=st.sets(pairs, max_size=25), ops=OPS, load=st.integers(1, 4))
def test_zorder_matches_the_reference(initial, ops, load):
    ref = SortedList(initial)
    ref._reset(load)  # the chunk size (documented for testing)
    ours = ZOrder(list(initial), load=load)
    present = set(initial)
    for op, arg in ops:
        if op == "add":
            if arg in present or (arg[0], arg[1]) in present:
                continue  # a sorted set holds a pair once
            ref.add(arg)
            ours.add(arg)
            present.add(arg)
        elif op == "remove":
            if arg in present:
                ref.remove(arg)
                ours.remove(arg)
                present.discard(arg)
            else:
                with pytest.raises(ValueError):
                    ours.remove(arg)
        elif op == "del":
            del ref[arg[0]:arg[1]]
            del ours[arg[0]:arg[1]]
            present = set(ref)
        elif op == "delone":
            if -len(ref) <= arg < len(ref):
                del ref[arg]
                del ours[arg]
                present = set(ref)
        elif op == "get":
            if -len(ref) <= arg < len(ref):
                _same([ref[arg]], [ours[arg]])
            else:
                with pytest.raises(IndexError):
                    ours[arg]
        elif op == "slice":
            a, b, step = arg
            _same(ref[a:b:step], ours[a:b:step])
        elif op == "bisect":
            assert ref.bisect_left(arg) == ours.bisect_left(arg)
            assert ref.bisect_right(arg) == ours.bisect_right(arg)
        elif op == "copy":
            other = ours.copy()
            _same(list(other), list(ref))
            if len(other):
                del other[0]  # the copy is its own
        assert len(ref) == len(ours)
        _same(list(ours), list(ref))
        _same(list(reversed(ours)), list(reversed(ref)))


def test_members_must_be_bytes():
    order = ZOrder()
    with pytest.raises(TypeError):
        order.add((1.0, "text"))
    with pytest.raises(TypeError):
        order.add(1.0)
    with pytest.raises(ValueError):
        order.remove((1.0, b"absent"))
