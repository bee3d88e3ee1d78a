"""Offset maths and partition planning, with no server and no Spark."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.spark.ids import (
    MAX,
    SEQ_MAX,
    ZERO,
    StreamID,
    next_id,
    parse_id,
    prev_id,
    split_range,
)
from rillet.spark.offsets import (
    START_OF_STREAM,
    SplitPolicy,
    StreamPosition,
    StreamRange,
    entries_between,
    offset_from_json,
    offset_to_json,
    plan_partitions,
)

ids = st.builds(StreamID, st.integers(0, 2**50), st.integers(0, 5) | st.just(SEQ_MAX))


def test_parse_and_format():
    assert parse_id("17-3") == StreamID(17, 3)
    assert parse_id(b"17-3") == StreamID(17, 3)
    assert parse_id("17") == StreamID(17, 0)
    assert parse_id("17", default_seq=SEQ_MAX) == StreamID(17, SEQ_MAX)
    assert parse_id("-") == ZERO and parse_id("+") == MAX
    assert str(StreamID(5, 0)) == "5-0"
    for bad in ("", "x-1", "1-x", "-1-0", f"1-{2**64}"):
        with pytest.raises(ValueError):
            parse_id(bad)


def test_next_and_prev_cross_milliseconds():
    assert next_id(StreamID(5, SEQ_MAX)) == StreamID(6, 0)
    assert prev_id(StreamID(6, 0)) == StreamID(5, SEQ_MAX)
    assert prev_id(ZERO) == ZERO
    with pytest.raises(ValueError):
        next_id(MAX)


@settings(max_examples=200, deadline=None)
@given(ids)
def test_next_prev_roundtrip(i):
    if i != MAX:
        assert prev_id(next_id(i)) == i
    if i != ZERO:
        assert next_id(prev_id(i)) == i


@settings(max_examples=300, deadline=None)
@given(ids, ids, st.integers(1, 40))
def test_split_range_is_an_exact_disjoint_cover(a, b, parts):
    lo, hi = min(a, b), max(a, b)
    ranges = split_range(lo, hi, parts)
    if hi == lo:
        assert ranges == []
        return
    assert 1 <= len(ranges) <= parts
    assert ranges[0][0] == lo and ranges[-1][1] == hi
    for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
        assert end == start  # contiguous: (lo, c1], (c1, c2], ...
    assert all(x < y for x, y in ranges)
    assert split_range(lo, hi, parts) == ranges  # deterministic


def test_split_by_time_and_inside_one_millisecond():
    parts = split_range(StreamID(1000, 0), StreamID(2000, 0), 4)
    assert [p[1] for p in parts] == [
        StreamID(1250, SEQ_MAX),
        StreamID(1500, SEQ_MAX),
        StreamID(1750, SEQ_MAX),
        StreamID(2000, 0),
    ]
    same_ms = split_range(StreamID(7, 0), StreamID(7, 100), 2)
    assert same_ms == [(StreamID(7, 0), StreamID(7, 50)), (StreamID(7, 50), StreamID(7, 100))]


def test_offsets_json_roundtrip_and_plain_ids():
    positions = {"b": StreamPosition(StreamID(5, 1), 9), "a": StreamPosition(StreamID(3, 0))}
    encoded = offset_to_json(positions)
    assert list(encoded) == ["a", "b"]
    assert encoded == {"a": {"id": "3-0"}, "b": {"id": "5-1", "entriesRead": 9}}
    assert offset_from_json(encoded) == positions
    assert offset_from_json('{"a": "3-0"}') == {"a": StreamPosition(StreamID(3, 0), None)}
    with pytest.raises(ValueError):
        offset_from_json({"a": 5})


def test_entries_between_needs_both_ordinals():
    assert entries_between(StreamPosition(ZERO, 10), StreamPosition(StreamID(9, 0), 25)) == 15
    assert entries_between(StreamPosition(ZERO), StreamPosition(StreamID(9, 0), 25)) is None


def test_split_policy_counts():
    policy = SplitPolicy(entries_per_partition=100, max_partitions_per_stream=8)
    assert policy.count(None) == 1
    assert policy.count(250) == 3
    assert policy.count(10_000) == 8
    assert SplitPolicy(partitions_per_stream=3).count(None) == 3


def test_min_partitions_adds_tasks_to_the_largest_streams():
    policy = SplitPolicy(entries_per_partition=1000, min_partitions=6)
    assert policy.counts({"a": 900, "b": 300, "c": None}) == {"a": 4, "b": 1, "c": 1}
    assert policy.counts({"a": 2, "b": 1}) == {"a": 2, "b": 1}  # never more tasks than entries
    assert SplitPolicy(entries_per_partition=100).counts({"a": 250}) == {"a": 3}


def test_large_reads_are_cut_into_whole_waves_of_the_cores():
    two = SplitPolicy(cores=2)
    assert two.counts({"a": 300_000}) == {"a": 2}
    assert two.counts({"a": 2_500_000}) == {"a": 4}  # 3 tasks would leave a core idle
    assert two.counts({"a": 15_000}) == {"a": 1}  # too small to be worth splitting
    assert two.counts({"a": 150_000, "b": 5_000}) == {"a": 1, "b": 1}
    assert SplitPolicy(cores=2, entries_per_partition=100_000).counts({"a": 300_000}) == {"a": 4}
    assert SplitPolicy(cores=8).counts({"a": 50_000}) == {"a": 5}  # 10,000 per task at least
    assert SplitPolicy(cores=2, partitions_per_stream=3).counts({"a": 300_000}) == {"a": 3}


def test_a_range_from_zero_is_cut_where_its_entries_are():
    hi = StreamID(1_700_000_099_999, 0)
    floor = StreamID(1_699_999_999_999, 2**64 - 1)  # just before the first entry
    parts = split_range(ZERO, hi, 4, floor)
    assert parts[0][0] == ZERO and parts[-1][1] == hi and len(parts) == 4
    assert [b.ms for _, b in parts[:-1]] == [
        1_700_000_024_999,
        1_700_000_049_999,
        1_700_000_074_999,
    ]
    assert all(a == prev_b for (a, _), (_, prev_b) in zip(parts[1:], parts, strict=False))
    # Without a floor, all entries would land in the last of the time slices from 0.
    assert split_range(ZERO, hi, 4)[-2][1].ms < floor.ms
    plan = plan_partitions(
        {},
        {"s": StreamPosition(hi, 100_000)},
        SplitPolicy(entries_per_partition=25_000),
        {"s": floor},
    )
    assert [(p.lo, p.hi) for p in plan] == parts


def test_plan_partitions_only_streams_with_new_entries():
    start = {"a": StreamPosition(StreamID(100, 0), 10), "b": StreamPosition(StreamID(50, 0), 4)}
    end = {
        "a": StreamPosition(StreamID(400, 0), 310),
        "b": StreamPosition(StreamID(50, 0), 4),
        "c": StreamPosition(StreamID(9, 0), 2),
    }
    plan = plan_partitions(start, end, SplitPolicy(entries_per_partition=100))
    assert [(p.stream, str(p.lo), str(p.hi)) for p in plan] == [
        ("a", "100-0", f"200-{SEQ_MAX}"),  # 300 entries / 100 per partition
        ("a", f"200-{SEQ_MAX}", f"300-{SEQ_MAX}"),
        ("a", f"300-{SEQ_MAX}", "400-0"),
        ("c", "0-0", "9-0"),
    ]
    assert [p.index for p in plan] == [0, 1, 2, 3]
    assert plan == plan_partitions(start, end, SplitPolicy(entries_per_partition=100))
    assert START_OF_STREAM.id == ZERO


def test_stream_range_pickles():
    import pickle

    part = StreamRange("s", StreamID(1, 0), StreamID(2, 0), 3)
    copy = pickle.loads(pickle.dumps(part))
    assert copy == part and copy.index == 3 and copy.lo == StreamID(1, 0)
