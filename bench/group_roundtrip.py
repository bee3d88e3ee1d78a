"""Consumer-group round trips through a client library: rillet beside redis-server in one run.

One redis-py client loops `XREADGROUP GROUP g c COUNT n STREAMS s >` then
`XACK s g <those n IDs>` (two round trips, not pipelined) over a preloaded
stream, with --pending entries already delivered and left unacknowledged as a
backlog (the PEL that every XACK and delivery updates). It reports round trips
(read + ack) per second and the server's CPU per round trip, read from /proc.
The servers run one after the other, interleaved over --reps repetitions;
medians and the rillet/redis ratios are printed.

    .venv/bin/python bench/group_roundtrip.py [--entries 300000] [--pending 0] [--count 10]
        [--reps 3] [--seconds 4] [--baseline /path/to/other/checkout/src]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import redis

from rillet.bench import procinfo
from rillet.bench.servers import (
    ServerKind,
    baseline_kind,
    measure_interleaved,
    server_kinds,
    start_server,
)


def load(client: redis.Redis, entries: int, pending: int) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(entries):
        pipe.xadd("s", {"sensor-id": i % 1000, "temperature": f"{20 + (i % 97) / 10:.1f}"})
        if i % 2000 == 1999:
            pipe.execute()
    pipe.execute()
    client.xgroup_create("s", "g", id="0")
    left = pending
    while left > 0:  # the backlog: delivered to another consumer, never acknowledged
        got = client.xreadgroup("g", "backlog", {"s": ">"}, count=min(1000, left))
        if not got:
            break
        left -= len(got[0][1])


def round_trips(client: redis.Redis, count: int, seconds: float) -> int:
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        got = client.xreadgroup("g", "worker", {"s": ">"}, count=count)
        if not got or not got[0][1]:
            raise SystemExit("the stream ran dry: raise --entries")
        client.xack("s", "g", *[sid for sid, _ in got[0][1]])
        done += 1
    return done


def measure(kind: ServerKind, args: argparse.Namespace) -> dict[str, float]:
    server = start_server(kind)
    try:
        client = redis.Redis(port=server.port, socket_timeout=120)
        load(client, args.entries, args.pending)
        round_trips(client, args.count, 0.5)  # warm-up
        cpu0, t0 = procinfo.cpu_seconds(server.pid), time.perf_counter()
        done = round_trips(client, args.count, args.seconds)
        elapsed = time.perf_counter() - t0
        cpu = procinfo.cpu_seconds(server.pid) - cpu0
        client.close()
        return {"rt_s": done / elapsed, "server_us_per_rt": cpu / done * 1e6}
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=300_000)
    parser.add_argument("--pending", type=int, default=0)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=False)
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    results = measure_interleaved(kinds, args.reps, lambda kind: measure(kind, args))
    print(f"redis-py XREADGROUP COUNT {args.count} + XACK round trips, {args.pending} pending"
          f" beside ({args.reps} interleaved reps, medians)\n")
    print("| server | round trips/s | server µs/round trip | ratio to redis (rate) |")
    print("|---|---|---|---|")
    medians = {}
    for kind in kinds:
        rows = results[kind.name]
        if rows:
            medians[kind.name] = (statistics.median(r["rt_s"] for r in rows),
                                  statistics.median(r["server_us_per_rt"] for r in rows))
    redis_rate = medians.get("redis", (None,))[0]
    for kind in kinds:
        if kind.name in medians:
            rate, cost = medians[kind.name]
            ratio = f"{rate / redis_rate:.2f}x" if redis_rate else "n/a"
            print(f"| {kind.label} | {rate:,.0f} | {cost:,.1f} | {ratio} |")
    if "rillet" in medians and "redis" in medians:
        print(f"\nrillet/redis server CPU efficiency: {medians['redis'][1] / medians['rillet'][1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
