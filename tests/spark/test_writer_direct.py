"""The writers called directly with Arrow batches (no query, no Spark session)."""

from __future__ import annotations

import pyarrow as pa
import pytest
import redis

from rillet.spark.options import OptionError, WriterOptions
from rillet.spark.writer import RilletStreamWriter, RilletWriter, WriteResult, cleanup_markers


def writer(cls, url, columns, **options):
    raw = {"url": url, **{k: str(v) for k, v in options.items()}}
    return cls(WriterOptions.parse(raw), columns)


def entries(client, stream):
    """XRANGE as raw pairs lists (redis-py's parser would fold duplicate fields)."""
    raw = redis.Redis(connection_pool=client.connection_pool)
    raw.response_callbacks.clear()
    return [(i.decode(), fields) for i, fields in raw.execute_command("XRANGE", stream, "-", "+")]


MAP = pa.map_(pa.string(), pa.string())


def test_map_column_and_plain_columns(client, url):
    batch = pa.record_batch(
        {"fields": pa.array([[("a", "1"), ("b", "2")], [("c", "3")], None], MAP), "x": [1, 2, 3]}
    )
    result = writer(RilletWriter, url, batch.schema.names, stream="m").write(iter([batch]))
    assert (result.written, result.empty) == (2, 1)
    assert [f for _, f in entries(client, "m")] == [[b"a", b"1", b"b", b"2"], [b"c", b"3"]]

    plain = pa.record_batch(
        {"sensor": ["s1", None], "temp": [19.5, 20.0], "ok": [True, False], "raw": [b"\x00", b"y"]}
    )
    result = writer(RilletWriter, url, plain.schema.names, stream="p").write(iter([plain]))
    assert result.written == 2
    assert [f for _, f in entries(client, "p")] == [
        [b"sensor", b"s1", b"temp", b"19.5", b"ok", b"true", b"raw", b"\x00"],
        [b"temp", b"20", b"ok", b"false", b"raw", b"y"],
    ]


def test_stream_column_targets_rows_and_option_wins(client, url):
    batch = pa.record_batch({"stream": ["a", "b", "a"], "v": ["1", "2", "3"]})
    writer(RilletWriter, url, batch.schema.names).write(iter([batch]))
    assert client.xlen("a") == 2 and client.xlen("b") == 1
    writer(RilletWriter, url, batch.schema.names, stream="c").write(iter([batch]))
    assert client.xlen("c") == 3  # the `stream` column is then an ordinary field
    assert entries(client, "c")[0][1] == [b"stream", b"a", b"v", b"1"]
    with pytest.raises(OptionError, match="target"):
        writer(RilletWriter, url, ["v"])


def test_duplicate_field_pairs_and_trim(client, url):
    pairs = pa.list_(pa.struct([("field", pa.binary()), ("value", pa.binary())]))
    rows = [[{"field": b"a", "value": b"1"}, {"field": b"a", "value": b"2"}]] * 5
    batch = pa.record_batch({"fields": pa.array(rows, pairs)})
    w = writer(RilletWriter, url, ["fields"], stream="d", maxlen=3, approximateTrim="false")
    assert w.write(iter([batch])).written == 5
    assert client.xlen("d") == 3
    assert entries(client, "d")[0][1] == [b"a", b"1", b"a", b"2"]


def test_explicit_ids_make_replays_idempotent(client, url):
    batch = pa.record_batch({"id": ["1-0", "2-0", "3-0"], "v": ["a", "b", "c"]})
    w = writer(RilletWriter, url, batch.schema.names, stream="e", idColumn="id")
    first = w.write(iter([batch]))
    again = w.write(iter([batch]))
    assert (first.written, again.written, again.duplicates) == (3, 0, 3)
    assert [i for i, _ in entries(client, "e")] == ["1-0", "2-0", "3-0"]
    assert entries(client, "e")[0][1] == [b"v", b"a"]


def test_exactly_once_chunks_replay_and_cleanup(client, url):
    batch = pa.record_batch({"v": [str(i) for i in range(10)]})
    opts = dict(stream="eo", exactlyOnce="true", sinkId="t1", maxEntriesPerTransaction=4)
    # An attempt that died after committing its first chunk (rows 0-3) ...
    crashed = writer(RilletStreamWriter, url, ["v"], batchId=7, **opts).write(
        iter([batch.slice(0, 4)])
    )
    assert (crashed.batch_id, crashed.partition, crashed.written) == (7, 0, 4)
    # ... is replayed: only the chunks it had not committed are written.
    first = writer(RilletStreamWriter, url, ["v"], batchId=7, **opts).write(iter([batch]))
    assert (first.written, first.duplicates) == (6, 4)
    assert first.markers == [f"rillet:sink:t1:7:0:{n}" for n in range(3)]
    again = writer(RilletStreamWriter, url, ["v"], batchId=7, **opts).write(iter([batch]))
    assert (again.written, again.duplicates) == (0, 10)
    assert [f[1] for _, f in entries(client, "eo")] == [str(i).encode() for i in range(10)]
    assert client.ttl("rillet:sink:t1:7:0:0") > 0

    sink = writer(RilletStreamWriter, url, ["v"], **opts)
    sink.commit([first], 7)
    later = writer(RilletStreamWriter, url, ["v"], batchId=8, **opts).write(iter([batch]))
    sink.commit([later, None], 8)
    assert client.exists(*first.markers) == 0
    assert client.exists(*later.markers) == 3


def test_exactly_once_batch_write_needs_batch_id(client, url):
    batch = pa.record_batch({"v": ["1"]})
    w = writer(RilletWriter, url, ["v"], stream="x", exactlyOnce="true", sinkId="s")
    with pytest.raises(OptionError, match="batchId"):
        w.write(iter([batch]))
    with pytest.raises(OptionError, match="sinkId"):
        writer(RilletWriter, url, ["v"], stream="x", exactlyOnce="true")


def test_cleanup_ignores_failed_tasks(client, url):
    from rillet.spark.client import connect
    from rillet.spark.options import ConnectionOptions

    raw = connect(ConnectionOptions(url=url))
    cleanup_markers(raw, "z", 0, [None, WriteResult(partition=0, batch_id=0, markers=["k"])])
    assert client.get("rillet:sink:z:markers") is not None
