"""`rillet pipeline archive`: move entries older than a cutoff into Parquet, then trim them.

The copy is an availableNow streaming query capped at the cutoff (`endId`), written by
Spark's file sink partitioned by stream and date, with its own checkpoint: a re-run
resumes after what is already archived and adds nothing. Only then, and only up to the
offset in the checkpoint's last *committed* batch, does it run `XTRIM MINID` (exact), so
nothing is trimmed that is not in committed Parquet files: every file the sink's log
lists is checked through Hadoop's FileSystem first, and local files are fsynced by a
Spark job. Output and checkpoint may be any Hadoop URI (file:, hdfs:, s3a: ...).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import redis

from rillet.pipelines.storage import FileSystem, HadoopFS, LocalFS, join, location
from rillet.spark.ids import StreamID, format_id, next_id, parse_id, prev_id
from rillet.spark.offsets import StreamPosition, offset_from_json
from rillet.spark.options import parse_timestamp_ms

DURATION_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0", help="stream server URL")
    parser.add_argument("--streams", required=True, help="comma list of streams and patterns")
    cutoff = parser.add_mutually_exclusive_group(required=True)
    cutoff.add_argument("--older-than", help="archive entries older than this age (7d, 12h, 30m)")
    cutoff.add_argument(
        "--before", help="archive entries before this ID (ms-seq) or time (epoch ms, ISO-8601)"
    )
    parser.add_argument("--output", required=True, help="Parquet directory (created)")
    parser.add_argument("--checkpoint", help="checkpoint directory (default OUTPUT/_checkpoint)")
    parser.add_argument("--no-trim", action="store_true", help="archive only, never XTRIM")
    parser.add_argument(
        "--allow-data-loss",
        action="store_true",
        help="continue when unarchived entries were already trimmed by someone else",
    )


def parse_age_ms(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|h|d)?\s*", text)
    if not match:
        raise ValueError(f"invalid age {text!r}: expected e.g. 90s, 30m, 12h, 7d")
    return int(match.group(1)) * DURATION_UNITS_MS[match.group(2) or "s"]


def cutoff_id(older_than: str | None, before: str | None, now_ms: int) -> StreamID:
    """The first ID that is NOT archived."""
    if older_than is not None:
        return StreamID(max(0, now_ms - parse_age_ms(older_than)), 0)
    assert before is not None
    if re.fullmatch(r"\s*\d+-\d+\s*", before):
        return parse_id(before)
    return StreamID(parse_timestamp_ms(before, "--before"), 0)


def committed_offset(
    checkpoint: str | Path, fs: FileSystem | None = None
) -> dict[str, StreamPosition] | None:
    """The source offset of the last batch whose commit-log entry exists.

    `offsets/N` is written before batch N runs; `commits/N` only after its output is
    committed. Trimming must follow the latter. `fs` reads the checkpoint wherever it
    is (HadoopFS); the driver's filesystem by default.
    """
    fs = fs or LocalFS()
    base = str(checkpoint)
    names = fs.list_names(join(base, "commits"))
    done = [int(name) for name in names or () if name.isdigit()]
    if not done:
        return None
    lines = fs.read_text(join(base, "offsets", str(max(done)))).splitlines()
    # v1, then the batch metadata JSON, then one line per source.
    return offset_from_json(json.loads(lines[2]))


class ArchiveIncompleteError(RuntimeError):
    """A Parquet file the sink committed is missing or has the wrong size: nothing is trimmed."""


def committed_files(output: str, fs: FileSystem) -> list[tuple[str, int]]:
    """(path, size) of every file the file sink's metadata log lists as committed."""
    names = fs.list_names(join(output, "_spark_metadata"))
    files: dict[str, int] = {}
    for name in sorted(names or ()):
        if name.startswith(".") or name.endswith(".crc"):
            continue
        for line in fs.read_text(join(output, "_spark_metadata", name)).splitlines()[1:]:
            try:
                entry = json.loads(line)
                files[entry["path"]] = int(entry.get("size", -1))
            except (ValueError, KeyError, TypeError):
                continue
    return sorted(files.items())


