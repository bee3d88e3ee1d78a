"""Unit tests of the stream log: IDs, reads, deletes, trimming, metadata."""

from __future__ import annotations

import pytest

from rillet.clock import ManualClock
from rillet.engine.ids import MAX_ID, MIN_ID, U64_MAX, StreamID
from rillet.engine.stream import NodeLimits, Stream, default_trim_limit
from rillet.errors import STREAM_EXHAUSTED, STREAM_ID_TOO_SMALL, ReplyError

MAX = U64_MAX


def xadd(stream: Stream, clock: ManualClock, fields=(b"f", b"v"), ms=None, seq=None) -> StreamID:
    sid = stream.next_id(ms, seq, clock.now_ms())
    stream.append(sid, list(fields))
    stream.check_invariants()
    return sid


def filled(n: int, **kwargs) -> Stream:
    stream = Stream(**kwargs)
    for i in range(1, n + 1):
        stream.append(StreamID(i, 0), [b"item", b"%d" % i])
    return stream


def ids_of(entries) -> list[tuple[int, int]]:
    return [tuple(sid) for sid, _ in entries]


# --- ID generation ---------------------------------------------------------------------


def test_star_ids_follow_the_clock_and_stay_monotonic_when_it_goes_back():
    clock = ManualClock(1000)
    s = Stream()
    assert xadd(s, clock) == (1000, 0)
    assert xadd(s, clock) == (1000, 1)
    clock.advance(5)
    assert xadd(s, clock) == (1005, 0)
    clock.set(900)  # the clock went back: keep the last ms and bump seq
    assert xadd(s, clock) == (1005, 1)
    assert s.last_id == (1005, 1)


def test_star_when_seq_is_exhausted_moves_to_next_ms():
    s = Stream()
    s.append(StreamID(5, MAX), [b"f", b"v"])
    assert s.next_id(None, None, 0) == (6, 0)
    s.set_id(StreamID(MAX, MAX - 1))
    assert s.next_id(None, None, 0) == (MAX, MAX)


def test_exhausted_stream_refuses_every_id_form():
    s = Stream()
    s.append(MAX_ID, [b"f", b"v"])
    for ms, seq in ((None, None), (MAX, None), (MAX, MAX), (1, 1)):
        with pytest.raises(ReplyError) as err:
            s.next_id(ms, seq, 0)
        assert err.value.message == STREAM_EXHAUSTED


def test_ms_star_and_explicit_ids():
    s = Stream()
    assert s.next_id(0, None, 0) == (0, 1)  # `XADD s 0-* ...` on a new stream
    s.append(StreamID(5, 5), [b"f", b"v"])
    assert s.next_id(5, None, 0) == (5, 6)
    assert s.next_id(6, None, 0) == (6, 0)
    assert s.next_id(5, 6, 0) == (5, 6)
    for ms, seq in ((4, None), (5, 5), (5, 4), (4, 100)):
        with pytest.raises(ReplyError) as err:
            s.next_id(ms, seq, 0)
        assert err.value.message == STREAM_ID_TOO_SMALL
    s.append(StreamID(7, MAX), [b"f", b"v"])
    with pytest.raises(ReplyError) as err:
        s.next_id(7, None, 0)  # 7-* would need seq MAX + 1
    assert err.value.message == STREAM_ID_TOO_SMALL


# --- reading ----------------------------------------------------------------------------


