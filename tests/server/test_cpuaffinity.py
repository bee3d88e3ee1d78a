"""Redis's CPU lists (server-cpulist, bio-cpulist, aof-rewrite-cpulist, bgsave-cpulist):
their syntax, a server pinned by one, and a malformed one refused at start-up."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rillet import cpuaffinity
from tests.helpers import servers


@pytest.mark.parametrize("text, cpus", [
    ("0", {0}), ("1,3", {1, 3}), ("0-7:2", {0, 2, 4, 6}), ("1,10-11", {1, 10, 11}),
    ("2-2", {2}), ("0-5:10", {0}), ("3,1-2", {1, 2, 3}),
])
def test_cpulists_read_as_redis_reads_them(text, cpus):
    assert cpuaffinity.parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["", "a", "1-", "-1", "3-1", "0-4:0", "1,,2", " 1", "1:2", "1-2:"])
def test_malformed_cpulists_are_refused(text):
    with pytest.raises(ValueError, match="invalid cpu list"):
        cpuaffinity.parse_cpulist(text)


def _allowed(pid: int) -> str:
    with open(f"/proc/{pid}/status") as status:
        return next(line.split()[1] for line in status if line.startswith("Cpus_allowed_list"))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_server_cpulist_pins_the_server():
    cpu = min(os.sched_getaffinity(0))
    handle = servers.start_rillet("--server-cpulist", str(cpu))
    try:
        assert _allowed(handle.proc.pid) == str(cpu)
        assert handle.client().config_get("server-cpulist") == {"server-cpulist": str(cpu)}
    finally:
        handle.stop()


def test_a_malformed_cpulist_stops_the_server_at_start():
    for name in cpuaffinity.PARAMS:
        done = subprocess.run([sys.executable, "-m", "rillet", "server", "--port", "0",
                               f"--{name}", "0-x"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, name
        assert "setcpuaffinity: invalid cpu list" in done.stderr
