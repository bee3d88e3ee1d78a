"""Glob worst cases, rillet beside redis-server in one run (issue: one command never hangs).

1. Time of one KEYS for Redis's nested-pattern regressions ("*?" x 50,000 against
   a 50,000-byte key) and a family of patterns that made the old regex
   translation backtrack exponentially. Target: each under 10 ms.
2. Server RSS before and after a client sends N distinct patterns
   (SCAN 0 MATCH <pattern>, pipelined), to show no pattern cache grows.

    .venv/bin/python bench/glob_worst.py [--patterns 1000000] [--servers rillet,redis]
"""

from __future__ import annotations

import argparse
import sys
import time

import psutil

from rillet.bench.client import encode_command
from rillet.bench.servers import ServerUnavailable, server_kinds, start_server


def worst_cases() -> list[tuple[str, bytes, bytes]]:
    cases = [
        ("redis: *? x 50000", b"a" * 50_000, b"*?" * 50_000),
        ("redis: *?a x 20000", b"a" * 50_000, b"*?a" * 20_000),
    ]
    for stars in (20, 40, 1000):
        cases.append((f"a* x {stars} + b", b"a" * 40, b"a*" * stars + b"b"))
        cases.append((f"*a*b x {stars} + c", b"ab" * 20, b"*a*b" * stars + b"c"))
        cases.append((f"*[a]? x {stars} + [^a]", b"a" * 40, b"*[a]?" * stars + b"[^a]"))
    return cases


def time_keys(client, key: bytes, pattern: bytes) -> float:
    client.call("FLUSHALL")
    client.call("SET", key, "1")
    started = time.perf_counter()
    client.call("KEYS", pattern)
    return (time.perf_counter() - started) * 1000


def pattern_flood(client, pid: int, count: int) -> tuple[float, float, float]:
    """RSS (MB) before and after `count` distinct SCAN MATCH patterns, and the rate."""
    client.call("FLUSHALL")
    for n in range(100):
        client.call("SET", f"key:{n}", "v")
    rss_before = psutil.Process(pid).memory_info().rss / 2**20
    started = time.perf_counter()
    batch = 2000
    for start in range(0, count, batch):
        payload = b"".join(
            encode_command(("SCAN", "0", "MATCH", f"key:{n}*[0-9]?", "COUNT", "100"))
            for n in range(start, min(count, start + batch)))
        client.send_raw(payload, min(count, start + batch) - start)
    rate = count / (time.perf_counter() - started)
    rss_after = psutil.Process(pid).memory_info().rss / 2**20
    return rss_before, rss_after, rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", type=int, default=1_000_000)
    parser.add_argument("--servers", default="rillet,redis")
    args = parser.parse_args()
    wanted = args.servers.split(",")
    kinds = [k for k in server_kinds(include_redis8="redis8" in wanted) if k.name in wanted]
    times: dict[str, dict[str, float]] = {}
    flood: dict[str, tuple[float, float, float]] = {}
    for kind in kinds:
        try:
            server = start_server(kind)
        except ServerUnavailable as error:
            print(f"{kind.name}: n/a: {error}")
            continue
        try:
            client = server.client(timeout_s=120)
            times[kind.label] = {name: time_keys(client, key, pattern)
                                 for name, key, pattern in worst_cases()}
            flood[kind.label] = pattern_flood(client, server.pid, args.patterns)
            client.close()
        finally:
            server.cleanup()
    labels = list(times)
    print("\n## KEYS on worst-case patterns (ms, one call)\n")
    print("| case | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for name, _key, _pattern in worst_cases():
        print(f"| {name} | " + " | ".join(f"{times[label][name]:.2f}" for label in labels) + " |")
    print(f"\n## RSS around {args.patterns:,} distinct SCAN MATCH patterns\n")
    print("| server | RSS before (MB) | RSS after (MB) | growth (MB) | patterns/s |")
    print("|---|---|---|---|---|")
    for label, (before, after, rate) in flood.items():
        print(f"| {label} | {before:.1f} | {after:.1f} | {after - before:+.1f} | {rate:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
