"""Helpers for persistence tests: a restartable rillet process, in-process servers.

`Node` starts, kills and restarts one rillet server on a fixed data dir and
port, so a test can crash it and look at what survives. Every server runs
with `--enable-debug-command yes` (DEBUG RELOAD / LOADAOF / DIGEST).
`InProcess` is a ServerState + Dispatcher without sockets, for loader tests.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from tests.helpers import servers
from tests.helpers.effects import recorder


class Node:
    def __init__(self, *args: str, env: dict | None = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="rillet-pers-")
        self.port = servers.free_port()
        self.args = list(args)
        self.env = env
        self.handle: servers.ServerHandle | None = None

    def start(self, *extra: str, wait: bool = True, env: dict | None = None) -> Node:
        merged = dict(os.environ)
        merged.update(self.env or {})
        merged.update(env or {})
        self.handle = servers.start_rillet(
            "--enable-debug-command", "yes", *self.args, *extra,
            port=self.port, dir=self.dir, env=merged, wait=wait,
        )
        if wait and not (env or {}).get("RILLET_KEY_LOAD_DELAY_US"):
            self.wait_loaded()
        return self

    def wait_loaded(self, timeout_s: float = 30.0) -> None:
        """PING answers while loading (as the command table says); wait for the data."""
        import time

        from tests.helpers.wire import Wire

        deadline = time.monotonic() + timeout_s
        with Wire(self.port) as wire:
            while b"loading:1" in wire.call("INFO", "persistence"):
                if time.monotonic() > deadline:
                    raise RuntimeError("still loading")
                time.sleep(0.02)

    def client(self, **kwargs):
        assert self.handle is not None
        return self.handle.client(**kwargs)

    def kill(self) -> None:
        if self.handle is not None:
            self.handle.stop(sig_kill=True)

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop()

    def restart(self, *extra: str) -> Node:
        self.stop()
        return self.start(*extra)

    @property
    def aof_dir(self) -> str:
        return os.path.join(self.dir, "appendonlydir")

    def log(self) -> str:
        try:
            with open(os.path.join(self.dir, "server.log"), encoding="utf-8",
                      errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def digest(client) -> str:
    value = client.execute_command("DEBUG", "DIGEST")
    return value.decode() if isinstance(value, bytes) else value


class InProcess:
    """A server without sockets: run commands, capture their effects."""

    def __init__(self) -> None:
        from rillet.dispatch import Dispatcher
        from rillet.state import ServerState

        self.state = ServerState()
        self.dispatcher = Dispatcher(self.state)
        self.client = self.state.new_client(None)
        self.client.authenticated = True
        self.effects: list = []
        self.state.effect_sinks.append(recorder(self.effects))

    def run(self, *argv: bytes | str | int) -> object:
        args = [a if isinstance(a, bytes) else str(a).encode() for a in argv]
        from tests.helpers.replies import plain

        return plain(self.dispatcher.execute(self.client, args))

    def digest(self) -> str:
        from rillet.persistence.digest import keyspace_digest

        return keyspace_digest(self.state)


def shutdown(node: Node, *options: str, timeout_s: float = 10.0) -> int:
    """SHUTDOWN over a raw socket (redis-py retries the lost connection for seconds)."""
    import socket

    from tests.helpers.wire import encode_command

    with socket.create_connection(("127.0.0.1", node.port), timeout=timeout_s) as sock:
        sock.sendall(encode_command("SHUTDOWN", *options))
        try:
            while sock.recv(4096):
                pass
        except OSError:
            pass
    assert node.handle is not None
    return node.handle.proc.wait(timeout_s)
