"""Bulk stream reads through a client library: rillet beside redis-server in one run.

A redis-py client pages through a stream with `XRANGE key (last + COUNT n`
(the Spark connector's read pattern, COUNT 10,000 by default) and reports
entries per second, with the server's CPU per entry read from /proc. The
servers run one after the other, interleaved over --reps repetitions;
medians and the rillet/redis ratio are printed.

    .venv/bin/python bench/read_path.py [--entries 200000] [--count 10000] [--reps 3]
        [--baseline /path/to/other/checkout/src]   # a third column: rillet from that tree
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import redis

from rillet.bench import procinfo
from rillet.bench.servers import (
    baseline_kind,
    measure_interleaved,
    server_kinds,
    start_server,
)


def load(client: redis.Redis, entries: int) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(entries):
        pipe.xadd("s", {"sensor-id": i % 1000, "temperature": f"{20 + (i % 97) / 10:.1f}"})
        if i % 2000 == 1999:
            pipe.execute()
    pipe.execute()


def scan(client: redis.Redis, count: int) -> int:
    """Read the whole stream page by page; returns the entries read."""
    read, last = 0, "-"
    while True:
        page = client.xrange("s", min=last, max="+", count=count)
        if not page:
            return read
        read += len(page)
        last = "(" + page[-1][0].decode()


def measure(kind, args) -> dict[str, float]:
    server = start_server(kind)
    try:
        client = redis.Redis(port=server.port, socket_timeout=120)
        load(client, args.entries)
        scan(client, args.count)  # warm-up
        cpu0, t0 = procinfo.cpu_seconds(server.pid), time.perf_counter()
        total = 0
        while time.perf_counter() - t0 < args.seconds:
            total += scan(client, args.count)
        elapsed = time.perf_counter() - t0
        cpu = procinfo.cpu_seconds(server.pid) - cpu0
        client.close()
        return {"entries_s": total / elapsed, "server_ns_per_entry": cpu / total * 1e9}
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=False)
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    results = measure_interleaved(kinds, args.reps, lambda kind: measure(kind, args))
    print(f"redis-py XRANGE COUNT {args.count} paging through {args.entries} entries"
          f" ({args.reps} interleaved reps, medians)\n")
    print("| server | entries/s | server ns/entry |")
    print("|---|---|---|")
    medians = {}
    for kind in kinds:
        rows = results[kind.name]
        if not rows:
            continue
        rate = statistics.median(r["entries_s"] for r in rows)
        cost = statistics.median(r["server_ns_per_entry"] for r in rows)
        medians[kind.name] = (rate, cost)
        print(f"| {kind.label} | {rate:,.0f} | {cost:,.0f} |")
    if "rillet" in medians and "redis" in medians:
        rate_ratio = medians["rillet"][0] / medians["redis"][0]
        cpu_ratio = medians["redis"][1] / medians["rillet"][1]
        print(f"\nrillet/redis: {rate_ratio:.2f}x entries/s, {cpu_ratio:.2f}x server CPU efficiency")
    return 0


if __name__ == "__main__":
    sys.exit(main())
