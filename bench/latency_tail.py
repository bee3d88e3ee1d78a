"""Where the latency test's slow messages come from: the server's collector, its loop, or the rest.

Runs the seeds' latency test (bench/run's `latency` section: 10k msg/s, 10
consumers in 2 processes, 1 producer process) against a traced rillet and
against redis-server, interleaved, a fresh server per run. The traced rillet
records every collection (wall-clock start, duration, generation) and, with a
1 ms timer, every event-loop stall over 1 ms; the consumer processes record
their own collections and loop stalls, and every message slower than 1 ms. Each message over
2 ms is then put in the first class whose interval overlaps its
[sent, received] window:

    server gc       a collection in the server
    server preempted  the server's loop was late by > 1 ms, mostly waiting for a
                    core (schedstat's run delay)
    server busy     ... late by > 1 ms, mostly running (often its catch-up after
                    a preemption)
    consumer gc     a collection in the consumer process that received it
    consumer preempted / consumer busy   the consumer process's loop, likewise
    other           none of these: scheduling of the load generator or the
                    machine's other processes (the run-queue waits printed
                    below tell which process waited for a core)

Printed per run: the latency figures of both servers, the attribution, the
server's collector pause distribution, and the time each process spent
runnable but waiting for a core (/proc/PID/schedstat field 2).

    .venv/bin/python bench/latency_tail.py [--reps 3] [--duration 10] [--rate 10000]
        [--no-stall-probe] [--no-redis] [--json FILE] [--server-arg=--hz --server-arg=10]
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import json
import os
import shlex
import sys
import time
from pathlib import Path

from rillet.bench import latency, procinfo
from rillet.bench.servers import ServerKind, server_kinds, start_server

SLOW_US = 2000
BUCKETS_MS = (0.1, 0.5, 1, 2, 5, 10)


# -- the traced server (this script run with --serve) -----------------------------------


def serve(trace_out: str, probe: bool, server_argv: list[str]) -> int:
    pauses = latency.PauseLog()
    probes: list[latency.StallProbe] = []
    from rillet.server import server as server_mod

    start = server_mod.Server.start

    async def traced_start(self: server_mod.Server) -> None:
        await start(self)
        if probe:
            probes.append(latency.StallProbe(asyncio.get_running_loop()))

    server_mod.Server.start = traced_start  # type: ignore[method-assign]

    def dump() -> None:
        with open(trace_out, "w") as fh:
            json.dump({"gc": pauses.events, "stalls": probes[0].events if probes else [],
                       "threshold": gc.get_threshold()}, fh)

    atexit.register(dump)
    from rillet.cli import main as rillet_main

    return rillet_main(["server", *server_argv])


# -- the driver --------------------------------------------------------------------------


def _run_delay_s(pid: int) -> float:
    """Seconds a process's threads spent runnable, waiting for a core."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                    total += int(fh.read().split()[1])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return 0.0
    return total / 1e9


def _overlaps(intervals: list[tuple[int, int]], lo: int, hi: int) -> bool:
    return any(start < hi and end > lo for start, end in intervals)


