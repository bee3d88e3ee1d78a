"""redis-cli on rillet cluster nodes: `-c` follows -MOVED from one rillet node to another,
and `--cluster check` finds every slot covered. The two nodes know each other through
their nodes.conf files (tests/cluster/test_bus.py has them meet over the bus)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.cluster import support

A = "a" * 40
B = "b" * 40


@pytest.fixture(scope="module")
def nodes():
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli not available")
    a, b = support.two_rillet_masters(A, B)
    yield cli, a, b
    a.stop()
    b.stop()


def _cli(cli: str, *args: str) -> str:
    done = subprocess.run([cli, *args], capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr


def test_cli_follows_moved(nodes):
    cli, a, b = nodes
    key = support.key_in(8192, 16383, "cli")
    assert "MOVED" in _cli(cli, "-p", str(a.port), "SET", key, "v")
    assert _cli(cli, "-c", "-p", str(a.port), "SET", key, "v").strip() == "OK"
    assert _cli(cli, "-p", str(b.port), "GET", key).strip() == "v"
    assert _cli(cli, "-c", "-p", str(a.port), "GET", key).strip() == "v"
    mine = support.key_in(0, 8191, "cli")
    assert _cli(cli, "-c", "-p", str(b.port), "SET", mine, "w").strip() == "OK"
    assert _cli(cli, "-p", str(a.port), "GET", mine).strip() == "w"


def test_cluster_check_sees_every_slot(nodes):
    cli, a, _b = nodes
    out = _cli(cli, "--cluster", "check", f"127.0.0.1:{a.port}")
    assert "[OK] All nodes agree about slots configuration." in out, out
    assert "[OK] All 16384 slots covered." in out, out
