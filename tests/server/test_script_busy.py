"""A script past busy-reply-threshold: other clients get BUSY, SCRIPT KILL ends a
script that did not write, one that wrote is UNKILLABLE; the server stays up."""

from __future__ import annotations

import threading
import time

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire

LOOP = "local i = 0 while true do i = i + 1 end"


@pytest.fixture
def busy_server():
    handle = servers.start_rillet("--busy-reply-threshold", "100")
    yield handle
    handle.stop(sig_kill=True)


def _run_in_thread(port: int, *args: str) -> tuple[threading.Thread, list]:
    result: list = []

    def run() -> None:
        wire = Wire(port)
        result.append(wire.call(*args))
        wire.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def _wait_busy(wire: Wire, deadline_s: float = 10.0) -> bytes:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        reply = wire.call("PING")
        if reply.startswith(b"-BUSY"):
            return reply
        time.sleep(0.05)
    raise AssertionError("the server never answered BUSY")


def test_kill_a_looping_script(busy_server):
    other = Wire(busy_server.port)  # connected before: new connections wait for the script
    assert other.call("PING") == b"+PONG\r\n"
    thread, result = _run_in_thread(busy_server.port, "EVAL", LOOP, "0")
    busy = _wait_busy(other)
    assert busy == (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL "
                    b"or SHUTDOWN NOSAVE.\r\n")
    assert other.call("SCRIPT", "KILL") == b"+OK\r\n"
    thread.join(10)
    assert result and result[0].startswith(b"-ERR Script killed by user with SCRIPT KILL...")
    assert other.call("PING") == b"+PONG\r\n"
    assert other.call("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
    other.close()


def test_a_script_that_wrote_is_unkillable(busy_server):
    body = "redis.call('set', 'k', 'v') local t = redis.call('time') local s = tonumber(t[1]) " \
           "while tonumber(redis.call('time')[1]) < s + 2 do end return 1"
    other = Wire(busy_server.port)
    assert other.call("PING") == b"+PONG\r\n"
    thread, result = _run_in_thread(busy_server.port, "EVAL", body, "0")
    _wait_busy(other)
    reply = other.call("SCRIPT", "KILL")
    assert reply.startswith(b"-UNKILLABLE Sorry the script already executed write commands")
    thread.join(20)
    assert result == [b":1\r\n"]
    assert other.call("GET", "k") == b"$1\r\nv\r\n"
    other.close()
