"""List commands against Redis 8.2.3, raw reply bytes, blocking pops included."""

from __future__ import annotations

import pytest

from tests.compat.test_streams_blocking import wait_blocked
from tests.helpers.wire import Wire, encode_command


def test_list_basics(pair8):
    p = pair8
    for cmd in (
        ("RPUSH", "l", "a", "b", "c"), ("LPUSH", "l", "x", "y"), ("LLEN", "l"), ("LLEN", "nokey"),
        ("LRANGE", "l", "0", "-1"), ("LRANGE", "l", "1", "2"), ("LRANGE", "l", "-2", "-1"),
        ("LRANGE", "l", "-100", "100"), ("LRANGE", "l", "3", "1"), ("LRANGE", "l", "10", "20"),
        ("LRANGE", "nokey", "0", "-1"), ("LRANGE", "l", "x", "1"), ("LINDEX", "l", "0"),
        ("LINDEX", "l", "-1"), ("LINDEX", "l", "99"), ("LINDEX", "l", "x"), ("LINDEX", "nokey", "0"),
        ("LINDEX", "nokey", "x"),
        ("LSET", "l", "0", "z"), ("LSET", "l", "-1", "w"), ("LSET", "l", "10", "q"),
        ("LSET", "nokey", "0", "q"), ("LSET", "l", "x", "q"), ("LRANGE", "l", "0", "-1"),
        ("LPUSHX", "nokey", "a"), ("RPUSHX", "nokey", "a"), ("LPUSHX", "l", "p1", "p2"),
        ("RPUSHX", "l", "r1"), ("LRANGE", "l", "0", "-1"),
        ("LINSERT", "l", "BEFORE", "a", "ins"), ("LINSERT", "l", "after", "a", "ins2"),
        ("LINSERT", "l", "BEFORE", "zz", "ins"), ("LINSERT", "nokey", "BEFORE", "a", "x"),
        ("LINSERT", "l", "MIDDLE", "a", "x"), ("LRANGE", "l", "0", "-1"),
        ("LPOP", "l"), ("RPOP", "l"), ("LPOP", "l", "2"), ("RPOP", "l", "0"), ("LPOP", "l", "-1"),
        ("LPOP", "l", "x"), ("LPOP", "nokey"), ("LPOP", "nokey", "2"), ("RPOP", "l", "1", "2"),
        ("LRANGE", "l", "0", "-1"), ("RPOP", "l", "100"), ("EXISTS", "l"),
        ("LPUSH", "l"), ("LLEN",), ("TYPE", "nokey"),
    ):
        p.check(*cmd)


def test_lrem_ltrim(pair8):
    p = pair8
    for count in ("0", "1", "-1", "2", "-2", "100", "x"):
        p.check("DEL", "l")
        p.check("RPUSH", "l", "a", "b", "a", "c", "a", "b")
        p.check("LREM", "l", count, "a")
        p.check("LRANGE", "l", "0", "-1")
    p.check("LREM", "nokey", "0", "a")
    for start, stop in (("0", "1"), ("1", "-1"), ("-2", "-1"), ("5", "1"), ("0", "-100"), ("x", "1"),
                        ("0", "-1")):
        p.check("DEL", "l")
        p.check("RPUSH", "l", "a", "b", "c", "d")
        p.check("LTRIM", "l", start, stop)
        p.check("LRANGE", "l", "0", "-1")
        p.check("EXISTS", "l")
    p.check("LTRIM", "nokey", "0", "1")


@pytest.mark.parametrize("args", [
    ("a",), ("zz",), ("a", "RANK", "2"), ("a", "RANK", "-1"), ("a", "RANK", "-3"), ("a", "RANK", "9"),
    ("a", "COUNT", "0"), ("a", "COUNT", "2"), ("a", "RANK", "-1", "COUNT", "2"),
    ("a", "MAXLEN", "2"), ("a", "RANK", "2", "MAXLEN", "2"), ("a", "COUNT", "0", "MAXLEN", "3"),
    ("a", "RANK", "0"), ("a", "COUNT", "-1"), ("a", "MAXLEN", "-1"),
    ("a", "RANK", "-9223372036854775808"), ("a", "RANK", "x"), ("a", "FOO", "1"), ("a", "RANK"),
    ("zz", "COUNT", "1"),
])
def test_lpos(pair8, args):
    pair8.check("RPUSH", "l", "a", "b", "a", "c", "a")
    pair8.check("LPOS", "l", *args)
    pair8.check("LPOS", "nokey", *args)