def test_range_forward_reverse_count_and_bounds():
    s = filled(250, node_max_entries=10)
    assert s.radix_tree_keys == 25
    assert ids_of(s.range(StreamID(5, 0), StreamID(8, MAX))) == [(5, 0), (6, 0), (7, 0), (8, 0)]
    assert ids_of(s.range(StreamID(5, 1), StreamID(8, 0))) == [(6, 0), (7, 0), (8, 0)]
    assert ids_of(s.range(MIN_ID, MAX_ID, count=3)) == [(1, 0), (2, 0), (3, 0)]
    assert ids_of(s.range(MIN_ID, MAX_ID, count=3, reverse=True)) == [(250, 0), (249, 0), (248, 0)]
    assert ids_of(s.range(StreamID(95, 0), StreamID(105, 0), reverse=True, count=4)) == [
        (105, 0),
        (104, 0),
        (103, 0),
        (102, 0),
    ]
    assert s.range(StreamID(9, 0), StreamID(8, 0)) == []
    assert s.range(MIN_ID, MAX_ID, count=0) == []
    assert s.range(StreamID(251, 0), MAX_ID) == []
    assert s.range(MIN_ID, StreamID(0, MAX), reverse=True) == []
    assert len(s.range(MIN_ID, MAX_ID)) == 250
    assert s.range(StreamID(7, 0), StreamID(7, 0)) == [(StreamID(7, 0), [b"item", b"7"])]


def test_fields_round_trip_through_packing_including_mixed_and_binary():
    s = Stream(node_max_entries=3)
    rows = [
        [b"a", b"1", b"b", b"2"],
        [b"a", b"\x00\r\n", b"b", b""],
        [b"b", b"x", b"a", b"y"],  # same names, other order: not SAMEFIELDS
        [b"only", b"one"],
        [b"a", b"9223372036854775808", b"b", b"-0"],
        [b"a", b"z" * 5000, b"b", b"q"],
        [b"a", b"1", b"b", b"2", b"c", b"3"],
    ]
    for i, row in enumerate(rows, start=1):
        s.append(StreamID(i, 0), row)
    s.check_invariants()
    assert [f for _, f in s.range(MIN_ID, MAX_ID)] == rows
    assert [f for _, f in s.range(MIN_ID, MAX_ID, reverse=True)] == rows[::-1]
    assert s.get(StreamID(3, 0)) == rows[2]
    assert s.get(StreamID(3, 1)) is None
    assert s.first_entry() == (StreamID(1, 0), rows[0])
    assert s.last_entry() == (StreamID(7, 0), rows[-1])


def test_empty_stream():
    s = Stream()
    assert s.range(MIN_ID, MAX_ID) == []
    assert s.first_entry() is None and s.last_entry() is None
    assert s.first_id == MIN_ID and s.last_valid_id() == MIN_ID
    assert s.head_id() == MAX_ID
    assert s.radix_tree_keys == 0 and s.radix_tree_nodes == 1
    assert s.trim_maxlen(0) == 0 and s.trim_minid(MAX_ID) == 0
    assert not s.delete(StreamID(1, 0))
    s.check_invariants()


# --- XDEL -------------------------------------------------------------------------------


def test_delete_tombstones_and_frees_emptied_nodes():
    s = filled(30, node_max_entries=10)
    assert s.delete(StreamID(1, 0))
    assert not s.delete(StreamID(1, 0))
    assert not s.delete(StreamID(1, 5))
    assert s.first_id == (2, 0)
    assert s.max_deleted_id == (1, 0)
    assert s.head_id() == (1, 0)  # tombstones count for MINID `~` propagation
    assert s.radix_tree_keys == 3
    for i in range(2, 11):
        assert s.delete(StreamID(i, 0))
    assert s.radix_tree_keys == 2  # the first node emptied and went away
    assert s.delete(StreamID(5, 0)) is False
    s.delete(StreamID(15, 0))
    assert s.max_deleted_id == (15, 0)
    s.delete(StreamID(12, 0))
    assert s.max_deleted_id == (15, 0)
    assert s.length == 18
    s.check_invariants()


def test_zero_length_stream_keeps_its_metadata():
    s = Stream()
    s.append(StreamID(3, 0), [b"f", b"v"])
    s.delete(StreamID(3, 0))
    assert s.length == 0 and s.last_id == (3, 0) and s.entries_added == 1
    assert s.first_id == MIN_ID and s.max_deleted_id == (3, 0)
    assert s.radix_tree_keys == 0
    with pytest.raises(ReplyError):
        s.next_id(3, 0, 0)
    s.append(s.next_id(None, None, 1), [b"f", b"v"])
    assert s.last_id == (3, 1) and s.first_id == (3, 1)


