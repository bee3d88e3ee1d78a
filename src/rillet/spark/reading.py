"""Executor-side reading of one partition: paged XRANGE over `(lo, hi]`, yielding Arrow.

Shared by the stream reader and the batch reader. It opens its own client and keeps
no state between calls, as Spark requires of `read()`: a retried task re-reads exactly
the same entries, because the range is fixed and XRANGE is not a delivery.

A fetch thread keeps the next page's XRANGE in flight while this thread turns the
current page into Arrow and Spark consumes it, so the server's time overlaps ours
(the next page's start is known as soon as a reply is parsed). Pages come out in ID
order, at most PREFETCH_PAGES ahead.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import redis

from rillet.spark.arrow import arrow_schema, entries_to_batch
from rillet.spark.client import connect
from rillet.spark.ids import format_id, next_id, parse_id
from rillet.spark.offsets import StreamRange
from rillet.spark.options import ReaderOptions

PREFETCH_PAGES = 2
_END = object()


def pages(client: redis.Redis, part: StreamRange, chunk: int) -> Iterator[list[Any]]:
    """Raw XRANGE pages of `(part.lo, part.hi]`, in ID order."""
    low = next_id(part.lo)
    high = format_id(part.hi)
    while low <= part.hi:
        page = client.execute_command("XRANGE", part.stream, format_id(low), high, "COUNT", chunk)
        if not page:
            return
        yield page
        if len(page) < chunk:
            return
        last = parse_id(page[-1][0])
        if last >= part.hi:
            return
        low = next_id(last)


def read_range(options: ReaderOptions, part: StreamRange) -> Iterator[pa.RecordBatch]:
    schema = arrow_schema(options.lossless)
    client = connect(options.connection)
    ready: queue.Queue[Any] = queue.Queue(maxsize=PREFETCH_PAGES)
    stopping = threading.Event()

    def offer(item: Any) -> bool:
        while not stopping.is_set():
            try:
                ready.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def fetch() -> None:
        try:
            for page in pages(client, part, options.chunk_size):
                if not offer(page):
                    return
            offer(_END)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            offer(exc)

    fetcher = threading.Thread(target=fetch, name=f"rillet-fetch-{part.stream}", daemon=True)
    fetcher.start()
    try:
        while True:
            item = ready.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield entries_to_batch(part.stream, item, schema)
    finally:
        stopping.set()
        fetcher.join(timeout=options.connection.socket_timeout_s)
        client.close()
