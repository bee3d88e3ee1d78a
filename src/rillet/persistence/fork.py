"""Background children: fork, let the child write a file, reap it from the cron.

fork() gives the child a copy-on-write image of the keyspace as it was at
that instant, so BGSAVE and BGREWRITEAOF never stop the event loop for longer
than the fork itself. The child drops every inherited descriptor (listening
sockets, clients, the AOF) so a parent killed meanwhile leaves no port held,
writes its file and leaves with os._exit: no atexit handlers, no buffered
output flushed twice.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

KIND_RDB = "rdb"
KIND_AOF = "aof"


@dataclass
class Child:
    pid: int
    kind: str
    started: float  # time.time() at fork
    fork_us: int  # how long fork() blocked the parent
    temp_path: str


# INFO stats' total_forks and latest_fork_usec (this process's forks, whatever for).
total = 0
latest_usec = 0


def start(kind: str, temp_path_for: Callable[[int], str], work: Callable[[str], None],
          keep_fds: tuple[int, ...] = ()) -> Child:
    """Fork a child running `work(temp_path)`; exit status 0 means the file is complete.

    `keep_fds` stay open in the child (a pipe it writes its output to).
    """
    began = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, reported through its exit status
        code = 1
        try:
            _become_child(keep_fds)
            work(temp_path_for(os.getpid()))
            code = 0
        except BaseException:
            try:
                os.write(2, traceback.format_exc().encode(errors="replace"))
            except OSError:
                pass
        finally:
            os._exit(code)
    fork_us = int((time.perf_counter() - began) * 1e6)
    global total, latest_usec
    total += 1
    latest_usec = fork_us
    return Child(pid, kind, time.time(), fork_us, temp_path_for(pid))


def _become_child(keep_fds: tuple[int, ...] = ()) -> None:  # pragma: no cover - child only
    # The collector would touch every object and copy every page for nothing.
    gc.disable()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        signal.signal(sig, signal.SIG_DFL)
    try:
        signal.set_wakeup_fd(-1)
    except (ValueError, OSError):
        pass
    low = 3
    for fd in sorted(keep_fds):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _max_fd())
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child exits soon


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 65536


def poll(child: Child) -> int | None:
    """The child's exit code if it has finished (reaped now), else None."""
    try:
        pid, status = os.waitpid(child.pid, os.WNOHANG)
    except ChildProcessError:
        return -1
    if pid == 0:
        return None
    return os.waitstatus_to_exitcode(status)


def kill(child: Child) -> None:
    try:
        os.kill(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(child.pid, 0)
    except ChildProcessError:
        pass
