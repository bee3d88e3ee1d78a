"""WAIT behind a master that fsyncs every write: rillet beside Redis 8.2.3 in one run.

A master with `appendonly yes` and `appendfsync always`, one replica, and
--clients clients at once, each doing `SET k v; WAIT 1 <timeout>` --rounds
times. Per server: WAIT's p50 and p99 (ms, at the client), how many WAITs
answered 0 (a write the healthy replica did not confirm within the timeout)
and the run's wall time. A fresh pair per rep, --reps interleaved; p50, p99
and wall time are medians over the reps, the 0 answers their sum. Issue 26,
item 3: rillet answered 0 after the whole timeout for about half the WAITs.

    .venv/bin/python bench/wait_fsync.py [--clients 4] [--rounds 300] [--timeout 1000]
        [--reps 3] [--baseline /path/to/other/checkout/src]  # a column for that tree
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

from rillet.bench.servers import (
    baseline_kind,
    info_fields,
    measure_interleaved,
    server_kinds,
    start_server,
)

# Redis's disk-less full sync waits 5 s for more replicas by default; both start at once.
MASTER_FLAGS = ["--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"]


def wait_synced(master, replica, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        fields = info_fields(replica, "replication")
        offset = int(info_fields(master, "replication").get("master_repl_offset", "0"))
        if fields.get("master_link_status") == "up" and \
                int(fields.get("slave_repl_offset", "-1")) >= offset:
            return
        time.sleep(0.02)
    raise RuntimeError("the replica did not sync")


def measure(kind, args) -> dict[str, float]:
    master = start_server(kind, MASTER_FLAGS)
    try:
        replica = start_server(kind, ["--replicaof", "127.0.0.1", str(master.port)])
        try:
            with master.client() as m, replica.client() as r:
                wait_synced(m, r)
            latencies: list[float] = []
            zeros = [0]
            timeout = str(args.timeout)

            def client(n: int) -> None:
                with master.client() as c:
                    for i in range(args.rounds):
                        c.call("SET", f"k{n}", str(i))
                        began = time.perf_counter()
                        acked = c.call("WAIT", "1", timeout)
                        latencies.append((time.perf_counter() - began) * 1000)
                        if acked == 0:
                            zeros[0] += 1

            threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - began
        finally:
            replica.cleanup()
    finally:
        master.cleanup()
    latencies.sort()
    return {"p50": latencies[len(latencies) // 2],
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "zeros": zeros[0], "waits": len(latencies), "wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=300, help="SET + WAIT per client")
    parser.add_argument("--timeout", type=int, default=1000, help="WAIT's timeout, ms")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=True)
    if any(kind.name == "redis8" for kind in kinds):
        kinds = [kind for kind in kinds if kind.name != "redis"]  # Redis 8.2.3 is the reference
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    results = measure_interleaved(kinds, args.reps, lambda kind: measure(kind, args))
    print(f"{args.clients} clients x {args.rounds} x (SET; WAIT 1 {args.timeout}), master with"
          f" appendfsync always + 1 replica ({args.reps} interleaved reps)\n")
    print("| server | WAIT p50 ms | WAIT p99 ms | WAITs answered 0 | wall s |")
    print("|---|---|---|---|---|")
    medians = {}
    for kind in kinds:
        rows = results[kind.name]
        if not rows:
            continue
        p50 = statistics.median(r["p50"] for r in rows)
        p99 = statistics.median(r["p99"] for r in rows)
        wall = statistics.median(r["wall"] for r in rows)
        zeros = sum(r["zeros"] for r in rows)
        waits = sum(r["waits"] for r in rows)
        medians[kind.name] = (p50, p99)
        print(f"| {kind.label} | {p50:.2f} | {p99:.2f} | {zeros:.0f} of {waits:.0f} | {wall:.2f} |")
    reference = "redis8" if "redis8" in medians else "redis"
    if "rillet" in medians and reference in medians:
        (p50, p99), (ref50, ref99) = medians["rillet"], medians[reference]
        print(f"\nrillet/{reference}: p50 {p50 / ref50:.2f}x, p99 {p99 / ref99:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
