"""Spark offsets for stream sources, and the partition plan derived from them.

An offset maps each stream to its last included entry plus that entry's ordinal (the
`entries-added` counter), e.g. `{"s": {"id": "17-3", "entriesRead": 42}}`; the ordinal
makes trim-loss checks exact. Partitions are pure functions of (start, end, options).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from rillet.spark.ids import ZERO, StreamID, format_id, parse_id, split_range

try:  # Partitions must subclass Spark's InputPartition; the maths works without Spark.
    from pyspark.sql.datasource import InputPartition
except ImportError:  # pragma: no cover - pyspark is the `spark` extra

    class InputPartition:  # type: ignore[no-redef]  # Spark's stand-in
        def __init__(self, value: Any) -> None:
            self.value = value


class StreamPosition(NamedTuple):
    """The last entry a reader includes, plus that entry's ordinal when known."""

    id: StreamID
    entries_read: int | None = None


START_OF_STREAM = StreamPosition(ZERO, 0)


def position_from_json(value: Any) -> StreamPosition:
    if isinstance(value, str):
        return StreamPosition(parse_id(value), None)
    if isinstance(value, Mapping) and "id" in value:
        read = value.get("entriesRead")
        return StreamPosition(parse_id(value["id"]), None if read is None else int(read))
    raise ValueError(f"invalid stream offset {value!r}: expected an ID or {{'id': ...}}")


def position_to_json(position: StreamPosition) -> dict[str, Any]:
    out: dict[str, Any] = {"id": format_id(position.id)}
    if position.entries_read is not None:
        out["entriesRead"] = position.entries_read
    return out


def offset_from_json(offset: Mapping[str, Any] | str) -> dict[str, StreamPosition]:
    """Decode a Spark offset (a dict, or its JSON text) into positions per stream."""
    decoded = json.loads(offset) if isinstance(offset, str) else offset
    return {str(stream): position_from_json(value) for stream, value in decoded.items()}


def offset_to_json(positions: Mapping[str, StreamPosition]) -> dict[str, Any]:
    return {stream: position_to_json(pos) for stream, pos in sorted(positions.items())}


def entries_between(start: StreamPosition, end: StreamPosition) -> int | None:
    """Entries added in `(start, end]`, from the ordinals; None when either is unknown."""
    if start.entries_read is None or end.entries_read is None:
        return None
    return max(0, end.entries_read - start.entries_read)


class StreamRange(InputPartition):
    """One Spark task's work: entries of `stream` with `lo < id <= hi`."""

    def __init__(self, stream: str, lo: StreamID, hi: StreamID, index: int = 0) -> None:
        super().__init__((stream, format_id(lo), format_id(hi)))
        self.stream = stream
        self.lo = lo
        self.hi = hi
        self.index = index

    def __repr__(self) -> str:
        return f"StreamRange({self.stream!r}, ({self.lo}, {self.hi}], #{self.index})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StreamRange) and (
            (self.stream, self.lo, self.hi) == (other.stream, other.lo, other.hi)
        )

    def __hash__(self) -> int:
        return hash((self.stream, self.lo, self.hi))


# Splitting a read finer than this per task costs more in task overhead than it gains.
MIN_ENTRIES_PER_TASK = 10_000


@dataclass(frozen=True)
class SplitPolicy:
    """How many tasks read each stream's range.

    `partitions_per_stream` > 0 fixes the count. Otherwise the count is the expected
    number of entries divided by `entries_per_partition`, capped at
    `max_partitions_per_stream`; with no estimate, the range is read by one task.
    `min_partitions` (Kafka's minPartitions) then raises the total, giving the extra
    tasks to the streams with the most entries per task. With `cores` (the planning
    machine's, filled in by ReaderOptions), a read is given whole waves: the total is
    rounded up to a multiple of `cores`, so no core idles while one task of a last,
    partial wave runs (3 tasks on 2 cores took 1.6x as long as 2 of half again the
    size, Parquet output included); tasks keep MIN_ENTRIES_PER_TASK entries at least.
    Tasks are few and large by default (a million entries): each Spark task of a Python
    source starts a fresh Python worker, about 0.1 s of CPU, so 10 tasks for 300,000
    entries spent 5 us of CPU per entry where 2 tasks spent 2.5 (noop output, local[2]).
    """

    partitions_per_stream: int = 0
    entries_per_partition: int = 1_000_000
    max_partitions_per_stream: int = 32
    min_partitions: int = 0
    cores: int = 0

    def count(self, rows: int | None) -> int:
        if self.partitions_per_stream > 0:
            return self.partitions_per_stream
        if rows is None:
            return 1
        wanted = math.ceil(rows / max(1, self.entries_per_partition))
        return max(1, min(wanted, self.max_partitions_per_stream))

    def counts(self, sizes: Mapping[str, int | None]) -> dict[str, int]:
        """Tasks per stream for ranges of `sizes` entries (None: unknown)."""
        counts = {stream: self.count(rows) for stream, rows in sizes.items()}
        if self.partitions_per_stream > 0:
            return counts
        known = {s: r for s, r in sizes.items() if r is not None and r > 1}
        target = self.min_partitions
        if self.cores > 1:
            waves = -(-sum(counts.values()) // self.cores)
            useful = sum(known.values()) // MIN_ENTRIES_PER_TASK
            if useful > 1:
                target = max(target, min(waves * self.cores, useful))
        while known and sum(counts.values()) < target:
            # Deterministic: the stream with the most entries per task, then by name.
            stream = max(sorted(known), key=lambda s: known[s] / counts[s])
            if counts[stream] >= known[stream]:
                break
            counts[stream] += 1
        return counts


def plan_partitions(
    start: Mapping[str, StreamPosition],
    end: Mapping[str, StreamPosition],
    policy: SplitPolicy,
    floors: Mapping[str, StreamID] | None = None,
) -> list[StreamRange]:
    """Partitions of a micro-batch. Depends only on its arguments (Spark replays it);
    `floors` are the IDs just before each range's first entry (see split_range)."""
    grown = {
        stream: (start.get(stream, START_OF_STREAM), end[stream])
        for stream in sorted(end)
        if end[stream].id > start.get(stream, START_OF_STREAM).id
    }
    counts = policy.counts({s: entries_between(lo, hi) for s, (lo, hi) in grown.items()})
    ranges: list[StreamRange] = []
    for stream, (lo, hi) in grown.items():
        floor = (floors or {}).get(stream)
        for a, b in split_range(lo.id, hi.id, counts[stream], floor):
            ranges.append(StreamRange(stream, a, b, len(ranges)))
    return ranges


def split_counts(
    start: Mapping[str, StreamPosition], end: Mapping[str, StreamPosition], policy: SplitPolicy
) -> dict[str, int]:
    """How many tasks plan_partitions gives each growing stream (to know which need floors)."""
    grown = {
        s: (start.get(s, START_OF_STREAM), end[s])
        for s in end
        if end[s].id > start.get(s, START_OF_STREAM).id
    }
    return policy.counts({s: entries_between(lo, hi) for s, (lo, hi) in grown.items()})
