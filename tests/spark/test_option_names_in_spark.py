"""A misspelt or Kafka-named option fails the read through Spark, naming the option
(not a silent read of nothing, or of everything at once)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark

QUERY_TIMEOUT_S = 180


def test_a_typo_fails_a_batch_read_naming_the_option(spark, client, url):
    client.execute_command("XADD", "s", "1-0", "n", "1")
    df = (
        spark.read.format("rillet")
        .option("url", url)
        .option("streams", "s")
        .option("startingPositon", "earliest")
        .load()
    )
    with pytest.raises(Exception, match="(?i)'startingPositon'; did you mean startingPosition"):
        df.collect()


def test_a_kafka_name_fails_a_streaming_query_naming_rillets(spark, client, url, tmp_path):
    client.execute_command("XADD", "s", "1-0", "n", "1")
    query = (
        spark.readStream.format("rillet")
        .option("url", url)
        .option("streams", "s")
        .option("maxOffsetsPerTrigger", "100")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        with pytest.raises(Exception, match="maxOffsetsPerTrigger is the Kafka source's"):
            if not query.awaitTermination(QUERY_TIMEOUT_S):
                raise AssertionError("the query neither failed nor finished")
    finally:
        query.stop()
