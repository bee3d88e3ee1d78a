"""EVALSHA of a 3-command script and PUBLISH to 10 subscribers, rillet beside redis-server.

Both at -P 64 with 50 clients (redis-benchmark), one run, ratios printed.
Targets (issue 14): each at least 0.4x Redis.

1. EVALSHA <sha> 1 key: INCR the key, GET it, SET a copy (two writes and a read per
   call; the script's effects are a MULTI/EXEC of INCR and SET, as Redis 7+).
2. PUBLISH ch <16 bytes> with 10 subscribers connected, each draining its socket in a
   thread of this process (so every message is really written to 10 sockets).

    .venv/bin/python bench/scripting_pubsub.py [--requests 200000] [--servers rillet,redis]
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading

from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.servers import ServerUnavailable, server_kinds, start_server

SCRIPT = ("redis.call('INCR', KEYS[1]); local v = redis.call('GET', KEYS[1]); "
          "return redis.call('SET', KEYS[1] .. ':copy', v)")


class Subscribers:
    """`count` connections subscribed to `channel`, read until closed."""

    def __init__(self, port: int, channel: str, count: int) -> None:
        self.socks = []
        self.received = [0] * count
        self.threads = []
        for i in range(count):
            sock = socket.create_connection(("127.0.0.1", port))
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--servers", default="rillet,redis")
    args = parser.parse_args()
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
