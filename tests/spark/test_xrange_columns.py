"""The compiled XRANGE decoder against the reference path (hiredis lists -> entries_to_batch).

Offline cases feed hand-made RESP bytes split at every point; the live cases read the
same ranges from each `stream_server` with both decoders. Skipped when the compiled
module is not built (RILLET_PURE=1 or no compiler): the reference path is then the
only one.
"""

from __future__ import annotations

import hiredis
import pyarrow as pa
import pytest
import redis

from rillet.spark import reading
from rillet.spark.arrow import arrow_schema, columns_to_batch, entries_to_batch
from rillet.spark.ids import MAX, ZERO, StreamID
from rillet.spark.offsets import StreamRange
from rillet.spark.options import ReaderOptions

XrangeDecoder = reading.XrangeDecoder
pytestmark = pytest.mark.skipif(XrangeDecoder is None, reason="_xrange_columns is not built")


def bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def reply(entries: list[tuple[bytes, list[bytes] | None]]) -> bytes:
    out = [b"*%d\r\n" % len(entries)]
    for ident, fields in entries:
        out.append(b"*2\r\n" + bulk(ident))
        if fields is None:
            out.append(b"*-1\r\n")
        else:
            out.append(b"*%d\r\n" % len(fields) + b"".join(bulk(f) for f in fields))
    return b"".join(out)


def reference(raw: bytes, lossless: bool) -> pa.RecordBatch:
    parser = hiredis.Reader()
    parser.feed(raw)
    return entries_to_batch("s", parser.gets(), arrow_schema(lossless))


def decode(raw: bytes, lossless: bool, pieces: list[int], batch_bytes: int = 1 << 30):
    """Feed `raw` cut at `pieces` (ascending offsets); the batches taken along the way."""
    decoder = XrangeDecoder(check_names=not lossless, batch_bytes=batch_bytes)
    decoder.reset()
    buffer = bytearray(len(raw) + 16)
    filled = 0
    batches = []
    cuts = [*pieces, len(raw)]
    at = 0
    for cut in cuts:
        chunk = raw[at:cut]
        buffer[filled : filled + len(chunk)] = chunk
        filled += len(chunk)
        at = cut
        while True:
            if not decoder.done:
                filled = decoder.feed(buffer, filled)
            if decoder.batch_full or (decoder.done and decoder.rows_pending):
                batches.append(columns_to_batch("s", decoder.take(), arrow_schema(lossless)))
                continue
            break
    assert decoder.done and filled == 0
    return batches, decoder


ENTRIES = [
    (b"1-0", [b"a", b"1", b"b", b"2"]),
    (b"1-1", [b"a", b"x", b"a", b"y", b"c", b""]),  # a repeated name: the last one wins
    (b"2-0", []),
    (b"3-5", None),  # a nil field list, as a deleted entry's
    (b"18446744073709-7", [b"\xff\xfe", b"\x00bin\r\n", "é".encode(), "ü".encode()]),
    (b"18446744073710-0", [b"k%d" % (i % 70) for i in range(140) for _ in (0, 1)][:280]),
]


@pytest.mark.parametrize("lossless", [False, True])
def test_every_split_point_gives_the_reference_batch(lossless):
    raw = reply(ENTRIES[:5])
    want = reference(raw, lossless)
    for cut in range(len(raw) + 1):
        batches, _ = decode(raw, lossless, [cut])
        assert len(batches) == 1
        assert batches[0].equals(want), cut


@pytest.mark.parametrize("lossless", [False, True])
def test_wide_entries_and_byte_limited_batches(lossless):
    wide = [(b"%d-0" % i, [b"f%d" % (j % 80) for j in range(200)]) for i in range(1, 6)]
    raw = reply([*ENTRIES, *wide])
    want = reference(raw, lossless)
    whole, decoder = decode(raw, lossless, [])
    assert pa.Table.from_batches(whole).equals(pa.Table.from_batches([want]))
    assert decoder.last_id == (5, 0)
    small, _ = decode(raw, lossless, [7, 100, 1000], batch_bytes=300)
    assert len(small) > 3
    table = pa.Table.from_batches(small)
    assert table.equals(pa.Table.from_batches([want]).cast(table.schema))


