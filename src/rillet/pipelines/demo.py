"""`rillet pipeline demo`: sensor readings -> stream -> Spark windowed aggregates -> stream + Parquet.

A producer thread XADDs readings shaped like the Redis streams tutorial's
(`sensor-id`, `temperature`); a Structured Streaming query computes per-sensor
averages, minima, maxima and counts over event-time windows with a watermark, and
writes each closed window to a result stream (exactly-once) and to Parquet. Without
`--url` it runs its own rillet server. It stops after `--duration` seconds (start-up
included) unless `--follow`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import redis

from rillet.client import set_retention
from rillet.pipelines.storage import HadoopFS, has_scheme, join, location
from rillet.spark.ids import parse_id

PRODUCER_TICK_S = 0.05
MIN_STREAMING_S = 15.0
DRAIN_TIMEOUT_S = 120.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="stream server URL (default: start an embedded rillet)")
    parser.add_argument(
        "--duration",
        type=float,
        default=45.0,
        help="total run time in seconds, Spark start-up included (default 45)",
    )
    parser.add_argument("--follow", action="store_true", help="run until Ctrl-C")
    parser.add_argument("--rate", type=int, default=2000, help="readings per second (2000)")
    parser.add_argument("--sensors", type=int, default=8, help="number of sensors (8)")
    parser.add_argument("--window", type=int, default=5, help="window length in seconds (5)")
    parser.add_argument("--watermark", type=int, default=2, help="allowed lateness, s (2)")
    parser.add_argument("--trigger", type=float, default=2.0, help="micro-batch every N s (2)")
    parser.add_argument("--stream", default="sensors", help="input stream (sensors)")
    parser.add_argument(
        "--retention",
        type=float,
        default=600.0,
        help="keep readings this many seconds (RILLET.XRETENTION; 0: keep all; default 600)",
    )
    parser.add_argument(
        "--result-stream", default="sensors:windows", help="output stream (sensors:windows)"
    )
    parser.add_argument(
        "--output",
        default=None,
        help="directory for Parquet and checkpoints (default var/demo/run-<time>)",
    )


@dataclass
class Producer:
    """XADDs sensor readings at a steady rate from a thread, pipelined per tick."""

    url: str
    stream: str
    rate: int
    sensors: int
    retention_s: float = 0.0
    produced: int = 0
    retention_note: str = ""
    error: BaseException | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        # One synchronous write first, so a server that cannot take XADD fails here,
        # before Spark spends its start-up time.
        client = redis.Redis.from_url(self.url, socket_timeout=10)
        try:
            client.execute_command(
                "XADD", self.stream, "*", "sensor-id", "sensor-1", "temperature", "20.00"
            )
            self.produced += 1
            self.retention_note = _keep_recent(client, self.stream, self.retention_s)
        finally:
            client.close()
        self._thread = threading.Thread(target=self._run, name="producer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        rng = random.Random(42)
        base = [18.0 + rng.random() * 6 for _ in range(self.sensors)]
        temps = list(base)
        client = redis.Redis.from_url(self.url, socket_timeout=10)
        started = time.monotonic()
        try:
            while not self._stop.is_set():
                due = int((time.monotonic() - started) * self.rate) - self.produced
                if due > 0:
                    pipe = client.pipeline(transaction=False)
                    for _ in range(min(due, self.rate)):
                        sensor = rng.randrange(self.sensors)
                        # A noisy reading that wanders around the sensor's own level.
                        temps[sensor] += 0.05 * (base[sensor] - temps[sensor]) + rng.gauss(0, 0.1)
                        pipe.execute_command(
                            "XADD",
                            self.stream,
                            "*",
                            "sensor-id",
                            f"sensor-{sensor + 1}",
                            "temperature",
                            f"{temps[sensor]:.2f}",
                        )
                    self.produced += len(pipe.execute())
                self._stop.wait(PRODUCER_TICK_S)
        except BaseException as exc:  # reported by the main loop, never silently lost
            self.error = exc
        finally:
            client.close()


def lag_from_progress(progress: dict[str, Any]) -> int | None:
    """Entries added to the source but not yet in a batch (the sum over streams)."""
    from rillet.spark.progress import source_lag

    lag = source_lag(progress)
    return sum(lag["perStream"].values()) if lag else None


def build_query(spark: Any, args: argparse.Namespace, url: str, out: str) -> Any:
    from pyspark.sql import functions as F

    readings = (
        spark.readStream.format("rillet")
        .option("url", url)
        .option("streams", args.stream)
        .option("startingPosition", "earliest")
        .option("maxEntriesPerTrigger", max(1000, args.rate * 20))
        .option("progressGroup", "rillet-demo")
        .load()
        .select(
            "ts",
            F.col("fields")["sensor-id"].alias("sensor"),
            F.col("fields")["temperature"].cast("double").alias("temperature"),
        )
    )
    windows = (
        readings.withWatermark("ts", f"{args.watermark} seconds")
        .groupBy(F.window("ts", f"{args.window} seconds"), "sensor")
        .agg(
            F.round(F.avg("temperature"), 3).alias("avg"),
            F.min("temperature").alias("min"),
            F.max("temperature").alias("max"),
            F.count("*").alias("count"),
        )
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "sensor",
            "avg",
            "min",
            "max",
            "count",
        )
    )
    parquet_dir = join(out, "windows")
    result_stream = args.result_stream
    sink_id = f"demo-{out.rstrip('/').rsplit('/', 1)[-1]}"

    def write_batch(batch: Any, batch_id: int) -> None:
        # Both writes are idempotent per batch id, so a replayed batch changes nothing.
        batch.persist()
        try:
            batch.write.mode("overwrite").parquet(join(parquet_dir, f"batch={batch_id}"))
            (
                batch.select(
                    F.date_format("window_start", "yyyy-MM-dd'T'HH:mm:ss'Z'").alias("window"),
                    "sensor",
                    F.col("avg").cast("string").alias("avg"),
                    F.col("min").cast("string").alias("min"),
                    F.col("max").cast("string").alias("max"),
                    F.col("count").cast("string").alias("count"),
                )
                .write.format("rillet")
                .option("url", url)
                .option("stream", result_stream)
                .option("exactlyOnce", "true")
                .option("sinkId", sink_id)
                .option("batchId", str(batch_id))
                .mode("append")
                .save()
            )
        finally:
            batch.unpersist()

    return (
        windows.writeStream.outputMode("append")
        .foreachBatch(write_batch)
        .option("checkpointLocation", join(out, "checkpoint"))
        .trigger(processingTime=f"{args.trigger} seconds")
        .queryName("rillet_demo")
        .start()
    )


def stop_between_batches(query: Any, timeout_s: float = 20.0) -> None:
    """Stop when no micro-batch is running: stopping mid-batch interrupts the Parquet
    write (harmless, the batch would be replayed) and makes Spark log stack traces."""
    deadline = time.monotonic() + timeout_s
    try:
        while query.isActive and time.monotonic() < deadline:
            if not query.status.get("isTriggerActive", False):
                break
            time.sleep(0.1)
    finally:
        query.stop()


class QueryFailed(RuntimeError):
    """The streaming query died or stopped on its own; the message has Spark's error."""


