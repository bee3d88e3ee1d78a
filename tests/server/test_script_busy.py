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
    other = Wire(busy_server.port)
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
    """SCRIPT KILL of a busy script that wrote: UNKILLABLE, and the script finishes.

    The script runs for a while of wall-clock time (TIME); on a loaded machine it
    may be over before SCRIPT KILL is read (NOTBUSY: the case did not happen), so
    the case is tried again with a longer script, a bounded number of times."""
    other = Wire(busy_server.port)
    assert other.call("PING") == b"+PONG\r\n"
    for attempt, seconds in enumerate((3, 6, 12)):
        key = f"k{attempt}"
        body = (f"redis.call('set', KEYS[1], 'v') local t = redis.call('time') "
                f"local s = tonumber(t[1]) while tonumber(redis.call('time')[1]) < s + {seconds} "
                f"do end return 1")
        thread, result = _run_in_thread(busy_server.port, "EVAL", body, "1", key)
        _wait_busy(other)
        reply = other.call("SCRIPT", "KILL")
        thread.join(seconds + 30)
        assert result == [b":1\r\n"]
        assert other.call("GET", key) == b"$1\r\nv\r\n"
        if reply != b"-NOTBUSY No scripts in execution right now.\r\n":
            break
    assert reply.startswith(b"-UNKILLABLE Sorry the script already executed write commands")
    other.close()


def test_new_connections_while_busy(busy_server):
    """A client that connects while a script is busy is accepted and gets BUSY (as in
    Redis); it can SCRIPT KILL, and it keeps working once the script is over."""
    first = Wire(busy_server.port)
    thread, result = _run_in_thread(busy_server.port, "EVAL", LOOP, "0")
    _wait_busy(first)
    late = Wire(busy_server.port)
    assert late.call("PING").startswith(b"-BUSY Redis is busy running a script.")
    assert late.call("CLIENT", "ID").startswith(b"-BUSY")
    late2 = Wire(busy_server.port)
    assert late2.call("SCRIPT", "KILL") == b"+OK\r\n"
    thread.join(10)
    assert result and result[0].startswith(b"-ERR Script killed by user with SCRIPT KILL...")
    for conn in (late, late2, first):
        assert conn.call("PING") == b"+PONG\r\n"
        assert conn.call("SET", "after", "1") == b"+OK\r\n"
    late.sock.close()  # the server forgets a client accepted while busy when it leaves
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and b"connected_clients:2\r\n" not in first.call("INFO", "clients"):
        time.sleep(0.05)
    assert b"connected_clients:2\r\n" in first.call("INFO", "clients")
    late2.close()
    first.close()