def test_lmove_rpoplpush(pair8):
    p = pair8
    for cmd in (
        ("RPUSH", "a", "1", "2", "3"), ("LMOVE", "a", "b", "LEFT", "RIGHT"),
        ("LMOVE", "a", "b", "right", "left"), ("LRANGE", "b", "0", "-1"),
        ("LMOVE", "a", "a", "LEFT", "RIGHT"), ("LRANGE", "a", "0", "-1"),
        ("LMOVE", "a", "b", "UP", "LEFT"), ("LMOVE", "nokey", "b", "LEFT", "LEFT"),
        ("RPOPLPUSH", "a", "b"), ("EXISTS", "a"), ("LRANGE", "b", "0", "-1"),
        ("RPOPLPUSH", "nokey", "b"), ("RPOPLPUSH", "b", "b"), ("LRANGE", "b", "0", "-1"),
        ("SET", "s", "v"), ("LMOVE", "b", "s", "LEFT", "LEFT"), ("LMOVE", "s", "b", "LEFT", "LEFT"),
        ("LMOVE", "nokey", "s", "LEFT", "LEFT"), ("RPOPLPUSH", "b", "s"), ("LRANGE", "b", "0", "-1"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("args", [
    ("1", "l", "LEFT"), ("1", "l", "RIGHT", "COUNT", "2"), ("2", "nokey", "l", "left", "count", "10"),
    ("1", "nokey", "LEFT"), ("0", "l", "LEFT"), ("x", "l", "LEFT"), ("3", "l", "LEFT"),
    ("1", "l", "UP"), ("1", "l", "LEFT", "COUNT", "0"), ("1", "l", "LEFT", "COUNT", "x"),
    ("1", "l", "LEFT", "COUNT", "2", "COUNT", "3"), ("1", "l", "LEFT", "COUNT"), ("1", "l", "LEFT", "FOO"),
    ("2", "l", "LEFT"), ("-1", "l", "LEFT"),
])
def test_lmpop(pair8, args):
    pair8.check("RPUSH", "l", "a", "b", "c")
    pair8.check("LMPOP", *args)
    pair8.check("LRANGE", "l", "0", "-1")


def test_list_wrongtype(pair8):
    p = pair8
    p.check("SET", "s", "v")
    for cmd in (
        ("LPUSH", "s", "a"), ("RPUSH", "s", "a"), ("LPUSHX", "s", "a"), ("LLEN", "s"), ("LPOP", "s"),
        ("RPOP", "s", "2"), ("LRANGE", "s", "0", "1"), ("LINDEX", "s", "0"), ("LSET", "s", "0", "a"),
        ("LTRIM", "s", "0", "1"), ("LREM", "s", "0", "a"), ("LINSERT", "s", "BEFORE", "a", "b"),
        ("LPOS", "s", "a"), ("LMPOP", "1", "s", "LEFT"), ("BLPOP", "s", "0"), ("BRPOP", "nokey", "s", "0"),
        ("BLMOVE", "s", "d", "LEFT", "LEFT", "0"), ("BLMPOP", "0", "1", "s", "LEFT"),
        ("BRPOPLPUSH", "s", "d", "0"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("timeout", ["x", "-1", "1e300", "inf", "nan", "-inf", "", " 1"])
def test_blocking_timeout_errors(pair8, timeout):
    pair8.check("BLPOP", "l", timeout)
    pair8.check("BLMPOP", timeout, "1", "l", "LEFT")
    pair8.check("BLMOVE", "l", "d", "LEFT", "LEFT", timeout)


@pytest.mark.parametrize("args", [("0", "l", "LEFT"), ("1", "l", "FOO"), ("1", "l", "LEFT", "COUNT", "0"),
                                  ("1", "l", "LEFT", "COUNT"), ("x", "l", "LEFT")])
def test_blocking_mpop_checks_its_arguments_before_the_timeout(pair8, args):
    """numkeys, the side and COUNT before the timeout, as Redis (found by the command fuzzer)."""
    pair8.check("BLMPOP", "1e100", *args)
    pair8.check("BZMPOP", "x", *[{"LEFT": "MIN"}.get(a, a) for a in args])


def test_blocking_served_at_once_and_in_multi(pair8):
    p = pair8
    for cmd in (
        ("RPUSH", "l", "a", "b", "c"), ("BLPOP", "nokey", "l", "0"), ("BRPOP", "l", "0"),
        ("BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "5"), ("BLPOP", "l", "0.01"),
        ("MULTI",), ("BLPOP", "l", "0"), ("BRPOP", "l", "0"), ("BLMOVE", "l", "d", "LEFT", "LEFT", "0"),
        ("BRPOPLPUSH", "l", "d", "0"), ("BLMPOP", "0", "1", "l", "LEFT"), ("EXEC",),
        ("RPUSH", "l", "x"), ("BLMOVE", "l", "d", "LEFT", "RIGHT", "0"), ("LRANGE", "d", "0", "-1"),
    ):
        p.check(*cmd)


def _scenario(port: int, blockers: list[list[str]], actions: list[list[str]]) -> tuple[list[bytes], list[bytes | None]]:
    control = Wire(port)
    clients = [Wire(port) for _ in blockers]
    try:
        control.call("FLUSHALL")
        for n, (client, block) in enumerate(zip(clients, blockers, strict=True)):
            client.send_raw(encode_command(*block))
            wait_blocked(control, n + 1)
        replies = [control.call(*a) for a in actions]
        out: list[bytes | None] = []
        for client in clients:
            client.sock.settimeout(3)
            try:
                out.append(client.read_reply())
            except TimeoutError:
                out.append(None)
        replies.append(control.call("LRANGE", "l", "0", "-1"))
        replies.append(control.call("LRANGE", "d", "0", "-1"))
        return replies, out
    finally:
        control.close()
        for client in clients:
            client.close()


BLOCKING = {
    "fifo": ([["BLPOP", "l", "0"], ["BRPOP", "l", "0"], ["BLPOP", "l", "0"]],
             [["RPUSH", "l", "a", "b"], ["RPUSH", "l", "c"]]),
    "two-keys": ([["BLPOP", "x", "l", "0"]], [["RPUSH", "l", "a"]]),
    "blmove": ([["BLMOVE", "l", "d", "RIGHT", "LEFT", "0"]], [["RPUSH", "l", "a", "b"]]),
    "brpoplpush": ([["BRPOPLPUSH", "l", "d", "0"]], [["LPUSH", "l", "a", "b"]]),
    "blmpop-count": ([["BLMPOP", "0", "2", "x", "l", "RIGHT", "COUNT", "2"]], [["RPUSH", "l", "a", "b", "c"]]),
    "timeout": ([["BLPOP", "l", "0.05"], ["BLMPOP", "0.05", "1", "l", "LEFT"]], []),
    "multi-push": ([["BLPOP", "l", "0"]], [["MULTI"], ["RPUSH", "l", "a"], ["LPOP", "l"], ["EXEC"]]),
    "other-type": ([["BLPOP", "l", "0.2"]], [["SET", "l", "v"]]),
}


@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_blocking_wakeups(rillet_server, redis8_server, name):
    blockers, actions = BLOCKING[name]
    ours = _scenario(rillet_server.port, blockers, actions)
    theirs = _scenario(redis8_server.port, blockers, actions)
    assert ours == theirs


@pytest.mark.parametrize("size", [1, 100, 200, 2000])
@pytest.mark.parametrize("width", [1, 40, 100, 9000])
def test_list_encoding(pair8, size, width):
    pair8.check("RPUSH", "l", *["x" * width] * size)
    pair8.check("OBJECT", "ENCODING", "l")
    pair8.check("LTRIM", "l", "0", "2")
    pair8.check("OBJECT", "ENCODING", "l")