def test_empty_error_and_garbage_replies():
    batches, decoder = decode(b"*0\r\n", False, [1, 2])
    assert batches == [] and decoder.last_id is None and decoder.error is None
    batches, decoder = decode(b"-WRONGTYPE Operation against a key\r\n", False, [3])
    assert batches == [] and decoder.error == "WRONGTYPE Operation against a key"
    for garbage in (b"+OK\r\n", b"*1\r\n*3\r\n", b"*1\r\n*2\r\n$3\r\nabc\r\n*0\r\n", b"*x\r\n"):
        decoder = XrangeDecoder()
        decoder.reset()
        with pytest.raises(ValueError):
            decoder.feed(bytearray(garbage), len(garbage))


def test_reset_drops_what_a_failed_reply_left():
    raw = reply(ENTRIES[:3])
    decoder = XrangeDecoder()
    decoder.reset()
    partial = bytearray(raw[:-3])
    decoder.feed(partial, len(partial))
    assert decoder.rows_pending == 2 and not decoder.done
    decoder.reset()  # a retried page starts afresh
    assert decoder.rows_pending == 0
    whole = bytearray(raw)
    assert decoder.feed(whole, len(whole)) == 0 and decoder.done
    assert columns_to_batch("s", decoder.take(), arrow_schema(False)).equals(reference(raw, False))


def test_ids_beyond_bigint_fail_as_the_reference_does():
    raw = reply([(b"9223372036854775808-0", [b"a", b"1"])])
    with pytest.raises(pa.ArrowInvalid):
        reference(raw, False)
    with pytest.raises(pa.ArrowInvalid):
        decode(raw, False, [])


# -- against the servers ---------------------------------------------------------


def read_both(url: str, part: StreamRange, **options) -> tuple[pa.Table, pa.Table]:
    opts = ReaderOptions.parse({"url": url, "streams": part.stream, **options}, batch=True)
    compiled = pa.Table.from_batches(list(reading.read_range(opts, part)), opts_schema(opts))
    saved = reading.XrangeDecoder
    reading.XrangeDecoder = None
    try:
        pure = pa.Table.from_batches(list(reading.read_range(opts, part)), opts_schema(opts))
    finally:
        reading.XrangeDecoder = saved
    return compiled, pure


def opts_schema(opts: ReaderOptions) -> pa.Schema:
    return arrow_schema(opts.lossless)


@pytest.mark.parametrize("fields_as", ["map", "pairs"])
def test_live_reads_agree_with_the_reference(client, url, fields_as):
    pipe = client.pipeline(transaction=False)
    for i in range(1, 1201):
        fields = ["n", str(i), "blob", b"\xff" * (i % 5), "n", "again"] if i % 7 == 0 else ["n", i]
        pipe.execute_command("XADD", "s", f"{i}-{i % 3}", *fields)
    pipe.execute()
    part = StreamRange("s", StreamID(100, 0), StreamID(1100, 5))
    for chunk in (1, 97, 5000):
        compiled, pure = read_both(url, part, chunkSize=chunk, fieldsAs=fields_as)
        assert compiled.num_rows == 1001  # 100-1 .. 1100-2
        assert compiled.combine_chunks().equals(pure.combine_chunks())
    # A range from the very start, and one holding nothing.
    compiled, pure = read_both(url, StreamRange("s", ZERO, MAX), chunkSize=500)
    assert compiled.num_rows == 1200 and compiled.combine_chunks().equals(pure.combine_chunks())
    compiled, _ = read_both(url, StreamRange("s", StreamID(5000, 0), MAX))
    assert compiled.num_rows == 0


def test_live_errors_raise_and_the_pool_stays_usable(client, url):
    client.set("notastream", "x")
    opts = ReaderOptions.parse({"url": url, "streams": "notastream"}, batch=True)
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        list(reading.read_range(opts, StreamRange("notastream", ZERO, MAX)))
    client.execute_command("XADD", "s", "1-0", "a", "1")
    client.execute_command("XADD", "s", "2-0", "a", "2")
    opts = ReaderOptions.parse({"url": url, "streams": "s", "chunkSize": "1"}, batch=True)
    rows = []
    for batch in reading.read_range(opts, StreamRange("s", ZERO, MAX)):
        rows.extend(batch.column("id").to_pylist())
        break  # a consumer that stops early: the connection is dropped, not reused
    assert rows == ["1-0"]
