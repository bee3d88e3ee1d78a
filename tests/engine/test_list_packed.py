"""The packed List (open ends around packed chunks) against a plain Python list.

Generated operation sequences run on both, with chunks made tiny so that
sealing, reopening, chunk splits and whole-chunk drops happen in short
sequences; after each step the contents, the listpack byte count and the
layout's invariants must hold.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rillet.engine import lists
from rillet.engine.listpack_size import LISTPACK_EMPTY_SIZE, element_size
from rillet.engine.lists import List


@pytest.fixture(params=[(2, 4), (3, 6), (128, 256)], ids=["chunk2", "chunk3", "default"])
def chunk_sizes(request, monkeypatch):
    chunk, open_max = request.param
    monkeypatch.setattr(lists, "CHUNK", chunk)
    monkeypatch.setattr(lists, "OPEN_MAX", open_max)
    return chunk


# Few distinct values so that LREM/LPOS/LINSERT find matches; numbers and a long
# one so that listpack sizes vary.
values = st.sampled_from([b"", b"a", b"b", b"ab", b"7", b"-12", b"x" * 70, b"12345678901"])
indexes = st.integers(-12, 40)  # negative: from the end
ops = st.one_of(
    st.tuples(st.just("push"), st.lists(values, min_size=1, max_size=9), st.booleans()),
    st.tuples(st.just("push"), st.lists(values, min_size=10, max_size=40), st.booleans()),
    st.tuples(st.just("pop"), st.integers(1, 9), st.booleans()),
    st.tuples(st.just("get"), indexes),
    st.tuples(st.just("set"), indexes, values),
    st.tuples(st.just("insert"), indexes, values),
    st.tuples(st.just("range"), indexes, indexes),
    st.tuples(st.just("trim"), indexes, indexes),
    st.tuples(st.just("trim"), st.integers(0, 6), st.integers(-12, -1)),
    st.tuples(st.just("remove"), values, st.integers(-3, 3)),
    st.tuples(st.just("positions"), values, st.booleans()),
    st.tuples(st.just("copy"),),
    st.tuples(st.just("load"), st.lists(values, max_size=30)),
)


def _clamp(i: int, n: int) -> int:
    return max(0, min(i if i >= 0 else n + i, n))


def _apply(value: List, model: list[bytes], op: tuple) -> object:
    kind = op[0]
    n = len(model)
    if kind == "push":
        _, items, left = op
        value.push(list(items), left)
        if left:
            model[:0] = items[::-1]
        else:
            model += items
        return None
    if kind == "pop":
        _, count, left = op
        got = value.pop_many(left, count)
        want = [model.pop(0 if left else -1) for _ in range(min(count, n))]
        assert got == want
        return got
    if kind in ("get", "set") and not n:
        return None
    if kind == "get":
        i = _clamp(op[1], n - 1)
        assert value.get(i) == model[i]
        return None
    if kind == "set":
        i = _clamp(op[1], n - 1)
        value.set_at(i, op[2])
        model[i] = op[2]
        return None
    if kind == "insert":
        i = _clamp(op[1], n)
        value.insert(i, op[2])
        model.insert(i, op[2])
        return None
    if kind == "range":
        lo, hi = _clamp(op[1], n), _clamp(op[2], n)
        assert value.range(lo, hi) == model[lo:hi]
        return None
    if kind == "trim":
        lo, hi = _clamp(op[1], n), _clamp(op[2], n)
        value.trim(lo, hi)
        model[:] = model[lo:hi] if lo < hi else []
        return None
    if kind == "remove":
        _, element, count = op
        order = range(n) if count >= 0 else range(n - 1, -1, -1)
        drop = [i for i in order if model[i] == element][:abs(count) or n]
        assert value.remove(element, count) == len(drop)
        for i in sorted(drop, reverse=True):
            del model[i]
        return None
    if kind == "positions":
        _, element, reverse = op
        want = [i for i, x in enumerate(model) if x == element]
        assert list(value.positions(element, reverse)) == (want[::-1] if reverse else want)
        assert value.index(element) == (want[0] if want else -1)
        return None
    if kind == "copy":
        other = value.copy()
        other.push([b"only-in-copy"], False)
        return None
    if kind == "load":
        value.replace(op[1])
        model[:] = op[1]
        return None
    raise AssertionError(kind)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ops, max_size=60))
def test_packed_list_is_a_list(chunk_sizes, steps):
    value = List()
    model: list[bytes] = []
    for op in steps:
        _apply(value, model, op)
        value.check()
        assert len(value) == len(model)
        assert value.to_list() == model
        assert list(reversed(value)) == model[::-1]
        assert value.nbytes == LISTPACK_EMPTY_SIZE + sum(map(element_size, model))


def test_a_long_list_is_packed():
    """A million-element list keeps almost nothing as Python objects."""
    value = List()
    for start in range(0, 1_000_000, 1000):
        value.push([b"member:%09d" % i for i in range(start, start + 1000)], False)
    assert len(value) == 1_000_000 and value.open_count() < lists.OPEN_MAX
    assert value.get(0) == b"member:000000000" and value.get(654_321) == b"member:000654321"
    assert value.index(b"member:000999999") == 999_999
    value.trim(10, 999_990)
    assert value.range(0, 2) == [b"member:000000010", b"member:000000011"]
    assert len(value) == 999_980


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(values, st.binary(max_size=300)), max_size=40))
def test_compiled_chunks_are_the_python_ones(items):
    """engine/_listchunks.pyx packs and unpacks as lists.py_pack/py_unpack do."""
    compiled = pytest.importorskip("rillet.engine._listchunks")
    chunk = compiled.pack(items)
    assert chunk == lists.py_pack(items) and chunk[1].typecode == lists.py_pack(items)[1].typecode
    assert compiled.unpack(chunk) == lists.py_unpack(chunk) == items
