"""The batch reader: `spark.read.format("rillet")` over an ID range or a time range.

Bounds are `startId`/`endId` (inclusive) or `from`/`to` (timestamps, `to` exclusive).
The planner freezes each stream's end at its last ID when the job is planned, so every
task of one job sees the same snapshot even while producers keep appending.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from rillet.spark.client import (
    range_floors,
    riding_out_restarts,
    scan_streams,
    stream_infos,
)
from rillet.spark.cluster import Router, connect_routed
from rillet.spark.ids import StreamID, prev_id, split_range
from rillet.spark.offsets import StreamRange
from rillet.spark.options import ReaderOptions
from rillet.spark.reading import read_range


class RilletBatchReader(DataSourceReader):
    def __init__(self, options: ReaderOptions) -> None:
        self.options = options

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.options = state["options"]

    def _streams(self, client: Router) -> list[str]:
        found = set(self.options.streams)
        for pattern in self.options.patterns:
            found.update(scan_streams(client.masters(), pattern))
        return sorted(found)

    @riding_out_restarts
    def partitions(self) -> list[InputPartition]:
        opts = self.options
        client = connect_routed(opts.connection, reconnect=True)
        try:
            streams = self._streams(client)
            infos = stream_infos(client, streams)
            bounds: dict[str, tuple[StreamID, StreamID]] = {}
            sizes: dict[str, int | None] = {}
            for stream in streams:
                info = infos[stream]
                if info is None or info.first_id is None:
                    continue
                lo = max(prev_id(opts.first_id), prev_id(info.first_id))
                hi = min(opts.last_id_of(stream), info.last_generated_id)
                if hi <= lo:
                    continue
                bounds[stream] = (lo, hi)
                rows: int | None = info.length
                whole = info.last_generated_id.ms - info.first_id.ms + 1
                if whole > 0 and (lo >= info.first_id or hi < info.last_generated_id):
                    # Assume a steady rate inside the stream to size the partitions.
                    rows = info.length * max(1, hi.ms - lo.ms) // whole
                sizes[stream] = rows
            counts = opts.split.counts(sizes)
            floors = range_floors(client, {s: bounds[s] for s, n in counts.items() if n > 1})
        finally:
            client.close()
        ranges: list[InputPartition] = []
        for stream, (lo, hi) in bounds.items():
            for a, b in split_range(lo, hi, counts[stream], floors.get(stream)):
                ranges.append(StreamRange(stream, a, b, len(ranges)))
        return ranges

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_range(self.options, partition)
