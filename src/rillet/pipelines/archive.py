"""`rillet pipeline archive`: move entries older than a cutoff into Parquet, then trim them.

The copy is an availableNow streaming query capped at the cutoff (`endId`), written by
Spark's file sink partitioned by stream and date, with its own checkpoint: a re-run
resumes after what is already archived and adds nothing. Only then, and only up to the
offset in the checkpoint's last *committed* batch, does it run `XTRIM MINID` (exact), so
nothing is trimmed that is not in committed Parquet files (fsynced first when local).
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

from rillet.spark.ids import StreamId, format_id, next_id, parse_id, prev_id
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
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
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


def cutoff_id(older_than: str | None, before: str | None, now_ms: int) -> StreamId:
    """The first ID that is NOT archived."""
    if older_than is not None:
        return StreamId(max(0, now_ms - parse_age_ms(older_than)), 0)
    assert before is not None
    if re.fullmatch(r"\s*\d+-\d+\s*", before):
        return parse_id(before)
    return StreamId(parse_timestamp_ms(before, "--before"), 0)


def committed_offset(checkpoint: Path) -> dict[str, StreamPosition] | None:
    """The source offset of the last batch whose commit-log entry exists.

    `offsets/N` is written before batch N runs; `commits/N` only after its output is
    committed. Trimming must follow the latter.
    """
    commits = checkpoint / "commits"
    if not commits.is_dir():
        return None
    done = [int(p.name) for p in commits.iterdir() if p.name.isdigit()]
    if not done:
        return None
    lines = (checkpoint / "offsets" / str(max(done))).read_text().splitlines()
    # v1, then the batch metadata JSON, then one line per source.
    return offset_from_json(json.loads(lines[2]))


def fsync_committed_files(output: Path) -> int:
    """fsync every file the sink's metadata log lists (local paths); returns the count."""
    metadata = output / "_spark_metadata"
    if not metadata.is_dir():
        return 0
    synced = 0
    for log_file in metadata.iterdir():
        if log_file.name.startswith(".") or log_file.name.endswith(".crc"):
            continue
        for line in log_file.read_text().splitlines()[1:]:
            try:
                path = urlparse(json.loads(line)["path"]).path
            except (ValueError, KeyError):
                continue
            if path and os.path.exists(path):
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                synced += 1
    return synced


def trim_archived(
    client: redis.Redis, committed: dict[str, StreamPosition], last_id: StreamId
) -> dict[str, int]:
    """XTRIM MINID (exact) each stream just past its committed position, never past the cutoff."""
    removed: dict[str, int] = {}
    for stream, pos in sorted(committed.items()):
        upto = min(pos.id, last_id)
        if upto == StreamId(0, 0):
            removed[stream] = 0
            continue
        removed[stream] = int(
            client.execute_command("XTRIM", stream, "MINID", "=", format_id(next_id(upto)))
        )
    return removed


def archive_query(spark: Any, url: str, streams: str, last_id: StreamId, args: Any) -> Any:
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
        .option("path", str(args.output))
        .option("checkpointLocation", str(args.checkpoint))
        .partitionBy("stream", "date")
        .trigger(availableNow=True)
        .start()
    )


def run(args: argparse.Namespace) -> int:
    from rillet.spark.session import spark_session

    started = time.monotonic()
    args.output = Path(args.output).resolve()
    args.checkpoint = (
        Path(args.checkpoint).resolve() if args.checkpoint else args.output / "_checkpoint"
    )
    cut = cutoff_id(args.older_than, args.before, int(time.time() * 1000))
    last_id = prev_id(cut)
    print(f"archiving entries before {cut} from {args.streams!r} to {args.output}", flush=True)
    with spark_session(args.master, "rillet-archive") as spark:
        query = archive_query(spark, args.url, args.streams, last_id, args)
        query.awaitTermination()
        archived = sum(p["numInputRows"] for p in query.recentProgress)
        print(f"archived {archived:,} entries this run", flush=True)
        committed = committed_offset(args.checkpoint)
        if args.no_trim or not committed:
            print("nothing trimmed", flush=True)
            return 0
        synced = fsync_committed_files(args.output)
        client = redis.Redis.from_url(args.url, socket_timeout=60)
        try:
            removed = trim_archived(client, committed, last_id)
        finally:
            client.close()
        for stream, count in removed.items():
            upto = min(committed[stream].id, last_id)
            print(f"  {stream}: XTRIM MINID {next_id(upto)} removed {count:,}", flush=True)
        print(
            f"done in {time.monotonic() - started:.1f}s ({synced} Parquet files synced)", flush=True
        )
        return 0
