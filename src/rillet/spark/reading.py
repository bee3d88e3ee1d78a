"""Executor-side reading of one partition: paged XRANGE over `(lo, hi]`, yielding Arrow.

Shared by the stream reader and the batch reader. It opens its own client and keeps
no state between calls, as Spark requires of `read()`: a retried task re-reads exactly
the same entries, because the range is fixed and XRANGE is not a delivery.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from rillet.spark.arrow import arrow_schema, entries_to_batch
from rillet.spark.client import connect
from rillet.spark.ids import format_id, next_id, parse_id
from rillet.spark.offsets import StreamRange
from rillet.spark.options import ReaderOptions


def read_range(options: ReaderOptions, part: StreamRange) -> Iterator[pa.RecordBatch]:
    schema = arrow_schema(options.lossless)
    client = connect(options.connection)
    try:
        low = next_id(part.lo)
        high = format_id(part.hi)
        while low <= part.hi:
            page = client.execute_command(
                "XRANGE", part.stream, format_id(low), high, "COUNT", options.chunk_size
            )
            if not page:
                return
            yield entries_to_batch(part.stream, page, schema)
            if len(page) < options.chunk_size:
                return
            last = parse_id(page[-1][0])
            if last >= part.hi:
                return
            low = next_id(last)
    finally:
        client.close()
