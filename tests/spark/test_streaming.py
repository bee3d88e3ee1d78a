"""Structured Streaming end to end on the shared local[2] session (marked `spark`)."""

from __future__ import annotations

import pytest
import redis

pytestmark = pytest.mark.spark

QUERY_TIMEOUT_S = 180


def load(client, stream, first, last, **fields):
    pipe = client.pipeline(transaction=False)
    for i in range(first, last + 1):
        pairs = [x for kv in fields.items() for x in (kv[0], kv[1](i))] or ["n", str(i)]
        pipe.execute_command("XADD", stream, f"{i}-0", *pairs)
        if i % 1000 == 0:
            pipe.execute()
    pipe.execute()


def source(spark, url, streams, **options):
    reader = spark.readStream.format("rillet").option("url", url).option("streams", streams)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def finish(query):
    """Wait for an availableNow query, failing (not hanging) if it does not end."""
    done = query.awaitTermination(QUERY_TIMEOUT_S)
    if not done:
        query.stop()
        raise AssertionError(f"query {query.name} did not finish in {QUERY_TIMEOUT_S}s")
    return [(p["batchId"], p["numInputRows"]) for p in query.recentProgress]


def to_parquet(df, path, checkpoint):
    return (
        df.writeStream.format("parquet")
        .option("path", str(path))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )


def test_auto_registration(spark_session_info):
    _, auto_registered = spark_session_info
    assert auto_registered, "format('rillet') needed an explicit register() call"


def test_available_now_with_admission_control(spark, client, url, tmp_path):
    load(client, "s", 1000, 3999)
    df = source(
        spark,
        url,
        "s",
        startingPosition="earliest",
        maxEntriesPerTrigger=1000,
        partitionsPerStream=2,
    )
    batches = finish(to_parquet(df, tmp_path / "out", tmp_path / "ck"))
    assert [rows for _, rows in batches if rows] == [1000, 1000, 1000]
    out = spark.read.parquet(str(tmp_path / "out"))
    assert out.count() == 3000 and out.select("id").distinct().count() == 3000
    row = out.orderBy("ms").first()
    assert (row.stream, row.id, row.ms, row.seq, row.fields) == (
        "s",
        "1000-0",
        1000,
        0,
        {"n": "1000"},
    )


def test_restart_resumes_at_the_checkpointed_id(spark, client, url, tmp_path):
    load(client, "s", 1, 500)
    out, ck = tmp_path / "out", tmp_path / "ck"
    first = to_parquet(source(spark, url, "s", startingPosition="earliest"), out, ck)
    finish(first)
    end = first.lastProgress["sources"][0]["endOffset"]
    assert '"1-0"' not in end and '"500-0"' in end
    load(client, "s", 501, 800)
    second = to_parquet(source(spark, url, "s", startingPosition="earliest"), out, ck)
    batches = finish(second)
    assert sum(rows for _, rows in batches) == 300
    progress = [p for p in second.recentProgress if p["numInputRows"]][0]
    assert progress["sources"][0]["startOffset"] == end
    ms = [r.ms for r in spark.read.parquet(str(out)).select("ms").collect()]
    assert sorted(ms) == list(range(1, 801))


def test_fail_on_data_loss_stops_the_query(spark, client, url, tmp_path):
    load(client, "s", 1, 100)
    out, ck = tmp_path / "out", tmp_path / "ck"
    finish(to_parquet(source(spark, url, "s", startingPosition="earliest"), out, ck))
    load(client, "s", 101, 200)
    client.execute_command("XTRIM", "s", "MINID", "150")  # 101..149 never read
    failing = to_parquet(source(spark, url, "s"), out, ck)
    with pytest.raises(Exception, match="49 entries of stream 's' after 100-0 were removed"):
        failing.awaitTermination(QUERY_TIMEOUT_S)
    tolerant = to_parquet(source(spark, url, "s", failOnDataLoss="false"), out, ck)
    finish(tolerant)
    ms = sorted(r.ms for r in spark.read.parquet(str(out)).select("ms").collect())
    assert ms == list(range(1, 101)) + list(range(150, 201))


def test_windowed_aggregate_into_a_stream_exactly_once(spark, client, url, tmp_path):
    from pyspark.sql import functions as F

    # 4 sensors in turn, one reading per 100 ms for 10 s of event time (the ID's ms).
    t0 = 1_700_000_000_000
    pipe = client.pipeline(transaction=False)
    for i in range(100):
        pipe.execute_command(
            "XADD",
            "readings",
            f"{t0 + 100 * i}-0",
            "sensor-id",
            str(i % 4),
            "temperature",
            str(20 + i % 7),
        )
    pipe.execute()
    df = source(spark, url, "readings", startingPosition="earliest", maxEntriesPerTrigger=40)
    windows = (
        df.select(
            "ts",
            F.col("fields")["sensor-id"].alias("sensor"),
            F.col("fields")["temperature"].cast("double").alias("temperature"),
        )
        .withWatermark("ts", "1 second")
        .groupBy(F.window("ts", "2 seconds"), "sensor")
        .agg(F.count("*").alias("count"), F.avg("temperature").alias("avg"))
        .select(
            F.col("window.start").cast("string").alias("window"),
            "sensor",
            F.col("count").cast("string").alias("count"),
            F.format_number("avg", 3).alias("avg"),
        )
    )
    query = (
        windows.writeStream.format("rillet")
        .option("url", url)
        .option("stream", "windows")
        .option("exactlyOnce", "true")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .outputMode("append")
        .trigger(availableNow=True)
        .start()
    )
    finish(query)
    raw = redis.Redis(connection_pool=client.connection_pool)
    rows = raw.xrange("windows")
    # 10 s of data in 2 s windows: the watermark (max event time - 1 s) closes the first 4.
    assert len(rows) == 4 * 4
    counts = {(f[b"window"], f[b"sensor"]): int(f[b"count"]) for _, f in rows}
    assert len(counts) == 16 and set(counts.values()) == {5}  # 20 readings per window


def test_batch_read_time_range_and_batch_write(spark, client, url):
    load(client, "a", 1000, 1999)
    df = (
        spark.read.format("rillet")
        .option("url", url)
        .option("streams", "a")
        .option("from", "1200")
        .option("to", "1300")
        .load()
    )
    assert df.count() == 100
    (
        df.selectExpr("fields", "'copy' as target")
        .write.format("rillet")
        .option("url", url)
        .option("stream", "copy")
        .mode("append")
        .save()
    )
    assert client.xlen("copy") == 100
