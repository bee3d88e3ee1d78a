"""Who gets a key's new value: the client already parked on it, not a pipeline's next command.

Redis serves the clients blocked on keys a command readied as soon as that command (or the
MULTI/EXEC, or the script, that readied them) is done, before the pipeline's next command
runs (processCommand -> handleClientsBlockedOnKeys). A client that pipelines a push and its
own blocking pop must not take the element from the client already waiting for it: that
client would wait forever. Each scenario runs on rillet and Redis 8.2.3 and compares what
both connections received; waits are bounded.
"""

from __future__ import annotations

import time

import pytest

from tests.compat.test_streams_blocking import wait_blocked
from tests.helpers.wire import Wire, encode_command


def _scenario(port: int, setup: list[tuple[str, ...]], parked: tuple[str, ...],
              pipeline: list[tuple[str, ...]]) -> tuple[bytes, bytes]:
    """(the pipeline's replies, the parked client's reply) on one server."""
    control, waiter, pipelining = Wire(port, timeout=5.0), Wire(port, timeout=5.0), Wire(port, timeout=5.0)
    try:
        control.call("FLUSHALL")
        for command in setup:
            control.call(*command)
        waiter.send_raw(encode_command(*parked))
        wait_blocked(control)
        pipelining.send_raw(b"".join(encode_command(*command) for command in pipeline))
        replies = b"".join(pipelining.read_reply() for _ in pipeline)
        return replies, waiter.read_reply()
    finally:
        for conn in (control, waiter, pipelining):
            conn.close()


# name: (setup, the parked command, the pipeline: a write, then its own blocking read
# with a short timeout, which finds nothing left and answers nil)
SCENARIOS = {
    "blpop": ([], ("BLPOP", "l", "0"), [("LPUSH", "l", "1"), ("BLPOP", "l", "0.2")]),
    "brpop-two-pushes": ([], ("BRPOP", "l", "0"),
                         [("RPUSH", "l", "1"), ("RPUSH", "l", "2"), ("BRPOP", "l", "0.2"),
                          ("BRPOP", "l", "0.2")]),
    "blmove": ([], ("BLMOVE", "l", "d", "LEFT", "RIGHT", "0"),
               [("LPUSH", "l", "1"), ("BLMOVE", "l", "d", "LEFT", "RIGHT", "0.2"), ("LRANGE", "d", "0", "-1")]),
    "blmpop": ([], ("BLMPOP", "0", "1", "l", "LEFT"), [("LPUSH", "l", "1"), ("BLMPOP", "0.2", "1", "l", "LEFT")]),
    "bzpopmin": ([], ("BZPOPMIN", "z", "0"), [("ZADD", "z", "1", "a"), ("BZPOPMIN", "z", "0.2")]),
    "bzmpop": ([], ("BZMPOP", "0", "1", "z", "MAX"), [("ZADD", "z", "1", "a"), ("BZMPOP", "0.2", "1", "z", "MAX")]),
    "multi-exec": ([], ("BLPOP", "l", "0"),
                   [("MULTI",), ("LPUSH", "l", "1"), ("EXEC",), ("BLPOP", "l", "0.2")]),
    "eval": ([], ("BLPOP", "l", "0"),
             [("EVAL", "return redis.call('lpush', KEYS[1], 'x')", "1", "l"), ("BLPOP", "l", "0.2")]),
    "xreadgroup": ([("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")],
                   ("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"),
                   [("XADD", "s", "1-1", "f", "v"),
                    ("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "200", "STREAMS", "s", ">"),
                    ("XPENDING", "s", "g")]),
    "xread": ([], ("XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
              [("XADD", "s", "1-1", "f", "v"), ("XREAD", "BLOCK", "200", "STREAMS", "s", "$")]),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_parked_client_is_served_before_the_pipeline_goes_on(name, pair8, rillet_server, redis8_server):
    setup, parked, pipeline = SCENARIOS[name]
    ours = _scenario(rillet_server.port, setup, parked, pipeline)
    ref = _scenario(redis8_server.port, setup, parked, pipeline)
    assert ours == ref, f"{name}:\n  rillet: {ours!r}\n  redis:  {ref!r}"


# Pushes, then spins ~600 ms: past busy-reply-threshold, so other clients get BUSY meanwhile.
_BUSY_PUSH = ("redis.call('lpush', KEYS[1], 'x') local t0 = redis.call('time') "
              "while true do local t = redis.call('time') "
              "if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 600000 then break end end return 1")


def _busy_scenario(port: int) -> tuple[bytes, bytes, bytes]:
    control, waiter, runner = Wire(port, timeout=5.0), Wire(port, timeout=5.0), Wire(port, timeout=5.0)
    try:
        control.call("FLUSHALL")
        control.call("CONFIG", "SET", "busy-reply-threshold", "100")
        waiter.send_raw(encode_command("BLPOP", "l", "0"))
        wait_blocked(control)
        runner.send_raw(encode_command("EVAL", _BUSY_PUSH, "1", "l"))
        deadline = time.monotonic() + 5
        while (busy := control.call("PING")) == b"+PONG\r\n" and time.monotonic() < deadline:
            time.sleep(0.01)  # until the script is past the threshold
        return busy, runner.read_reply(), waiter.read_reply()
    finally:
        control.call("CONFIG", "SET", "busy-reply-threshold", "5000")
        for conn in (control, waiter, runner):
            conn.close()


def test_busy_script_does_not_answer_parked_clients(pair8, rillet_server, redis8_server):
    """A script that readied a key and then runs long serves other clients BUSY meanwhile;
    the client parked on that key is served when the script is done, with the element,
    never with a BUSY of its own (Redis: no unblocking inside a yielding long command)."""
    ours = _busy_scenario(rillet_server.port)
    ref = _busy_scenario(redis8_server.port)
    assert ours == ref, f"rillet: {ours!r}\nredis:  {ref!r}"
    assert ours[2] == b"*2\r\n$1\r\nl\r\n$1\r\nx\r\n"
