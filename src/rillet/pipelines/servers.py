"""Server processes for pipelines, tests and benchmarks: an embedded rillet, or redis-server.

Each server runs as a child process on a free loopback port with persistence off, is
awaited with PING (bounded in time), and is terminated (then killed) on stop. Nothing
here touches a system service or a fixed port.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import redis


class ServerStartError(RuntimeError):
    """The server process did not answer PING in time; the message includes its output."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _package_root() -> str:
    import rillet

    return str(Path(rillet.__file__).resolve().parent.parent)


class ServerProcess:
    """A child server process on 127.0.0.1:`port`; a context manager that stops it."""

    def __init__(self, kind: str, argv: Sequence[str], port: int, env: dict[str, str]) -> None:
        self.kind = kind
        self.argv = list(argv)
        self.port = port
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.console_url: str | None = None
        self._log = tempfile.TemporaryFile()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 20.0) -> ServerProcess:
        self.proc = subprocess.Popen(
            self.argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
        )
        deadline = time.monotonic() + timeout_s
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    if client.ping():
                        return self
                except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                    time.sleep(0.1)
        finally:
            client.close()
        output = self.output()
        self.stop()
        raise ServerStartError(
            f"{self.kind} server ({' '.join(self.argv)}) did not answer PING on port "
            f"{self.port} within {timeout_s:.0f}s. Output:\n{output[-2000:]}"
        )

    def output(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout_s)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def rillet_server(port: int | None = None, http_port: int | None = None) -> ServerProcess:
    """An embedded rillet server (`python -m rillet server`), persistence off; with
    `http_port`, its web console and /metrics there (`console_url`)."""
    port = port or free_port()
    env = dict(os.environ)
    root = _package_root()
    env["PYTHONPATH"] = os.pathsep.join(
        [root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]]
    )
    argv = [sys.executable, "-m", "rillet", "server", "--port", str(port)]
    argv += ["--bind", "127.0.0.1", "--save", ""]
    if http_port:
        argv += ["--http-port", str(http_port)]
    server = ServerProcess("rillet", argv, port, env)
    server.console_url = f"http://127.0.0.1:{http_port}/" if http_port else None
    return server


def redis_server(binary: str | None = None, port: int | None = None) -> ServerProcess:
    """A reference redis-server (Debian's by default), persistence off."""
    binary = binary or shutil.which("redis-server") or "/usr/bin/redis-server"
    port = port or free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    # A directory of its own: a shared one (/tmp) may hold another server's dump.rdb,
    # which this one would try to load at start-up (and fail on a newer RDB version).
    workdir = tempfile.mkdtemp(prefix="rillet-redis-")
    argv += ["--appendonly", "no", "--protected-mode", "no", "--dir", workdir]
    return ServerProcess("redis", argv, port, dict(os.environ))
