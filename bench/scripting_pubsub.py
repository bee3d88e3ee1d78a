"""EVALSHA of a 3-command script and PUBLISH to 10 subscribers, rillet beside redis-server.

Both at -P 64 with 50 clients (redis-benchmark), one run, ratios printed.
Targets (issue 14): each at least 0.4x Redis.

1. EVALSHA <sha> 1 key: INCR the key, GET it, SET a copy (two writes and a read per
   call; the script's effects are a MULTI/EXEC of INCR and SET, as Redis 7+).
2. PUBLISH ch <16 bytes> with 10 subscribers connected, each draining its socket in a
   thread of this process (so every message is really written to 10 sockets).

    .venv/bin/python bench/scripting_pubsub.py [--requests 200000] [--servers rillet,redis]

`--only publish` measures PUBLISH alone (issue 28), rillet beside Redis 8.2.3 by
default (`--servers rillet,redis8`): to no subscriber, to 10 RESP2 subscribers, and
to 5 RESP2 + 5 RESP3 ones (each protocol's frame is encoded once per message),
`--reps` interleaved (`--baseline SRC`: another checkout's src/ as a column), medians of requests/s and of the server's CPU per PUBLISH
(from /proc: on a shared machine the figure to judge by), and the ratios.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import threading

from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.servers import (
    ServerUnavailable,
    baseline_kind,
    measure_interleaved,
    server_kinds,
    start_server,
)

SCRIPT = ("redis.call('INCR', KEYS[1]); local v = redis.call('GET', KEYS[1]); "
          "return redis.call('SET', KEYS[1] .. ':copy', v)")


class Subscribers:
    """`count` connections subscribed to `channel`, read until closed."""

    def __init__(self, port: int, channel: str, count: int, resp3: int = 0) -> None:
        self.socks = []
        self.received = [0] * count
        self.threads = []
        for i in range(count):
            sock = socket.create_connection(("127.0.0.1", port))
            if i < resp3:
                sock.sendall(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
                if not sock.recv(4096):
                    raise RuntimeError("HELLO 3 got no reply")
            sock.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(channel), channel.encode()))
            sock.recv(4096)
            self.socks.append(sock)
            thread = threading.Thread(target=self._drain, args=(i, sock), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _drain(self, index: int, sock: socket.socket) -> None:
        while True:
            try:
                chunk = sock.recv(1 << 20)
            except OSError:
                return
            if not chunk:
                return
            self.received[index] += len(chunk)

    def close(self) -> None:
        for sock in self.socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for thread in self.threads:
            thread.join(5)


def measure(kind, requests: int) -> dict[str, float]:
    server = start_server(kind)
    try:
        client = server.client(timeout_s=60)
        sha = client.call("SCRIPT", "LOAD", SCRIPT)
        sha = sha.decode() if isinstance(sha, bytes) else str(sha)
        client.close()
        port = server.endpoint.port
        out = {}
        result = run_redis_benchmark(port, server.pid, requests=requests, pipeline=64,
                                     command=["EVALSHA", sha, "1", "key:__rand_int__"],
                                     random_keyspace=1000)
        out["EVALSHA (3 commands)"] = result.rps
        # Server CPU per call: the figure to judge scripting changes by on a shared machine.
        print(f"{kind.label}: EVALSHA server CPU {result.server_us_per_op:.2f} us/op, "
              f"{result.server_cores:.2f} server cores, {result.client_cores:.2f} client cores")
        subs = Subscribers(port, "ch", 10)
        try:
            result = run_redis_benchmark(port, server.pid, requests=requests, pipeline=64,
                                         command=["PUBLISH", "ch", "0123456789abcdef"])
            out["PUBLISH to 10 subscribers"] = result.rps
        finally:
            subs.close()
        return out
    finally:
        server.cleanup()


PUBLISH_CASES = (("no subscriber", 0, 0), ("10 RESP2 subscribers", 10, 0),
                 ("5 RESP2 + 5 RESP3 subscribers", 10, 5))


def measure_publish(kind, requests: int) -> dict[str, float]:
    server = start_server(kind)
    try:
        out = {}
        for label, count, resp3 in PUBLISH_CASES:
            subs = Subscribers(server.endpoint.port, "ch", count, resp3) if count else None
            try:
                result = run_redis_benchmark(server.endpoint.port, server.pid, requests=requests,
                                             pipeline=64,
                                             command=["PUBLISH", "ch", "0123456789abcdef"])
            finally:
                if subs is not None:
                    subs.close()
            out[f"{label}: requests/s"] = result.rps
            out[f"{label}: server us/PUBLISH"] = result.server_us_per_op
        return out
    finally:
        server.cleanup()


def publish_only(args) -> int:
    wanted = args.servers.split(",")
    available = {k.name: k for k in server_kinds(include_redis8="redis8" in wanted)}
    kinds = [available[name] for name in wanted if name in available]
    if args.baseline:
        kinds.insert(1, baseline_kind(args.baseline))
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    runs = measure_interleaved(kinds, args.reps, lambda kind: measure_publish(kind, args.requests))
    names = [kind.name for kind in kinds if runs[kind.name]]
    if not names:
        return 1
    labels = {kind.name: kind.label for kind in kinds}
    print(f"\n## PUBLISH at -P 64, 50 clients, medians of {args.reps}\n")
    print("| figure | " + " | ".join(labels[n] for n in names) + " | ratio |")
    print("|---|" + "---|" * (len(names) + 1))
    for figure in runs[names[0]][0]:
        medians = [statistics.median(run[figure] for run in runs[n]) for n in names]
        ratio = medians[0] / medians[-1] if medians[-1] else float("nan")
        cells = [f"{m:,.0f}" if m >= 100 else f"{m:.2f}" for m in medians]
        print(f"| {figure} | " + " | ".join(cells) + f" | {ratio:.2f}x |")
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--servers", default=None,
                        help="default rillet,redis (with --only publish: rillet,redis8)")
    parser.add_argument("--only", choices=["publish"], help="PUBLISH alone, three subscriber mixes")
    parser.add_argument("--reps", type=int, default=3, help="with --only publish")
    parser.add_argument("--baseline", metavar="SRC",
                        help="with --only publish: another rillet checkout's src/ as a column")
    args = parser.parse_args()
    if args.only == "publish":
        args.servers = args.servers or "rillet,redis8"
        return publish_only(args)
    args.servers = args.servers or "rillet,redis"
    wanted = args.servers.split(",")
    kinds = [k for k in server_kinds(include_redis8="redis8" in wanted) if k.name in wanted]
    results: dict[str, dict[str, float]] = {}
    for kind in kinds:
        try:
            results[kind.label] = measure(kind, args.requests)
        except (ServerUnavailable, BenchmarkFailed) as error:
            print(f"{kind.name}: n/a: {error}")
    labels = list(results)
    if not labels:
        return 1
    tests = list(results[labels[0]])
    print("\n## Scripting and pub/sub at -P 64, 50 clients (requests/s)\n")
    header = "| test | " + " | ".join(labels) + (" | ratio |" if len(labels) > 1 else " |")
    print(header)
    print("|---|" + "---|" * (len(labels) + (1 if len(labels) > 1 else 0)))
    for test in tests:
        cells = [f"{results[label].get(test, float('nan')):,.0f}" for label in labels]
        ratio = ""
        if len(labels) > 1:
            ratio = f" | {results[labels[0]][test] / results[labels[1]][test]:.2f}x"
        print(f"| {test} | " + " | ".join(cells) + ratio + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
