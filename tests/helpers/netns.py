"""A private network namespace joined to this one by a veth pair, for non-loopback clients.

Protected mode (and replication across hosts) need a peer that is not on
loopback. Tests never send to any address but their own: the namespace is
made here, holds the server, and gets a /30 of its own on a veth pair whose
other end stays in the test's namespace. Needs root and iproute2; tests skip
otherwise. Everything is removed on exit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Namespace:
    name: str
    inside: str  # the namespace's address: servers bind here
    outside: str  # this side's address: a client from here is not local to the server

    def prefix(self) -> list[str]:
        """argv prefix that runs a command inside the namespace."""
        return ["ip", "netns", "exec", self.name]


def available() -> str | None:
    """None if namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root for ip netns"
    if shutil.which("ip") is None:
        return "needs iproute2 (ip)"
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextmanager
def namespace(tag: str = "t") -> Iterator[Namespace]:
    ident = f"{os.getpid() % 100000}{tag}"[:8]
    name = f"rillet-{ident}"
    outer, inner = f"rv{ident}o", f"rv{ident}i"
    # A /30 out of 10.231/16 picked by pid, so parallel test processes do not collide.
    block = (os.getpid() * 4 + sum(tag.encode())) % 65536 & ~3
    base = f"10.231.{block >> 8}.{block & 255}"
    inside = base[: base.rfind(".") + 1] + str((block & 255) + 1)
    outside = base[: base.rfind(".") + 1] + str((block & 255) + 2)
    _ip("netns", "add", name)
    try:
        _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        _ip("link", "set", inner, "netns", name)
        _ip("addr", "add", f"{outside}/30", "dev", outer)
        _ip("link", "set", outer, "up")
        _ip("netns", "exec", name, "ip", "addr", "add", f"{inside}/30", "dev", inner)
        _ip("netns", "exec", name, "ip", "link", "set", inner, "up")
        _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield Namespace(name, inside, outside)
    finally:
        subprocess.run(["ip", "link", "del", outer], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
