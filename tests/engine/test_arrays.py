"""The array engine against a plain dict model: seeded random writes, deletes and range deletes
at small, slice-boundary and huge indexes; the layout invariants ARINFO reads; value tags."""

from __future__ import annotations

import random

import pytest

from rillet.engine.arrays import (
    SLICE_SIZE,
    SPARSE_KMAX,
    TAG_FLOAT,
    TAG_INT,
    TAG_SDS,
    TAG_SMALLSTR,
    U64_MAX,
    Array,
    value_tag,
)
from rillet.resp.encoder import format_double


def _index(rng: random.Random) -> int:
    pick = rng.random()
    if pick < 0.5:
        return rng.randrange(3 * SLICE_SIZE)
    if pick < 0.7:
        return rng.choice([SLICE_SIZE - 1, SLICE_SIZE, 2048 * SLICE_SIZE, U64_MAX - 1]) - rng.randrange(3)
    return rng.randrange(U64_MAX)


def _check(array: Array, model: dict[int, bytes]) -> None:
    assert array.count == len(model)
    assert array.length() == (max(model) + 1 if model else 0)
    assert list(array.items()) == sorted(model.items())
    for sid in array.sids:
        s = array.slices[sid]
        assert s.items, "an empty slice is freed"
        if s.dense:
            assert all(s.offset <= off < s.offset + s.winsize for off in s.items)
            assert s.offset + s.winsize <= SLICE_SIZE
        else:
            assert len(s.items) <= SPARSE_KMAX and s.cap <= SPARSE_KMAX


@pytest.mark.parametrize("seed", range(8))
def test_matches_a_dict(seed):
    rng = random.Random(seed)
    array, model = Array(), {}
    for step in range(1500):
        op = rng.random()
        if op < 0.45:
            idx = _index(rng)
            value = b"v%d" % step
            assert array.set(idx, value) == (idx not in model)
            model[idx] = value
        elif op < 0.55:
            lo = _index(rng)
            n = rng.randrange(1, 40)
            hi = min(lo + n - 1, U64_MAX - 1)
            array.prepare_range(lo, hi)
            for idx in range(lo, hi + 1):
                array.set(idx, b"r")
                model[idx] = b"r"
        elif op < 0.85:
            idx = rng.choice(list(model)) if model and rng.random() < 0.7 else _index(rng)
            assert array.delete(idx) == (model.pop(idx, None) is not None)
        else:
            a, b = sorted((_index(rng), _index(rng)))
            if rng.random() < 0.5 and model:
                a = rng.choice(list(model))
                b = min(a + rng.randrange(5000), U64_MAX - 1)
            gone = [k for k in model if a <= k <= b]
            assert array.delete_range(a, b) == len(gone)
            for k in gone:
                del model[k]
        if step % 50 == 0:
            _check(array, model)
            lo, hi = sorted((_index(rng), _index(rng)))
            expected = sorted((k, v) for k, v in model.items() if lo <= k <= hi)
            assert list(array.scan(lo, hi)) == expected
            assert list(array.scan(hi, lo)) == expected[::-1]
    _check(array, model)
    copy = array.copy()
    copy.set(0, b"changed")
    assert array.get(0) == model.get(0)


def test_huge_indexes_stay_small():
    array = Array()
    for i in range(1000):
        array.set(i * (1 << 50), b"x")
    assert len(array.slices) == 1000  # one slice per element, nothing for the gaps
    assert array.info()["super-dir-entries"] == 1000
    assert array.delete_range(0, U64_MAX - 1) == 1000 and not array.sids


def test_layout_follows_sparsearray():
    array = Array()
    for i in range(SPARSE_KMAX):
        array.set(i * 3, b"x")
    info = array.info()
    assert (info["sparse"], info["sparse-cap"], info["dense"]) == (1, SPARSE_KMAX, 0)
    array.set(100, b"x")  # the 11th: promoted to a dense window around 0..100
    info = array.info()
    assert (info["dense"], info["dense-winsize"]) == (1, 128)
    for i in range(7):
        array.delete(i * 3)  # down to 4 elements in a 128 window: back to sparse
    info = array.info()
    assert (info["dense"], info["sparse"], info["sparse-cap"]) == (0, 1, 5)
    assert array.info()["directory-size"] == 1
    array.set(5 * SLICE_SIZE, b"y")
    assert array.info()["directory-size"] == 8  # the flat directory: next power of two
    array.set(2048 * SLICE_SIZE, b"z")
    assert array.info()["directory-size"] == 4  # the super-directory's capacity
    assert array.info()["super-dir-entries"] == 2


@pytest.mark.parametrize("value, tag", [
    (b"0", TAG_INT), (b"-5", TAG_INT), (b"2305843009213693951", TAG_INT),
    (b"2305843009213693952", TAG_SDS), (b"-0", TAG_SMALLSTR), (b"007", TAG_SMALLSTR),
    (b"1.5", TAG_FLOAT), (b"1.0", TAG_FLOAT), (b"-2.25", TAG_FLOAT), (b"0.1", TAG_SMALLSTR),
    (b"1.50", TAG_SMALLSTR), (b"1e3", TAG_SMALLSTR), (b"abcdefg", TAG_SMALLSTR),
    (b"abcdefgh", TAG_SDS), (b"", TAG_SMALLSTR), (b"123456.5", TAG_FLOAT), (b"12.34.56", TAG_SDS),
])
def test_value_tags(value, tag):
    assert value_tag(value, format_double)[0] == tag
