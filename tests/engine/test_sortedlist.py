"""The chunked SortedList against a plain sorted list (tiny chunks, so every split and merge happens)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.engine.sortedlist import SortedList

OPS = st.lists(st.tuples(st.sampled_from(["add", "remove", "del", "get", "slice"]),
                         st.integers(0, 40), st.integers(0, 40)), max_size=200)


@settings(max_examples=300, deadline=None)
@given(initial=st.lists(st.integers(0, 30), max_size=30), ops=OPS, load=st.integers(1, 4))
def test_matches_a_sorted_list(initial, ops, load):
    ours = SortedList(initial, load=load)
    model = sorted(initial)
    for op, a, b in ops:
        if op == "add":
            ours.add(a)
            insort(model, a)
        elif op == "remove" and a in model:
            ours.remove(a)
            model.remove(a)
        elif op == "del":
            del ours[a:b]
            del model[a:b]
        elif op == "get" and model:
            assert ours[a % len(model)] == model[a % len(model)]
            assert ours[-1] == model[-1]
        elif op == "slice":
            assert ours[a:b] == model[a:b]
            assert ours[-a:] == model[-a:] if a else True
        assert len(ours) == len(model)
        assert list(ours) == model
        assert list(reversed(ours)) == model[::-1]
        assert ours.bisect_left(a) == bisect_left(model, a)
        assert ours.bisect_right(a) == bisect_right(model, a)
        assert list(ours.copy()) == model
