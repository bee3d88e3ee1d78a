"""Executor-side reading of one partition: paged XRANGE over `(lo, hi]`, yielding Arrow.

Shared by the stream reader and the batch reader. It opens its own client and keeps
no state between calls, as Spark requires of `read()`: a retried task re-reads exactly
the same entries, because the range is fixed and XRANGE is not a delivery.

A fetch thread keeps the next page's XRANGE in flight while this thread hands the
current batch to Spark, so the server's time overlaps ours (the next page's start is
known as soon as a reply is parsed). Pages come out in ID order, at most
PREFETCH_PAGES ahead.

Two decoders give the same batches. With the compiled `_xrange_columns` (built by
setup.py; the pure path of rillet/compiled.py ignores it) the fetch thread reads the reply's bytes from the
connection's socket and decodes them straight into Arrow buffers, without the GIL and
without a Python object per entry. Without it, redis-py's parser (hiredis) returns
nested lists that `entries_to_batch` turns into columns; that path is the reference.
"""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import redis

from rillet.compiled import compiled
from rillet.spark.arrow import arrow_schema, columns_to_batch, entries_to_batch
from rillet.spark.client import reconnecting
from rillet.spark.cluster import Router, connect_routed
from rillet.spark.ids import StreamID, format_id, next_id, parse_id
from rillet.spark.offsets import StreamRange
from rillet.spark.options import ReaderOptions

# The compiled XRANGE reply decoder (rillet/compiled.py), or None: the Python one.
_xrange_columns = compiled("rillet.spark._xrange_columns")
XrangeDecoder = _xrange_columns.XrangeDecoder if _xrange_columns is not None else None

PREFETCH_PAGES = 2
# The socket is read in pieces of this size; an entry larger than it grows the buffer.
RECV_BYTES = 1 << 20
# A batch is handed over before its field bytes pass this, whatever the page size
# (Arrow's string offsets are 32-bit, and Spark holds a batch in memory).
BATCH_BYTES = 64 << 20
_END = object()


# Runs one read against the server, reconnecting as the reader's options allow.
Retry = Callable[[Callable[[], Any]], Any]


def pages(client: Router, part: StreamRange, chunk: int, retry: Retry) -> Iterator[list[Any]]:
    """Raw XRANGE pages of `(part.lo, part.hi]`, in ID order; `retry` runs each page's
    command (a page retried after a reconnect is the same page)."""
    low = next_id(part.lo)
    high = format_id(part.hi)
    while low <= part.hi:
        args = ("XRANGE", part.stream, format_id(low), high, "COUNT", chunk)
        page = retry(lambda: client.execute_command(*args))  # noqa: B023
        if not page:
            return
        yield page
        if len(page) < chunk:
            return
        last = parse_id(page[-1][0])
        if last >= part.hi:
            return
        low = next_id(last)


def decoded_batches(
    client: Router, part: StreamRange, chunk: int, schema: pa.Schema, retry: Retry
) -> Iterator[pa.RecordBatch]:
    """The same pages as `pages`, decoded from the socket by `XrangeDecoder` into batches.

    redis-py connects (AUTH, SELECT, TLS) and sends the command; the reply is read from
    the connection's socket here. Each page goes to the node owning the stream now (the
    router follows a cluster's redirections); a failed page is closed and run again
    through `retry` (the reader's reconnecting), and a page's batches are handed on once
    the whole page is in, so a retried page starts afresh; a connection left mid-reply
    is closed rather than returned to the pool.
    """
    assert XrangeDecoder is not None
    decoder = XrangeDecoder(
        check_names=pa.types.is_map(schema.field("fields").type), batch_bytes=BATCH_BYTES
    )
    receiver = _Receiver()
    low = next_id(part.lo)
    high = format_id(part.hi)
    while low <= part.hi:
        args = ("XRANGE", part.stream, format_id(low), high, "COUNT", chunk)
        batches, rows, last = retry(
            lambda: client.run(  # noqa: B023
                part.stream,
                lambda node, asking: receiver.fetch(node, asking, args, decoder, part.stream, schema),  # noqa: B023
            )
        )
        yield from batches
        if rows < chunk or last is None or last >= part.hi:
            break
        low = next_id(last)


