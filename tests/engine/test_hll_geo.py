"""HyperLogLog and geo below the wire: the engine's invariants (seeded property tests)
and the effects the commands hand to the AOF and replicas, replayed on an empty server."""

from __future__ import annotations

import random

import pytest

import rillet.commands  # noqa: F401  (registers the commands)
from rillet.clock import ManualClock
from rillet.engine import geo
from rillet.engine import hyperloglog as hll
from rillet.engine.pqsort import pqsort
from rillet.errors import ReplyError
from rillet.server.server import Server
from rillet.state import effect_argv


class Env:
    def __init__(self) -> None:
        self.server = Server(clock=ManualClock(1_700_000_000_000))
        self.state = self.server.state
        self.client = self.state.new_client(None)
        self.effects: list[list[bytes]] = []
        self.state.effect_sinks.append(lambda effects: self.effects.extend(effect_argv(argv) for _, argv in effects))

    def __call__(self, *args):
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        reply = self.server.dispatcher.execute(self.client, argv)
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def take(self) -> list[list[bytes]]:
        out, self.effects = self.effects, []
        return out


def _replayed(effects: list[list[bytes]]) -> Env:
    other = Env()
    for argv in effects:
        other(*argv)
    return other


# --- engine: HyperLogLog ----------------------------------------------------------------------

def test_murmurhash_matches_the_reference_values():
    # The empty input with seed 0 hashes to 0; the rest is checked against Redis (tests/compat).
    assert hll.murmurhash64a(b"", 0) == 0
    assert hll.pattern(b"a") == hll.pattern(b"a")
    assert 1 <= hll.pattern(b"hello")[1] <= hll.Q + 1


@pytest.mark.parametrize("seed", range(5))
def test_dense_registers_round_trip(seed):
    rng = random.Random(seed)
    values = bytearray(rng.randrange(64) for _ in range(hll.REGISTERS))
    buf = hll.dense_from_registers(hll.new_sparse(), values)
    assert len(buf) == hll.DENSE_SIZE and hll.is_hll(bytes(buf))
    assert hll.dense_registers(buf) == list(values)
    for i in rng.sample(range(hll.REGISTERS), 200):
        assert hll.dense_get(buf, i) == values[i]
        hll.dense_set(buf, i, 63 - values[i])
        assert hll.dense_get(buf, i) == 63 - values[i]
        values[i] = 63 - values[i]
    assert hll.dense_registers(buf) == list(values)


@pytest.mark.parametrize("seed", range(8))
def test_sparse_and_dense_agree(seed):
    """Adding the same elements sparse and dense gives the same registers and count,
    and the sparse form decodes to the dense one."""
    rng = random.Random(seed)
    sparse = hll.new_sparse()
    dense = hll.dense_from_registers(sparse, bytearray(hll.REGISTERS))
    for _ in range(rng.randint(1, 6)):
        elements = [rng.randbytes(rng.randint(0, 20)) for _ in range(rng.randint(1, 300))]
        _, sparse = hll.add(sparse, elements, rng.choice([3000, 300, 50]))
        _, dense = hll.add(dense, elements, 3000)
        converted = hll.sparse_to_dense(sparse) if sparse[4] == hll.SPARSE else sparse
        assert hll.dense_registers(converted) == hll.dense_registers(dense)
        assert hll.estimate(hll.histogram(sparse)) == hll.estimate(hll.histogram(dense))


@pytest.mark.parametrize("seed", range(8))
def test_cursor_walk_equals_scans_from_the_start(seed):
    """PFMERGE's ascending sparse_set with a Cursor gives Redis's bytes (scans from the start)."""
    rng = random.Random(seed)
    base = hll.new_sparse()
    _, base = hll.add(base, [rng.randbytes(8) for _ in range(rng.randint(0, 200))], 3000)
    updates = sorted(rng.sample(range(hll.REGISTERS), rng.randint(1, 400)))
    plain = bytearray(base)
    walked = bytearray(base)
    cursor = hll.Cursor()
    limit = rng.choice([3000, 600, 100])
    for index in updates:
        count = rng.randint(1, 40)
        if plain[4] == hll.SPARSE:
            r1, plain = hll.sparse_set(plain, index, count, limit)
        else:
            r1 = 0
            if count > hll.dense_get(plain, index):
                hll.dense_set(plain, index, count)
        if walked[4] == hll.SPARSE:
            r2, walked = hll.sparse_set(walked, index, count, limit, cursor)
        else:
            r2 = 0
            if count > hll.dense_get(walked, index):
                hll.dense_set(walked, index, count)
        assert r1 == r2
        assert plain == walked


