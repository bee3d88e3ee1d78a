"""What rillet's stream policies cost (issue #30): with and without, side by side in one run.

redis-benchmark drives each case against a fresh server, the cases interleaved
over --reps repetitions; the medians and ratios are printed:

- `XADD s * f v` at -P 64: rillet without a policy, rillet with RILLET.XRETENTION
  (1 h: nothing ages, what the policy's bookkeeping costs), rillet with a 1 s
  retention (entries age out and are trimmed as the producer goes), and Redis
  8.2.3 (or 7.0) with `XADD s MINID ~ <id> * f v`, what a producer does there;
- `XREADGROUP GROUP g c COUNT 1 STREAMS s >` at -P 64 over a preloaded stream:
  rillet without and with RILLET.XDEADLETTER on the group, and Redis.

The target (docs/streams-policies.md): a policy costs at most 10% more than none.
A -n 100000 XADD run lasts ~0.1 s, so its figures move by ±10% from run to run:
--requests 500000 steadies them, and bench/command_instructions.py counts the
XADD cases without the machine's noise (ANALYSIS.md, issue #30).

    .venv/bin/python bench/stream_policies.py [--requests 200000] [--reps 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import redis

from rillet.bench.redisbench import run_redis_benchmark
from rillet.bench.servers import ServerKind, server_kinds, start_server

XADD = ["XADD", "s", "*", "f", "v"]
READ = ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"]


def _preload(client: redis.Redis, entries: int) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(entries):
        pipe.xadd("s", {"sensor-id": i % 1000, "temperature": "20.5"})
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    client.xgroup_create("s", "g", "0")


def _cases(args: argparse.Namespace) -> list[tuple[str, str, list[str], object]]:
    """(label, server kind, redis-benchmark command, setup(client) or None); a setup
    may answer the command to run instead."""
    hour, minid_age = 3_600_000, 1000

    def retention(ms: int):
        def setup(client: redis.Redis) -> None:
            client.xadd("s", {"f": "v"})
            client.execute_command("RILLET.XRETENTION", "s", ms)
        return setup

    def minid(client: redis.Redis) -> list[str]:  # Redis: the producer trims by age itself
        cutoff = int(time.time() * 1000) - minid_age
        return ["XADD", "s", "MINID", "~", str(cutoff), "*", "f", "v"]

    def groups(dead_letter: bool):
        def setup(client: redis.Redis) -> None:
            _preload(client, args.requests + 1000)
            if dead_letter:
                client.execute_command("RILLET.XDEADLETTER", "s", "g", 5, "s:dead")
        return setup

    return [
        ("XADD, no policy", "rillet", XADD, None),
        ("XADD, retention 1 h", "rillet", XADD, retention(hour)),
        ("XADD, retention 1 s", "rillet", XADD, retention(1000)),
        ("XADD MINID ~ (now-1s)", "redis", XADD, minid),
        ("XREADGROUP, no policy", "rillet", READ, groups(False)),
        ("XREADGROUP, dead-letter", "rillet", READ, groups(True)),
        ("XREADGROUP", "redis", READ, groups(False)),
    ]


def measure(kind: ServerKind, command: list[str], setup, requests: int) -> tuple[float, float]:
    """(ops/s, server CPU µs per op): the second moves much less with the machine's load."""
    server = start_server(kind)
    try:
        client = redis.Redis(port=server.port, socket_timeout=120)
        if setup is not None:
            command = setup(client) or command
        result = run_redis_benchmark(server.port, server.pid, requests=requests, pipeline=64,
                                     clients=50, command=list(command))
        return result.rps, result.server_us_per_op
    finally:
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=True)
    by_name = {kind.name: kind for kind in kinds}
    redis_kind = by_name.get("redis8") or by_name["redis"]
    cases = _cases(args)
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in cases}
    for _ in range(args.reps):
        for label, kind_name, command, setup in cases:
            kind = redis_kind if kind_name == "redis" else by_name["rillet"]
            runs[label].append(measure(kind, command, setup, args.requests))
    rate = {label: statistics.median(r for r, _ in values) for label, values in runs.items()}
    cpu = {label: statistics.median(c for _, c in values) for label, values in runs.items()}
    print(f"redis-benchmark -P 64 -c 50 -n {args.requests}, median of {args.reps}; "
          f"reference: {redis_kind.label}")
    for label, _, _, _ in cases:
        print(f"  {label:28s} {rate[label]:>12,.0f} ops/s {cpu[label]:>8.2f} server us/op")
    print("cost of a policy, with / without (target <= 1.10): time per op, server CPU per op")
    for with_policy, without in (("XADD, retention 1 h", "XADD, no policy"),
                                 ("XADD, retention 1 s", "XADD, no policy"),
                                 ("XREADGROUP, dead-letter", "XREADGROUP, no policy")):
        print(f"  {with_policy:28s} {rate[without] / rate[with_policy]:.2f}x "
              f"{cpu[with_policy] / cpu[without]:.2f}x")
    print("rillet / Redis: time per op, server CPU per op")
    for ours, theirs in (("XADD, retention 1 s", "XADD MINID ~ (now-1s)"),
                         ("XREADGROUP, dead-letter", "XREADGROUP")):
        print(f"  {ours:28s} {rate[theirs] / rate[ours]:.2f}x {cpu[ours] / cpu[theirs]:.2f}x")


if __name__ == "__main__":
    main()
