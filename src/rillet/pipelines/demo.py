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
from datetime import datetime
from pathlib import Path
from typing import Any

import redis

PRODUCER_TICK_S = 0.05
MIN_STREAMING_S = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="stream server URL (default: start an embedded rillet)")
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
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
    produced: int = 0
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


def _entries_read(offset_json: str | None) -> dict[str, int]:
    if not offset_json:
        return {}
    decoded = json.loads(offset_json)
    return {
        stream: value["entriesRead"]
        for stream, value in decoded.items()
        if isinstance(value, dict) and "entriesRead" in value
    }


def lag_from_progress(progress: dict[str, Any]) -> int | None:
    """Entries added to the source but not yet in a batch: latest minus end ordinals."""
    source = (progress.get("sources") or [{}])[0]
    latest = _entries_read(source.get("latestOffset"))
    end = _entries_read(source.get("endOffset"))
    if not latest or not end:
        return None
    return sum(max(0, latest[s] - end.get(s, 0)) for s in latest)


def build_query(spark: Any, args: argparse.Namespace, url: str, out: Path) -> Any:
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
    parquet_dir = out / "windows"
    result_stream = args.result_stream
    sink_id = f"demo-{out.name}"

    def write_batch(batch: Any, batch_id: int) -> None:
        # Both writes are idempotent per batch id, so a replayed batch changes nothing.
        batch.persist()
        try:
            batch.write.mode("overwrite").parquet(str(parquet_dir / f"batch={batch_id}"))
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
        .option("checkpointLocation", str(out / "checkpoint"))
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


def _say(start: float, text: str) -> None:
    print(f"[{time.monotonic() - start:6.1f}s] {text}", flush=True)


def run(args: argparse.Namespace) -> int:
    from rillet.pipelines.servers import ServerStartError, rillet_server

    start = time.monotonic()
    out = Path(args.output or Path("var") / "demo" / datetime.now().strftime("run-%Y%m%d-%H%M%S"))
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    server = None
    url = args.url
    spark = None
    query = None
    producer = None
    batches = rows_in = 0
    stack = contextlib.ExitStack()
    try:
        if url is None:
            server = rillet_server()
            _say(start, f"starting an embedded rillet server on 127.0.0.1:{server.port}")
            try:
                server.start(timeout_s=30)
            except ServerStartError as exc:
                print(f"error: {exc}", flush=True)
                return 1
            url = server.url
        producer = Producer(url, args.stream, args.rate, args.sensors)
        producer.start()
        _say(
            start,
            f"producer: {args.rate} readings/s from {args.sensors} sensors -> {args.stream!r}",
        )
        _say(start, f"starting Spark ({args.master}) ...")
        from rillet.spark.session import spark_session

        spark = stack.enter_context(spark_session(args.master, "rillet-demo"))
        _say(start, f"Spark {spark.version} ready; output in {out}")
        query = build_query(spark, args, url, out)
        _say(
            start,
            f"query: {args.window}s windows per sensor (avg/min/max/count), watermark "
            f"{args.watermark}s -> stream {args.result_stream!r} + Parquet",
        )
        deadline = max(start + args.duration, time.monotonic() + MIN_STREAMING_S)
        last_batch = -1
        while args.follow or time.monotonic() < deadline:
            if producer.error is not None:
                raise RuntimeError(f"producer failed: {producer.error}") from producer.error
            if query.exception() is not None:
                raise RuntimeError(f"query failed: {query.exception()}")
            for progress in query.recentProgress:
                if progress["batchId"] <= last_batch:
                    continue
                last_batch = progress["batchId"]
                rows = progress["numInputRows"]
                if rows == 0:
                    continue
                batches += 1
                rows_in += rows
                lag = lag_from_progress(progress)
                rate = progress.get("processedRowsPerSecond") or 0.0
                _say(
                    start,
                    f"batch {last_batch:3d}: {rows:7,} rows in ({rate:,.0f} rows/s), "
                    f"total {rows_in:,}, lag {'?' if lag is None else f'{lag:,}'} entries",
                )
            time.sleep(0.5)
    except KeyboardInterrupt:
        print(flush=True)
        _say(start, "interrupted; stopping")
    finally:
        if producer is not None:
            producer.stop()
        if query is not None:
            stop_between_batches(query)
        summary_ok = spark is not None and url is not None
        if summary_ok:
            try:
                summarize(spark, url, args, out, start, producer, batches, rows_in)
            except Exception as exc:  # the summary must not hide the run's own outcome
                print(f"(summary unavailable: {exc})", flush=True)
        stack.close()
        if server is not None:
            server.stop()
    return 0


def summarize(
    spark: Any,
    url: str,
    args: argparse.Namespace,
    out: Path,
    start: float,
    producer: Producer | None,
    batches: int,
    rows_in: int,
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
    print(f"  readings processed  {rows_in:,} in {batches} batches", flush=True)
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
    parquet = out / "windows"
    if parquet.exists() and any(parquet.iterdir()):
        from pyspark.sql import functions as F

        table = spark.read.parquet(str(parquet))
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