def test_corrupt_sparse_is_refused():
    short = bytearray(b"HYLL\x01\x00\x00\x00" + b"\x00" * 8 + b"\x7f\xfe")
    assert hll.sparse_runs(short) is None
    assert hll.histogram(short) is None
    assert hll.sparse_to_dense(short) is None
    assert not hll.merge_into(bytearray(hll.REGISTERS), short)
    assert hll.sparse_set(short, 16383, 1, 3000)[0] == -1


# --- engine: geo -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_geohash_round_trip_is_within_a_cell(seed):
    rng = random.Random(seed)
    for _ in range(500):
        x = rng.uniform(-180, 180)
        y = rng.uniform(geo.LAT_MIN, geo.LAT_MAX)
        dx, dy = geo.decode(float(geo.score_of(x, y)))
        assert abs(dx - x) <= 360 / 2**26 and abs(dy - y) <= 171 / 2**26


@pytest.mark.parametrize("seed", range(10))
def test_pqsort_orders_the_asked_range(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 120)
    keys = rng.sample(range(10_000), n)  # distinct: any correct partial sort agrees
    lo = rng.randrange(n)
    items = list(keys)
    pqsort(items, lambda a, b: (a > b) - (a < b), 0, lo)
    assert items[:lo + 1] == sorted(keys)[:lo + 1]
    assert sorted(items) == sorted(keys)


def test_distance_printing():
    assert geo.format_distance(0.0) == b"0.0000"
    assert geo.format_distance(0.00004) == b"0.0000"
    assert geo.format_distance(0.00005) == b"0.0000"  # llrint: half to even
    assert geo.format_distance(1.23456) == b"1.2346"
    assert geo.format_distance(166274.15156960033) == b"166274.1516"


# --- effects ------------------------------------------------------------------------------------

def test_hll_effects_replay_to_the_same_bytes():
    env = Env()
    env("PFADD", "h", "a", "b")
    assert env.take() == [[b"PFADD", b"h", b"a", b"b"]]
    env("PFADD", "h", "a")
    assert env.take() == []  # nothing changed
    assert env("PFCOUNT", "h") == 2
    assert env.take() == [[b"PFCOUNT", b"h"]]  # the cached cardinality was written
    assert env("PFCOUNT", "h") == 2
    assert env("PFCOUNT", "h", "nokey") == 2
    assert env.take() == []
    env("PFADD", "g", *[b"x%d" % i for i in range(2000)])
    env("PFMERGE", "m", "h", "g")
    env("PFDEBUG", "TODENSE", "h")
    effects = env.take()
    assert effects[-1] == [b"PFDEBUG", b"TODENSE", b"h"]
    env("MULTI")
    env("PFADD", "h", "zz")
    env("PFCOUNT", "h")
    env("EXEC")
    effects += env.take()
    assert effects[-2] == [b"PFCOUNT", b"h"] and effects[-1] == [b"EXEC"]
    other = _replayed([[b"PFADD", b"h", b"a", b"b"], [b"PFCOUNT", b"h"], [b"PFADD", b"g",
                       *[b"x%d" % i for i in range(2000)]], *effects])
    for key in ("h", "g", "m"):
        assert other("GET", key) == env("GET", key)


