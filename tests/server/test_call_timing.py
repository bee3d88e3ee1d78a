"""A slow `fast` command reaches the slow log and the latency monitor on either clock.

A fast command's calls that the latency histogram does not sample are timed for
the slow log alone, on the coarse monotonic clock when the thresholds are at
least observe.COARSE_SLOW_NS (twice its resolution), else on the precise one
(Dispatcher.call, server/_fastpath.pyx). Either way a call slower than the
threshold is logged. ECHO (fast, plain: the compiled loop runs it inline) is
made to sleep in a fresh process, so every call takes at least SLEEP_MS; each
runs through the compiled loop and, with RILLET_PURE=1, through the Python one.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rillet

SRC = str(Path(rillet.__file__).resolve().parent.parent)
CALLS = 20  # more than TIMING_SAMPLE: most calls are unsampled
SLEEP_MS = 30

SCRIPT = r"""
import sys, time
from rillet.clock import ManualClock
from rillet.commands.table import COMMANDS
from rillet.config import Config
from rillet.observe import COARSE_SLOW_NS
from rillet.server import connection
from rillet.server.connection import ClientConnection
from rillet.server.server import Server

slow_us, latency_ms, calls, sleep_ms = map(int, sys.argv[1:])
echo = COMMANDS["echo"].handler

def slow_echo(client, argv):
    time.sleep(sleep_ms / 1000)
    return echo(client, argv)

COMMANDS["echo"].handler = slow_echo  # before the compiled loop first looks ECHO up

class Transport:
    def write(self, data): pass
    def get_extra_info(self, key, default=None):
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(key)
    def set_write_buffer_limits(self, high=None): pass
    def get_write_buffer_size(self): return 0
    def is_closing(self): return False
    def close(self): pass

config = Config()
config.set("slowlog-log-slower-than", str(slow_us))
config.set("latency-monitor-threshold", str(latency_ms))
config.set("slowlog-max-len", "1000")
server = Server(config, ManualClock())
conn = ClientConnection(server)
conn.connection_made(Transport())
conn.data_received(b"*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n" * calls)
state = server.state
echoes = [e.duration_us for e in state.slowlog.entries if e.argv[0].lower() == b"echo"]
series = state.latency.events.get("fast-command")
print(repr({"compiled": connection._fastpath is not None,
            "coarse": state.slow_ns >= COARSE_SLOW_NS,
            "echoes": echoes, "latency_max": series.max if series else None}))
"""


def _run(pure: bool, slow_us: int, latency_ms: int) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("RILLET_PURE", None)
    if pure:
        env["RILLET_PURE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(slow_us), str(latency_ms), str(CALLS), str(SLEEP_MS)],
        env=env, capture_output=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return ast.literal_eval(done.stdout.decode())


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
@pytest.mark.parametrize(("slow_us", "latency_ms"), [(10_000, 10), (0, 0), (1000, 1)],
                         ids=["default-coarse", "zero", "small"])
def test_slow_fast_command_is_logged(pure, slow_us, latency_ms):
    from rillet.observe import COARSE_SLOW_NS

    got = _run(pure, slow_us, latency_ms)
    if not pure and not got["compiled"]:
        pytest.skip("compiled hot path not built")
    # 10 ms uses the coarse clock where its resolution is 5 ms or finer (Linux: 1-4 ms).
    assert got["coarse"] == (min(slow_us * 1000, latency_ms * 1_000_000 or 1 << 62)
                             >= COARSE_SLOW_NS)
    assert len(got["echoes"]) == CALLS
    # The coarse clock is good to within its resolution: each reading is over the threshold.
    assert all(duration >= slow_us for duration in got["echoes"])
    if latency_ms:
        assert got["latency_max"] >= latency_ms
