"""HyperLogLog and geo throughput, rillet beside redis-server in one run.

Each case sends its commands pipelined (--pipeline per round trip) on one
connection to a fresh server, and prints operations per second for every
server and rillet's ratio to Redis:

- PFADD of 10 new elements to a sparse HLL (the opcode walk), then to a dense one;
- PFCOUNT of one key with a stale cache (every count recomputed: PFADD before it),
  of one key with a valid cache, and of the union of three keys;
- PFMERGE of two dense HLLs and of two sparse ones into a new key;
- GEOADD of 5 points, GEOSEARCH BYRADIUS WITHDIST in a 10,000-point set, and
  GEOSEARCH with COUNT 10 (the partial sort).

    .venv/bin/python bench/hll_geo.py [--seconds 2] [--pipeline 16] [--servers rillet,redis,redis8]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from rillet.bench.client import SyncClient, encode_command
from rillet.bench.servers import ServerUnavailable, server_kinds, start_server

Command = list[bytes | str]


def _rate(client: SyncClient, make: Callable[[int], Command], seconds: float, pipeline: int) -> float:
    done = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        payload = b"".join(encode_command(make(done + i)) for i in range(pipeline))
        client.send_raw(payload, pipeline)
        done += pipeline
    return done / (time.perf_counter() - started)


def _setup(client: SyncClient) -> None:
    client.call("FLUSHALL")
    rng = random.Random(1)
    for key, n in (("dense1", 20000), ("dense2", 20000), ("sparse1", 300), ("sparse2", 300)):
        for start in range(0, n, 1000):
            client.call("PFADD", key, *[f"{key}-{i}" for i in range(start, min(n, start + 1000))])
    for start in range(0, 10000, 500):
        args: list[str] = []
        for i in range(start, start + 500):
            args += [f"{rng.uniform(-20, 40):.6f}", f"{rng.uniform(30, 60):.6f}", f"p{i}"]
        client.call("GEOADD", "points", *args)


def cases() -> list[tuple[str, Callable[[int], Command]]]:
    return [
        ("PFADD 10 elements, sparse (key reset every 150)",
         lambda n: ["PFADD", f"s{n // 150}", *[f"e{n}-{j}" for j in range(10)]]),
        ("PFADD 10 elements, dense", lambda n: ["PFADD", "dense1", *[f"d{n}-{j}" for j in range(10)]]),
        ("PFADD + PFCOUNT, stale cache (2 commands)",
         lambda n: ["PFADD", "dense2", f"x{n // 2}"] if n % 2 == 0 else ["PFCOUNT", "dense2"]),
        ("PFCOUNT, cached", lambda n: ["PFCOUNT", "sparse1"]),
        ("PFCOUNT union of 3", lambda n: ["PFCOUNT", "dense1", "dense2", "sparse1"]),
        ("PFMERGE 2 dense", lambda n: ["PFMERGE", f"m{n % 100}", "dense1", "dense2"]),
        ("PFMERGE 2 sparse", lambda n: ["PFMERGE", f"ms{n % 100}", "sparse1", "sparse2"]),
        ("GEOADD 5 points", lambda n: ["GEOADD", "adds", *[x for j in range(5) for x in (
            f"{(n * 7 + j) % 359 - 179}.5", f"{(n * 3 + j) % 169 - 84}.25", f"a{n}-{j}")]]),
        ("GEOSEARCH 100 km WITHDIST (10k points)",
         lambda n: ["GEOSEARCH", "points", "FROMLONLAT", f"{n % 60 - 20}", "45", "BYRADIUS", "100", "km",
                    "WITHDIST"]),
        ("GEOSEARCH 500 km COUNT 10",
         lambda n: ["GEOSEARCH", "points", "FROMLONLAT", f"{n % 60 - 20}", "45", "BYRADIUS", "500", "km",
                    "COUNT", "10"]),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--servers", default="rillet,redis")
    args = parser.parse_args()
    wanted = args.servers.split(",")
    kinds = [k for k in server_kinds(include_redis8="redis8" in wanted) if k.name in wanted]
    rates: dict[str, dict[str, float]] = {}
    for kind in kinds:
        try:
            server = start_server(kind)
        except ServerUnavailable as error:
            print(f"{kind.name}: n/a: {error}")
            continue
        try:
            client = server.client(timeout_s=120)
            _setup(client)
            rates[kind.label] = {name: _rate(client, make, args.seconds, args.pipeline)
                                 for name, make in cases()}
            client.close()
        finally:
            server.cleanup()
    labels = list(rates)
    base = next((label for label in labels if not label.startswith("rillet")), None)
    mine = next((label for label in labels if label.startswith("rillet")), None)
    print(f"\n## HyperLogLog and geo, ops/s (pipeline {args.pipeline}, one connection)\n")
    print("| case | " + " | ".join(labels) + (" | rillet/redis |" if base and mine else " |"))
    print("|---|" + "---|" * (len(labels) + (1 if base and mine else 0)))
    for name, _ in cases():
        row = [f"{rates[label][name]:,.0f}" for label in labels]
        if base and mine:
            row.append(f"{rates[mine][name] / rates[base][name]:.2f}")
        print(f"| {name} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