def _split_stalls(stalls: list[list[int]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(busy, preempted): a stall is the process waiting for a core when it spent at
    least half of it runnable but not running (schedstat's run delay), the loop's own
    work when it spent at least half of it on the CPU; neither, an idle loop's timer
    firing late, is left out (I/O would have woken the loop)."""
    busy, waited = [], []
    for start, late, run_delay, *cpu in stalls:
        if run_delay * 2 >= late:
            waited.append((start, start + late))
        elif cpu and cpu[0] * 2 >= late:
            busy.append((start, start + late))
    return busy, waited


# Preemption before own work: most of a loop's long own-work stretches are its
# catch-up on what piled up while it waited for a core (in a loaded run, 38 of
# 51 started within 20 ms after a preempted stall).
CAUSES = ("server gc", "server preempted", "server busy", "consumer gc", "consumer preempted",
          "consumer busy", "other")


def attribute(result: dict, server_trace: dict | None) -> dict[str, int]:
    """Each message over 2 ms, in the first class (CAUSES) overlapping its window."""
    server_gc = [(s, s + d) for s, d, *_ in (server_trace or {}).get("gc", [])]
    server_busy, server_waited = _split_stalls((server_trace or {}).get("stalls", []))
    counts = dict.fromkeys(CAUSES, 0)
    for proc in result.get("trace", []):
        own_gc = [(s, s + d) for s, d, *_ in proc["gc"]]
        own_busy, own_waited = _split_stalls(proc.get("stalls", []))
        classes = (server_gc, server_waited, server_busy, own_gc, own_waited, own_busy)
        slow = proc["slow"]
        for i in range(0, len(slow), 2):
            sent, got = slow[i], slow[i + 1]
            if got - sent <= SLOW_US:
                continue
            for name, intervals in zip(CAUSES, classes, strict=False):
                if _overlaps(intervals, sent, got):
                    counts[name] += 1
                    break
            else:
                counts["other"] += 1
    return counts


def pause_summary(events: list[list[int]]) -> str:
    """Collections by generation, and their CPU time (load-independent) as a histogram."""
    if not events:
        return "no collections"
    by_gen = [0, 0, 0]
    for event in events:
        by_gen[event[2]] += 1
    cpu = sorted(event[3] / 1000 for event in events)
    wall = max(event[1] / 1000 for event in events)
    edges = (0.0, *BUCKETS_MS, float("inf"))
    hist = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        n = sum(1 for d in cpu if lo <= d < hi)
        if n:
            hist.append(f"{lo:g}-{hi:g} ms: {n}")
    return (f"{len(events)} (gen0/1/2 {by_gen[0]}/{by_gen[1]}/{by_gen[2]}), CPU longest "
            f"{cpu[-1]:.2f} ms, total {sum(cpu):.1f} ms [" + ", ".join(hist)
            + f"], wall longest {wall:.2f} ms")


def stall_summary(stalls: list[list[int]]) -> str:
    if not stalls:
        return "none"
    busy, waited = _split_stalls(stalls)
    longest = max(stall[1] for stall in stalls) / 1000
    own = sorted((hi - lo) / 1000 for lo, hi in busy)
    own_text = f", longest {own[-1]:.2f} ms" if own else ""
    return (f"{len(stalls)} (own work {len(busy)}{own_text}; waiting for a core {len(waited)}; "
            f"idle {len(stalls) - len(busy) - len(waited)}), over 2 ms "
            f"{sum(1 for stall in stalls if stall[1] > 2000)}, longest {longest:.2f} ms")


def _within(events: list[list[int]], lo: int, hi: int) -> list[list[int]]:
    return [e for e in events if lo <= e[0] <= hi]


def one_run(kind: ServerKind, args: argparse.Namespace, traced: bool) -> dict:
    server = start_server(kind)
    trace_path = Path(server.workdir) / "tail-trace.json"
    try:
        cfg = latency.LatencyConfig(
            endpoint=server.endpoint, rate=args.rate, consumers=10, consumer_procs=2,
            duration_s=args.duration, warmup_s=args.warmup, server_pid=server.pid,
            label=kind.label, stream="bench:latency", trace=True,
        )
        delay_before = _run_delay_s(server.pid)
        began = time.monotonic()
        window = [time.time_ns() // 1000, 0]
        result = latency.run_latency(cfg)
        window[1] = time.time_ns() // 1000
        wall = time.monotonic() - began
        result["server_run_delay_ms_per_s"] = (_run_delay_s(server.pid) - delay_before) * 1000 / wall
    finally:
        server.stop()
    trace = None
    if traced:
        for _ in range(50):
            if trace_path.exists():
                break
            time.sleep(0.1)
        try:
            trace = json.loads(trace_path.read_text())
        except (OSError, ValueError):
            trace = None
    server.cleanup()
    if trace is not None:
        # What happened while the load ran (not the imports before, nor the shutdown).
        trace["gc"] = _within(trace["gc"], *window)
        trace["stalls"] = _within(trace["stalls"], *window)
    result["server_trace"] = trace
    return result


def report(result: dict) -> None:
    pc = result["percentiles_ms"]
    slow = sum(1 for proc in result["trace"] for i in range(0, len(proc["slow"]), 2)
               if proc["slow"][i + 1] - proc["slow"][i] > SLOW_US)
    print(f"  {result['label']:<14} p50 {pc['p50']:.3f}  p99 {pc['p99']:.3f}  p99.9 "
          f"{pc['p99.9']:.3f}  max {pc['max']:.2f} ms  within 2 ms {result['within_2ms_pct']:.3f}%"
          f"  ({slow} over 2 ms of {result['measured']})  ok={result['ok']}")
    cpu = result["cpu"]
    print(f"    cores: server {cpu['server_cores']:.2f}, load generator {cpu['loadgen_cores']:.2f},"
          f" other processes {cpu['other_cores']:.2f}; server waited for a core "
          f"{result['server_run_delay_ms_per_s']:.1f} ms/s")
    counts = attribute(result, result["server_trace"])
    print("    over 2 ms, by cause: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v))
    consumer_gc = [e for proc in result["trace"] for e in proc["gc"]]
    consumer_stalls = [e for proc in result["trace"] for e in proc.get("stalls", [])]
    print(f"    consumer processes: collections {pause_summary(consumer_gc)}")
    print(f"    consumer processes: loop stalls > 1 ms {stall_summary(consumer_stalls)}")
    trace = result["server_trace"]
    if trace is not None:
        print(f"    server (gc threshold {tuple(trace['threshold'])}): collections "
              f"{pause_summary(trace['gc'])}")
        print(f"    server: loop stalls > 1 ms {stall_summary(trace['stalls'])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--trace-out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--no-stall-probe", action="store_true",
                        help="do not run the server's 1 ms loop-stall timer")
    parser.add_argument("--no-redis", action="store_true")
    parser.add_argument("--json", default="", help="write every run's result and traces here")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="extra rillet server argument (repeat; e.g. --server-arg=--hz "
                             "--server-arg=10)")
    args, rest = parser.parse_known_args()
    if args.serve:
        return serve(args.trace_out, not args.no_stall_probe, rest)

    here = os.path.abspath(__file__)
    extra = " ".join(shlex.quote(a) for a in args.server_arg)
    probe = " --no-stall-probe" if args.no_stall_probe else ""
    template = (f"{shlex.quote(sys.executable)} {shlex.quote(here)} --serve{probe} "
                "--trace-out {dir}/tail-trace.json --port {port} --bind 127.0.0.1 --save '' "
                "--dir {dir} " + extra)
    kinds = server_kinds(False, template)
    if args.no_redis:
        kinds = kinds[:1]
    runs = []
    for rep in range(args.reps):
        print(f"rep {rep + 1}/{args.reps}: load average {os.getloadavg()[0]:.2f}, other processes "
              f"{procinfo.busy_cores(0.5):.2f} cores", flush=True)
        for kind in kinds:
            result = one_run(kind, args, traced=kind.name == "rillet")
            report(result)
            sys.stdout.flush()
            result.pop("cdf", None)
            runs.append(result)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(runs, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