@dataclass
class Counters:
    """Rows per micro-batch, taken from the query's progress reports (keyed by batch id,
    so a report seen twice counts once and a late sweep catches what polling missed)."""

    rows: dict[int, int] = field(default_factory=dict)
    end_offset: str | None = None

    def update(self, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Record `reports`; return the ones not seen before, in batch order."""
        fresh = []
        for progress in sorted(reports, key=lambda p: p["batchId"]):
            batch = progress["batchId"]
            source = (progress.get("sources") or [{}])[0]
            if source.get("endOffset"):
                self.end_offset = source["endOffset"]
            if batch in self.rows:
                continue
            self.rows[batch] = int(progress.get("numInputRows") or 0)
            fresh.append(progress)
        return fresh

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    @property
    def batches(self) -> int:
        return sum(1 for rows in self.rows.values() if rows)

    def reached(self, stream: str, last_id: str | None) -> bool:
        """Whether the query's last reported end offset covers `last_id` of `stream`."""
        if last_id is None:
            return True
        if not self.end_offset:
            return False
        position = json.loads(self.end_offset).get(stream)
        if not isinstance(position, dict) or "id" not in position:
            return False
        return parse_id(position["id"]) >= parse_id(last_id)


def check_query(query: Any) -> None:
    """Raise QueryFailed when the query has died (or stopped without being asked to)."""
    error = query.exception()
    if error is not None:
        raise QueryFailed(f"the streaming query failed: {error}")
    if not query.isActive:
        raise QueryFailed("the streaming query stopped on its own (see Spark's log above)")


def _say(start: float, text: str) -> None:
    print(f"[{time.monotonic() - start:6.1f}s] {text}", flush=True)


def _report(start: float, counters: Counters, fresh: list[dict[str, Any]]) -> None:
    for progress in fresh:
        rows = int(progress.get("numInputRows") or 0)
        if rows == 0:
            continue
        lag = lag_from_progress(progress)
        rate = progress.get("processedRowsPerSecond") or 0.0
        _say(
            start,
            f"batch {progress['batchId']:3d}: {rows:7,} rows in ({rate:,.0f} rows/s), "
            f"total {counters.total:,}, lag {'?' if lag is None else f'{lag:,}'} entries",
        )


def _last_id(url: str, stream: str) -> str | None:
    client = redis.Redis.from_url(url, socket_timeout=10)
    try:
        if not client.exists(stream):
            return None
        info = client.execute_command("XINFO", "STREAM", stream)
    finally:
        client.close()
    pairs = dict(zip(info[0::2], info[1::2], strict=False)) if isinstance(info, list) else info
    value = pairs.get(b"last-generated-id", pairs.get("last-generated-id"))
    return value.decode() if isinstance(value, bytes) else value


def _keep_recent(client: redis.Redis, stream: str, retention_s: float) -> str:
    """The readings stream keeps only its recent past (rillet's RILLET.XRETENTION: the
    server trims by age on every XADD and in its cron, `hz` times a second); what it says."""
    if retention_s <= 0:
        return "readings are kept (no retention)"
    try:
        set_retention(client, stream, timedelta(seconds=retention_s))
    except redis.ResponseError as exc:  # a server other than rillet
        return f"readings are kept (retention not set: {exc})"
    return f"readings older than {retention_s:g} s are trimmed (RILLET.XRETENTION)"


def run(args: argparse.Namespace) -> int:
    from rillet.pipelines.cli import spark_conf
    from rillet.pipelines.servers import ServerStartError, free_port, rillet_server

    start = time.monotonic()
    default_out = Path("var") / "demo" / datetime.now().strftime("run-%Y%m%d-%H%M%S")
    out = location(args.output or default_out)
    if not has_scheme(out):
        Path(out).mkdir(parents=True, exist_ok=True)
    server = None
    url = args.url
    spark = None
    query = None
    producer = None
    counters = Counters()
    failure: BaseException | None = None
    stack = contextlib.ExitStack()
    try:
        if url is None:
            server = rillet_server(http_port=free_port())
            _say(start, f"starting an embedded rillet server on 127.0.0.1:{server.port}")
            try:
                server.start(timeout_s=30)
            except ServerStartError as exc:
                print(f"error: {exc}", flush=True)
                return 1
            url = server.url
            _say(start, f"console (streams, groups, lag): {server.console_url}"
                        f"  metrics: {server.console_url}metrics")
        producer = Producer(url, args.stream, args.rate, args.sensors, args.retention)
        producer.start()
        _say(
            start,
            f"producer: {args.rate} readings/s from {args.sensors} sensors -> {args.stream!r}",
        )
        _say(start, producer.retention_note)
        _say(start, f"starting Spark ({args.master}) ...")
        from rillet.spark.session import spark_session

        spark = stack.enter_context(spark_session(args.master, "rillet-demo", spark_conf(args)))
        _say(start, f"Spark {spark.version} ready; output in {out}")
        query = build_query(spark, args, url, out)
        _say(
            start,
            f"query: {args.window}s windows per sensor (avg/min/max/count), watermark "
            f"{args.watermark}s -> stream {args.result_stream!r} + Parquet",
        )
        deadline = max(start + args.duration, time.monotonic() + MIN_STREAMING_S)
        while args.follow or time.monotonic() < deadline:
            if producer.error is not None:
                raise RuntimeError(f"producer failed: {producer.error}") from producer.error
            check_query(query)
            _report(start, counters, counters.update(query.recentProgress))
            time.sleep(0.5)
        # Let the query catch up with everything produced, so the summary is complete.
        producer.stop()
        if producer.error is not None:
            raise RuntimeError(f"producer failed: {producer.error}") from producer.error
        target = _last_id(url, args.stream)
        _say(start, f"producer stopped; draining up to {target}")
        drain_deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while not counters.reached(args.stream, target):
            check_query(query)
            if time.monotonic() > drain_deadline:
                raise QueryFailed(
                    f"the query did not reach {target} within {DRAIN_TIMEOUT_S:.0f}s of the "
                    "producer stopping (too slow for this cluster? see its progress above)"
                )
            _report(start, counters, counters.update(query.recentProgress))
            time.sleep(0.5)
    except KeyboardInterrupt:
        print(flush=True)
        _say(start, "interrupted; stopping")
    except BaseException as exc:
        failure = exc
    finally:
        if producer is not None:
            producer.stop()
        if query is not None:
            try:
                if query.isActive:
                    stop_between_batches(query)
                counters.update(query.recentProgress)
                if failure is None and query.exception() is not None:
                    failure = QueryFailed(f"the streaming query failed: {query.exception()}")
            except Exception as exc:  # a dead JVM: the query's own failure matters more
                failure = failure or exc
        if spark is not None and url is not None:
            try:
                summarize(spark, url, args, out, start, producer, counters)
            except Exception as exc:  # the summary must not hide the run's own outcome
                print(f"(summary unavailable: {exc})", flush=True)
        stack.close()
        if server is not None:
            server.stop()
    if failure is not None:
        raise failure
    return 0


def summarize(
    spark: Any,
    url: str,
    args: argparse.Namespace,
    out: str,
    start: float,
    producer: Producer | None,
    counters: Counters,
) -> None:
    client = redis.Redis.from_url(url, socket_timeout=10)
    try:
        windows_out = client.xlen(args.result_stream)
        groups = client.xinfo_groups(args.stream) if client.exists(args.stream) else []
    finally:
        client.close()
    lag = next(
        (g.get("lag") for g in groups if g.get("name") in (b"rillet-demo", "rillet-demo")), None
    )
    elapsed = time.monotonic() - start
    print(flush=True)
    print("summary", flush=True)
    print(f"  run time            {elapsed:.1f}s", flush=True)
    print(f"  readings produced   {producer.produced if producer else 0:,}", flush=True)
    print(
        f"  readings processed  {counters.total:,} in {counters.batches} batches "
        "(from the query's progress)",
        flush=True,
    )
    print(
        f"  windows written     {windows_out:,} entries in stream {args.result_stream!r}",
        flush=True,
    )
    if lag is not None:
        print(
            f"  progress group lag  {lag:,} (XINFO GROUPS {args.stream}; Spark commits a "
            "batch's offsets when it plans the next one)",
            flush=True,
        )
    parquet = join(out, "windows")
    if HadoopFS(spark).list_names(parquet):
        from pyspark.sql import functions as F

        table = spark.read.parquet(parquet)
        print(f"  Parquet             {table.count():,} window rows in {parquet}", flush=True)
        per_sensor = (
            table.groupBy("sensor")
            .agg(
                F.sum("count").alias("readings"),
                F.round(F.sum(F.col("avg") * F.col("count")) / F.sum("count"), 2).alias("avg"),
                F.min("min").alias("min"),
                F.max("max").alias("max"),
            )
            .orderBy("sensor")
            .collect()
        )
        print(f"  {'sensor':<12}{'readings':>10}{'avg':>9}{'min':>9}{'max':>9}", flush=True)
        for row in per_sensor:
            print(
                f"  {row.sensor:<12}{row.readings:>10,}{row.avg:>9.2f}{row.min:>9.2f}{row.max:>9.2f}",
                flush=True,
            )
    else:
        print("  Parquet             no window closed yet (run longer than window + watermark)")
    print(
        "  note: windows still open behind the watermark at the end are not emitted (append mode)",
        flush=True,
    )
