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
    # More stream forms: trimming by MINID and ~, NOACK reads, FORCE/JUSTID claims,
    # deletion policies, a consumer created by each claiming command.
    ["XADD", "t", "1-1", "f", "v"], ["XADD", "t", "2-1", "f", "v"], ["XADD", "t", "3-1", "f", "v"],
    ["XADD", "t", "MINID", "2-1", "4-1", "f", "v"], ["XTRIM", "t", "MINID", "3-1"],
    ["XTRIM", "t", "MAXLEN", "~", "1", "LIMIT", "10"], ["XTRIM", "t", "MINID", "0-1"],
    ["XGROUP", "CREATE", "t", "g", "0"], ["XREADGROUP", "GROUP", "g", "a", "NOACK", "STREAMS", "t", ">"],
    ["XADD", "t", "5-1", "f", "v"], ["XREADGROUP", "GROUP", "g", "a", "COUNT", "1", "STREAMS", "t", ">"],
    ["XREADGROUP", "GROUP", "g", "a", "STREAMS", "t", "0"],
    ["XCLAIM", "t", "g", "b", "0", "5-1", "JUSTID"], ["XCLAIM", "t", "g", "c", "0", "4-1", "FORCE"],
    ["XCLAIM", "t", "g", "c", "0", "99-1", "FORCE"], ["XAUTOCLAIM", "t", "g", "d", "0", "0", "JUSTID"],
    ["XAUTOCLAIM", "t", "g", "d", "0", "0", "COUNT", "1"], ["XPENDING", "t", "g"],
    ["XINFO", "STREAM", "t"], ["XREAD", "STREAMS", "t", "0"], ["XRANGE", "t", "-", "+"],
    ["XDELEX", "t", "KEEPREF", "IDS", "1", "4-1"], ["XDELEX", "t", "ACKED", "IDS", "1", "5-1"],
    ["XACKDEL", "t", "g", "KEEPREF", "IDS", "1", "5-1"], ["XGROUP", "SETID", "t", "g", "$", "ENTRIESREAD", "0"],
    ["XGROUP", "DELCONSUMER", "t", "g", "nobody"], ["XSETID", "t", "99-1", "ENTRIESADDED", "9", "MAXDELETEDID", "0-1"],
    ["XADD", "t", "NOMKSTREAM", "MAXLEN", "0", "*", "f", "v"], ["DEL", "t"],
    ["XGROUP", "CREATE", "t", "g", "$", "MKSTREAM", "ENTRIESREAD", "0"],
    ["FLUSHALL"],
]


