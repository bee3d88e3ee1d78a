"""Redis 8.4's string additions, checked against the documentation (Redis 8.2.3 has none of them):
DIGEST, SET IFEQ/IFNE/IFDEQ/IFDNE, DELEX, MSETEX."""

from __future__ import annotations

from rillet.commands.strings import value_digest
from rillet.errors import ReplyError
from tests.persistence.support import InProcess


def run(server: InProcess, *argv: object) -> object:
    reply = server.run(*argv)
    return reply.message if isinstance(reply, ReplyError) else reply


def test_digest_is_xxh3_hex():
    s = InProcess()
    run(s, "SET", "key1", "Hello world")
    assert run(s, "DIGEST", "key1") == b"b6acb9d84a38ff74"  # the documentation's example
    assert run(s, "DIGEST", "nokey") is None
    run(s, "HSET", "h", "f", "v")
    assert run(s, "DIGEST", "h").startswith("WRONGTYPE")


def test_set_if_conditions():
    s = InProcess()
    assert run(s, "SET", "k", "v1", "IFEQ", "v1") is None  # missing key: not created
    assert run(s, "EXISTS", "k") == 0
    assert run(s, "SET", "k", "v1", "IFNE", "zz") == b"OK"  # missing key: IFNE sets
    assert run(s, "SET", "k", "v2", "IFEQ", "nope") is None
    assert run(s, "SET", "k", "v2", "IFEQ", "v1", "GET") == b"v1"
    assert run(s, "GET", "k") == b"v2"
    digest = run(s, "DIGEST", "k")
    assert run(s, "SET", "k", "v3", "IFDEQ", digest.upper()) == b"OK"
    assert run(s, "SET", "k", "v4", "IFDNE", run(s, "DIGEST", "k")) is None
    assert run(s, "SET", "k", "v4", "IFDNE", "0000000000000000", "EX", "100") == b"OK"
    assert run(s, "TTL", "k") == 100
    assert s.effects[-1][1][:4] == [b"SET", b"k", b"v4", b"PXAT"]
    assert run(s, "SET", "k", "v", "NX", "IFEQ", "v4") == "ERR syntax error"
    assert run(s, "SET", "k", "v", "IFEQ", "a", "IFNE", "b") == "ERR syntax error"
    assert run(s, "SET", "k", "v", "IFEQ") == "ERR syntax error"
    run(s, "RPUSH", "l", "a")
    assert run(s, "SET", "l", "v", "IFNE", "x").startswith("WRONGTYPE")


def test_delex():
    s = InProcess()
    run(s, "SET", "k", "v")
    run(s, "RPUSH", "l", "a")
    assert run(s, "DELEX", "l") == 1  # no condition: any type
    assert run(s, "DELEX", "nokey") == 0
    assert run(s, "DELEX", "k", "IFEQ", "x") == 0
    assert run(s, "DELEX", "k", "IFNE", "v") == 0
    assert run(s, "DELEX", "k", "IFDNE", run(s, "DIGEST", "k")) == 0
    assert run(s, "DELEX", "k", "IFDEQ", run(s, "DIGEST", "k")) == 1
    run(s, "SET", "k", "v")
    assert run(s, "DELEX", "k", "FOO", "v") == "ERR syntax error"
    assert run(s, "DELEX", "k", "IFEQ") == "ERR syntax error"
    assert run(s, "DELEX", "k", "IFEQ", "v") == 1
    assert s.effects[-1][1] == [b"DEL", b"k"]
    run(s, "SADD", "s", "m")
    assert run(s, "DELEX", "s", "IFEQ", "m").startswith("WRONGTYPE")


def test_msetex():
    s = InProcess()
    assert run(s, "MSETEX", "2", "a", "1", "b", "2", "EX", "100") == 1
    assert run(s, "MGET", "a", "b") == [b"1", b"2"]
    assert run(s, "TTL", "b") == 100
    assert run(s, "MSETEX", "2", "a", "x", "c", "3", "NX") == 0
    assert run(s, "MSETEX", "2", "a", "x", "c", "3", "XX") == 0
    assert run(s, "MSETEX", "2", "a", "x", "b", "y", "XX", "KEEPTTL") == 1
    assert run(s, "TTL", "b") == 100 and run(s, "GET", "a") == b"x"
    assert run(s, "MSETEX", "1", "a", "z") == 1 and run(s, "TTL", "a") == -1
    assert run(s, "MSETEX", "0", "a", "z") == "ERR numkeys should be greater than 0"
    assert run(s, "MSETEX", "3", "a", "z") == "ERR wrong number of arguments for 'msetex' command"
    assert run(s, "MSETEX", "1", "a", "z", "EX", "0") == "ERR invalid expire time in 'msetex' command"
    assert run(s, "MSETEX", "1", "a", "z", "EX", "5", "KEEPTTL") == "ERR syntax error"
    assert run(s, "COMMAND", "GETKEYS", "MSETEX", "2", "a", "1", "b", "2", "NX") == [b"a", b"b"]


def test_digest_takes_every_xxh3_length_path():
    # XXH3-64 of bytes(range(256)) * 5 cut to n bytes: the 0, 1-3, 4-8, 9-16, 17-128,
    # 129-240 and long-input paths (values from a port of the reference algorithm).
    data = bytes(range(256)) * 5
    for n, expected in [(0, b"2d06800538d394c2"), (3, b"5f4299fc161c9cbb"),
                        (8, b"3a1c2d7c85af88f8"), (16, b"8355e3a6f61770db"),
                        (128, b"85c6174c7ff4c46b"), (240, b"375a384d957fe865"),
                        (241, b"02e8cd95421c6d02"), (1025, b"78c86e91ee939852")]:
        assert value_digest(data[:n]) == expected, n
