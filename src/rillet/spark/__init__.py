"""rillet.spark: a PySpark data source for Redis Streams (format name `rillet`).

Installing the package registers the format automatically (through the top-level
`pyspark_rillet` module); otherwise call `register(spark)`. `build_session()` makes a
session that also works on a cluster (see `rillet.spark.session`).

Delivery guarantees
  Source: exactly-once processing. A micro-batch is a checkpointed ID range
  `(start, end]` read with XRANGE, so a retried task or a replayed batch reads the same
  entries (as long as they are not trimmed: failOnDataLoss says so). With
  `consumerGroup`, a query without a checkpoint resumes where the group stands, and
  entries after the group's last commit are read again: at-least-once across
  checkpoints, exactly-once within one. The group is never used to deliver (no
  XREADGROUP/XACK): a range read is what makes replay exact.
  Sink: at-least-once (plain pipelined XADD), or exactly-once with `exactlyOnce=true`
  (each chunk in one MULTI with a marker key per sink/batch/partition/chunk).

Reader options (`spark.readStream.format("rillet")` / `spark.read.format("rillet")`):

  | option | meaning (default) | Kafka source equivalent |
  |---|---|---|
  | url | redis://[user:pass@]host:port/db; rediss:// for TLS; any node of a Redis Cluster reaches every shard (redis://127.0.0.1:6379/0) | kafka.bootstrap.servers |
  | rillet.username / rillet.password | credentials when the URL has none | kafka.sasl.jaas.config |
  | socketTimeout | seconds a reply may take (60) | kafka.request.timeout.ms |
  | reconnectTimeout | how long to ride out a server restart, backing off 0.1 s to 2 s; 0 fails at once (60s) | (reconnect.backoff.*; Kafka retries) |
  | streams | comma list of keys and glob patterns; later matches read from their start | subscribe / subscribePattern |
  | startingPosition | earliest, latest (streaming default), {"s": "<id>"} (after the ID); batch: earliest | startingOffsets |
  | startingTimestamp | epoch ms or ISO-8601: first entry at or after it, every stream | startingTimestamp |
  | endingPosition | batch: latest, or {"s": "<id>"} (inclusive) | endingOffsets |
  | startId / endId, from / to | inclusive ID bounds / time bounds (`to` exclusive); endId caps streams too | (none) |
  | maxEntriesPerTrigger | admission control, split across streams (none) | maxOffsetsPerTrigger |
  | minEntriesPerTrigger + maxTriggerDelay | wait for N entries, at most this long (0, 15m) | minOffsetsPerTrigger + maxTriggerDelay |
  | failOnDataLoss | fail when unread entries were trimmed (true) | failOnDataLoss |
  | entriesPerPartition | entries per task when splitting a range, in whole waves of the cores (1000000) | maxRecordsPerPartition |
  | minPartitions | at least this many tasks per read (0) | minPartitions |
  | maxPartitionsPerStream / partitionsPerStream | cap / fixed tasks per stream (32 / 0: by size) | (none) |
  | chunkSize | XRANGE COUNT per round trip (10000) | fetch sizes |
  | fieldsAs | map (map<string,string>) or pairs (lossless binary pairs) | (value is binary) |
  | progressGroup | consumer group moved (XGROUP SETID ... ENTRIESREAD) at each commit, for lag | (committed offsets) |
  | consumerGroup | progressGroup that is also the starting point of a new checkpoint | group.id (at-least-once) |
  | patternRefreshMs | how often patterns are re-scanned (5000) | metadata refresh |

  Columns: stream, id, ms, seq, ts (from the ID), fields: Kafka's topic, offset,
  timestamp and headers, all always present.

  Names are case-insensitive. An unknown option fails when the query is defined,
  naming the closest known one (`startingPositon` -> did you mean startingPosition?).
  The Kafka source's names in the right-hand column (subscribe, subscribePattern,
  startingOffsets, endingOffsets, maxOffsetsPerTrigger, minOffsetsPerTrigger,
  kafka.bootstrap.servers, ...) are refused with the rillet option to use, not
  aliased: their values take other forms (Kafka's offsets JSON is per partition, its
  pattern a regex). Spark's own `path` and `checkpointLocation` pass.

  Empty reads: a batch read of a missing stream, of a stream trimmed to nothing, or of
  a window or ID range with no entries returns an empty DataFrame (like a Kafka topic
  with no records). A listed key that holds another type fails the read with
  `WRONGTYPE key 'k' holds a hash, not a stream`: silent empty results would hide the
  mistake. Patterns match stream keys only (SCAN ... TYPE stream).

  Splitting: a range is cut into about entries/`entriesPerPartition` tasks on whole
  milliseconds between its first entry (one XRANGE COUNT 1 probe) and its end, so a
  range from `earliest` or 0-0 is split too; a bursty stream gets uneven tasks. Each
  task pages with XRANGE, keeping the next page in flight while Spark takes the last.
  With the compiled `rillet.spark._xrange_columns` (setup.py builds it; executors that
  import rillet from the shipped zip, or take rillet/compiled.py's pure path, go
  without it) replies are decoded from the socket straight into Arrow buffers,
  without a Python object per entry; otherwise hiredis parses them and
  `entries_to_batch` builds the columns.

  Server restarts: the driver's calls (initialOffset, latestOffset, partitions, ...)
  and each task's XRANGE pages retry a refused, reset or closed connection, and a
  LOADING reply, until `reconnectTimeout` has passed since the first failure; then
  the query fails with `ServerUnavailableError` naming host:port and the option. A
  retried page or plan is a function of fixed IDs, so exactly-once holds across the
  restart (provided the server kept the entries: appendfsync always, or failOnDataLoss
  says what was lost). Socket timeouts are not retried. progressGroup updates stay
  best-effort (a failed one is logged; the next commit moves the group). The sink does
  not use this: redis-py's own short retry applies there.

  Known Spark issue: two Python-data-source streaming queries started concurrently in
  one Spark application can intermittently fail a micro-batch with
  `IllegalStateException: Illegal size <n> of collection, expected <k>` while Spark
  serializes a task. That check is Scala's (a Scala collection changed size while Java
  serialization wrote it), in Spark's own task objects: rillet's readers reach the JVM
  only as pickled bytes, hold no shared state (one reader per query, partitions made
  fresh per call, only frozen options pickled). Workaround: run such queries one after
  the other, or each in its own driver process; a failed query restarted on its
  checkpoint resumes with the usual guarantees.

  Lag: PySpark 4.3's Python streaming sources cannot add per-source metrics to
  `StreamingQueryProgress.sources[].metrics` (Kafka's min/avg/maxOffsetsBehindLatest):
  the JVM side of a Python stream (PythonMicroBatchStream) does not implement
  ReportsSourceMetrics and the Python source runner has no metrics call, so
  `metrics` stays {}. Every progress report carries the ordinals to compute them:
  `rillet.spark.progress.source_lag(query.lastProgress)` returns Kafka's three names
  (plus perStream), `spark.streams.addListener(rillet.spark.listener.LagListener(cb))`
  computes them on every progress event for monitoring, `rillet lag --checkpoint DIR`
  or `--group G` prints them without Spark, and XINFO GROUPS shows a progressGroup's lag.

Writer options (`df.write.format("rillet")` / `df.writeStream.format("rillet")`):
  url, rillet.username/rillet.password, stream (else a `stream` column), maxlen / minid
  (+ approximateTrim, default true), pipelineSize (1000), exactlyOnce,
  maxEntriesPerTransaction (10000), sinkId (default from checkpointLocation), batchId
  (batch writes), idColumn, markerTtlSeconds (exactly-once markers' TTL, 7 days),
  socketTimeout. Unknown names fail as for readers; Kafka's `topic` names `stream`.

Tables of hashes (`spark.read.format("rillet").option("table", ...)`, `df.write...`):
given `table` or `keysPattern`, rows are hashes rather than stream entries
(`rillet.spark.hashes`, spark-redis's model; batch only).

  | option | meaning (default) | spark-redis equivalent |
  |---|---|---|
  | url, rillet.username / rillet.password, socketTimeout | as for streams | host, port, auth, dbNum |
  | table | rows are the hashes `<table>:<key>` (required to write) | table / save(path) |
  | keysPattern | read: any glob of hash keys instead of `<table>:*` | keys.pattern |
  | keyColumn | the column holding the key's suffix (write: a random key per row) | key.column |
  | ttl | write: seconds each key lives (0: no expiry) | ttl |
  | inferSchema | without a given schema: guess bigint/double/boolean (true), or strings | infer.schema |
  | sampleSize | hashes sampled to infer the schema (1000) | (a single random key) |
  | keysPerPartition / partitions | read tasks: one per N keys, whole waves of the cores (1000000) / a fixed count (0) | partitions.number |
  | scanCount | SCAN COUNT while listing keys (1000) | scan.count |
  | pipelineSize | HGETALLs, or DEL+HSET(+EXPIRE) rows, per round trip (1000) | max.pipeline.size |

  spark-redis's names in the right-hand column work as aliases (same values).
  mode("overwrite") deletes the table's hashes (not other types) before writing;
  append replaces a row's hash whole (DEL, then HSET of its non-null columns).
"""

from __future__ import annotations

from typing import Any

__all__ = ["RilletDataSource", "build_session", "register"]


def register(spark: Any) -> None:
    """Register the `rillet` format on a session, and on a local master make Spark's
    Python workers run this interpreter unless PYSPARK_PYTHON says otherwise."""
    from rillet.spark.session import pin_local_python
    from rillet.spark.source import RilletDataSource

    pin_local_python(spark)
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
