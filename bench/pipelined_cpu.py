"""Server CPU per pipelined small command: rillet beside redis-server, redis-benchmark -P 64.

    .venv/bin/python bench/pipelined_cpu.py [--requests 500000] [--reps 3] [--pipeline 64]
        [--baseline /path/to/other/checkout/src]   # a column for rillet from that tree

Each case is one redis-benchmark run (-c 50 -P 64, a fixed request count) against
a fresh server; the server's CPU comes from /proc (schedstat: all of it, user and
kernel; utime/stime ticks for the split). CPU per request moves much less with
the machine's load than requests per second does, so this is the figure to
compare two trees with on a shared machine. Servers run one after the other,
interleaved over --reps; medians are printed, with the ratio to Redis 8 when it
is there, and the load average beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from rillet.bench import procinfo
from rillet.bench.redisbench import run_redis_benchmark
from rillet.bench.servers import baseline_kind, measure_interleaved, server_kinds, start_server

CASES = {
    "PING_MBULK": {"tests": "ping_mbulk"},
    "SET": {"tests": "set"},
    "GET": {"tests": "get"},
    "XADD": {"command": ["XADD", "s", "*", "f", "v"]},
}


def _ticks(pid: int) -> tuple[float, float]:
    fields = procinfo._stat_fields(pid)
    return int(fields[11]) / procinfo._TICKS, int(fields[12]) / procinfo._TICKS


def measure(kind, args) -> dict[str, float]:
    out: dict[str, float] = {}
    for case, how in CASES.items():
        server = start_server(kind)
        try:
            run_redis_benchmark(server.port, None, requests=args.requests // 10,
                                pipeline=args.pipeline, **how)  # warm-up
            user0, sys0 = _ticks(server.pid)
            result = run_redis_benchmark(server.port, server.pid, requests=args.requests,
                                         pipeline=args.pipeline, **how)
            user1, sys1 = _ticks(server.pid)
        finally:
            server.cleanup()
        out[case] = result.server_us_per_op
        out[case + " user"] = (user1 - user0) / args.requests * 1e6
        out[case + " sys"] = (sys1 - sys0) / args.requests * 1e6
        out[case + " rps"] = result.rps
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500_000)
    parser.add_argument("--pipeline", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    parser.add_argument("--no-redis", action="store_true", help="rillet (and baseline) only")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=True)
    if args.no_redis:
        kinds = kinds[:1]
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    load_before = os.getloadavg()[0]
    results = measure_interleaved(kinds, args.reps, lambda kind: measure(kind, args))
    load_after = os.getloadavg()[0]
    print(f"server CPU us/op (user+sys from schedstat; user / sys from ticks), "
          f"{args.requests} requests per case, -c 50 -P {args.pipeline}, {args.reps} "
          f"interleaved reps, medians; load average {load_before:.2f} -> {load_after:.2f}"
          f" on {os.cpu_count()} cores\n")
    names = [kind.name for kind in kinds if results[kind.name]]
    labels = {kind.name: kind.label for kind in kinds}
    ref = "redis8" if "redis8" in names else None
    print("| case | " + " | ".join(labels[n] for n in names)
          + (f" | rillet/{labels[ref]} ops/s |" if ref else " |"))
    print("|---|" + "---|" * (len(names) + (1 if ref else 0)))
    for case in CASES:
        cells = []
        for n in names:
            rows = results[n]
            cells.append(f"{statistics.median(r[case] for r in rows):.3f} "
                         f"({statistics.median(r[case + ' user'] for r in rows):.2f} / "
                         f"{statistics.median(r[case + ' sys'] for r in rows):.2f})")
        line = f"| {case} | " + " | ".join(cells)
        if ref:
            ratio = (statistics.median(r[case + " rps"] for r in results["rillet"])
                     / statistics.median(r[case + " rps"] for r in results[ref]))
            line += f" | {ratio:.2f}x"
        print(line + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