def test_tail_node_emptied_by_xdel_lets_the_previous_node_take_appends():
    s = filled(15, node_max_entries=10)
    for i in range(11, 16):
        s.delete(StreamID(i, 0))
    assert s.radix_tree_keys == 1
    s.node_max_entries = 12
    s.append(StreamID(20, 0), [b"item", b"20"])
    s.append(StreamID(21, 0), [b"item", b"21"])
    assert s.radix_tree_keys == 1  # node 1 reopened: 10 entries, room for 12
    s.append(StreamID(22, 0), [b"item", b"22"])
    assert s.radix_tree_keys == 2
    assert ids_of(s.range(StreamID(10, 0), MAX_ID)) == [(10, 0), (20, 0), (21, 0), (22, 0)]
    s.check_invariants()


# --- trimming -----------------------------------------------------------------------------


def test_approx_maxlen_444_on_1000_leaves_500():
    s = filled(1000)
    assert s.trim_maxlen(444, approx=True, limit=default_trim_limit(100)) == 500
    assert s.length == 500
    assert s.first_id == (501, 0)
    assert s.trim_maxlen(444, approx=True, limit=10_000) == 0  # no whole node can go
    assert s.trim_maxlen(444) == 56
    assert s.length == 444 and s.first_id == (557, 0)
    assert s.radix_tree_keys == 5  # node 501..600 keeps its tombstones
    s.check_invariants()


def test_limit_caps_approx_trimming_by_whole_nodes():
    s = filled(1000)
    assert s.trim_maxlen(0, approx=True, limit=250) == 200
    assert s.trim_maxlen(0, approx=True, limit=99) == 0
    assert s.trim_maxlen(0, approx=True, limit=0) == 800  # LIMIT 0: no cap
    assert s.length == 0 and s.radix_tree_keys == 0


def test_default_trim_limit():
    assert default_trim_limit(100) == 10_000
    assert default_trim_limit(0) == 10_000
    assert default_trim_limit(50_000) == 1_000_000


def test_minid_trimming():
    s = filled(1000)
    assert s.trim_minid(StreamID(500, 0), approx=True) == 400
    assert s.first_id == (401, 0)
    assert s.trim_minid(StreamID(500, 0)) == 99
    assert s.first_id == (500, 0)
    assert s.trim_minid(StreamID(500, 0)) == 0


def test_exact_minid_can_leave_a_node_without_live_entries():
    s = filled(10)
    s.delete(StreamID(10, 0))
    assert s.trim_minid(StreamID(10, 0)) == 9
    assert s.length == 0 and s.radix_tree_keys == 1  # Redis keeps this node too
    assert s.first_id == MIN_ID and s.first_entry() is None
    s.append(StreamID(11, 0), [b"item", b"11"])
    assert s.radix_tree_keys == 1 and s.first_id == (11, 0)
    s.check_invariants()


def test_acked_trimming_skips_referenced_entries():
    # Mirrors Redis 8.2: exact trimming walks past referenced entries and on to
    # later nodes; a node that empties goes away.
    s = filled(1000)
    referenced = {StreamID(i, 0) for i in range(51, 101)} | {
        StreamID(i, 0) for i in range(251, 1001)
    }
    assert s.trim_maxlen(444, can_delete=lambda sid: sid not in referenced) == 200
    assert ids_of(s.range(MIN_ID, StreamID(260, 0)))[:2] == [(51, 0), (52, 0)]
    assert s.length == 800 and s.radix_tree_keys == 9
    s.check_invariants()


def test_acked_approx_trimming_removes_fully_deletable_nodes():
    # redis#14623's test: nodes of two; the first is acked, the second is not.
    s = filled(4, node_max_entries=2)
    acked = {StreamID(1, 0), StreamID(2, 0)}
    assert s.trim_minid(StreamID(5, 0), approx=True, limit=200, can_delete=acked.__contains__) == 2
    assert ids_of(s.range(MIN_ID, MAX_ID)) == [(3, 0), (4, 0)]


