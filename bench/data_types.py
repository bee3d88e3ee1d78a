"""Lists, hashes, sets and sorted sets: memory per element and write throughput,
rillet beside redis-server in one run.

Targets (issue 15): memory per element within 2x Redis for a 1M-element list,
hash, set and sorted set; LPUSH/HSET/SADD/ZADD at -P 64 at least 0.4x Redis.

1. Memory: a fresh server per type and rep; one key loaded with N elements by
   pipelined variadic commands (RPUSH/HSET/SADD/ZADD, 1,000 elements a command,
   members "member:%09d", hash values and scores small numbers, as an application's
   ids and counters). Figure: (RSS after - RSS before) / N, so each side pays its
   allocator's and interpreter's overhead. Redis's used_memory is shown beside it.
2. Throughput: redis-benchmark -t lpush,hset,sadd,zadd -P 64 -c 50 -r 100000
   (one server per rep, the four tests in turn).

Reps are interleaved (rep 1 of every server, then rep 2...) and the medians are shown,
with rillet/Redis ratios.

    .venv/bin/python bench/data_types.py [--elements 1000000] [--reps 3] [--requests 200000]
                                    [--servers rillet,redis] [--only memory|throughput]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from rillet.bench import procinfo
from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.servers import ServerUnavailable, info_fields, server_kinds, start_server

BATCH = 1000
TYPES = ("list", "hash", "set", "zset")
BENCH_TESTS = {"lpush": "LPUSH", "hset": "HSET", "sadd": "SADD", "zadd": "ZADD"}


def _member(i: int) -> bytes:
    return b"member:%09d" % i


def _load_command(kind: str, start: int, stop: int) -> list[bytes]:
    if kind == "list":
        return [b"RPUSH", b"k", *(_member(i) for i in range(start, stop))]
    if kind == "set":
        return [b"SADD", b"k", *(_member(i) for i in range(start, stop))]
    argv = [b"HSET" if kind == "hash" else b"ZADD", b"k"]
    for i in range(start, stop):
        if kind == "hash":
            argv += [_member(i), b"%d" % (i % 1000)]
        else:
            argv += [b"%d" % (i % 100_000), _member(i)]
    return argv


def measure_memory(kind, type_name: str, elements: int) -> dict[str, float]:
    server = start_server(kind)
    try:
        client = server.client(timeout_s=120)
        client.call("PING")
        before = procinfo.settle_rss(server.pid)
        used_before = int(info_fields(client, "memory").get("used_memory", 0))
        start = time.monotonic()
        window = 16  # commands in flight per pipeline round
        for base in range(0, elements, BATCH * window):
            stop = min(base + BATCH * window, elements)
            client.pipeline(
                _load_command(type_name, lo, min(lo + BATCH, stop)) for lo in range(base, stop, BATCH)
            )
        load_s = time.monotonic() - start
        size = client.call(
            {"list": "LLEN", "hash": "HLEN", "set": "SCARD", "zset": "ZCARD"}[type_name], "k")
        if size != elements:
            raise RuntimeError(f"{kind.name} {type_name}: {size} elements, expected {elements}")
        encoding = client.call("OBJECT", "ENCODING", "k")
        after = procinfo.settle_rss(server.pid)
        used_after = int(info_fields(client, "memory").get("used_memory", 0))
        client.close()
        return {
            "rss_per_element": (after - before) / elements,
            "used_memory_per_element": (used_after - used_before) / elements,
            "load_s": load_s,
            "encoding": encoding.decode() if isinstance(encoding, bytes) else str(encoding),
        }
    finally:
        server.cleanup()


def measure_throughput(kind, requests: int) -> dict[str, tuple[float, float]]:
    """Per test: (requests/s, server CPU us per request). The CPU figure is the steadier
    one on a shared machine: other processes lower the rate, not the work per request."""
    server = start_server(kind)
    try:
        out = {}
        for test, name in BENCH_TESTS.items():
            procinfo.wait_for_quiet(0.3, 5.0, exclude={server.pid})  # bounded: the machine is shared
            result = run_redis_benchmark(server.endpoint.port, server.pid, requests=requests,
                                         pipeline=64, tests=test, random_keyspace=100_000)
            out[name] = (result.rps, result.server_us_per_op)
        return out
    finally:
        server.cleanup()


def _table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n## {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--servers", default="rillet,redis")
    parser.add_argument("--only", choices=["memory", "throughput"])
    args = parser.parse_args()
    wanted = args.servers.split(",")
    kinds = [k for k in server_kinds(include_redis8="redis8" in wanted) if k.name in wanted]
    labels = [k.label for k in kinds]
    memory: dict[str, dict[str, list[dict]]] = {k.label: {t: [] for t in TYPES} for k in kinds}
    rates: dict[str, dict[str, list[tuple[float, float]]]] = {k.label: {n: [] for n in BENCH_TESTS.values()}
                                                for k in kinds}
    for rep in range(args.reps):
        for kind in kinds:  # interleaved: every server once per rep
            try:
                if args.only != "throughput":
                    for type_name in TYPES:
                        memory[kind.label][type_name].append(
                            measure_memory(kind, type_name, args.elements))
                if args.only != "memory":
                    for name, figures in measure_throughput(kind, args.requests).items():
                        rates[kind.label][name].append(figures)
            except (ServerUnavailable, BenchmarkFailed) as error:
                print(f"rep {rep + 1} {kind.name}: n/a: {error}", file=sys.stderr)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)

    def med(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    ratio_label = f"{labels[0]}/{labels[1]}" if len(labels) > 1 else None
    if args.only != "throughput":
        rows = []
        for type_name in TYPES:
            row = [f"{type_name} ({args.elements:,})"]
            per = []
            for label in labels:
                runs = memory[label][type_name]
                per.append(med([r["rss_per_element"] for r in runs]))
                used = med([r["used_memory_per_element"] for r in runs])
                enc = runs[0]["encoding"] if runs else "?"
                row.append(f"{per[-1]:.1f} B (used_memory {used:.1f} B, {enc}, "
                           f"load {med([r['load_s'] for r in runs]):.1f} s)")
            if ratio_label:
                row.append(f"{per[0] / per[1]:.2f}x")
            rows.append(row)
        _table(f"Memory per element, RSS growth, median of {args.reps}",
               ["type", *labels, *([ratio_label] if ratio_label else [])], rows)
    if args.only != "memory":
        rows = []
        for name in BENCH_TESTS.values():
            values = [med([r for r, _ in rates[label][name]]) for label in labels]
            cpu = [med([c for _, c in rates[label][name]]) for label in labels]
            row = [name, *(f"{v:,.0f} ({c:.2f} us)" for v, c in zip(values, cpu, strict=True))]
            if ratio_label:
                row += [f"{values[0] / values[1]:.2f}x", f"{cpu[1] / cpu[0]:.2f}x"]
            rows.append(row)
        _table(f"redis-benchmark -P 64 -c 50 -r 100000, {args.requests:,} requests: "
               f"requests/s (server CPU per request), median of {args.reps}",
               ["test", *labels, *([f"{ratio_label} rate", f"{ratio_label} by CPU"]
                                   if ratio_label else [])], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
