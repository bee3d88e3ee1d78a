"""Lag of a query behind by a known amount, with Kafka's metric names: from its progress
(`source_lag`) and from every progress event (`LagListener`). PySpark gives Python
sources no way to fill `sources[].metrics`; the test pins that too, so a PySpark that
adds one is noticed."""

from __future__ import annotations

import time

import pytest

from rillet.spark.listener import LagListener
from rillet.spark.progress import source_lag

pytestmark = pytest.mark.spark

WAIT_S = 180


def add(client, stream, count):
    pipe = client.pipeline(transaction=False)
    for i in range(1, count + 1):
        pipe.execute_command("XADD", stream, f"{i}-0", "n", str(i))
    pipe.execute()


def wait_for(check):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"nothing after {WAIT_S}s")


def test_progress_and_listener_report_kafkas_lag_names(spark, client, url, tmp_path):
    add(client, "a", 1000)
    add(client, "b", 200)
    listener = LagListener()
    spark.streams.addListener(listener)
    query = (
        spark.readStream.format("rillet")
        .option("url", url)
        .option("streams", "a,b")
        .option("startingPosition", "earliest")
        .option("maxEntriesPerTrigger", "200")  # 100 per stream, then an hour's wait
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="1 hour")
        .start()
    )
    try:
        progress = wait_for(lambda: query.lastProgress)
        assert progress["numInputRows"] == 200
        expected = {
            "minOffsetsBehindLatest": 100,
            "avgOffsetsBehindLatest": 500.0,
            "maxOffsetsBehindLatest": 900,
            "perStream": {"a": 900, "b": 100},
        }
        assert source_lag(progress) == expected
        assert wait_for(lambda: listener.lag(query.id)) == expected
        assert not progress["sources"][0].get("metrics")  # see rillet.spark.listener
    finally:
        query.stop()
        spark.streams.removeListener(listener)
