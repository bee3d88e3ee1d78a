"""Run redis-benchmark against one server and measure the CPU on both sides.

Every figure comes with server CPU µs per operation and the cores used by the
server and by redis-benchmark: at -P 1 on 2 cores the single-threaded client
saturates a core, and the report must show it (research/perf.md §1, §4).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass

from rillet.bench import procinfo


class BenchmarkFailed(RuntimeError):
    """redis-benchmark failed or the server returned an error; the text is for the n/a cell."""


@dataclass
class BenchResult:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    wall_s: float
    server_cpu_s: float
    client_cpu_s: float

    @property
    def server_us_per_op(self) -> float:
        return self.server_cpu_s / self.requests * 1e6 if self.requests else float("nan")

    @property
    def server_cores(self) -> float:
        return self.server_cpu_s / self.wall_s if self.wall_s else float("nan")

    @property
    def client_cores(self) -> float:
        return self.client_cpu_s / self.wall_s if self.wall_s else float("nan")

    def as_dict(self) -> dict:
        out = asdict(self)
        out.update(
            server_us_per_op=self.server_us_per_op,
            server_cores=self.server_cores,
            client_cores=self.client_cores,
        )
        return out


def redis_benchmark_binary() -> str | None:
    return shutil.which("redis-benchmark") or (
        "/usr/bin/redis-benchmark" if os.path.exists("/usr/bin/redis-benchmark") else None
    )


def run_redis_benchmark(
    port: int,
    server_pid: int | None,
    *,
    requests: int,
    pipeline: int,
    clients: int = 50,
    tests: str | None = None,
    command: list[str] | None = None,
    random_keyspace: int | None = None,
    threads: int | None = None,
    timeout_s: float = 120.0,
    host: str = "127.0.0.1",
    extra: list[str] | None = None,
) -> BenchResult:
    """One redis-benchmark run: either `-t tests` or one custom command."""
    binary = redis_benchmark_binary()
    if binary is None:
        raise BenchmarkFailed("redis-benchmark not found (apt-get install -y redis-tools)")
    argv = [
        binary, "-h", host, "-p", str(port), "-c", str(clients), "-n", str(requests),
        "-P", str(pipeline), "--csv",
    ]
    if extra:
        argv += extra  # e.g. --tls --cacert ..., --user/-a
    if random_keyspace:
        argv += ["-r", str(random_keyspace)]
    if threads and threads > 1:
        argv += ["--threads", str(threads)]
    if tests:
        argv += ["-t", tests]
    elif command:
        argv += command
    else:
        raise ValueError("tests or command is required")

    server_cpu_before = procinfo.cpu_seconds(server_pid) if server_pid else 0.0
    client_cpu_before = procinfo.children_cpu_seconds()
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise BenchmarkFailed(f"redis-benchmark did not finish within {timeout_s:.0f} s") from None
    wall = time.monotonic() - start
    client_cpu = procinfo.children_cpu_seconds() - client_cpu_before
    try:
        server_cpu = procinfo.cpu_seconds(server_pid) - server_cpu_before if server_pid else 0.0
    except OSError:
        raise BenchmarkFailed("server exited during redis-benchmark") from None

    text = out + err
    if "Error from server" in text or "Error:" in text:
        line = next(
            (ln for ln in text.splitlines() if "Error" in ln), text.strip().splitlines()[-1]
        )
        raise BenchmarkFailed(line.strip()[:200])
    rows = [row for row in csv.reader(io.StringIO(out)) if row and row[0] != "test"]
    if proc.returncode != 0 or not rows:
        tail = " ".join(text.strip().splitlines()[-2:])[:200]
        raise BenchmarkFailed(f"redis-benchmark exit {proc.returncode}: {tail}")
    row = rows[-1]
    rps = float(row[1])
    # redis-benchmark's own clock excludes its start-up; use it for the rate and
    # our wall clock (which brackets the CPU readings) for core usage.
    return BenchResult(
        rps=rps,
        p50_ms=float(row[4]),
        p99_ms=float(row[6]),
        requests=requests,
        wall_s=min(wall, requests / rps + 0.05) if rps > 0 else wall,
        server_cpu_s=server_cpu,
        client_cpu_s=client_cpu,
    )
