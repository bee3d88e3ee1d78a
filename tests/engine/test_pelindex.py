"""The compiled `SortedIndex` (engine/_pelindex.pyx) answers as the Python reference.

Generated operation sequences run against both `pel.PySortedIndex` (the
reference) and the compiled class (with tiny block loads, so splits and merges
happen every few operations); every answer must be the same value objects, in
the same order.
"""

from __future__ import annotations

import copy
import gc
import itertools
import pickle
import random
import weakref

import pytest

from rillet.engine.pel import MAX_ID_KEY, PySortedIndex

compiled = pytest.importorskip("rillet.engine._pelindex")
CSortedIndex = compiled.SortedIndex


class Val:
    __slots__ = ("key", "__weakref__")

    def __init__(self, key: int) -> None:
        self.key = key

    def __repr__(self) -> str:
        return f"Val({self.key})"


def key_pool(rng: random.Random, n: int) -> list[int]:
    """Keys across the whole 128-bit space, clustered so that neighbours collide."""
    base = 1_700_000_000_000 << 64
    pool = {0, 1, MAX_ID_KEY, MAX_ID_KEY - 1, (1 << 64) - 1, 1 << 64, (1 << 64) + 1, base}
    while len(pool) < n:
        kind = rng.random()
        if kind < 0.6:
            pool.add(base + (rng.randrange(40) << 64) + rng.randrange(6))
        elif kind < 0.8:
            pool.add(rng.randrange(1 << 20) << 40 | rng.randrange(1 << 10))
        else:
            pool.add(rng.randrange(MAX_ID_KEY + 1))
    return sorted(pool)


def probe(rng: random.Random, pool: list[int]) -> int:
    """A key to look up: usually from the pool, sometimes beside or outside it."""
    r = rng.random()
    if r < 0.7:
        return rng.choice(pool)
    if r < 0.9:
        return max(0, min(MAX_ID_KEY, rng.choice(pool) + rng.choice((-1, 1))))
    return rng.choice((-1, -(1 << 70), MAX_ID_KEY + 1, 1 << 200))


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def run_sequence(seed: int, load: int, steps: int) -> None:
    rng = random.Random(seed)
    pool = key_pool(rng, rng.choice((20, 80, 400)))
    ref, idx = PySortedIndex(), CSortedIndex(load)
    present: set[int] = set()
    for step in range(steps):
        op = rng.random()
        where = f"seed {seed} load {load} step {step}"
        if op < 0.35:
            key = rng.choice(pool)
            if key in present:
                continue
            value = Val(key)
            ref.insert(key, value)
            idx.insert(key, value)
            present.add(key)
        elif op < 0.55:
            key = probe(rng, pool)
            got, want = idx.pop(key), ref.pop(key)
            assert got is want, where
            present.discard(key)
        elif op < 0.65:
            key = probe(rng, pool)
            assert idx.get(key) is ref.get(key), where
            assert (key in idx) == (key in ref), where
        elif op < 0.8:
            lo, hi = probe(rng, pool), probe(rng, pool)
            if rng.random() < 0.7 and lo > hi:
                lo, hi = hi, lo
            limit = rng.choice((None, None, 0, -1, 1, 3, 10, 1000, 1 << 70))
            if rng.random() < 0.2:
                assert same(idx.range_values(lo), ref.range_values(lo)), where
            assert same(idx.range_values(lo, hi, limit), ref.range_values(lo, hi, limit)), where
        elif op < 0.9:
            lo, hi = probe(rng, pool), probe(rng, pool)
            if lo > hi and rng.random() < 0.7:
                lo, hi = hi, lo
            take = rng.choice((1, 2, 5, None))
            mine, theirs = idx.iter_values(lo, hi), ref.iter_values(lo, hi)
            if take is None:
                assert same(list(mine), list(theirs)), where
            else:
                got = list(itertools.islice(mine, take))
                want = list(itertools.islice(theirs, take))
                assert same(got, want), where
        elif op < 0.97:
            assert len(idx) == len(ref) and bool(idx) == bool(ref), where
            assert idx.first() is ref.first(), where
            assert idx.first_key() == ref.first_key(), where
            assert idx.last_key() == ref.last_key(), where
            assert list(idx.keys()) == list(ref.keys()), where
            assert same(list(idx), list(ref)), where
            assert same(list(idx.iter_values()), list(ref.iter_values())), where
        elif op < 0.985:
            keys, values = list(ref.keys()), list(ref)
            ref.clear()
            idx.clear()
            assert len(idx) == 0 and idx.first() is None and idx.last_key() is None
            if rng.random() < 0.8:
                ref.fill_sorted(keys, values)
                idx.fill_sorted(keys, values)
            else:
                present.clear()
        else:
            twin = copy.deepcopy(idx)
            twin.check()
            assert list(twin.keys()) == list(idx.keys()), where
            assert [v.key for v in twin] == [v.key for v in idx], where
        idx.check()
    ref.check()
    assert list(idx.keys()) == list(ref.keys()) == sorted(present)
    assert same(list(idx), list(ref))


@pytest.mark.parametrize("load", [2, 3, 4, 8, 512])
def test_compiled_index_matches_reference(load: int) -> None:
    for seed in range(40):
        run_sequence(seed * 7919 + load, load, 600)


