"""Writes in a keyspace where other keys hold TTLs: server CPU per request,
rillet beside redis-server in one run (and rillet before a change, with --baseline).

Real keyspaces nearly always hold some expiring keys (sessions, caches, locks).
The compiled command bodies used to hand every command to its Python body as soon
as the database held one (commands/_bodies.pxi, `_plain_for` now tests the
command's own key). Each server gets `--ttl-keys` string keys with a one-hour TTL
(`session:N`), then redis-benchmark -P 64 -c 50 -r 100000 runs LPUSH, HSET, SADD,
ZADD (-t) and `XADD mystream * f v` in turn on keys without a TTL. The figure is
server CPU per request (procinfo), the steady one on a shared machine; reps are
interleaved (rep 1 of every server, then rep 2...), medians shown with ratios.

    .venv/bin/python bench/ttl_keys.py [--ttl-keys 1000] [--reps 3] [--requests 100000]
                                       [--baseline OTHER_CHECKOUT/src]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from rillet.bench import procinfo
from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.servers import ServerUnavailable, baseline_kind, server_kinds, start_server

TESTS = {"LPUSH": ("lpush", None), "HSET": ("hset", None), "SADD": ("sadd", None),
         "ZADD": ("zadd", None), "XADD": (None, ["XADD", "mystream", "*", "f", "v"])}


def measure(kind, ttl_keys: int, requests: int) -> dict[str, float]:
    """Per test: server CPU us per request."""
    server = start_server(kind)
    try:
        client = server.client(timeout_s=60)
        client.pipeline([b"SET", b"session:%d" % i, b"v", b"EX", b"3600"] for i in range(ttl_keys))
        out = {}
        for name, (test, command) in TESTS.items():
            procinfo.wait_for_quiet(0.3, 5.0, exclude={server.pid})  # bounded: the machine is shared
            result = run_redis_benchmark(server.endpoint.port, server.pid, requests=requests,
                                         pipeline=64, tests=test, command=command,
                                         random_keyspace=100_000)
            out[name] = result.server_us_per_op
        expiring = client.call("INFO", "keyspace")
        if ttl_keys and b"expires=0" in expiring:
            raise BenchmarkFailed(f"{kind.label}: the TTL keys are missing: {expiring!r}")
        return out
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttl-keys", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--baseline", help="another checkout's src directory: rillet before a change")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=False)
    if args.baseline:
        kinds.insert(1, baseline_kind(args.baseline))
    cpu: dict[str, dict[str, list[float]]] = {k.label: {name: [] for name in TESTS} for k in kinds}
    for rep in range(args.reps):
        for kind in kinds:  # interleaved: every server once per rep
            try:
                for name, us in measure(kind, args.ttl_keys, args.requests).items():
                    cpu[kind.label][name].append(us)
            except (ServerUnavailable, BenchmarkFailed) as error:
                print(f"rep {rep + 1} {kind.name}: n/a: {error}", file=sys.stderr)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    labels = [k.label for k in kinds]
    redis = labels[-1]
    header = [*labels, *(f"{label}/{redis}" for label in labels[:-1])]
    if args.baseline:
        header.append("baseline/rillet")
    print(f"\n## Server CPU per request (us), {args.ttl_keys:,} other keys with TTLs, "
          f"redis-benchmark -P 64 -c 50 -r 100000, {args.requests:,} requests, median of {args.reps}\n")
    print("| test | " + " | ".join(header) + " |")
    print("|" + "---|" * (len(header) + 1))
    for name in TESTS:
        med = [statistics.median(cpu[label][name]) if cpu[label][name] else float("nan")
               for label in labels]
        row = [f"{m:.2f}" for m in med] + [f"{m / med[-1]:.2f}x" for m in med[:-1]]
        if args.baseline:
            row.append(f"{med[1] / med[0]:.2f}x")
        print(f"| {name} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