def _fsync_local(path: str) -> int:
    """Executor side: fsync a `file:` output file if this machine has it (1) or not (0)."""
    local = urlparse(path).path
    if not local or not os.path.exists(local):
        return 0
    fd = os.open(local, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return 1


def make_durable(spark: Any, output: str) -> tuple[int, int]:
    """Check every committed Parquet file through Hadoop, then make `file:` ones durable.

    Every file in the sink's log must exist with its logged size (else nothing may be
    trimmed). Distributed filesystems and object stores have the data durable when the
    writer's close() returns; local files are fsynced by a Spark job, so on a cluster
    the executors that can see them do it, not the driver. Returns (checked, synced).
    """
    fs = HadoopFS(spark)
    files = committed_files(output, fs)
    bad = [(path, size, fs.size(path)) for path, size in files]
    bad = [b for b in bad if b[2] is None or (b[1] >= 0 and b[1] != b[2])]
    if bad:
        path, want, got = bad[0]
        raise ArchiveIncompleteError(
            f"{len(bad)} committed Parquet file(s) missing or truncated, e.g. {path} "
            f"(logged size {want}, found {got}); not trimming"
        )
    local = [path for path, _ in files if urlparse(path).scheme in ("", "file")]
    synced = 0
    if local:
        slices = max(1, min(len(local), spark.sparkContext.defaultParallelism))
        synced = int(spark.sparkContext.parallelize(local, slices).map(_fsync_local).sum())
    return len(files), synced


def trim_archived(
    client: redis.Redis, committed: dict[str, StreamPosition], last_id: StreamID
) -> dict[str, int]:
    """XTRIM MINID (exact) each stream just past its committed position, never past the cutoff."""
    removed: dict[str, int] = {}
    for stream, pos in sorted(committed.items()):
        upto = min(pos.id, last_id)
        if upto == StreamID(0, 0):
            removed[stream] = 0
            continue
        removed[stream] = int(
            client.execute_command("XTRIM", stream, "MINID", "=", format_id(next_id(upto)))
        )
    return removed


def archive_query(spark: Any, url: str, streams: str, last_id: StreamID, args: Any) -> Any:
    from pyspark.sql import functions as F

    df = (
        spark.readStream.format("rillet")
        .option("url", url)
        .option("streams", streams)
        .option("startingPosition", "earliest")
        .option("endId", format_id(last_id))
        .option("failOnDataLoss", "false" if args.allow_data_loss else "true")
        .load()
        .withColumn("date", F.to_date("ts"))
    )
    return (
        df.writeStream.format("parquet")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
        .partitionBy("stream", "date")
        .trigger(availableNow=True)
        .start()
    )


def run(args: argparse.Namespace) -> int:
    from rillet.pipelines.cli import spark_conf
    from rillet.spark.session import spark_session

    started = time.monotonic()
    args.output = location(args.output)
    args.checkpoint = (
        location(args.checkpoint) if args.checkpoint else join(args.output, "_checkpoint")
    )
    cut = cutoff_id(args.older_than, args.before, int(time.time() * 1000))
    last_id = prev_id(cut)
    print(f"archiving entries before {cut} from {args.streams!r} to {args.output}", flush=True)
    with spark_session(args.master, "rillet-archive", spark_conf(args)) as spark:
        query = archive_query(spark, args.url, args.streams, last_id, args)
        query.awaitTermination()  # raises StreamingQueryException if the query died
        if query.exception() is not None:
            raise RuntimeError(f"archive query failed: {query.exception()}")
        archived = sum(p["numInputRows"] for p in query.recentProgress)
        print(f"archived {archived:,} entries this run", flush=True)
        committed = committed_offset(args.checkpoint, HadoopFS(spark))
        if args.no_trim or not committed:
            print("nothing trimmed", flush=True)
            return 0
        checked, synced = make_durable(spark, args.output)
        client = redis.Redis.from_url(args.url, socket_timeout=60)
        try:
            removed = trim_archived(client, committed, last_id)
        finally:
            client.close()
        for stream, count in removed.items():
            upto = min(committed[stream].id, last_id)
            print(f"  {stream}: XTRIM MINID {next_id(upto)} removed {count:,}", flush=True)
        print(
            f"done in {time.monotonic() - started:.1f}s ({checked} committed Parquet files "
            f"checked, {synced} fsynced)",
            flush=True,
        )
        return 0
