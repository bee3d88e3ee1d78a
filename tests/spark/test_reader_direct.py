"""The stream and batch readers called directly (no query, no Spark session).

Runs against each `stream_server` (redis-server and rillet).
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from rillet.spark.batch_reader import RilletBatchReader
from rillet.spark.ids import StreamID
from rillet.spark.offsets import offset_from_json
from rillet.spark.options import ReaderOptions
from rillet.spark.stream_reader import DataLossError, RilletStreamReader


def make_reader(url, **options):
    raw = {"url": url, **{k: str(v) for k, v in options.items()}}
    return RilletStreamReader(ReaderOptions.parse(raw))


def add(client, stream, first, last, **extra):
    pipe = client.pipeline(transaction=False)
    for i in range(first, last + 1):
        pipe.execute_command("XADD", stream, f"{i}-0", "n", str(i), *sum(extra.items(), ()))
    pipe.execute()


def read_all(reader, start, end):
    table = pa.Table.from_batches(
        [b for part in reader.partitions(start, end) for b in reader.read(part)]
    )
    return table


def test_initial_offsets(client, url):
    add(client, "s", 10, 14)
    client.execute_command("XADD", "empty", "1-0", "a", "b")
    client.execute_command("XTRIM", "empty", "MAXLEN", "0")
    earliest = make_reader(url, streams="s,empty,missing", startingPosition="earliest")
    assert earliest.initialOffset() == {
        "empty": {"id": "1-0", "entriesRead": 1},
        "missing": {"id": "0-0", "entriesRead": 0},
        "s": {"id": f"9-{2**64 - 1}", "entriesRead": 0},
    }
    latest = make_reader(url, streams="s", startingPosition="latest")
    assert latest.initialOffset() == {"s": {"id": "14-0", "entriesRead": 5}}
    by_id = make_reader(url, streams="s", startingPosition='{"s": "12-0"}')
    assert by_id.initialOffset() == {"s": {"id": "12-0"}}


def test_latest_offset_all_available_and_no_new_data(client, url):
    add(client, "s", 1, 5)
    reader = make_reader(url, streams="s", startingPosition="earliest")
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == {"s": {"id": "5-0", "entriesRead": 5}}
    assert reader.latestOffset(end, ReadAllAvailable()) is end
    table = read_all(reader, start, end)
    assert table.column("id").to_pylist() == [f"{i}-0" for i in range(1, 6)]
    assert table.column("ms").to_pylist() == [1, 2, 3, 4, 5]
    assert table.column("fields").to_pylist()[0] == [("n", "1")]
    reader.stop()


def test_max_rows_is_split_across_streams(client, url):
    add(client, "a", 1, 10)
    add(client, "b", 1, 10)
    reader = make_reader(url, streams="a,b", startingPosition="earliest", maxEntriesPerTrigger=6)
    assert reader.getDefaultReadLimit() == ReadMaxRows(6)
    start = reader.initialOffset()
    first = reader.latestOffset(start, ReadMaxRows(6))
    assert first == {"a": {"id": "3-0", "entriesRead": 3}, "b": {"id": "3-0", "entriesRead": 3}}
    second = reader.latestOffset(first, ReadMaxRows(100))
    assert offset_from_json(second)["a"].id == StreamID(10, 0)
    assert read_all(reader, first, second).num_rows == 14
    reader.stop()


def test_available_now_freezes_the_target(client, url):
    add(client, "s", 1, 3)
    reader = make_reader(url, streams="s", startingPosition="earliest")
    start = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    add(client, "s", 4, 6)
    assert reader.latestOffset(start, ReadAllAvailable()) == {"s": {"id": "3-0", "entriesRead": 3}}
    reader.stop()


def test_partitions_split_a_busy_stream_and_read_each_entry_once(client, url):
    add(client, "s", 1000, 1999)
    reader = make_reader(
        url, streams="s", startingPosition="earliest", entriesPerPartition=300, chunkSize=77
    )
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    parts = reader.partitions(start, end)
    assert len(parts) == 4
    assert parts == reader.partitions(start, end)
    ids = []
    for part in parts:
        for batch in reader.read(part):
            ids.extend(batch.column("id").to_pylist())
    assert ids == [f"{i}-0" for i in range(1000, 2000)]
    reader.stop()


def test_lossless_pairs_keep_duplicate_fields_and_bytes(client, url):
    client.execute_command("XADD", "d", "1-0", "a", "1", "a", "2", "b", b"\xff\x00")
    reader = make_reader(url, streams="d", startingPosition="earliest", fieldsAs="pairs")
    start = reader.initialOffset()
    table = read_all(reader, start, reader.latestOffset(start, ReadAllAvailable()))
    assert table.column("fields").to_pylist() == [
        [
            {"field": b"a", "value": b"1"},
            {"field": b"a", "value": b"2"},
            {"field": b"b", "value": b"\xff\x00"},
        ]
    ]
    mapped = make_reader(url, streams="d", startingPosition="earliest")
    start = mapped.initialOffset()
    table = read_all(mapped, start, mapped.latestOffset(start, ReadAllAvailable()))
    # A Spark map cannot repeat a key: the last value wins, as in redis-py's dicts.
    assert table.column("fields").to_pylist()[0] == [("a", "2"), ("b", "\ufffd\x00")]


def test_fail_on_data_loss(client, url):
    add(client, "s", 1, 5)
    reader = make_reader(url, streams="s", startingPosition="earliest")
    read_to = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    add(client, "s", 6, 10)
    client.execute_command("XTRIM", "s", "MINID", "6")  # only read entries: fine
    assert offset_from_json(reader.latestOffset(read_to, ReadAllAvailable()))["s"].id == (10, 0)
    client.execute_command("XTRIM", "s", "MINID", "8")  # 6 and 7 were never read
    with pytest.raises(DataLossError, match="2 entries of stream 's' after 5-0"):
        reader.latestOffset(read_to, ReadAllAvailable())
    # A restarted query only has the checkpointed JSON; the ordinal in it is enough.
    fresh = make_reader(url, streams="s")
    with pytest.raises(DataLossError):
        fresh.latestOffset({"s": {"id": "5-0", "entriesRead": 5}}, ReadAllAvailable())
    tolerant = make_reader(url, streams="s", failOnDataLoss="false")
    end = tolerant.latestOffset(read_to, ReadAllAvailable())
    assert read_all(tolerant, read_to, end).column("ms").to_pylist() == [8, 9, 10]


def test_recreated_stream_is_data_loss(client, url):
    add(client, "s", 100, 105)
    reader = make_reader(url, streams="s", startingPosition="latest")
    start = reader.initialOffset()
    client.delete("s")
    add(client, "s", 1, 2)
    with pytest.raises(DataLossError, match="recreated"):
        reader.latestOffset(start, ReadAllAvailable())


def test_patterns_pick_up_new_streams_from_their_start(client, url):
    add(client, "sensor:1", 1, 2)
    client.set("sensor:not-a-stream", "x")
    reader = make_reader(url, streams="sensor:*", startingPosition="latest", patternRefreshMs=0)
    start = reader.initialOffset()
    assert list(start) == ["sensor:1"]
    add(client, "sensor:2", 1, 3)
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end["sensor:2"] == {"id": "3-0", "entriesRead": 3}
    assert read_all(reader, start, end).num_rows == 3


def test_progress_group_mirrors_commit(client, url):
    add(client, "s", 1, 5)
    reader = make_reader(url, streams="s", startingPosition="earliest", progressGroup="spark")
    end = reader.latestOffset(reader.initialOffset(), ReadMaxRows(3))
    reader.commit(end)
    add(client, "s", 6, 6)
    (info,) = client.xinfo_groups("s")
    assert info["name"] == b"spark" and info["last-delivered-id"] == b"3-0"
    assert info["entries-read"] == 3 and info["lag"] == 3 and info["pending"] == 0
    reader.commit(reader.latestOffset(end, ReadAllAvailable()))
    assert client.xinfo_groups("s")[0]["lag"] == 0


def test_batch_reader_id_and_time_ranges(client, url):
    add(client, "a", 1000, 1999)
    add(client, "b", 1500, 1509)

    def batch(**opts):
        raw = {"url": url, "streams": "a,b", **{k: str(v) for k, v in opts.items()}}
        reader = RilletBatchReader(ReaderOptions.parse(raw, batch=True))
        parts = reader.partitions()
        return parts, pa.Table.from_batches([b for p in parts for b in reader.read(p)])

    parts, table = batch(entriesPerPartition=400)
    assert table.num_rows == 1010 and len(parts) == 4  # a: 3 tasks, b: 1
    _, table = batch(startId="1500", endId="1504")
    assert sorted(table.column("id").to_pylist()) == sorted(
        [f"{i}-0" for i in range(1500, 1505)] * 2
    )
    _, table = batch(**{"from": "1995", "to": "2000"})
    assert table.column("ms").to_pylist() == [1995, 1996, 1997, 1998, 1999]


def test_a_future_starting_id_waits_for_entries_after_it(client, url):
    add(client, "s", 1, 5)
    reader = make_reader(url, streams="s", startingPosition='{"s": "100-0"}')
    start = reader.initialOffset()
    assert reader.latestOffset(start, ReadAllAvailable()) is start
    add(client, "s", 99, 101)
    end = reader.latestOffset(start, ReadAllAvailable())
    assert read_all(reader, start, end).column("ms").to_pylist() == [101]
