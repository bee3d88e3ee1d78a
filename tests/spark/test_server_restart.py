"""A server restart does not kill a query: the source reconnects with backoff, bounded by
`reconnectTimeout`, and every entry still arrives exactly once; past the bound the
error names the server and the option (marked `spark`)."""

from __future__ import annotations

import time

import pytest
import redis

from rillet.pipelines.servers import free_port, rillet_server
from rillet.spark.batch_reader import RilletBatchReader
from rillet.spark.client import ServerUnavailableError
from rillet.spark.options import ReaderOptions

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]

WAIT_S = 300


def add(client, first, last):
    pipe = client.pipeline(transaction=False)
    for i in range(first, last + 1):
        pipe.execute_command("XADD", "src", f"{i}-0", "n", str(i))
    pipe.execute()


def test_giving_up_names_the_server_and_the_option():
    port = free_port()  # nothing listens there
    reader = RilletBatchReader(
        ReaderOptions.parse(
            {"url": f"redis://127.0.0.1:{port}", "streams": "s", "reconnectTimeout": "1s"},
            batch=True,
        )
    )
    with pytest.raises(ServerUnavailableError, match=f"127.0.0.1:{port}.*reconnectTimeout=1s"):
        reader.partitions()


def test_wrong_credentials_are_not_retried(url):
    raw = {"url": url, "streams": "s", "reconnectTimeout": "10m"}
    raw.update({"rillet.username": "nobody", "rillet.password": "wrong"})
    reader = RilletBatchReader(ReaderOptions.parse(raw, batch=True))
    # Retrying would end in ServerUnavailableError after ten minutes.
    with pytest.raises(redis.AuthenticationError):
        reader.partitions()


def test_a_query_rides_out_a_server_kill_and_restart(spark, tmp_path):
    server = rillet_server()
    data = tmp_path / "data"
    data.mkdir()
    server.argv += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(data)]
    server.start(timeout_s=60)
    client = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=30)
    out = tmp_path / "out"
    query = None
    try:
        add(client, 1, 2000)
        query = (
            spark.readStream.format("rillet")
            .option("url", server.url)
            .option("streams", "src")
            .option("startingPosition", "earliest")
            .option("maxEntriesPerTrigger", "200")
            .option("reconnectTimeout", "120s")
            .load()
            .select("id", "ms")
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(tmp_path / "ck"))
            .start()
        )
        deadline = time.monotonic() + WAIT_S
        while (query.lastProgress or {}).get("batchId", -1) < 1:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)

        server.proc.kill()  # kill -9, mid-query
        server.proc.wait(30)
        time.sleep(1)  # the query meets the dead server before it is back
        server.start(timeout_s=120)
        client = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=30)
        add(client, 2001, 3000)

        rows = 0
        while rows < 3000:
            assert query.exception() is None, query.exception()
            assert query.isActive and time.monotonic() < deadline, f"{rows} rows"
            time.sleep(2)
            rows = spark.read.parquet(str(out)).count() if (out / "_spark_metadata").exists() else 0
        ms = sorted(r.ms for r in spark.read.parquet(str(out)).select("ms").collect())
        assert ms == list(range(1, 3001))  # every entry, once
    finally:
        if query is not None:
            query.stop()
        server.stop()
