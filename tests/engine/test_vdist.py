"""The compiled vector distance and ranking (engine/_vdist.pyx) against the Python
reference in engine/vectorset.py, bit for bit: the same float32 result (or both NaN)
on any stored vectors, and the same ranked nodes in the same order."""

from __future__ import annotations

import math
import random
import struct
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.engine import vectorset as vs
from rillet.engine.vectorset import QUANT_BIN, QUANT_NONE, QUANT_Q8, VectorSet

pytestmark = pytest.mark.skipif(vs._vdist is None, reason="engine/_vdist is not built (or RILLET_PURE)")

F32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
# Values where single precision bites: tiny (subnormal), huge (overflowing products), zeros.
EDGY = st.sampled_from([0.0, -0.0, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 1e19, 1.0, -1.0])
COMPONENT = st.one_of(F32, EDGY)
RANGE = st.one_of(st.floats(width=32, min_value=0.0, allow_infinity=True, allow_nan=False),
                  st.sampled_from([0.0, 1e-45, 1e-38, 3.4e38, 1.0]))
DIMS = st.one_of(st.integers(1, 300), st.sampled_from([1, 7, 8, 9, 63, 64, 65, 127, 299, 300]))


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return struct.pack("<d", a) == struct.pack("<d", b)  # sign of zero included


@st.composite
def stored_pair(draw):  # type: ignore[no-untyped-def]
    quant = draw(st.sampled_from([QUANT_NONE, QUANT_Q8, QUANT_BIN]))
    dim = draw(DIMS)
    if quant == QUANT_NONE:
        vec = st.lists(COMPONENT, min_size=dim, max_size=dim).map(lambda v: array("f", v))
    elif quant == QUANT_Q8:
        vec = st.lists(st.integers(-128, 127), min_size=dim, max_size=dim).map(lambda v: array("b", v))
    else:
        words = (dim + 63) // 64
        vec = st.lists(st.sampled_from([0, 2**64 - 1]) | st.integers(0, 2**64 - 1),
                       min_size=words, max_size=words).map(lambda v: array("Q", v))
    return quant, dim, draw(vec), draw(RANGE), draw(vec), draw(RANGE)


@settings(max_examples=250, deadline=None)
@given(stored_pair())
def test_distance_matches_reference_on_any_stored_vectors(case):
    quant, dim, qa, ra, qb, rb = case
    assert same(vs._vdist.distance(quant, dim, qa, ra, qb, rb),
                vs.py_distance(quant, dim, qa, ra, qb, rb))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([QUANT_NONE, QUANT_Q8, QUANT_BIN]), DIMS,
       st.lists(st.lists(COMPONENT, min_size=1, max_size=1), min_size=2, max_size=2),
       st.integers(0, 2**32))
def test_distance_matches_reference_on_encoded_vectors(quant, dim, seeds, seed):
    """Vectors as VADD stores them (normalised, quantised), some scaled to extremes."""
    rng = random.Random(seed)
    vset = VectorSet(dim, quant)
    vecs = []
    for (scale,) in seeds:
        scale = scale if math.isfinite(scale) and scale != 0 else 1.0
        vecs.append(vs.f32_list([rng.choice([0.0, rng.uniform(-1, 1)]) * scale for _ in range(dim)]))
    try:
        (qa, ra, _), (qb, rb, _) = (vset.encode(v) for v in vecs)
    except (ValueError, OverflowError):  # Q8 of a vector too tiny to normalise
        return
    assert same(vs._vdist.distance(quant, dim, qa, ra, qb, rb),
                vs.py_distance(quant, dim, qa, ra, qb, rb))


def _outcome(fn, vec):  # type: ignore[no-untyped-def]
    try:
        return fn(vec)
    except (ValueError, OverflowError) as error:
        return type(error), str(error)


def _same_list(a, b) -> bool:  # type: ignore[no-untyped-def]
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))


DOUBLES = st.one_of(COMPONENT, st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([1e-300, -1e-300, 1e200, 5e-324]))


@settings(max_examples=200, deadline=None)
@given(DIMS.flatmap(lambda dim: st.lists(COMPONENT, min_size=dim, max_size=dim)), st.booleans())
def test_normalize_and_quantize_match_reference(vec, doubles):
    """On float32 components (what VADD parses) and, for the record, on any doubles."""
    if doubles:
        vec = [x * 1.0000001 for x in vec]
    got, want = vs._vdist.normalize(vec), vs.py_normalize(vec)
    assert _same_list(got[0], want[0])
    assert (got[1] is None) == (want[1] is None) and (got[1] is None or same(got[1], want[1]))
    for normed in (want[0], vec):
        got_q, want_q = _outcome(vs._vdist.quantize_q8, normed), _outcome(vs.py_quantize_q8, normed)
        if isinstance(want_q[0], type):
            assert got_q == want_q
        else:
            assert got_q[0] == want_q[0] and got_q[0].typecode == "b" and same(got_q[1], want_q[1])


