"""The Kafka source's conveniences: startingTimestamp, endingPosition, minEntriesPerTrigger
with maxTriggerDelay, credentials, consumerGroup resume, minPartitions from 0-0, and lag
from progress (`source_lag`) and from `rillet lag`. Direct reader calls, no Spark jobs."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from rillet.pipelines.cli import main
from rillet.spark.batch_reader import RilletBatchReader
from rillet.spark.ids import SEQ_MAX, StreamID
from rillet.spark.options import OptionError, ReaderOptions
from rillet.spark.progress import source_lag
from rillet.spark.stream_reader import RilletStreamReader

pytestmark = pytest.mark.spark


def reader(url, batch=False, **options):
    raw = {"url": url, **{k: str(v) for k, v in options.items()}}
    parsed = ReaderOptions.parse(raw, batch=batch)
    return RilletBatchReader(parsed) if batch else RilletStreamReader(parsed)


def add(client, stream, first, last):
    pipe = client.pipeline(transaction=False)
    for i in range(first, last + 1):
        pipe.execute_command("XADD", stream, f"{i}-0", "n", str(i))
    pipe.execute()


def ids(r, start, end):
    batches = [b for p in r.partitions(start, end) for b in r.read(p)]
    return sorted(pa.Table.from_batches(batches).column("ms").to_pylist()) if batches else []


def test_option_parsing():
    opts = ReaderOptions.parse(
        {
            "streams": "a,b",
            "startingTimestamp": "1970-01-01T00:00:01Z",
            "endingPosition": '{"a": "20"}',
            "minEntriesPerTrigger": "10",
            "maxTriggerDelay": "30s",
            "rillet.username": "u",
            "rillet.password": "s3cret",
            "minPartitions": "4",
        }
    )
    assert opts.starting_timestamp_ms == 1000
    assert opts.last_id_of("a") == StreamID(20, SEQ_MAX) and opts.last_id_of("b").ms == 2**64 - 1
    assert (opts.min_entries_per_trigger, opts.max_trigger_delay_ms) == (10, 30_000)
    assert (opts.connection.username, opts.connection.password) == ("u", "s3cret")
    assert "s3cret" not in repr(opts.connection)
    assert opts.split.min_partitions == 4
    with pytest.raises(OptionError, match="maxTriggerDelay"):
        ReaderOptions.parse({"streams": "a", "maxTriggerDelay": "soon"})
    with pytest.raises(OptionError, match="endingPosition"):
        ReaderOptions.parse({"streams": "a", "endingPosition": "[1]"})


def test_starting_timestamp(client, url):
    add(client, "a", 100, 199)
    add(client, "b", 150, 159)
    r = reader(url, streams="a,b", startingTimestamp="155")
    start = r.initialOffset()
    assert ids(r, start, r.latestOffset(start, ReadAllAvailable())) == sorted(
        list(range(155, 200)) + list(range(155, 160))
    )
    # Before every entry: the same as earliest, ordinals included.
    early = reader(url, streams="a", startingTimestamp="1").initialOffset()
    assert early == reader(url, streams="a", startingPosition="earliest").initialOffset()


def test_ending_position_caps_a_batch_read(client, url):
    add(client, "a", 1, 50)
    add(client, "b", 1, 5)
    r = reader(url, batch=True, streams="a,b", endingPosition='{"a": "10-0"}')
    table = pa.Table.from_batches([b for p in r.partitions() for b in r.read(p)])
    assert table.num_rows == 15


def test_min_entries_wait_until_the_delay(client, url, monkeypatch):
    add(client, "s", 1, 3)
    r = reader(url, streams="s", startingPosition="earliest", minEntriesPerTrigger=5)
    r2 = reader(url, streams="s", startingPosition="earliest", minEntriesPerTrigger=5)
    start = r.initialOffset()
    assert r.latestOffset(start, ReadAllAvailable()) is start  # 3 < 5: wait
    add(client, "s", 4, 5)
    assert r.latestOffset(start, ReadAllAvailable())["s"]["id"] == "5-0"
    # After maxTriggerDelay a smaller batch runs anyway.
    r2.options = ReaderOptions.parse(
        {
            "url": url,
            "streams": "s",
            "startingPosition": "earliest",
            "minEntriesPerTrigger": "50",
            "maxTriggerDelay": "0ms",
        }
    )
    assert r2.latestOffset(start, ReadAllAvailable())["s"]["id"] == "5-0"


def test_consumer_group_resumes_a_new_checkpoint_where_the_group_is(client, url):
    add(client, "s", 1, 10)
    first = reader(url, streams="s", startingPosition="earliest", consumerGroup="g")
    start = first.initialOffset()
    end = first.latestOffset(start, ReadAllAvailable())
    first.commit(end)  # the query's commit moves the group
    add(client, "s", 11, 12)
    fresh = reader(url, streams="s", startingPosition="earliest", consumerGroup="g")
    resumed = fresh.initialOffset()
    assert resumed == {"s": {"id": "10-0", "entriesRead": 10}}
    assert ids(fresh, resumed, fresh.latestOffset(resumed, ReadAllAvailable())) == [11, 12]


def test_a_range_from_zero_is_split_and_read_once(client, url):
    add(client, "s", 1_000_000, 1_000_999)
    r = reader(url, streams="s", startingPosition='{"s": "0-0"}', entriesPerPartition=100)
    start = r.initialOffset()
    end = r.latestOffset(start, ReadAllAvailable())
    start = {"s": {"id": "0-0", "entriesRead": 0}}
    parts = r.partitions(start, end)
    assert len(parts) == 10
    assert ids(r, start, end) == list(range(1_000_000, 1_001_000))
    b = reader(url, batch=True, streams="s", minPartitions=4, entriesPerPartition=10**6)
    assert len(b.partitions()) == 4


def test_lag_from_progress_and_the_lag_command(client, url, tmp_path, capsys):
    progress = {
        "sources": [
            {
                "endOffset": json.dumps(
                    {"a": {"id": "5-0", "entriesRead": 5}, "b": {"id": "1-0", "entriesRead": 1}}
                ),
                "latestOffset": json.dumps(
                    {"a": {"id": "9-0", "entriesRead": 9}, "b": {"id": "1-0", "entriesRead": 1}}
                ),
            }
        ]
    }
    lag = source_lag(progress)
    assert lag["maxOffsetsBehindLatest"] == 4 and lag["minOffsetsBehindLatest"] == 0
    assert lag["avgOffsetsBehindLatest"] == 2.0
    assert source_lag({"sources": []}) == {}

    add(client, "a", 1, 9)
    r = reader(url, streams="a", startingPosition="earliest", progressGroup="g")
    start = r.initialOffset()
    r.commit(r.latestOffset(start, ReadAllAvailable()))
    add(client, "a", 10, 12)
    assert main(["lag", "--url", url, "--group", "g", "--streams", "a", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["streams"] == {"a": 3} and printed["maxOffsetsBehindLatest"] == 3
