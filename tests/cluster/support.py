"""Single cluster nodes (rillet and Redis 8.2.3) for the cluster tests.

A cluster node listens on its port and, for Redis, on the bus port (port +
10000): both must be free. A node learns of others here through a nodes.conf
written before it starts (no bus is needed for that), the same file for rillet
and Redis, so both see the same cluster.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire

# A node timeout long enough that a peer nobody listens for does not turn PFAIL
# during a test (Redis's bus would notice), yet a rejoin delay (5 s at most) is waited.
NODE_TIMEOUT_MS = 60000
CLUSTER_ARGS = ("--cluster-enabled", "yes", "--cluster-node-timeout", str(NODE_TIMEOUT_MS))


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port() -> int:
    """A free port whose bus port (+10000) is free too."""
    for _ in range(200):
        port = servers.free_port()
        if port + 10000 <= 65535 and _bindable(port + 10000):
            return port
    raise RuntimeError("no free port pair")


def start(kind: str, *extra: str, port: int | None = None, dir: str | None = None,
          ) -> servers.ServerHandle:
    port = port or free_cluster_port()
    if kind == "rillet":
        return servers.start_rillet(*CLUSTER_ARGS, *extra, port=port, dir=dir)
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    return servers.start_redis(binary, *CLUSTER_ARGS, *extra, kind="redis8", port=port, dir=dir)


def past_writable_delay(started: float) -> None:
    """A master's state stays `fail` for 2 s after it starts (CLUSTER_WRITABLE_DELAY),
    and CLUSTER INFO's cluster_size is not computed meanwhile: wait it out, so that
    both servers are past it."""
    time.sleep(max(0.0, started + 2.5 - time.monotonic()))


def with_nodes_conf(text: str) -> str:
    """A fresh directory holding `text` as nodes.conf."""
    workdir = tempfile.mkdtemp(prefix="cluster-test-")
    with open(os.path.join(workdir, "nodes.conf"), "w") as file:
        file.write(text)
    return workdir


def node_line(name: str, port: int, flags: str, slots: str, shard: str) -> str:
    """One nodes.conf line of a master; `myself`'s address is left for the node to fill."""
    address = ":0@0" if "myself" in flags else f"127.0.0.1:{port}@{port + 10000}"
    return f"{name} {address},,tls-port=0,shard-id={shard * 40} {flags} - 0 0 1 connected {slots}\n"


def start_pair(nodes_conf: str | None = None) -> Pair:
    """A rillet node and a Redis 8.2.3 node (each given `nodes_conf`, if any), past the
    writable delay."""
    ours = start("rillet", dir=None if nodes_conf is None else with_nodes_conf(nodes_conf))
    try:
        ref = start("redis8", dir=None if nodes_conf is None else with_nodes_conf(nodes_conf))
    except BaseException:
        ours.stop()
        raise
    both = Pair(ours, ref)
    # Timed from when both answer, not from before the first start: on a loaded machine
    # a start can take most of the delay, and the state is computed from the server's own.
    past_writable_delay(time.monotonic())
    return both


def two_rillet_masters(a: str, b: str) -> tuple[servers.ServerHandle, servers.ServerHandle]:
    """Two rillet masters named `a` (slots 0-8191) and `b` (the rest) that know each
    other through their nodes.conf, both with cluster_state:ok."""
    a_port, b_port = free_cluster_port(), free_cluster_port()
    end = "vars currentEpoch 2 lastVoteEpoch 0\n"
    a_conf = (node_line(a, a_port, "myself,master", "0-8191", "1")
              + node_line(b, b_port, "master", "8192-16383", "2") + end)
    b_conf = (node_line(a, a_port, "master", "0-8191", "1")
              + node_line(b, b_port, "myself,master", "8192-16383", "2") + end)
    first = start("rillet", port=a_port, dir=with_nodes_conf(a_conf))
    try:
        second = start("rillet", port=b_port, dir=with_nodes_conf(b_conf))
    except BaseException:
        first.stop()
        raise
    for node in (first, second):
        wire = Wire(node.port)
        wait_state(wire, b"ok")
        wire.close()
    return first, second


def myid(wire: Wire) -> bytes:
    reply = wire.call("CLUSTER", "MYID")
    return reply.split(b"\r\n")[1]


def myshardid(wire: Wire) -> bytes:
    return wire.call("CLUSTER", "MYSHARDID").split(b"\r\n")[1]


