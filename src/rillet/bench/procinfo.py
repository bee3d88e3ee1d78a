"""Per-process CPU, memory and machine facts from /proc, for honest benchmark reports.

On this kind of tickless VM the machine-wide busy time in /proc/stat is
unreliable (research/perf.md §4), so CPU is summed per process: schedstat
(nanoseconds, all threads) when available, else utime+stime ticks.
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import time
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int) -> list[str]:
    data = Path(f"/proc/{pid}/stat").read_text()
    # The command name may contain spaces and parentheses; fields start after the last ')'.
    return data[data.rindex(")") + 2 :].split()


def cpu_seconds_ticks(pid: int) -> float:
    """utime+stime of a process (all threads), at clock-tick resolution."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / _TICKS


def cpu_seconds(pid: int) -> float:
    """CPU time of a process, all threads, in seconds; nanosecond resolution when possible.

    Short redis-benchmark runs last well under a second, so 10 ms ticks are too
    coarse there; /proc/<pid>/task/*/schedstat counts nanoseconds.
    """
    total_ns = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return cpu_seconds_ticks(pid)
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                total_ns += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    if total_ns == 0:
        return cpu_seconds_ticks(pid)
    return total_ns / 1e9


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def settle_rss(pid: int, rounds: int = 20) -> int:
    """RSS once it stops moving (a freshly started or just loaded server still maps pages
    for a moment): two readings 0.1 s apart within 64 KiB, or the last of `rounds`."""
    last = rss_bytes(pid)
    for _ in range(rounds):
        time.sleep(0.1)
        now = rss_bytes(pid)
        if abs(now - last) < 64 * 1024:
            return now
        last = now
    return last


def self_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pid_listening_on(port: int) -> int | None:
    """The pid of the process with a TCP socket listening on `port` (needs /proc access)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 10:
                continue
            local, state, inode = parts[1], parts[3], parts[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(inode)
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fd_dir = f"/proc/{entry}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in targets:
                    return int(entry)
            except OSError:
                continue
    try:
        import psutil

        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == "LISTEN" and conn.laddr and conn.laddr.port == port and conn.pid:
                return int(conn.pid)
    except Exception:
        pass
    return None


def all_processes_cpu() -> dict[int, float]:
    """CPU seconds of every visible process (tick resolution), keyed by pid."""
    out: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                out[int(entry)] = cpu_seconds_ticks(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return out


def busy_cores(window_s: float = 0.5, exclude: set[int] | None = None) -> float:
    """Cores used by all processes (minus `exclude`) over a short window."""
    exclude = exclude or set()
    before = all_processes_cpu()
    start = time.monotonic()
    time.sleep(window_s)
    after = all_processes_cpu()
    wall = time.monotonic() - start
    me = os.getpid()
    used = 0.0
    for pid, cpu in after.items():
        if pid in exclude or pid == me:
            continue
        used += max(0.0, cpu - before.get(pid, 0.0))
    return used / wall


def wait_for_quiet(
    threshold_cores: float, max_wait_s: float, exclude: set[int] | None = None
) -> float:
    """Wait until the other processes use under `threshold_cores`; return the last reading.

    The machine is shared with other sessions; a benchmark started while they
    compile or run Spark measures them, not us. Gives up after `max_wait_s`.
    """
    deadline = time.monotonic() + max_wait_s
    reading = busy_cores(0.5, exclude)
    while reading > threshold_cores and time.monotonic() < deadline:
        reading = busy_cores(0.5, exclude)
    return reading


def _first_line(path: str, prefix: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def tool_version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def git_commit(repo_dir: str) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", repo_dir, "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=10,
        )
        commit = out.stdout.strip() if out.returncode == 0 else "no commit yet"
        dirty = subprocess.run(
            ["git", "-C", repo_dir, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10,
        )
        if dirty.returncode == 0 and dirty.stdout.strip():
            commit += " (+ uncommitted changes)"
        return commit
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def machine_info() -> dict[str, str]:
    mem_kb = _first_line("/proc/meminfo", "MemTotal")
    info = {
        "cpu": _first_line("/proc/cpuinfo", "model name") or platform.processor() or "?",
        "cores": str(os.cpu_count()),
        "memory": f"{int(mem_kb.split()[0]) / 1024 / 1024:.1f} GiB" if mem_kb else "?",
        "kernel": platform.release(),
        "python": platform.python_version(),
    }
    for module in ("uvloop", "hiredis"):
        try:
            info[module] = __import__(module).__version__
        except Exception:
            info[module] = "absent"
    return info
