"""Keyspace notifications against Redis 8.2.3: notify-keyspace-events round trips, and
the events every stream, key and string command emits (channel and message, in order)."""

from __future__ import annotations

import re

from tests.helpers.wire import Wire

FLAG_STRINGS = ["", "A", "KEA", "Kx", "Eg$lshzxetd", "KEAnm", "KEAoc", "Kn", "Ko", "Kc", "Km", "Kd",
                "KEnoc", "gg", "AK", "xyz", "K E", "g$lshzxetdnoc", "E$", "Kt"]


def test_flags_round_trip(pair8):
    for flags in FLAG_STRINGS:
        pair8.check("CONFIG", "SET", "notify-keyspace-events", flags)
        pair8.check("CONFIG", "GET", "notify-keyspace-events")
    pair8.check("CONFIG", "SET", "notify-keyspace-events", "")


COMMANDS = [
    ["SET", "k", "1"], ["SET", "k", "2", "EX", "100"], ["INCR", "k"], ["INCRBY", "k", "5"],
    ["DECR", "k"], ["DECRBY", "k", "2"], ["APPEND", "k", "x"], ["APPEND", "new", "x"],
    ["SETNX", "k", "9"], ["SETNX", "k2", "9"], ["MSET", "a", "1", "b", "2"],
    ["EXPIRE", "a", "100"], ["PEXPIRE", "a", "100000"], ["EXPIREAT", "a", "4000000000"],
    ["PEXPIREAT", "a", "4000000000000"], ["PERSIST", "a"], ["PERSIST", "a"],
    ["EXPIRE", "b", "-1"], ["RENAME", "a", "c"], ["RENAMENX", "c", "k"], ["RENAMENX", "c", "d"],
    ["GETDEL", "d"], ["GETDEL", "d"], ["DEL", "k", "k2", "nosuch"], ["UNLINK", "new"],
    ["SET", "e", "1", "PX", "100000"],
    ["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "2-1", "f", "v"], ["XADD", "s", "3-1", "f", "v"],
    ["XADD", "s", "MAXLEN", "2", "4-1", "f", "v"], ["XADD", "s", "NOMKSTREAM", "5-1", "f", "v"],
    ["XADD", "nostream", "NOMKSTREAM", "5-1", "f", "v"],
    ["XDEL", "s", "4-1"], ["XDEL", "s", "99-1"], ["XTRIM", "s", "MAXLEN", "1"], ["XTRIM", "s", "MAXLEN", "5"],
    ["XSETID", "s", "10-1"],
    ["XGROUP", "CREATE", "s", "g", "0"], ["XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM"],
    ["XGROUP", "CREATECONSUMER", "s", "g", "c1"], ["XGROUP", "CREATECONSUMER", "s", "g", "c1"],
    ["XADD", "s", "11-1", "f", "v"], ["XADD", "s", "12-1", "f", "v"],
    ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"],
    ["XCLAIM", "s", "g", "c3", "0", "11-1"],
    ["XAUTOCLAIM", "s", "g", "c4", "0", "0-0"],
    ["XACK", "s", "g", "11-1"],
    ["XGROUP", "SETID", "s", "g", "0"],
    ["XGROUP", "DELCONSUMER", "s", "g", "c1"],
    ["XGROUP", "DESTROY", "s", "g"], ["XGROUP", "DESTROY", "s", "g"],
    ["XDELEX", "s", "IDS", "1", "12-1"], ["XACKDEL", "s", "g", "IDS", "1", "11-1"],
    ["SETBIT", "b", "9", "1"], ["SETBIT", "b", "9", "1"], ["SETBIT", "b", "1", "0"],
    ["BITFIELD", "b", "SET", "u8", "0", "3", "GET", "u8", "0"], ["BITFIELD", "b", "SET", "u8", "0", "3"],
    ["BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "u2", "0", "9"], ["BITOP", "OR", "bo", "b", "bf"],
    ["BITOP", "AND", "bo", "nokey"], ["BITOP", "AND", "bo", "nokey"],
    ["SORT", "nokey", "STORE", "so"],
    ["SORT", "nokey", "STORE", "so"],
    ["FLUSHALL"],
]


def _cmd(*args: str) -> bytes:
    parts = [a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def _events(port: int) -> list[tuple[list[str], list[bytes]]]:
    """Each command with the notifications it caused, up to a sentinel publish."""
    sub, conn = Wire(port), Wire(port)
    try:
        conn.call("FLUSHALL")
        assert conn.call("CONFIG", "SET", "notify-keyspace-events", "KEA") == b"+OK\r\n"
        sub.send_raw(_cmd("PSUBSCRIBE", "__key*__:*", "sentinel"))
        sub.read_reply()
        sub.read_reply()
        out = []
        for argv in COMMANDS:
            conn.call(*argv)
            conn.call("PUBLISH", "sentinel", "-")
            seen = []
            while True:
                frame = sub.read_reply()
                if b"sentinel" in frame:
                    break
                seen.append(re.sub(rb"\r\n:\d+\r\n", b"", frame))
            out.append((argv, seen))
        return out
    finally:
        conn.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()
        conn.close()


def test_events_of_each_command(rillet_server, redis8_server):
    ours = _events(rillet_server.port)
    ref = _events(redis8_server.port)
    for (argv, got), (_, want) in zip(ours, ref, strict=True):
        assert got == want, f"{argv}:\n  rillet: {got}\n  redis:  {want}"


if __name__ == "__main__":
    import sys

    for argv, seen in _events(int(sys.argv[1])):
        print(argv, [s.split(b"\r\n")[-4:-1:2] for s in seen])


def test_expired_event(rillet_server):
    """An expired key: `expired` in the keyspace and keyevent channels (class x)."""
    import time

    sub, conn = Wire(rillet_server.port), Wire(rillet_server.port)
    try:
        conn.call("CONFIG", "SET", "notify-keyspace-events", "Ex")
        sub.send_raw(_cmd("SUBSCRIBE", "__keyevent@0__:expired"))
        sub.read_reply()
        conn.call("SET", "gone", "1", "PX", "1")
        time.sleep(0.05)
        conn.call("GET", "gone")  # expires it on access, at the latest
        assert sub.read_reply() == b"*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$4\r\ngone\r\n"
    finally:
        conn.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()
        conn.close()
