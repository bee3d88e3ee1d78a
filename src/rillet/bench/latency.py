"""`rillet bench latency`: the seeds' end-to-end latency test, against any Redis-compatible server.

Producers XADD at a fixed total rate, each message carrying its send time in
µs; N consumers in one group loop on XREADGROUP BLOCK ... COUNT ... + XACK and
record now - send time. The load generator runs in its own processes, stops by
itself, checks sent = consumed = acked with nothing pending, and reports the
histogram in the seeds' form plus the CPU used by the server and by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import multiprocessing as mp
import os
import queue as queue_mod
import secrets
import sys
import time
from array import array
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rillet.bench import procinfo
from rillet.bench.client import AsyncClient, Endpoint, RespError, SyncClient, parse_url

if TYPE_CHECKING:
    from multiprocessing.synchronize import Event

CDF_POINTS = 300


@dataclass
class LatencyConfig:
    endpoint: Endpoint = field(default_factory=Endpoint)
    rate: int = 10_000
    consumers: int = 10
    consumer_procs: int = 2
    producers: int = 1
    duration_s: float = 10.0
    warmup_s: float = 2.0
    count: int = 100
    block_ms: int = 1000
    payload_bytes: int = 0
    stream: str = ""
    group: str = "rillet-bench"
    server_pid: int | None = None
    drain_timeout_s: float = 10.0
    keep: bool = False
    label: str = ""
    # Each consumer process records its own collector pauses and every message
    # slower than TRACE_SLOW_US with its send and receive times (result["trace"]),
    # for bench/latency_tail.py to line up with the server's pauses.
    trace: bool = False

    def __post_init__(self) -> None:
        if not self.stream:
            self.stream = f"rillet-bench:latency:{os.getpid()}:{secrets.token_hex(3)}"
        if not self.label:
            self.label = f"{self.endpoint.host}:{self.endpoint.port}"
        if self.rate <= 0 or self.consumers <= 0 or self.producers <= 0:
            raise ValueError("rate, consumers and producers must be positive")
        if self.duration_s <= 0 or self.duration_s > 3600:
            raise ValueError("duration must be in (0, 3600] seconds")
        self.consumer_procs = max(1, min(self.consumer_procs, self.consumers))


# ---------------------------------------------------------------------------
# Load-generator processes
# ---------------------------------------------------------------------------

TRACE_SLOW_US = 1000


def _quiet_collector() -> None:
    """A load-generator process's own collections count in the latencies it measures:
    freeze what the fork inherited (the coordinator's modules) so a collection walks
    only this process's new objects, and run young ones rarely (the loops make
    short-lived replies, no cycles that could pile up)."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


