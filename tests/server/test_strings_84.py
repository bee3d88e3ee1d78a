"""Redis 8.4's string additions, checked against the documentation (Redis 8.2.3 has none of them):
DIGEST, SET IFEQ/IFNE/IFDEQ/IFDNE, DELEX, MSETEX."""

from __future__ import annotations

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
