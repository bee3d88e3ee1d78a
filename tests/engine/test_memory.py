"""The per-key estimates behind used_memory, held to tracemalloc on generated data.

Each shape is built twice in one process: once measured by tracemalloc (what
CPython really allocated for the keys and values), once estimated by
`Database.measure()`. They must agree within 25% (the estimates sample a few
elements, and dicts grow in steps).
"""

from __future__ import annotations

import os
import random
import tracemalloc

import pytest

from rillet.clock import ManualClock
from rillet.engine.hashes import Hash
from rillet.engine.ids import StreamID
from rillet.engine.keyspace import Database
from rillet.engine.lists import List
from rillet.engine.sets import Set
from rillet.engine.stream import Stream
from rillet.engine.zsets import ZSet


def _value(n: int) -> bytes:
    return os.urandom(n // 2 + 1).hex().encode()[:n]


def _strings(db, keys, size):
    for i in range(keys):
        db.set(b"key:%08d" % i, _value(size))


def _hashes(db, keys, size):
    for i in range(keys):
        value = Hash()
        for j in range(size):
            value.set(b"field:%d" % j, _value(12))
        db.set(b"h:%06d" % i, value)


def _sets(db, keys, size):
    for i in range(keys):
        value = Set()
        for _ in range(size):
            value.add(_value(16))
        db.set(b"s:%06d" % i, value)


def _zsets(db, keys, size):
    for i in range(keys):
        value = ZSet()
        for j in range(size):
            value.add(_value(16), float(j))
        db.set(b"z:%06d" % i, value)


def _lists(db, keys, size):
    for i in range(keys):
        value = List()
        value.push([_value(20) for _ in range(size)], False)
        db.set(b"l:%06d" % i, value)


def _streams(db, keys, size):
    for i in range(keys):
        stream = Stream()
        for j in range(size):
            stream.append(StreamID(1_700_000_000_000 + j, 0), [b"f", _value(500)])
        db.set(b"stream:%d" % i, stream)


CASES = [
    ("strings 10 B", _strings, 20000, 10),
    ("strings 200 B", _strings, 20000, 200),
    ("hashes of 20", _hashes, 1000, 20),
    ("hashes of 500", _hashes, 40, 500),
    ("sets of 50", _sets, 400, 50),
    ("zsets of 50", _zsets, 400, 50),
    ("lists of 100", _lists, 200, 100),
    ("stream of 20k x 500 B", _streams, 1, 20000),
]


@pytest.mark.parametrize(("label", "build", "keys", "size"), CASES, ids=[c[0] for c in CASES])
def test_estimate_tracks_tracemalloc(label, build, keys, size):
    random.seed(5)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        db = Database(0, ManualClock())
        build(db, keys, size)
        real = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    estimate = db.measured()  # keys set without a command: found by the count, all measured
    assert 0.75 < estimate / real < 1.25, (label, estimate, real, estimate / real)


def test_measure_is_incremental():
    db = Database(0, ManualClock())
    db.set(b"a", b"x" * 100)
    first = db.measured()
    assert not db.pending and db.sizes == {b"a": first}
    db.set(b"b", b"y" * 100)
    db.pending[b"b"] = None  # what the server's key_modified does for a write
    assert db.measured() == 2 * first
    db.set(b"b", b"y" * 200)
    db.pending[b"b"] = None
    assert db.measured() == 2 * first + 100
    db.delete(b"a")  # a delete subtracts at once
    assert db.used == first + 100
    db.flush()
    assert db.measured() == 0