def test_delref_reports_every_removed_id():
    s = filled(30, node_max_entries=10)
    s.delete(StreamID(3, 0))
    seen: list[StreamID] = []
    assert s.trim_maxlen(15, approx=True, limit=100, on_deleted=seen.extend) == 9
    assert seen == [StreamID(i, 0) for i in range(1, 11) if i != 3]
    assert s.trim_maxlen(15, on_deleted=seen.extend) == 5
    assert seen[-5:] == [StreamID(i, 0) for i in range(11, 16)]
    assert s.length == 15


# --- metadata, XINFO, config ---------------------------------------------------------------


def test_set_id_and_entries_read_estimates():
    s = filled(10)
    s.set_id(StreamID(20, 0), entries_added=50, max_deleted_id=StreamID(0, 0))
    assert s.last_id == (20, 0) and s.entries_added == 50 and s.max_deleted_id == MIN_ID
    assert s.estimate_distance_from_first_ever_entry(StreamID(20, 0)) == 50
    assert s.estimate_distance_from_first_ever_entry(StreamID(1, 0)) == 41
    assert s.estimate_distance_from_first_ever_entry(StreamID(0, 5)) == 40
    assert s.estimate_distance_from_first_ever_entry(StreamID(5, 0)) is None
    assert s.estimate_distance_from_first_ever_entry(StreamID(21, 0)) is None
    s.delete(StreamID(4, 0))
    assert s.range_has_tombstones(StreamID(3, 0)) and not s.range_has_tombstones(StreamID(5, 0))
    s.set_id(StreamID(30, 0), max_deleted_id=StreamID(25, 0))
    assert s.max_deleted_id == (25, 0)


def test_radix_tree_figures_follow_redis():
    s = Stream()
    s.append(StreamID(1, 0), [b"f", b"v"])
    assert (s.radix_tree_keys, s.radix_tree_nodes) == (1, 2)
    s = filled(1000)
    assert (s.radix_tree_keys, s.radix_tree_nodes) == (10, 26)  # XINFO STREAM on Redis


def test_memory_usage_follows_redis_estimate():
    s = Stream()
    assert s.memory_usage() == 348  # Redis 7.0 and 8.2 report this plus the key's own bytes
    for i in range(1, 101):
        s.append(StreamID(i, 0), [b"field", b"value%d" % (i - 1)])
    assert s.memory_usage(0) == 4704
    s.append(StreamID(101, 0), [b"field", b"value100"])
    assert s.memory_usage(0) == 7488


def test_config_changes_apply_to_later_appends_and_limits_can_be_shared():
    shared = NodeLimits(5, 4096)
    a, b = Stream(limits=shared), Stream(limits=shared)
    for i in range(1, 11):
        a.append(StreamID(i, 0), [b"f", b"v"])
    assert a.radix_tree_keys == 2
    shared.node_max_entries = 2
    for i in range(1, 5):
        b.append(StreamID(i, 0), [b"f", b"v"])
    assert b.radix_tree_keys == 2
    shared.node_max_bytes = 0  # 0 means no byte limit (listpack's 1 GiB cap)
    shared.node_max_entries = 0
    for i in range(11, 400):
        a.append(StreamID(i, 0), [b"f", b"v" * 30])
    assert a.radix_tree_keys == 2  # the tail node took all 389 of them
    assert a._nodes[-1].n == 394


def test_edge_ids_skip_tombstones():
    s = filled(25, node_max_entries=10)
    for i in (21, 22, 25, 24):
        s.delete(StreamID(i, 0))
    assert s.last_valid_id() == (23, 0) and s.last_entry()[0] == (23, 0)
    for i in (1, 2, 3):
        s.delete(StreamID(i, 0))
    assert s.first_id == (4, 0) and s.first_entry()[0] == (4, 0)
    assert s.head_id() == (1, 0)
    s.check_invariants()
