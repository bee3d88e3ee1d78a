"""Double replies: server CPU per ZRANGE 0 99 WITHSCORES / ZSCORE, rillet beside redis-server.

Every score is a fraction with 15-17 significant digits (random()*1000), the case
where the formatting (fpconv's Grisu2 in Redis and in rillet) does the most work.
Commands go in pipelines of --depth over one connection; the server's CPU comes
from /proc. The servers run one after the other, interleaved over --reps
repetitions; medians and the rillet/redis ratios are printed.

    .venv/bin/python bench/double_replies.py [--ops 20000] [--depth 100] [--reps 3]
        [--baseline /path/to/other/checkout/src]   # a column for rillet from that tree
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys

from rillet.bench import procinfo
from rillet.bench.client import encode_command
from rillet.bench.servers import baseline_kind, measure_interleaved, server_kinds, start_server

CASES = {
    "ZRANGE 0 99 WITHSCORES": (2, ["ZRANGE", "z", "0", "99", "WITHSCORES"]),
    "ZRANGE 0 99 WITHSCORES (RESP3)": (3, ["ZRANGE", "z", "0", "99", "WITHSCORES"]),
    "ZSCORE": (2, ["ZSCORE", "z", "m42"]),
}


def measure(kind, args) -> dict[str, float]:
    server = start_server(kind)
    try:
        client = server.client()
        rnd = random.Random(7)
        pairs = [x for i in range(1000) for x in (repr(rnd.random() * 1000), f"m{i}")]
        client.call("ZADD", "z", *pairs)
        out = {}
        for name, (protocol, argv) in CASES.items():
            client.call("HELLO", protocol)
            payload = encode_command(argv) * args.depth
            rounds = max(1, args.ops // args.depth)
            client.send_raw(payload, args.depth)  # warm-up
            cpu0 = procinfo.cpu_seconds(server.pid)
            for _ in range(rounds):
                client.send_raw(payload, args.depth)
            cpu = procinfo.cpu_seconds(server.pid) - cpu0
            out[name] = cpu / (rounds * args.depth) * 1e6
        client.close()
        return out
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=True)
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    results = measure_interleaved(kinds, args.reps, lambda kind: measure(kind, args))
    print(f"server CPU us/op, {args.ops} ops per case in pipelines of {args.depth}"
          f" ({args.reps} interleaved reps, medians)\n")
    names = [kind.name for kind in kinds if results[kind.name]]
    labels = {kind.name: kind.label for kind in kinds}
    print("| case | " + " | ".join(labels[n] for n in names) + " | rillet/redis CPU |")
    print("|---|" + "---|" * (len(names) + 1))
    for case in CASES:
        medians = {n: statistics.median(r[case] for r in results[n]) for n in names}
        ratio = medians["rillet"] / medians["redis"] if "redis" in medians else float("nan")
        print(f"| {case} | " + " | ".join(f"{medians[n]:.2f}" for n in names)
              + f" | {ratio:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
