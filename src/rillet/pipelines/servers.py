"""Server processes for pipelines, tests and benchmarks: an embedded rillet, or redis-server.

Each server runs as a child process on a free loopback port with persistence off, is
awaited with PING (bounded in time), and is terminated (then killed) on stop. Nothing
here touches a system service or a fixed port. The launcher is rillet.launch.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from types import TracebackType

from rillet import launch
from rillet.launch import free_port

__all__ = ["ServerProcess", "ServerStartError", "free_port", "redis_server", "rillet_server"]


class ServerStartError(RuntimeError):
    """The server process did not answer PING in time; the message includes its output."""


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
        self.proc = launch.spawn(self.argv, env=self.env, log=self._log)
        try:
            launch.wait_ready(self.port, self.proc, timeout_s, launch.PONG)
            return self
        except launch.NotReady:
            pass
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
        if proc is not None:
            launch.stop(proc, timeout_s)

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
    argv = launch.rillet_argv(port, None, *(["--http-port", str(http_port)] if http_port else []))
    server = ServerProcess("rillet", argv, port, launch.rillet_env())
    server.console_url = f"http://127.0.0.1:{http_port}/" if http_port else None
    return server


def redis_server(binary: str | None = None, port: int | None = None) -> ServerProcess:
    """A reference redis-server (Debian's by default), persistence off."""
    binary = binary or launch.redis7_binary() or launch.REDIS7_PATH
    port = port or free_port()
    # A directory of its own: a shared one (/tmp) may hold another server's dump.rdb,
    # which this one would try to load at start-up (and fail on a newer RDB version).
    # It logs to stdout, which output() shows.
    workdir = tempfile.mkdtemp(prefix="rillet-redis-")
    argv = launch.redis_argv(binary, port, workdir, "--protected-mode", "no", logfile=None)
    return ServerProcess("redis", argv, port, dict(os.environ))