class _Receiver:
    """Reads one XRANGE reply from a redis-py connection's socket through a decoder."""

    def __init__(self) -> None:
        self.buffer = bytearray(RECV_BYTES)

    def fetch(
        self, node: redis.Redis, asking: bool, args: tuple[Any, ...], decoder: Any, stream: str,
        schema: pa.Schema,
    ) -> tuple[list[pa.RecordBatch], int, StreamID | None]:
        pool = node.connection_pool
        conn = pool.get_connection()
        try:
            if asking:  # its reply read before XRANGE is sent: the parser buffers what it reads
                conn.send_command("ASKING")
                conn.read_response()
            command = conn.pack_command(*args)
            return conn.retry.call_with_retry(
                lambda: self.page(conn, command, decoder, stream, schema),
                lambda _error: conn.disconnect(),
            )
        except BaseException:
            conn.disconnect()
            raise
        finally:
            pool.release(conn)

    def page(
        self, conn: Any, command: Any, decoder: Any, stream: str, schema: pa.Schema
    ) -> tuple[list[pa.RecordBatch], int, StreamID | None]:
        conn.send_packed_command(command)
        sock = conn._sock  # noqa: SLF001 - redis-py has no public raw-reply read
        decoder.reset()
        batches: list[pa.RecordBatch] = []
        buffer = self.buffer
        view = memoryview(buffer)
        filled = 0
        try:
            while True:
                if not decoder.done:
                    filled = decoder.feed(buffer, filled)
                if decoder.batch_full or (decoder.done and decoder.rows_pending):
                    batches.append(columns_to_batch(stream, decoder.take(), schema))
                    continue
                if decoder.done:
                    break
                if filled == len(buffer):  # one entry larger than the buffer
                    view.release()
                    buffer = self.buffer = buffer + bytearray(len(buffer))
                    view = memoryview(buffer)
                filled += _receive(conn, sock, view, filled)
        except ValueError as exc:
            raise redis.InvalidResponse(f"XRANGE reply: {exc}") from None
        finally:
            view.release()
        if decoder.error is not None:
            raise conn._parser.parse_error(decoder.error)  # noqa: SLF001
        if filled:
            raise redis.InvalidResponse("unexpected bytes after an XRANGE reply")
        last = decoder.last_id
        return batches, sum(b.num_rows for b in batches), None if last is None else StreamID(*last)


def _receive(conn: Any, sock: socket.socket, view: memoryview, filled: int) -> int:
    try:
        got = sock.recv_into(view[filled:])
    except TimeoutError:
        raise redis.TimeoutError(f"Timeout reading from {conn._host_error()}") from None  # noqa: SLF001
    except OSError as exc:
        raise redis.ConnectionError(
            f"Error while reading from {conn._host_error()} : {exc.args}"  # noqa: SLF001
        ) from None
    if not got:
        raise redis.ConnectionError("Connection closed by server.")
    return got


def read_range(options: ReaderOptions, part: Any) -> Iterator[pa.RecordBatch]:
    if not isinstance(part, StreamRange):
        # A plan with no partition (no stream, an empty window) still runs one task:
        # PySpark hands it a bare `InputPartition(None)`, which reads nothing.
        return
    schema = arrow_schema(options.lossless)
    client = connect_routed(options.connection, reconnect=True)

    def retry(action: Callable[[], Any]) -> Any:
        return reconnecting(action, options, f"reading {part.stream}")

    ready: queue.Queue[Any] = queue.Queue(maxsize=PREFETCH_PAGES)
    stopping = threading.Event()
    produce: Callable[[], Iterator[Any]]
    finish: Callable[[Any], pa.RecordBatch]
    if XrangeDecoder is not None:
        produce = lambda: decoded_batches(client, part, options.chunk_size, schema, retry)  # noqa: E731
        finish = lambda batch: batch  # noqa: E731
    else:
        produce = lambda: pages(client, part, options.chunk_size, retry)  # noqa: E731
        finish = lambda page: entries_to_batch(part.stream, page, schema)  # noqa: E731

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
            items: Any = produce()  # (a generator: closed below if the reader stops)
            try:
                for item in items:
                    if not offer(item):
                        return
            finally:
                items.close()
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
            yield finish(item)
    finally:
        stopping.set()
        fetcher.join(timeout=options.connection.socket_timeout_s)
        client.close()
