"""One slow reader must not stall the rest: rillet beside redis-server in one run.

A client pipelines N × `XRANGE big - +` (each reply about 2 MB: 20,000 entries
of ~100 B) and never reads. Meanwhile another client sends PINGs one at a
time; the script prints their p50/p99/max round trip, whether and when the
slow client was disconnected (client-output-buffer-limit), and the server's
peak RSS. Targets (issue on security and limits): PING p99 < 10 ms, max < 50 ms.

    .venv/bin/python bench/slow_reader.py [--xranges 100] [--limit "normal 64mb 32mb 10"]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time

import psutil

from rillet.bench.client import encode_command
from rillet.bench.servers import ServerUnavailable, server_kinds, start_server


def load(client, entries: int) -> None:
    value = "x" * 80
    for start in range(0, entries, 1000):
        client.pipeline([("XADD", "big", "*", "f", value) for _ in range(min(1000, entries - start))])


def run(kind, args) -> dict:
    server = start_server(kind)
    try:
        client = server.client(timeout_s=60)
        client.call("CONFIG", "SET", "client-output-buffer-limit", args.limit)
        load(client, args.entries)
        slow = socket.create_connection(("127.0.0.1", server.port))
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall(encode_command(("XRANGE", "big", "-", "+")) * args.xranges)
        started = time.perf_counter()
        rtts = []
        peak_rss = 0
        disconnected_at = None
        process = psutil.Process(server.pid)
        while time.perf_counter() - started < args.seconds:
            t0 = time.perf_counter()
            client.call("PING")
            rtts.append((time.perf_counter() - t0) * 1000)
            if len(rtts) % 50 == 0:
                peak_rss = max(peak_rss, process.memory_info().rss)
                if disconnected_at is None:
                    info = client.call("INFO", "stats").decode()
                    if "client_output_buffer_limit_disconnections:0" not in info:
                        disconnected_at = time.perf_counter() - started
            time.sleep(0.002)
        slow.close()
        client.close()
        rtts.sort()
        return {
            "pings": len(rtts), "p50": statistics.median(rtts),
            "p99": rtts[int(len(rtts) * 0.99) - 1], "max": rtts[-1],
            "disconnected_s": disconnected_at, "peak_rss_mb": peak_rss / 2**20,
        }
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xranges", type=int, default=100)
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--limit", default="normal 64mb 32mb 10")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--servers", default="rillet,redis8")
    args = parser.parse_args()
    wanted = args.servers.split(",")
    kinds = [k for k in server_kinds(include_redis8="redis8" in wanted) if k.name in wanted]
    print(f"{args.xranges} pipelined XRANGEs of {args.entries} entries, never read;"
          f" client-output-buffer-limit {args.limit!r}\n")
    print("| server | PINGs | p50 ms | p99 ms | max ms | slow client cut at (s) | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for kind in kinds:
        try:
            r = run(kind, args)
        except ServerUnavailable as error:
            print(f"| {kind.label} | n/a: {error} |")
            continue
        cut = f"{r['disconnected_s']:.2f}" if r["disconnected_s"] is not None else "not cut"
        print(f"| {kind.label} | {r['pings']} | {r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.2f}"
              f" | {cut} | {r['peak_rss_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
