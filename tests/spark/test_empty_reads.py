"""Batch reads that plan no partition return an empty DataFrame; a key of another type
fails with WRONGTYPE naming the key. Runs against each `stream_server`."""

from __future__ import annotations

import pytest
from pyspark.sql.datasource import InputPartition

from rillet.spark.batch_reader import RilletBatchReader
from rillet.spark.client import NotAStreamError
from rillet.spark.options import ReaderOptions

pytestmark = pytest.mark.spark

EMPTY_READS = {
    "missing stream": {"streams": "missing"},
    "trimmed to zero": {"streams": "trimmed"},
    "window with no entries": {"streams": "s", "from": "5000", "to": "6000"},
    "ID range with no entries": {"streams": "s", "startId": "20-0", "endId": "30-0"},
    "pattern matching nothing": {"streams": "nothing:*"},
}


@pytest.fixture
def data(client):
    for i in range(1, 11):
        client.execute_command("XADD", "s", f"{i}-0", "n", str(i))
    client.execute_command("XADD", "trimmed", "1-0", "n", "1")
    client.execute_command("XTRIM", "trimmed", "MAXLEN", "0")
    client.hset("profile", "name", "x")
    return client


def batch_reader(url, **options):
    return RilletBatchReader(ReaderOptions.parse({"url": url, **options}, batch=True))


@pytest.mark.parametrize("options", EMPTY_READS.values(), ids=EMPTY_READS.keys())
def test_no_partition_is_planned_and_the_placeholder_reads_nothing(data, url, options):
    reader = batch_reader(url, **options)
    assert reader.partitions() == []
    # Spark runs one task over `InputPartition(None)` when a plan has no partition.
    assert list(reader.read(InputPartition(None))) == []


def test_a_key_of_another_type_is_refused_by_name(data, url):
    with pytest.raises(NotAStreamError, match="WRONGTYPE key 'profile' holds a hash"):
        batch_reader(url, streams="s,profile").partitions()


def test_empty_reads_through_spark(spark, data, url):
    schema = None
    for name, options in EMPTY_READS.items():
        reader = spark.read.format("rillet").option("url", url)
        for key, value in options.items():
            reader = reader.option(key, value)
        df = reader.load()
        assert df.collect() == [], name
        schema = schema or df.schema
        assert df.schema == schema
    assert (
        spark.read.format("rillet").option("url", url).option("streams", "s").load().count() == 10
    )


def test_another_type_through_spark(spark, data, url):
    df = spark.read.format("rillet").option("url", url).option("streams", "profile").load()
    with pytest.raises(Exception, match="WRONGTYPE key 'profile' holds a hash, not a stream"):
        df.collect()
