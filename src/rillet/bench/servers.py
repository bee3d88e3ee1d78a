"""Start and stop the servers under comparison: rillet, Debian's redis-server 7.0, Redis 8.2.

Each server gets a free loopback port, its own temp dir and the same
persistence flags, so a side-by-side figure compares like with like.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from rillet import launch
from rillet.bench.client import Endpoint, RespError, SyncClient
from rillet.launch import REDIS7_PATH, free_port, redis7_binary, redis8_binary


class ServerUnavailable(RuntimeError):
    """The server could not be started; the message says why (for an 'n/a' cell)."""


@dataclass(frozen=True)
class ServerKind:
    """One column of the comparison: a name and how to launch it."""

    name: str  # "rillet", "redis", "redis8"
    label: str  # shown in tables
    binary: str | None = None  # redis-server path; None for rillet
    template: str | None = None  # a custom command line for the subject ({port}, {dir})

    def command(self, port: int, workdir: str, persistence: list[str]) -> list[str]:
        if self.template:
            return [*shlex.split(self.template.format(port=port, dir=workdir)), *persistence]
        if self.binary is None:
            return launch.rillet_argv(port, workdir, *persistence)
        return launch.redis_argv(self.binary, port, workdir, *persistence)


def server_kinds(include_redis8: bool, rillet_cmd: str | None = None) -> list[ServerKind]:
    kinds = [ServerKind("rillet", "rillet", template=rillet_cmd)]
    redis7 = redis7_binary()
    kinds.append(ServerKind("redis", _label("redis", redis7), redis7 or REDIS7_PATH))
    if include_redis8:
        redis8 = redis8_binary()
        if redis8:
            kinds.append(ServerKind("redis8", _label("redis", redis8), redis8))
    return kinds


def baseline_kind(src: str) -> ServerKind:
    """rillet run from another checkout's `src` directory: a column to compare a change with."""
    template = (f"env PYTHONPATH={shlex.quote(src)} {shlex.quote(sys.executable)}"
                " -m rillet server --port {port} --bind 127.0.0.1 --save '' --dir {dir}")
    return ServerKind("baseline", "rillet (baseline)", template=template)


def measure_interleaved(kinds: list[ServerKind], reps: int,
                        measure: Callable[[ServerKind], dict[str, float]],
                        ) -> dict[str, list[dict[str, float]]]:
    """`measure(kind)` reps times per kind, interleaved (A, B, A, B...), by kind name; a
    server that cannot start is reported and skipped."""
    results: dict[str, list[dict[str, float]]] = {kind.name: [] for kind in kinds}
    for _ in range(reps):
        for kind in kinds:
            try:
                results[kind.name].append(measure(kind))
            except ServerUnavailable as error:
                print(f"{kind.label}: n/a: {error}")
    return results


def _label(name: str, binary: str | None) -> str:
    if not binary or not os.path.exists(binary):
        return name
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return name
    for part in out.stdout.split():
        if part.startswith("v="):
            return f"{name} {part[2:]}"
    return name


class RunningServer(launch.Server):
    def __init__(self, kind: ServerKind, port: int, workdir: str, proc: subprocess.Popen[bytes],
                 argv: list[str], owns_dir: bool = True) -> None:
        super().__init__(kind.name, port, proc, workdir, argv)
        self.kind = kind
        self.owns_dir = owns_dir
        self.started_s = time.monotonic()

    @property
    def workdir(self) -> str:
        return self.dir

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.host, self.port)

    def client(self, timeout_s: float | None = 60.0) -> SyncClient:
        if not self.alive():
            raise ServerUnavailable(self.exit_message())
        return SyncClient(self.endpoint, timeout_s=timeout_s)

    def exit_message(self) -> str:
        code = self.proc.poll()
        tail = self.log_tail()
        state = "running" if code is None else f"exited with code {code}"
        return f"{self.kind.name} {state}" + (f": {tail}" if tail else "")

    def stop(self, timeout_s: float = 60.0, kill: bool = False) -> int | None:
        return super().stop(timeout_s, kill)

    def cleanup(self, kill: bool = False) -> None:
        self.stop(kill=kill)
        if self.owns_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def start_server(
    kind: ServerKind,
    persistence: list[str] | None = None,
    workdir: str | None = None,
    tmp_root: str | None = None,
    ready_timeout_s: float = 20.0,
    wait_ready: bool = True,
    port: int | None = None,
) -> RunningServer:
    """Start one server (on `port`, else a free one); raise ServerUnavailable with the
    reason when it does not come up."""
    if kind.binary is not None and not os.path.exists(kind.binary):
        raise ServerUnavailable(
            f"{kind.binary} not found (apt-get install -y redis-server redis-tools)"
        )
    owns_dir = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix=f"bench-{kind.name}-", dir=tmp_root)
    port = port or free_port()
    argv = kind.command(port, workdir, persistence or [])
    rillet = kind.binary is None
    try:
        # rillet logs to stdout; redis-server is given --logfile instead.
        proc = launch.spawn(argv, workdir, launch.rillet_env() if rillet else None,
                            os.path.join(workdir, "server.log") if rillet else None)
    except OSError as exc:
        raise ServerUnavailable(f"cannot start {kind.name}: {exc}") from exc
    server = RunningServer(kind, port, workdir, proc, argv, owns_dir)
    if wait_ready:
        try:
            launch.wait_ready(port, proc, ready_timeout_s, launch.PONG)
        except launch.NotReady:
            message = (server.exit_message() if not server.alive() else
                       f"{kind.name} did not answer PING within {ready_timeout_s:.0f} s"
                       + (f": {server.log_tail()}" if server.log_tail() else ""))
            server.stop(5)
            if owns_dir:
                server.cleanup()
            raise ServerUnavailable(message) from None
    return server


def info_fields(client: SyncClient, section: str | None = None) -> dict[str, str]:
    """INFO as a dict; empty when the server has no INFO (yet)."""
    try:
        raw = client.call("INFO", section) if section else client.call("INFO")
    except RespError:
        return {}
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    return fields