class PauseLog:
    """This process's collector pauses: [start µs (wall clock), wall µs, generation, CPU µs].

    The CPU time (this thread's) is what the collection itself cost; the wall
    time also holds any preemption in between, so on a loaded machine only the
    CPU figure compares runs.
    """

    def __init__(self) -> None:
        self.events: list[list[int]] = []
        self._wall = 0
        self._began = 0
        self._cpu = 0
        gc.callbacks.append(self._record)

    def _record(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._wall = time.time_ns() // 1000
            self._cpu = time.thread_time_ns()
            self._began = time.perf_counter_ns()
        else:
            took = (time.perf_counter_ns() - self._began) // 1000
            cpu = (time.thread_time_ns() - self._cpu) // 1000
            self.events.append([self._wall, took, info["generation"], cpu])

    def stop(self) -> None:
        if self._record in gc.callbacks:
            gc.callbacks.remove(self._record)


class StallProbe:
    """Event-loop stalls: a 1 ms timer notes each time it fired more than `over_us` late,
    as [start µs (wall clock), late µs, µs this thread waited for a core meanwhile
    (/proc/thread-self/schedstat's run delay), µs of CPU it used meanwhile]. A stall
    spent mostly waiting was the machine's scheduling; one spent mostly running was
    the loop's own work; one with neither was an idle loop's timer firing late
    (harmless: I/O would have woken it). uvloop's timers have 1 ms granularity, so
    lateness under ~1 ms is the timer's, not a stall."""

    def __init__(self, loop: asyncio.AbstractEventLoop, over_us: int = 1000) -> None:
        self.events: list[list[int]] = []
        self._loop = loop
        self._over = over_us * 1000
        self._handle: asyncio.TimerHandle | None = None
        try:
            self._fd: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None
        self._waited = self._run_delay()
        self._cpu = time.thread_time_ns()
        self._tick(time.monotonic_ns() + 1_000_000)

    def _run_delay(self) -> int:
        if self._fd is None:
            return 0
        try:
            return int(os.pread(self._fd, 128, 0).split()[1])
        except (OSError, ValueError, IndexError):
            return 0

    def _tick(self, due_ns: int) -> None:
        now = time.monotonic_ns()
        waited = self._run_delay()
        cpu = time.thread_time_ns()
        late = now - due_ns
        if late > self._over:
            start = time.time_ns() // 1000 - late // 1000
            self.events.append([start, late // 1000, (waited - self._waited) // 1000,
                                (cpu - self._cpu) // 1000])
        self._waited = waited
        self._cpu = cpu
        self._handle = self._loop.call_later(0.001, self._tick, now + 1_000_000)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _producer_main(
    endpoint: Endpoint, stream: bytes, rate: float, start_at: float, end_at: float,
    payload: int, out: mp.Queue,
) -> None:
    result: dict = {"kind": "producer", "sent": 0, "max_behind_ms": 0.0, "error": None}
    _quiet_collector()
    try:
        client = SyncClient(endpoint, timeout_s=30.0)
        fields = 2 + (2 if payload else 0)
        head = (
            b"*%d\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n$1\r\n*\r\n$2\r\nts\r\n"
            % (3 + fields, len(stream), stream)
        )
        tail = b"$7\r\npayload\r\n$%d\r\n%s\r\n" % (payload, b"x" * payload) if payload else b""
        sent = 0
        max_behind = 0.0
        time.sleep(max(0.0, start_at - time.time()))
        while True:
            now = time.time()
            if now >= end_at:
                break
            due = int((now - start_at) * rate) - sent
            if due > 0:
                # How late the oldest unsent message is: shows when the server
                # (or this machine) made the producer fall behind its schedule.
                max_behind = max(max_behind, (now - start_at) - sent / rate)
                ts = b"%d" % (time.time_ns() // 1000)
                one = head + b"$%d\r\n%s\r\n" % (len(ts), ts) + tail
                errors, first = client.send_raw_count_errors(one * due, due)
                if errors:
                    raise RespError(f"XADD failed: {first}")
                sent += due
            tick = int((time.time() - start_at) * 1000) + 1
            time.sleep(max(0.0, start_at + tick / 1000 - time.time()))
        result["sent"] = sent
        result["max_behind_ms"] = max_behind * 1000
        client.close()
    except Exception as exc:  # reported to the coordinator, which fails the run
        result["error"] = f"{type(exc).__name__}: {exc}"
    result["cpu_s"] = procinfo.self_cpu_seconds()
    out.put(result)


async def _consume(
    endpoint: Endpoint, stream: bytes, group: bytes, name: bytes, count: int, block_ms: int,
    warm_us: int, stop: Event, hard_deadline: float, state: dict, latencies: array,
    slow: array | None = None,
) -> None:
    client = await AsyncClient.open(endpoint)
    read_cmd = (
        b"XREADGROUP", b"GROUP", group, name, b"COUNT", b"%d" % count,
        b"BLOCK", b"%d" % block_ms, b"STREAMS", stream, b">",
    )
    try:
        while True:
            if time.time() > hard_deadline:
                state["timed_out"] = True
                return
            reply = await client.call(*read_cmd)
            if not reply:
                if stop.is_set():
                    return
                continue
            now_us = time.time_ns() // 1000
            entries = reply[0][1]
            ids = []
            for entry_id, fields in entries:
                ids.append(entry_id)
                if fields:
                    sent_us = int(fields[1])
                    if sent_us >= warm_us:
                        latencies.append(now_us - sent_us)
                        if slow is not None and now_us - sent_us > TRACE_SLOW_US:
                            slow.extend((sent_us, now_us))
            state["consumed"] += len(entries)
            # Await first: `state[k] += await ...` would read state[k] before the
            # await and lose the other consumers' updates made meanwhile.
            acked = await client.call(b"XACK", stream, group, *ids)
            state["acked"] += acked
    finally:
        await client.close()


def _consumer_proc_main(
    endpoint: Endpoint, stream: bytes, group: bytes, names: list[bytes], count: int,
    block_ms: int, warm_us: int, stop: Event, hard_deadline: float, out: mp.Queue,
    trace: bool = False,
) -> None:
    state = {"kind": "consumer", "consumed": 0, "acked": 0, "timed_out": False, "error": None}
    latencies = array("q")
    _quiet_collector()
    slow = array("q") if trace else None
    pauses = PauseLog() if trace else None
    stalls: list[list[int]] = []
    try:
        try:
            import uvloop

            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        except ImportError:
            pass

        async def run_all() -> None:
            probe = StallProbe(asyncio.get_running_loop()) if trace else None
            tasks = [
                asyncio.create_task(
                    _consume(endpoint, stream, group, name, count, block_ms, warm_us, stop,
                             hard_deadline, state, latencies, slow)
                )
                for name in names
            ]
            done = await asyncio.gather(*tasks, return_exceptions=True)
            if probe is not None:
                probe.stop()
                stalls.extend(probe.events)
            errors = [d for d in done if isinstance(d, BaseException)]
            if errors:
                raise errors[0]

        asyncio.run(run_all())
    except Exception as exc:
        state["error"] = f"{type(exc).__name__}: {exc}"
    state["cpu_s"] = procinfo.self_cpu_seconds()
    state["latencies"] = latencies.tobytes()
    if pauses is not None and slow is not None:
        pauses.stop()
        state["trace"] = {"pid": os.getpid(), "gc": pauses.events, "stalls": stalls,
                          "slow": slow.tolist()}
    out.put(state)


# ---------------------------------------------------------------------------
# Coordinator
# ---------------------------------------------------------------------------


def _context() -> Any:  # (a ForkContext or SpawnContext)
    methods = mp.get_all_start_methods()
    # fork starts the load generator in milliseconds and needs no importable
    # __main__; the coordinator holds no threads or event loop at this point.
    return mp.get_context("fork" if "fork" in methods else "spawn")


def _server_identity(client: SyncClient) -> str:
    try:
        raw = client.call("INFO", "server")
    except RespError:
        return "unknown server"
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    fields = dict(
        line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#")
    )
    if "rillet_version" in fields:
        return f"rillet {fields['rillet_version'].strip()}"
    if "redis_version" in fields:
        return f"redis {fields['redis_version'].strip()}"
    return "unknown server"


def run_latency(cfg: LatencyConfig) -> dict:
    """Run one latency test and return its result (see `format_report`)."""
    stream = cfg.stream.encode()
    group = cfg.group.encode()
    setup = SyncClient(cfg.endpoint, timeout_s=30.0)
    try:
        identity = _server_identity(setup)
        setup.call("DEL", stream)
        setup.call("XGROUP", "CREATE", stream, group, "$", "MKSTREAM")
    except BaseException:
        setup.close()
        raise

    server_pid = cfg.server_pid
    if server_pid is None and cfg.endpoint.is_local:
        server_pid = procinfo.pid_listening_on(cfg.endpoint.port)

    ctx = _context()
    out: mp.Queue = ctx.Queue()
    stop = ctx.Event()
    start_at = time.time() + 0.5
    end_at = start_at + cfg.warmup_s + cfg.duration_s
    warm_us = int((start_at + cfg.warmup_s) * 1e6)
    hard_deadline = end_at + cfg.drain_timeout_s + cfg.block_ms / 1000

    names = [b"consumer-%d" % i for i in range(cfg.consumers)]
    per_proc = [names[i :: cfg.consumer_procs] for i in range(cfg.consumer_procs)]
    procs = [
        ctx.Process(
            target=_producer_main,
            args=(cfg.endpoint, stream, cfg.rate / cfg.producers,
                  start_at + i / (cfg.rate * cfg.producers), end_at, cfg.payload_bytes, out),
            daemon=True,
        )
        for i in range(cfg.producers)
    ] + [
        ctx.Process(
            target=_consumer_proc_main,
            args=(cfg.endpoint, stream, group, chunk, cfg.count, cfg.block_ms, warm_us, stop,
                  hard_deadline, out, cfg.trace),
            daemon=True,
        )
        for chunk in per_proc
    ]

    others_before = procinfo.all_processes_cpu()
    server_cpu_before = _safe_cpu(server_pid)
    self_cpu_before = procinfo.self_cpu_seconds()
    wall_start = time.monotonic()
    for proc in procs:
        proc.start()
    child_pids = {p.pid for p in procs}

    results: list[dict] = []
    problems: list[str] = []
    producers_left = cfg.producers
    total = len(procs)
    collect_deadline = hard_deadline + 5.0
    while len(results) < total:
        remaining = collect_deadline - time.time()
        if remaining <= 0:
            problems.append("load generator did not finish in time")
            break
        try:
            item = out.get(timeout=min(remaining, 0.5))
        except queue_mod.Empty:
            if not any(p.is_alive() for p in procs) and out.empty():
                problems.append("a load-generator process died without reporting")
                break
            continue
        results.append(item)
        if item["kind"] == "producer":
            producers_left -= 1
            if producers_left == 0:
                stop.set()
    stop.set()
    for proc in procs:
        proc.join(timeout=2.0)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=2.0)
    wall = time.monotonic() - wall_start
    server_cpu = _safe_cpu(server_pid) - server_cpu_before if server_pid else None
    self_cpu = procinfo.self_cpu_seconds() - self_cpu_before
    others_after = procinfo.all_processes_cpu()

    producer_results = [r for r in results if r["kind"] == "producer"]
    consumer_results = [r for r in results if r["kind"] == "consumer"]
    for item in results:
        if item.get("error"):
            problems.append(f"{item['kind']}: {item['error']}")
        if item.get("timed_out"):
            problems.append("consumers hit the drain deadline before the stream was drained")

    sent = sum(r["sent"] for r in producer_results)
    consumed = sum(r["consumed"] for r in consumer_results)
    acked = sum(r["acked"] for r in consumer_results)
    latencies = array("q")
    for item in consumer_results:
        latencies.frombytes(item["latencies"])

    pending: int | None = None
    stream_len: int | None = None
    try:
        summary = setup.call("XPENDING", stream, group)
        pending = int(summary[0]) if isinstance(summary, list) else None
        stream_len = int(setup.call("XLEN", stream))
        if not cfg.keep:
            setup.call("DEL", stream)
    except (RespError, OSError) as exc:
        problems.append(f"final check failed: {exc}")
    setup.close()

    if not (sent == consumed == acked):
        problems.append(f"sent {sent}, consumed {consumed}, acked {acked} differ")
    if pending:
        problems.append(f"{pending} messages still pending")
    if stream_len is not None and stream_len != sent:
        problems.append(f"stream length {stream_len} != sent {sent}")

    trace = [r["trace"] for r in consumer_results if "trace" in r]
    producer_cpu = sum(r.get("cpu_s", 0.0) for r in producer_results)
    consumer_cpu = sum(r.get("cpu_s", 0.0) for r in consumer_results)
    others = 0.0
    excluded = child_pids | {os.getpid()} | ({server_pid} if server_pid else set())
    for pid, cpu in others_after.items():
        if pid not in excluded:
            others += max(0.0, cpu - others_before.get(pid, 0.0))

    stats = latency_stats(latencies)
    return {
        "label": cfg.label,
        "server": identity,
        "url": cfg.endpoint.url,
        "config": {k: v for k, v in asdict(cfg).items() if k != "endpoint"},
        "sent": sent,
        "consumed": consumed,
        "acked": acked,
        "pending": pending,
        "stream_len": stream_len,
        "ok": not problems,
        "problems": problems,
        "wall_s": wall,
        "cpu": {
            "server_cores": server_cpu / wall if server_cpu is not None else None,
            "server_pid": server_pid,
            "producer_cores": producer_cpu / wall,
            "consumer_cores": consumer_cpu / wall,
            "coordinator_cores": self_cpu / wall,
            "loadgen_cores": (producer_cpu + consumer_cpu + self_cpu) / wall,
            "other_cores": others / wall,
        },
        "producer_max_behind_ms": max((r["max_behind_ms"] for r in producer_results), default=0.0),
        **({"trace": trace} if cfg.trace else {}),
        **stats,
    }


def _safe_cpu(pid: int | None) -> float:
    if not pid:
        return 0.0
    try:
        return procinfo.cpu_seconds(pid)
    except OSError:
        return 0.0


def latency_stats(latencies_us: array | list[int]) -> dict:
    """Histogram (1 ms buckets), percentiles and CDF points of latencies in µs."""
    values = sorted(max(0, v) for v in latencies_us)
    n = len(values)
    if n == 0:
        return {"measured": 0, "buckets_ms": {}, "percentiles_ms": {}, "cdf": []}

    def pct(p: float) -> float:
        return values[min(n - 1, max(0, math.ceil(p * n) - 1))] / 1000

    buckets: dict[int, int] = {}
    for v in values:
        key = v // 1000
        buckets[key] = buckets.get(key, 0) + 1
    # CDF sampled densely in the tail, where the interesting part is.
    fractions = sorted(
        {i / CDF_POINTS for i in range(1, CDF_POINTS)}
        | {1 - 10 ** (-k / 10) for k in range(10, 51)}
    )
    cdf = [[values[min(n - 1, int(f * n))] / 1000, f] for f in fractions]
    cdf.append([values[-1] / 1000, 1.0])
    under_2ms = sum(1 for v in values if v <= 2000) / n
    return {
        "measured": n,
        "buckets_ms": {str(k): c for k, c in sorted(buckets.items())},
        "percentiles_ms": {
            "p50": pct(0.50), "p90": pct(0.90), "p99": pct(0.99), "p99.9": pct(0.999),
            "p99.99": pct(0.9999), "max": values[-1] / 1000, "mean": sum(values) / n / 1000,
        },
        "within_2ms_pct": under_2ms * 100,
        "cdf": cdf,
    }


def _fmt_pct(value: float) -> str:
    if value == 0 or value >= 0.01:
        return f"{value:.2f}%"
    return f"{value:.2g}%"


def format_histogram(result: dict, overflow_ms: int = 50) -> list[str]:
    """The seeds' lines: 'Processed between 0 and 1 ms -> 74.11%'."""
    n = result["measured"]
    if not n:
        return ["no messages measured"]
    buckets = {int(k): v for k, v in result["buckets_ms"].items()}
    lines = []
    last = max([4] + [k for k in buckets if k < overflow_ms])
    for ms in range(0, min(last, overflow_ms - 1) + 1):
        count = buckets.get(ms, 0)
        if ms <= 4 or count:
            lines.append(f"Processed between {ms} and {ms + 1} ms -> {_fmt_pct(100 * count / n)}")
    over = sum(c for k, c in buckets.items() if k >= overflow_ms)
    if over:
        lines.append(f"Processed in {overflow_ms} ms or more -> {_fmt_pct(100 * over / n)}")
    return lines


def format_report(result: dict) -> str:
    cfg = result["config"]
    lines = [
        f"== {result['label']} ({result['server']}, {result['url']}): {cfg['rate']} msg/s for "
        f"{cfg['duration_s']:g} s (+{cfg['warmup_s']:g} s warm-up), {cfg['consumers']} consumers "
        f"in one group ({cfg['consumer_procs']} processes), COUNT {cfg['count']} "
        f"BLOCK {cfg['block_ms']}",
        f"sent {result['sent']}, consumed {result['consumed']}, acked {result['acked']}, "
        f"pending {result['pending']}: {'OK' if result['ok'] else 'FAILED'}",
    ]
    lines += [f"  problem: {p}" for p in result["problems"]]
    lines += format_histogram(result)
    pcts = result["percentiles_ms"]
    if pcts:
        lines.append(
            f"p50 {pcts['p50']:.3f} ms, p99 {pcts['p99']:.3f} ms, p99.9 {pcts['p99.9']:.3f} ms, "
            f"p99.99 {pcts['p99.99']:.3f} ms, max {pcts['max']:.3f} ms "
            f"({result['measured']} messages measured, {result['within_2ms_pct']:.3f}% within 2 ms)"
        )
    cpu = result["cpu"]
    server = f"{cpu['server_cores']:.2f}" if cpu["server_cores"] is not None else "n/a (not local)"
    lines.append(
        f"CPU in cores (of {os.cpu_count()}): server {server}, load generator "
        f"{cpu['loadgen_cores']:.2f} (producers {cpu['producer_cores']:.2f}, consumers "
        f"{cpu['consumer_cores']:.2f}), other processes {cpu['other_cores']:.2f}"
    )
    lines.append(f"producer: at most {result['producer_max_behind_ms']:.1f} ms behind schedule")
    return "\n".join(lines)


def plot_cdf(runs: list[dict], path: str, title: str) -> str | None:
    """One chart for all runs: CDF (log x) and tail (1 - CDF, log-log). None if no matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    colors: dict[str, str] = {}
    palette = ["tab:red", "tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown"]
    fig, (ax_cdf, ax_tail) = plt.subplots(1, 2, figsize=(12, 4.5))
    seen: set[str] = set()
    for run in runs:
        if not run.get("cdf"):
            continue
        label = run["label"]
        color = colors.setdefault(label, palette[len(colors) % len(palette)])
        xs = [max(p[0], 0.001) for p in run["cdf"]]
        ys = [p[1] for p in run["cdf"]]
        legend = label if label not in seen else None
        seen.add(label)
        ax_cdf.plot(xs, ys, color=color, label=legend, alpha=0.8, drawstyle="steps-post")
        ax_tail.plot(xs, [max(1 - y, 1e-6) for y in ys], color=color, label=legend, alpha=0.8,
                     drawstyle="steps-post")
    for ax in (ax_cdf, ax_tail):
        ax.set_xscale("log")
        ax.set_xlabel("latency, produce to consume (ms)")
        ax.axvline(2.0, color="grey", linestyle=":", linewidth=1)
        ax.grid(True, which="both", alpha=0.3)
    ax_cdf.set_ylabel("fraction of messages")
    ax_tail.set_yscale("log")
    ax_tail.set_ylabel("fraction slower than x")
    ax_tail.axhline(1e-3, color="grey", linestyle=":", linewidth=1)
    ax_cdf.legend(loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", action="append", default=[],
                        help="redis://host:port[/db] (repeat to compare servers on one chart)")
    parser.add_argument("--port", type=int, action="append", default=[],
                        help="shortcut for --url redis://127.0.0.1:PORT (repeatable)")
    parser.add_argument("--label", action="append", default=[], help="label per server, in order")
    parser.add_argument("--rate", type=int, default=10_000, help="total messages per second")
    parser.add_argument("--consumers", type=int, default=10)
    parser.add_argument("--consumer-procs", type=int, default=2)
    parser.add_argument("--producers", type=int, default=1)
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds not counted")
    parser.add_argument("--count", type=int, default=100, help="XREADGROUP COUNT")
    parser.add_argument("--block", type=int, default=1000, help="XREADGROUP BLOCK ms")
    parser.add_argument("--payload", type=int, default=0, help="extra payload bytes per message")
    parser.add_argument("--stream", default="", help="stream key (default: a fresh unique key)")
    parser.add_argument("--group", default="rillet-bench")
    parser.add_argument("--server-pid", type=int, default=None,
                        help="server pid for CPU accounting (default: found by port)")
    parser.add_argument("--keep", action="store_true", help="keep the stream afterwards")
    parser.add_argument("--trace", action="store_true",
                        help="record the consumer processes' collections, loop stalls and "
                             "slow messages in the JSON (bench/latency_tail.py reads them)")
    parser.add_argument("--json", default="", help="write the results to this JSON file")
    parser.add_argument("--plot", default="latency_cdf.png",
                        help="PNG latency CDF ('' to skip)")


def run_from_args(args: argparse.Namespace) -> int:
    urls = list(args.url) + [f"redis://127.0.0.1:{p}" for p in args.port]
    if not urls:
        urls = ["redis://127.0.0.1:6379"]
    results = []
    for index, url in enumerate(urls):
        endpoint = parse_url(url)
        label = args.label[index] if index < len(args.label) else ""
        cfg = LatencyConfig(
            endpoint=endpoint, rate=args.rate, consumers=args.consumers,
            consumer_procs=args.consumer_procs, producers=args.producers,
            duration_s=args.duration, warmup_s=args.warmup, count=args.count,
            block_ms=args.block, payload_bytes=args.payload, stream=args.stream,
            group=args.group, server_pid=args.server_pid if len(urls) == 1 else None,
            keep=args.keep, label=label, trace=args.trace,
        )
        try:
            result = run_latency(cfg)
        except (OSError, RespError) as exc:
            print(f"== {cfg.label}: n/a: {type(exc).__name__}: {exc}", flush=True)
            results.append({"label": cfg.label, "ok": False, "problems": [str(exc)]})
            continue
        print(format_report(result), flush=True)
        results.append(result)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    if args.plot:
        title = f"end-to-end latency, {args.rate} msg/s, {args.consumers} consumers"
        if plot_cdf(results, args.plot, title):
            print(f"plot: {args.plot}")
    return 0 if results and all(r.get("ok") for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rillet bench latency", description=__doc__)
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