@pytest.mark.parametrize("kernel", ["compiled", "python"])
def test_q8_of_a_vector_too_tiny_to_normalise(kernel):
    """VADD k VALUES 2 1e-38 0: the squares underflow (no normalising), the scale is inf;
    Redis 8.2.3 stores 0 quants with the range (VEMB [0, 0], VSIM score 0.5)."""
    quantize = vs._vdist.quantize_q8 if kernel == "compiled" else vs.py_quantize_q8
    tiny = vs.f32(1e-38)
    q, qrange = quantize([tiny, 0.0])
    assert list(q) == [0, 0] and qrange == tiny
    assert vs.py_distance(QUANT_Q8, 2, q, qrange, array("b", [127, 0]), 1.0) == 1.0


def _filled(quant: int, dim: int, count: int, seed: int) -> VectorSet:
    rng = random.Random(seed)
    vset = VectorSet(dim, quant, rng=random.Random(seed))
    base = [[rng.choice([-1.0, 0.0, 0.5, 1.0]) for _ in range(dim)] for _ in range(4)]
    for i in range(count):
        # Repeated directions give equal distances: the tie order must agree too.
        vec = rng.choice(base) if rng.random() < 0.4 else [rng.uniform(-1, 1) for _ in range(dim)]
        vset.insert(b"e%d" % i, vs.f32_list(vec), None, ef=rng.choice([1, 5, 200]))
    return vset


@pytest.mark.parametrize("quant", [QUANT_NONE, QUANT_Q8, QUANT_BIN])
@pytest.mark.parametrize("dim", [1, 3, 64, 65, 300])
def test_rank_matches_reference(quant, dim):
    vset = _filled(quant, dim, 60, dim * 3 + quant)
    nodes = list(reversed(vset.nodes.values()))
    rng = random.Random(dim)
    queries = [vset.query(vs.f32_list([rng.uniform(-1, 1) for _ in range(dim)])) for _ in range(4)]
    queries += [(n.q, n.qrange) for n in nodes[:4]]
    for q, qrange in queries:
        for min_level in (0, 1):
            for limit in (None, 0, 1, 5, 59, 60, 1000):
                for accept in (None, lambda n: n.id % 3 != 0):
                    args = (nodes, quant, dim, q, qrange, accept, min_level, limit)
                    got, want = vs._vdist.rank(*args), vs.py_rank(*args)
                    assert [n for _, n in got] == [n for _, n in want]
                    assert all(same(a, b) for (a, _), (b, _) in zip(got, want, strict=True))
    for node in nodes[:10]:
        for layer, links in enumerate(node.links):
            assert vs._vdist.worst_link(quant, dim, node, links) == vs.py_worst_link(quant, dim, node, links)
            assert node.worst[layer] == vs.py_worst_link(quant, dim, node, links) or not links
        for dist in (0.0, 0.25, 1.0, 2.0):
            assert vs._vdist.nearer_link(quant, dim, node, nodes, dist) \
                == vs.py_nearer_link(quant, dim, node, nodes, dist)


def test_rank_with_nan_distances_keeps_the_python_order():
    nodes = []
    for i, vec in enumerate([[1, 0, 0, 0], [math.nan, 1, 0, 0], [0, 1, 0, 0], [-1, 0, 0, 0]]):
        node = vs.Node(b"e%d" % i, None, i + 1, 0, array("f", vec), 1.0, 0.0)
        nodes.append(node)
    q = array("f", [1, 0, 0, 0])
    for limit in (None, 2):
        args = (nodes, QUANT_NONE, 4, q, 0.0, None, 0, limit)
        assert [n for _, n in vs._vdist.rank(*args)] == [n for _, n in vs.py_rank(*args)]


@pytest.mark.parametrize("quant", [QUANT_NONE, QUANT_Q8, QUANT_BIN])
def test_loaded_vectors_are_what_the_kernel_reads(quant):
    """RDB/RESTORE vectors (from_raw) are packed as VADD's are: same bytes back, same
    distances and rankings from either form."""
    vset = _filled(quant, 70, 20, quant)
    for node in vset.nodes.values():
        raw = vset.raw_bytes(node)
        loaded = vset.from_raw(raw)
        assert type(loaded) is type(node.q) and loaded.typecode == node.q.typecode
        assert loaded == node.q and vset.raw_bytes(vs.Node(b"x", None, 1, 0, loaded, 1.0, 0.0)) == raw
    first = next(iter(vset.nodes.values()))
    assert [n for _, n in vset.ranked(vset.from_raw(vset.raw_bytes(first)), first.qrange)] \
        == [n for _, n in vset.ranked(first.q, first.qrange)]
