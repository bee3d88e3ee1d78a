"""`rillet pipeline ingest`: files (CSV, JSON lines, Parquet) into a stream through the sink.

Each row becomes one entry: a `fields` map column is used as is, otherwise every column
becomes a field (CSV values stay text). With `--exactly-once` the write is keyed by the
input files' names, sizes and times, so re-running the same ingest adds nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

import redis

FORMATS = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", help="input files or directories")
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0", help="stream server URL")
    parser.add_argument("--stream", required=True, help="target stream")
    parser.add_argument("--format", choices=sorted(set(FORMATS.values())), help="input format")
    parser.add_argument("--id-column", help="column holding explicit entry IDs")
    parser.add_argument("--maxlen", type=int, help="cap the stream (XADD MAXLEN ~)")
    parser.add_argument("--exactly-once", action="store_true", help="re-runs add nothing")


def detect_format(paths: list[str], given: str | None) -> str:
    if given:
        return given
    kinds = {FORMATS.get(Path(p).suffix.lower()) for p in paths}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind is None:
        raise ValueError("cannot tell the input format from the file names: pass --format")
    return kind


def input_identity(paths: list[str]) -> str:
    """A stable sink id for exactly-once ingest: the inputs' paths, sizes and mtimes."""
    digest = hashlib.sha1()
    for path in sorted(paths):
        for file in sorted(Path(path).rglob("*")) if Path(path).is_dir() else [Path(path)]:
            if file.is_file():
                stat = file.stat()
                digest.update(f"{file.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return "ingest-" + digest.hexdigest()[:16]


def read_files(spark: Any, paths: list[str], kind: str) -> Any:
    reader = spark.read
    if kind == "csv":
        reader = reader.option("header", "true").option("inferSchema", "false")
    return reader.format(kind).load(paths)


def run(args: argparse.Namespace) -> int:
    from rillet.pipelines.cli import spark_conf
    from rillet.spark.session import spark_session

    started = time.monotonic()
    kind = detect_format(args.files, args.format)
    with spark_session(args.master, "rillet-ingest", spark_conf(args)) as spark:
        df = read_files(spark, args.files, kind)
        writer = df.write.format("rillet").option("url", args.url).option("stream", args.stream)
        if args.id_column:
            writer = writer.option("idColumn", args.id_column)
        if args.maxlen is not None:
            writer = writer.option("maxlen", str(args.maxlen))
        if args.exactly_once:
            writer = writer.option("exactlyOnce", "true").option("batchId", "0")
            writer = writer.option("sinkId", input_identity(args.files))
        client = redis.Redis.from_url(args.url, socket_timeout=60)
        try:
            before = client.xlen(args.stream)
            writer.mode("append").save()
            after = client.xlen(args.stream)
        finally:
            client.close()
    print(
        f"ingested {args.files} ({kind}) into {args.stream!r}: {after - before:,} entries "
        f"added, length now {after:,} ({time.monotonic() - started:.1f}s)",
        flush=True,
    )
    return 0