def masked(wire: Wire):
    """A normaliser for `wire`'s server: its own node and shard ids become fixed names."""
    names = {myid(wire): b"<myid>" + b"." * 34, myshardid(wire): b"<shard>" + b"." * 33}

    def normalise(raw: bytes) -> bytes:
        for name, shown in names.items():
            raw = raw.replace(name, shown)
        return raw

    return normalise


def wait_state(wire: Wire, state: bytes, timeout_s: float = 15.0) -> None:
    """Until CLUSTER INFO says cluster_state:<state> (a master waits out its delays)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if b"cluster_state:" + state in wire.call("CLUSTER", "INFO"):
            return
        time.sleep(0.05)
    raise AssertionError(f"cluster_state never became {state!r}")


def mask_pings(raw: bytes) -> bytes:
    """A peer's ping/pong times and link state in CLUSTER NODES: both buses try to
    reach the peers these tests name, when and how far each got is timing."""
    return re.sub(rb"(master|slave|handshake|noflags|fail\??) (-|[0-9a-f]{40}) \d+ \d+ (\d+) "
                  rb"(dis)?connected", rb"\1 \2 0 0 \3 -", raw)


class Pair:
    """A rillet node and a Redis 8.2.3 node: `check` sends both one command and compares
    the replies with each server's own ids (and `normalise`) masked."""

    def __init__(self, ours: servers.ServerHandle, ref: servers.ServerHandle) -> None:
        self.servers = (ours, ref)
        self.ours = Wire(ours.port)
        self.ref = Wire(ref.port)
        self.remask()

    def remask(self) -> None:
        """Again after CLUSTER RESET HARD, which takes a new id."""
        self._masks = (masked(self.ours), masked(self.ref))

    def both(self, *args: bytes | str | int) -> tuple[bytes, bytes]:
        return self.ours.call(*args), self.ref.call(*args)

    def check(self, *args: bytes | str | int, normalise=None) -> bytes:
        ours, ref = self.both(*args)
        ours, ref = self._masks[0](ours), self._masks[1](ref)
        ours = ours.replace(str(self.servers[0].port).encode(), b"<port>")
        ref = ref.replace(str(self.servers[1].port).encode(), b"<port>")
        ours = ours.replace(str(self.servers[0].port + 10000).encode(), b"<cport>")
        ref = ref.replace(str(self.servers[1].port + 10000).encode(), b"<cport>")
        if normalise is not None:
            ours, ref = normalise(ours), normalise(ref)
        assert ours == ref, f"{args!r}:\n  rillet: {ours!r}\n  redis:  {ref!r}"
        return ours

    def close(self) -> None:
        self.ours.close()
        self.ref.close()
        for server in self.servers:
            server.stop()


def key_in(first: int, last: int, prefix: str = "k") -> str:
    """A key whose slot is in [first, last]."""
    from rillet.cluster.keyslot import key_slot

    for n in range(100000):
        key = f"{prefix}{n}"
        if first <= key_slot(key.encode()) <= last:
            return key
    raise AssertionError("no key found")


def _rewrap(raw: bytes, change) -> bytes:
    """A bulk (or verbatim) reply with its text changed by `change`, its length redone."""
    header, _, rest = raw.partition(b"\r\n")
    body = rest[:-2]
    prefix = b""
    if header.startswith(b"="):
        prefix, body = body[:4], body[4:]
    body = prefix + change(body)
    return header[:1] + str(len(body)).encode() + b"\r\n" + body + b"\r\n"


def sorted_nodes(raw: bytes) -> bytes:
    """CLUSTER NODES with its lines in order: Redis lists them in its dict's order."""
    def change(body: bytes) -> bytes:
        lines = body.split(b"\n")[:-1]
        return b"".join(line + b"\n" for line in sorted(lines))

    return _rewrap(mask_pings(raw), change)


def without_bus_stats(raw: bytes) -> bytes:
    """CLUSTER INFO without the bus's message counts (both buses ping the peers they
    know, as many times as the time allowed)."""
    def change(body: bytes) -> bytes:
        body = re.sub(rb"cluster_stats_messages_[a-z-]+_(sent|received):\d+\r\n", b"", body)
        return re.sub(rb"(cluster_stats_messages_(sent|received)):\d+", rb"\1:0", body)

    return _rewrap(raw, change)


T = TypeVar("T")


def until(check: Callable[[], T], what: str, timeout_s: float, interval_s: float = 0.1) -> T:
    """`check()`'s first true value, polled every `interval_s` for at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval_s)