def _cmd(*args: str) -> bytes:
    parts = [a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


# Redis 8.2's classes outside A: new (n), overwritten (o), type_changed (c), keymiss (m),
# with the string, generic and stream commands (their own events included).
COMMANDS_NOCM = [
    ["SET", "a", "1"], ["SET", "a", "2"], ["SET", "a", "3", "NX"], ["SET", "a", "4", "XX"],
    ["SET", "a", "5", "GET"], ["SET", "new1", "5", "NX", "GET"], ["SET", "a", "6", "KEEPTTL"],
    ["GET", "nokey"], ["GET", "a"], ["MGET", "a", "x", "x"], ["INCR", "cnt"], ["INCR", "cnt"],
    ["APPEND", "a", "z"], ["INCRBYFLOAT", "f", "1.5"], ["INCRBYFLOAT", "f", "1"],
    ["SETRANGE", "f", "0", "9"], ["SETRANGE", "sr", "2", "v"],
    ["XADD", "st", "1-1", "f", "v"], ["XADD", "st", "2-1", "f", "v"], ["SET", "st", "x"],
    ["XADD", "st2", "NOMKSTREAM", "*", "f", "v"], ["XGROUP", "CREATE", "st3", "g", "$", "MKSTREAM"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "nost", ">"], ["XRANGE", "nost", "-", "+"],
    ["XREVRANGE", "nost", "+", "-"], ["XLEN", "nost"], ["XREAD", "STREAMS", "nost", "other", "0", "0"],
    ["XINFO", "STREAM", "nost"], ["XINFO", "GROUPS", "nost"], ["XPENDING", "nost", "g"],
    ["XACK", "nost", "g", "1-1"], ["XCLAIM", "nost", "g", "c", "0", "1-1"],
    ["XAUTOCLAIM", "nost", "g", "c", "0", "0"], ["XDEL", "nost", "1-1"], ["XTRIM", "nost", "MAXLEN", "1"],
    ["COPY", "a", "b"], ["COPY", "a", "b", "REPLACE"], ["COPY", "st3", "b", "REPLACE"],
    ["COPY", "nokey", "b"], ["RENAME", "b", "c"], ["SET", "d", "1"], ["RENAME", "c", "d"],
    ["XADD", "e", "1-1", "f", "v"], ["RENAME", "d", "e"], ["MSET", "m1", "1", "m2", "2", "a", "3"],
    ["MSETNX", "n1", "1", "n2", "2"], ["MSETNX", "n1", "1", "n3", "2"], ["GETSET", "g1", "x"],
    ["GETSET", "g1", "y"], ["SETEX", "se", "100", "v"], ["SETEX", "se", "100", "w"],
    ["PSETEX", "ps", "100000", "v"], ["GETEX", "ps", "EX", "100"], ["GETEX", "ps", "PERSIST"],
    ["GETEX", "nokey2"], ["GETDEL", "nokey3"], ["GETDEL", "g1"], ["EXISTS", "nokey3", "a"],
    ["TYPE", "nokey4"], ["TTL", "nokey4"], ["PTTL", "a"], ["STRLEN", "nokey5"],
    ["GETRANGE", "nokey5", "0", "1"], ["DUMP", "nokey6"], ["TOUCH", "nokey6", "a"],
    ["OBJECT", "ENCODING", "nokey7"], ["SETNX", "sn", "1"], ["SETNX", "sn", "2"],
    ["MOVE", "sn", "1"], ["DEL", "a", "nokey8"],
    # A script's declared keys are not looked up: only its commands' reads miss.
    ["EVAL_RO", "return 1", "1", "nokey9"], ["EVAL", "return 1", "1", "nokey9"],
    ["EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "nokey9"], ["FLUSHALL"],
]


def _events(port: int, flags: str = "KEA", commands: list | None = None) -> list[tuple[list[str], list[bytes]]]:
    """Each command with the notifications it caused, up to a sentinel publish."""
    sub, conn = Wire(port), Wire(port)
    try:
        conn.call("FLUSHALL")
        assert conn.call("CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"
        sub.send_raw(_cmd("PSUBSCRIBE", "__key*__:*", "sentinel"))
        sub.read_reply()
        sub.read_reply()
        out = []
        for argv in COMMANDS if commands is None else commands:
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


def test_new_overwritten_type_changed_keymiss(rillet_server, redis8_server):
    ours = _events(rillet_server.port, "KEAnmoc", COMMANDS_NOCM)
    ref = _events(redis8_server.port, "KEAnmoc", COMMANDS_NOCM)
    for (argv, got), (_, want) in zip(ours, ref, strict=True):
        assert got == want, f"{argv}:\n  rillet: {got}\n  redis:  {want}"


def test_only_the_new_classes(rillet_server, redis8_server):
    """n, o, c and m alone (without A): only their events."""
    for flags in ("En", "Ko", "Ec", "Km", "KEnocm"):
        ours = _events(rillet_server.port, flags, COMMANDS_NOCM)
        ref = _events(redis8_server.port, flags, COMMANDS_NOCM)
        for (argv, got), (_, want) in zip(ours, ref, strict=True):
            assert got == want, f"{flags} {argv}:\n  rillet: {got}\n  redis:  {want}"


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
