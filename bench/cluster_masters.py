"""A 3-master rillet cluster beside one standalone rillet node and a 3-master Redis 8.2.3
cluster, in one run: `redis-benchmark --cluster` (GET/SET/XADD over 100000 random keys),
requests/s, each row's ratio to standalone rillet and to the Redis cluster, and server CPU
µs per request summed over the nodes (from /proc).

Each cluster is formed as a user would (`redis-cli --cluster create`, three masters, no
replicas) and benchmarked once every node says cluster_state:ok. The 3 masters share
this machine's cores (2 on the reference VM) with redis-benchmark, so the cluster rows
measure sharding overhead on one host, not scale-out.

    .venv/bin/python bench/cluster_masters.py [--requests 200000] [--reps 1] [--pipeline 16]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time

from rillet.bench import procinfo
from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.servers import ServerKind, ServerUnavailable, start_server
from rillet.launch import free_port, redis8_binary

WORKLOADS = {
    "GET": {"tests": "get", "random_keyspace": 100_000},
    "SET": {"tests": "set", "random_keyspace": 100_000},
    # redis-benchmark --cluster sends a custom command to each node with its {tag}
    # replaced by a hash tag of that node's slots.
    "XADD": {"command": ["XADD", "bench:{tag}:__rand_int__", "MAXLEN", "~", "100", "*", "f", "v"],
             "random_keyspace": 1_000},
}
CLUSTER = ["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]
MASTERS = 3


def _bus_port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port + 10000))
        except OSError:
            return False
    return True


def _cluster_port() -> int:
    for _ in range(200):
        port = free_port()
        if port + 10000 <= 65535 and _bus_port_free(port):
            return port
    raise ServerUnavailable("no free port pair")


def _wait_ok(servers, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    for server in servers:
        client = server.client()
        while b"cluster_state:ok" not in client.call("CLUSTER", "INFO"):
            if time.monotonic() > deadline:
                raise ServerUnavailable(f"port {server.port}: cluster state never ok")
            time.sleep(0.1)


def start_cluster(kind: ServerKind) -> list:
    servers = []
    try:
        for _ in range(MASTERS):
            servers.append(start_server(kind, CLUSTER, port=_cluster_port()))
        create = subprocess.run(
            ["redis-cli", "--cluster", "create",
             *[f"127.0.0.1:{server.port}" for server in servers], "--cluster-yes"],
            capture_output=True, text=True, timeout=120)
        if create.returncode != 0:
            raise ServerUnavailable(f"cluster create: {create.stdout[-200:]}{create.stderr[-200:]}")
        _wait_ok(servers)
    except BaseException:
        for server in servers:
            server.cleanup()
        raise
    return servers


def measure(setup: str, kind: ServerKind, args) -> dict[str, tuple[float, ...] | str]:
    """{workload: (requests/s, server CPU µs per request summed over the nodes,
    redis-benchmark's cores)}."""
    try:
        servers = start_cluster(kind) if setup == "cluster" else [start_server(kind)]
    except ServerUnavailable as error:
        return {name: f"n/a: {error}"[:60] for name in WORKLOADS}
    out: dict[str, tuple[float, ...] | str] = {}
    try:
        for name, workload in WORKLOADS.items():
            before = sum(procinfo.cpu_seconds(server.pid) for server in servers)
            try:
                result = run_redis_benchmark(
                    servers[0].port, None, requests=args.requests, pipeline=args.pipeline,
                    timeout_s=600, extra=["--cluster"] if setup == "cluster" else None,
                    **workload)
            except BenchmarkFailed as error:
                out[name] = f"n/a: {error}"[:60]
                continue
            cpu = sum(procinfo.cpu_seconds(server.pid) for server in servers) - before
            out[name] = (result.rps, cpu / args.requests * 1e6, result.client_cores)
    finally:
        for server in servers:
            server.cleanup()
    return out


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--pipeline", type=int, default=16)
    args = parser.parse_args()
    rillet = ServerKind("rillet", "rillet")
    redis8 = redis8_binary()
    rows = [("rillet, 3-master cluster", "cluster", rillet),
            ("rillet, one node", "standalone", rillet)]
    if redis8:
        rows.append(("redis 8.2.3, 3-master cluster", "cluster",
                     ServerKind("redis8", "redis 8.2.3", redis8)))
    load = os.getloadavg()
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in rows}
    for _ in range(args.reps):
        for label, setup, kind in rows:  # interleaved, so drifting load hits every row
            runs[label].append(measure(setup, kind, args))
    table: dict[str, dict[str, tuple[float, ...] | str]] = {}
    for label, results in runs.items():
        table[label] = {}
        for name in WORKLOADS:
            good = [r[name] for r in results if isinstance(r[name], tuple)]
            table[label][name] = (tuple(_median([g[i] for g in good]) for i in range(3))
                                  if good else results[-1][name])
    print(f"redis-benchmark -c 50 -P {args.pipeline} "
          f"-n {args.requests}, median of {args.reps}; {os.cpu_count()} cores, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    print("| setup | workload | requests/s | vs rillet node | vs redis cluster "
          "| server CPU µs/request (all nodes) | client cores |")
    print("|---|---|---:|---:|---:|---:|---:|")
    node, ref = table["rillet, one node"], table.get("redis 8.2.3, 3-master cluster", {})
    for label, cells in table.items():
        for name in WORKLOADS:
            cell = cells[name]
            if isinstance(cell, str):
                print(f"| {label} | {name} | {cell} | | | | |")
                continue
            ratios = []
            for base in (node.get(name), ref.get(name)):
                ratios.append(f"{cell[0] / base[0]:.2f}×" if isinstance(base, tuple) else "n/a")
            print(f"| {label} | {name} | {cell[0]:,.0f} | {ratios[0]} | {ratios[1]} "
                  f"| {cell[1]:.1f} | {cell[2]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