def test_fill_sorted_then_mutate_matches_reference() -> None:
    rng = random.Random(5)
    keys = sorted({rng.randrange(1 << 100) for _ in range(3000)})
    values = [Val(k) for k in keys]
    ref, idx = PySortedIndex(), CSortedIndex(16)
    ref.fill_sorted(keys, values)
    idx.fill_sorted(keys, values)
    idx.check()
    with pytest.raises(ValueError):
        idx.fill_sorted(keys, values)
    for key in rng.sample(keys, 2500):  # mass deletion merges blocks
        assert idx.pop(key) is ref.pop(key)
        idx.check()
    assert same(list(idx), list(ref))
    assert list(idx.keys()) == list(ref.keys())


def test_key_range_and_types() -> None:
    idx = CSortedIndex()
    for bad in (-1, MAX_ID_KEY + 1):
        with pytest.raises(OverflowError):
            idx.insert(bad, Val(0))
    with pytest.raises(TypeError):
        idx.insert("1", Val(0))
    idx.insert(MAX_ID_KEY, v := Val(MAX_ID_KEY))
    idx.insert(0, w := Val(0))
    assert idx.get(MAX_ID_KEY) is v and idx.first() is w
    assert idx.last_key() == MAX_ID_KEY and idx.first_key() == 0
    assert idx.range_values(-5, 1 << 300) == [w, v]
    assert idx.get(-1) is None and idx.pop(1 << 129) is None
    assert len(idx) == 2


def test_values_are_kept_alive_and_cycles_collected() -> None:
    class Owner:
        pass

    owner = Owner()
    owner.pel = CSortedIndex()
    owner.pel.insert(7, Owner())
    alive = weakref.ref(owner.pel.get(7))
    gc.collect()
    assert alive() is not None
    # A cycle through the index (consumer -> its PEL -> entry -> consumer).
    back = Owner()
    back.consumer = owner
    owner.pel.insert(8, back)
    ref = weakref.ref(owner)
    del owner, back
    gc.collect()
    assert ref() is None and alive() is None


def test_pickle_round_trip() -> None:
    idx = CSortedIndex(4)
    for k in range(50):
        idx.insert(k << 64 | 3, k)
    twin = pickle.loads(pickle.dumps(idx))
    twin.check()
    assert list(twin.keys()) == list(idx.keys()) and list(twin) == list(idx)
    assert twin.LOAD == 4


def test_compiled_pending_entry_matches_reference() -> None:
    from rillet.engine.pel import PendingEntry, PyPendingEntry

    if PendingEntry is PyPendingEntry:
        pytest.skip("the compiled PendingEntry is not in use")

    rng = random.Random(3)
    for _ in range(2000):
        key = rng.choice((0, 1, (1 << 64) - 1, 1 << 64, MAX_ID_KEY, rng.randrange(MAX_ID_KEY + 1)))
        tkey = rng.randrange(1 << rng.choice((1, 40, 63, 64, 65, 104, 128)))
        owner = rng.choice((None, b"alice"))
        count = rng.choice((0, 1, 7, (1 << 63) - 1))
        mine, ref = PendingEntry(key, tkey, owner, count), PyPendingEntry(key, tkey, owner, count)
        now = rng.choice((0, tkey >> 40, (tkey >> 40) + 5, 1 << 70))
        for entry in (mine, ref):
            assert (entry.key, entry.tkey, entry.owner, entry.delivery_count) == (key, tkey, owner, count)
        assert mine.id == ref.id and type(mine.id) is type(ref.id)
        assert mine.id_pair == ref.id_pair
        assert mine.delivery_time_ms == ref.delivery_time_ms
        assert mine.idle_ms(now) == ref.idle_ms(now)
        assert repr(mine) == repr(ref)
        retimed = rng.randrange(1 << 104)
        mine.tkey = ref.tkey = retimed
        mine.delivery_count = ref.delivery_count = count + 1
        assert (mine.tkey, mine.delivery_count, mine.delivery_time_ms) == (
            ref.tkey, ref.delivery_count, ref.delivery_time_ms)
    with pytest.raises(OverflowError):
        PendingEntry(-1, 0, None, 1)
    with pytest.raises(OverflowError):
        mine.tkey = 1 << 128


def test_deep_copy_of_a_group_keeps_its_sharing() -> None:
    """COPY deep-copies a stream; a group's indexes and its consumers' share the entries."""
    from rillet.engine.pel import PendingEntry

    class Consumer:
        def __init__(self) -> None:
            self.name = b"bob"
            self.pel = CSortedIndex()

    consumer = Consumer()
    group_pel = CSortedIndex()
    for k in range(300):
        entry = PendingEntry(k << 64, k << 40, consumer.name, 1)
        group_pel.insert(entry.key, entry)
        consumer.pel.insert(entry.key, entry)
    twin_pel, twin_consumer = copy.deepcopy((group_pel, consumer))
    twin_pel.check()
    assert len(twin_pel) == 300
    for entry in twin_pel:
        assert entry.owner == twin_consumer.name
        assert twin_consumer.pel.get(entry.key) is entry
        assert group_pel.get(entry.key) is not entry
