"""Blocking XREAD against Redis 8.2.3: the same wake-up scenarios, the same reply bytes.

Each scenario parks a client with XREAD BLOCK on both servers, waits until the
server reports it blocked, runs writes from a second connection and compares
what the parked client finally receives: data, WRONGTYPE, or nil at the
timeout. These pin down Redis 7.4+'s rules for keys deleted or overwritten
while a client waits, which `$` is pinned and which `+` is not.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.helpers.wire import Wire, encode_command

_BLOCKED = re.compile(rb"blocked_clients:(\d+)")


def _port(wire: Wire) -> int:
    return wire.sock.getpeername()[1]


def wait_blocked(control: Wire, count: int = 1, limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = _BLOCKED.search(control.call("INFO", "clients"))
        if found and int(found.group(1)) >= count:
            return
        time.sleep(0.005)
    raise AssertionError("client never blocked")


def scenario(port: int, setup: list[list[str]], block: list[str], actions: list[list[str]],
             wait_s: float = 5.0) -> tuple[list[bytes], bytes | None]:
    """Run one scenario on one server: (replies to the actions, the blocked client's reply)."""
    control, blocked = Wire(port), Wire(port)
    try:
        control.call("FLUSHALL")
        for command in setup:
            control.call(*command)
        blocked.send_raw(encode_command(*block))
        wait_blocked(control)
        replies = [control.call(*command) for command in actions]
        blocked.sock.settimeout(wait_s)
        try:
            reply = blocked.read_reply()
        except TimeoutError:
            reply = None
        return replies, reply
    finally:
        control.close()
        blocked.close()


SCENARIOS = {
    "woken-by-xadd": ([], ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
                      [["XADD", "s", "1-1", "f", "v"]]),
    "dollar-pinned-multi": ([], ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
                            [["MULTI"], ["XADD", "s", "1-1", "f", "v"],
                             ["XADD", "s", "2-2", "f", "v"], ["EXEC"]]),
    "plus-not-pinned": ([], ["XREAD", "BLOCK", "0", "STREAMS", "s", "+"],
                        [["MULTI"], ["XADD", "s", "1-1", "f", "v"],
                         ["XADD", "s", "2-2", "f", "v"], ["EXEC"]]),
    "plus-on-emptied-stream": ([["XADD", "s", "1-1", "f", "v"], ["XDEL", "s", "1-1"]],
                               ["XREAD", "BLOCK", "0", "STREAMS", "s", "+"],
                               [["MULTI"], ["XADD", "s", "3-1", "f", "v"],
                                ["XADD", "s", "3-2", "f", "v"], ["EXEC"]]),
    "count-limits-wakeup": ([], ["XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "$"],
                            [["MULTI"], ["XADD", "s", "1-1", "f", "v"],
                             ["XADD", "s", "2-2", "f", "v"], ["EXEC"]]),
    "deleted-recreated-below-pin": ([["XADD", "s", "5-1", "f", "v"]],
                                    ["XREAD", "BLOCK", "300", "STREAMS", "s", "$"],
                                    [["DEL", "s"], ["XADD", "s", "1-1", "f", "v"]]),
    "deleted-recreated-above-pin": ([["XADD", "s", "5-1", "f", "v"]],
                                    ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
                                    [["DEL", "s"], ["XADD", "s", "6-1", "f", "v"]]),
    "missing-key-created": ([], ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
                            [["SET", "other", "x"], ["XADD", "s", "1-1", "f", "v"]]),
    "explicit-id": ([["XADD", "s", "5-1", "f", "v"]],
                    ["XREAD", "BLOCK", "0", "STREAMS", "s", "5-1"],
                    [["XADD", "s", "5-2", "f", "v"]]),
    "overwritten-with-string": ([["XADD", "s", "5-1", "f", "v"]],
                                ["XREAD", "BLOCK", "300", "STREAMS", "s", "$"],
                                [["SET", "s", "x"]]),
    "overwritten-then-stream": ([["XADD", "s", "5-1", "f", "v"]],
                                ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
                                [["SET", "s", "x"], ["DEL", "s"],
                                 ["XADD", "s", "6-1", "f", "v"]]),
    "wrongtype-with-data-elsewhere": ([["XADD", "s", "5-1", "f", "v"]],
                                      ["XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"],
                                      [["SET", "s", "x"], ["XADD", "t", "6-1", "f", "v"]]),
    "second-key-served": ([["XADD", "s", "5-1", "f", "v"]],
                          ["XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"],
                          [["XADD", "t", "6-1", "f", "v"]]),
    "xsetid-is-not-data": ([["XADD", "s", "5-1", "f", "v"]],
                           ["XREAD", "BLOCK", "300", "STREAMS", "s", "$"],
                           [["XSETID", "s", "9-9"]]),
    "xdel-is-not-data": ([["XADD", "s", "5-1", "f", "v"]],
                         ["XREAD", "BLOCK", "300", "STREAMS", "s", "$"],
                         [["XDEL", "s", "5-1"]]),
    "flushall-then-lower-id": ([["XADD", "s", "5-1", "f", "v"]],
                               ["XREAD", "BLOCK", "300", "STREAMS", "s", "$"],
                               [["FLUSHALL"], ["XADD", "s", "1-1", "f", "v"]]),
    "trimmed-to-nothing": ([["XADD", "s", "5-1", "f", "v"]],
                           ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
                           [["XADD", "s", "MAXLEN", "0", "6-1", "f", "v"],
                            ["XADD", "s", "7-1", "f", "v"]]),
    "timeout-nil": ([], ["XREAD", "BLOCK", "100", "STREAMS", "s", "$"], []),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_blocking_scenario_like_redis(pair8, name):
    setup, block, actions = SCENARIOS[name]
    ours = scenario(_port(pair8.ours), setup, block, actions)
    ref = scenario(_port(pair8.ref), setup, block, actions)
    assert ours == ref
    assert ref[1] is not None


def test_blocking_reply_in_resp3(pair8):
    def run(port: int):
        control, blocked = Wire(port), Wire(port)
        try:
            control.call("FLUSHALL")
            blocked.call("HELLO", "3")
            blocked.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"))
            wait_blocked(control)
            control.call("XADD", "t", "1-1", "f", "v")
            first = blocked.read_reply()
            blocked.send_raw(encode_command("XREAD", "BLOCK", "50", "STREAMS", "s", "$"))
            return first, blocked.read_reply()
        finally:
            control.close()
            blocked.close()

    assert run(_port(pair8.ours)) == run(_port(pair8.ref))
