"""rillet.spark: a PySpark data source for Redis Streams (format name `rillet`).

Reads are deterministic XRANGE ranges over checkpointed IDs, so Spark's replay gives
exactly-once processing; the sink XADDs at-least-once, or exactly-once with
`exactlyOnce=true`. Installing the package registers the format automatically
(through the top-level `pyspark_rillet` module); otherwise call `register(spark)`.

Reader options (`spark.readStream.format("rillet")` / `spark.read.format("rillet")`):
  url                   redis://host:port/db (default redis://127.0.0.1:6379/0)
  streams               comma list of keys and glob patterns (`sensors,orders:*`);
                        streams matching a pattern later are read from their start
  startingPosition      earliest | latest (streaming default) | {"stream": "<id>"}
                        (entries after the ID); batch reads default to earliest
  maxEntriesPerTrigger  admission control, split across streams
  failOnDataLoss        true: fail when unread entries were trimmed (default true)
  partitionsPerStream   fixed tasks per stream and batch (default 0: by size)
  entriesPerPartition   size of a task when splitting by size (default 100000)
  maxPartitionsPerStream  cap for splitting by size (default 32)
  chunkSize             XRANGE COUNT per round trip (default 10000)
  fieldsAs              map (map<string,string>) | pairs (lossless binary pairs)
  progressGroup         consumer group moved with XGROUP SETID on commit (for lag)
  startId / endId       inclusive ID bounds (batch); endId also caps a stream read
  from / to             time bounds, epoch ms or ISO-8601, `to` exclusive (batch)

Writer options (`df.write.format("rillet")` / `df.writeStream.format("rillet")`):
  url, stream (else a `stream` column), maxlen / minid (+ approximateTrim, default
  true), pipelineSize (1000), exactlyOnce, maxEntriesPerTransaction (10000),
  sinkId (default from checkpointLocation), batchId (batch writes), idColumn.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RilletDataSource", "build_session", "register"]


def register(spark: Any) -> None:
    """Register the `rillet` format on a session (needed only if auto-registration is off)."""
    from rillet.spark.source import RilletDataSource

    spark.dataSource.register(RilletDataSource)


def __getattr__(name: str) -> Any:
    # Lazy, so `import rillet.spark` works (and shows a clear error) without pyspark.
    if name == "RilletDataSource":
        from rillet.spark.source import RilletDataSource

        return RilletDataSource
    if name == "build_session":
        from rillet.spark.session import build_session

        return build_session
    raise AttributeError(name)
