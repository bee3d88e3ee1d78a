"""Database.random_key: expired keys are deleted as they are drawn, a live one is the answer."""

from __future__ import annotations

import random

from rillet.clock import ManualClock
from rillet.engine.keyspace import Database


def _db(expired: int, live: int) -> tuple[Database, ManualClock]:
    clock = ManualClock()
    db = Database(0, clock)
    for i in range(expired):
        db.set(b"gone%d" % i, b"v")
        db.set_expire(b"gone%d" % i, clock.now_ms() + 10)
    for i in range(live):
        db.set(b"live%d" % i, b"v")
    clock.advance(100)
    return db, clock


def test_draws_past_expired_keys_to_a_live_one():
    random.seed(7)
    db, _ = _db(300, 1)
    assert db.random_key() == b"live0"
    assert all(key == b"live0" or key in db.expires for key in db.data)


def test_all_expired_is_none_and_empties_the_db():
    random.seed(7)
    db, _ = _db(50, 0)
    assert db.random_key() is None
    assert not db.data and not db.expires


def test_due_keys_kept_by_a_replica_give_one_after_the_tries():
    random.seed(7)
    db, _ = _db(20, 0)
    db.expire_mode = 1  # a replica: due keys stay until its master's DEL
    assert db.random_key() in db.data and len(db.data) == 20