def test_geo_effects():
    env = Env()
    env("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    assert env.take() == [[b"ZADD", b"g", b"3479099956230698", b"Palermo", b"3479447370796909", b"Catania"]]
    env("GEOADD", "g", "NX", "1", "2", "Palermo")
    assert env.take() == []
    env("GEOADD", "g", "XX", "CH", "1", "2", "Palermo")
    assert env.take() == [[b"ZADD", b"g", b"XX", b"CH", b"%d" % geo.score_of(1.0, 2.0), b"Palermo"]]
    env("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km")
    env("GEORADIUS", "g", "15", "37", "200", "km")
    assert env.take() == []
    env("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST")
    env("GEORADIUS", "g", "15", "37", "1", "m", "STORE", "d2")  # empty: nothing to delete
    env("GEORADIUSBYMEMBER", "g", "Catania", "300", "km", "STORE", "d3")
    effects = env.take()
    assert [e[0] for e in effects] == [b"GEOSEARCHSTORE", b"GEORADIUSBYMEMBER"]
    other = _replayed([[b"ZADD", b"g", b"3479099956230698", b"Palermo", b"3479447370796909", b"Catania"],
                       [b"ZADD", b"g", b"XX", b"CH", b"%d" % geo.score_of(1.0, 2.0), b"Palermo"], *effects])
    for key in ("d", "d3"):
        assert other("ZRANGE", key, "0", "-1", "WITHSCORES") == env("ZRANGE", key, "0", "-1", "WITHSCORES")


# --- the compiled kernel (engine/_hll.pyx) against the Python reference --------------------------

_COMPILED = hll.pattern is not hll.py_pattern


@pytest.mark.skipif(not _COMPILED, reason="engine/_hll.pyx not built (or RILLET_PURE)")
@pytest.mark.parametrize("seed", range(6))
def test_compiled_kernel_equals_python(seed):
    rng = random.Random(seed)
    for n in list(range(20)) + [rng.randint(20, 300) for _ in range(30)]:
        data = rng.randbytes(n)
        assert hll.murmurhash64a(data) == hll.py_murmurhash64a(data)
        assert hll.murmurhash64a(data, 0) == hll.py_murmurhash64a(data, 0)
        assert hll.pattern(data) == hll.py_pattern(data)
    registers = bytearray(rng.randrange(64) for _ in range(hll.REGISTERS))
    packed = hll.pack_registers(registers)
    assert packed == hll.py_pack_registers(registers) == hll.pack_registers(list(registers))
    dense = bytes(hll.new_sparse()[:16]) + packed
    assert hll.dense_registers(dense) == hll.py_dense_registers(dense) == list(registers)
    assert hll.dense_histogram(dense) == hll.py_dense_histogram(dense)
    assert hll.raw_histogram(registers) == hll.py_raw_histogram(registers)
    base = bytearray(rng.randrange(64) for _ in range(hll.REGISTERS))
    merged_c, merged_py = bytearray(base), bytearray(base)
    hll.dense_merge(merged_c, dense)
    hll.py_dense_merge(merged_py, dense)
    assert merged_c == merged_py
    sparse = hll.new_sparse()
    _, sparse = hll.add(sparse, [rng.randbytes(6) for _ in range(300)], 3000)
    for _ in range(200):
        index = rng.randrange(hll.REGISTERS + 5)
        marks_c: list = [(hll.HDR_SIZE, 0)]
        marks_py: list = [(hll.HDR_SIZE, 0)]
        assert hll.sparse_scan(sparse, index, hll.HDR_SIZE, 0, -1, marks_c) == \
            hll.py_sparse_scan(sparse, index, hll.HDR_SIZE, 0, -1, marks_py)
        assert marks_c == marks_py
        assert hll.sparse_scan(sparse, index, hll.HDR_SIZE, 0, -1, None) == \
            hll.py_sparse_scan(sparse, index, hll.HDR_SIZE, 0, -1, None)
    regs = bytearray(rng.choice([0, 0, 0, 5]) for _ in range(hll.REGISTERS))
    assert hll.nonzero_registers(regs) == hll.py_nonzero_registers(regs)


_GEO_COMPILED = geo.decode is not geo.py_decode


@pytest.mark.skipif(not _GEO_COMPILED, reason="engine/_geo.pyx not built (or RILLET_PURE)")
@pytest.mark.parametrize("seed", range(6))
def test_compiled_geo_equals_python(seed):
    rng = random.Random(seed)
    odd = [0.0, -0.0, 0.5, -1.5, 1e300, -1e300, float("inf"), float("-inf"), 2.0**52, 2.0**53,
           2.0**63, -(2.0**63), 2.0**64, 4503599627370495.0, 18446744073709549568.0]
    scores = odd + [float(rng.getrandbits(52)) for _ in range(2000)] + \
        [rng.uniform(-1e20, 1e20) for _ in range(200)]
    for score in scores:
        assert geo.decode(score) == geo.py_decode(score), score
    for _ in range(2000):
        p = [rng.uniform(-180, 180), rng.uniform(-85, 85), rng.uniform(-180, 180), rng.uniform(-85, 85)]
        if rng.random() < 0.2:
            p[2] = p[0]
        assert geo.distance(*p) == geo.py_distance(*p)
    pairs = sorted((float(rng.getrandbits(52)), b"m%d" % i) for i in range(3000))
    for _ in range(30):
        args = (rng.random() < 0.5, rng.uniform(-180, 180), rng.uniform(-85, 85),
                rng.choice([0.0, 1e5, 1e6, 5e6, 3e7, float("inf")]), rng.uniform(0, 4e6),
                rng.uniform(0, 4e6), rng.choice([0, 0, 1, 7, 100]))
        ours: list = []
        theirs: list = []
        geo.scan_points(pairs, *args, ours)
        geo.py_scan_points(pairs, *args, theirs)
        assert ours == theirs


@pytest.mark.skipif(not _COMPILED, reason="engine/_hll.pyx not built (or RILLET_PURE)")
@pytest.mark.parametrize("seed", range(4))
def test_compiled_sparse_decoding_equals_python(seed):
    rng = random.Random(seed)
    sparse = hll.new_sparse()
    _, sparse = hll.add(sparse, [rng.randbytes(5) for _ in range(rng.randint(0, 400))], 3000)
    for value in (sparse, sparse + b"\x05", sparse[:-1], bytes(sparse[:16]), sparse + b"\x40"):
        assert hll.sparse_registers(value) == hll.py_sparse_registers(value)
    a = bytearray(rng.randrange(64) for _ in range(hll.REGISTERS))
    b = bytearray(rng.randrange(64) for _ in range(hll.REGISTERS))
    a2 = bytearray(a)
    hll.max_into(a, b)
    hll.py_max_into(a2, b)
    assert a == a2


@pytest.mark.skipif(not _COMPILED, reason="engine/_hll.pyx not built (or RILLET_PURE)")
@pytest.mark.parametrize("seed", range(6))
def test_compiled_sparse_update_equals_python(seed):
    rng = random.Random(seed)
    sparse = hll.new_sparse()
    for _ in range(600):
        index = rng.randrange(hll.REGISTERS)
        count = rng.randint(1, 32)
        p, first, span, prev = hll.sparse_scan(sparse, index, hll.HDR_SIZE, 0, -1, None)
        limit = rng.choice([3000, 3000, 200, 40])
        ours, theirs = bytearray(sparse), bytearray(sparse)
        r1 = hll.sparse_update(ours, p, first, span, prev, index, count, limit)
        r2 = hll.py_sparse_update(theirs, p, first, span, prev, index, count, limit)
        assert (r1, ours) == (r2, theirs)
        if r1 == 1:
            sparse = ours


@pytest.mark.skipif(not _GEO_COMPILED, reason="engine/_geo.pyx not built (or RILLET_PURE)")
@pytest.mark.parametrize("seed", range(10))
def test_compiled_pqsort_equals_python(seed):
    """Ties decide the order of equally distant points: the compiled partial sort must
    leave them exactly where the reference port of Redis's pqsort does."""
    rng = random.Random(seed)
    for _ in range(40):
        n = rng.randint(1, 300)
        values = [float(rng.randint(0, 5)) for _ in range(6)] + [float("nan")]
        items = [(b"m%d" % i, 0.0, 0.0, 0.0, rng.choice(values) if rng.random() < 0.7 else rng.random())
                 for i in range(n)]
        hi = rng.randrange(n)
        desc = rng.random() < 0.5
        assert [m for m, *_ in geo.pqsort_distance(items, 0, hi, desc)] == \
            [m for m, *_ in geo.py_pqsort_distance(items, 0, hi, desc)]
