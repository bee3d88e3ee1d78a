"""Bitmaps (strings edited in place) and SORT ... STORE survive their effects being replayed,
an AOF restart and a snapshot restart: the same keyspace digest after each."""

from __future__ import annotations

import random

import pytest

from tests.persistence.support import InProcess, digest


def commands(rng: random.Random) -> list[list[str]]:
    out: list[list[str]] = [
        ["RPUSH", "l", "3", "1", "2", "10"], ["SADD", "s", "b", "a", "c"],
        ["ZADD", "z", "1", "x", "2", "y"], ["MSET", "w_1", "9", "w_2", "8", "w_3", "7"],
        ["HSET", "h_1", "f", "z"], ["SET", "t", "v", "EX", "100000"],
    ]
    for _ in range(200):
        n = rng.randrange(1000)
        pick = rng.choice
        out.append(pick([
            ["SETBIT", "b", str(n), pick(["0", "1"])], ["SETBIT", "t", str(n % 64), "1"],
            ["BITFIELD", "f", "OVERFLOW", pick(["WRAP", "SAT", "FAIL"]), "INCRBY", pick(["u8", "i5", "i64"]),
             f"#{n % 9}", str(n - 500), "SET", "u3", str(n % 40), str(n)],
            ["BITFIELD", "g", "OVERFLOW", "FAIL", "SET", "u8", str(n), "999"],
            ["BITOP", pick(["AND", "OR", "XOR", "DIFF", "DIFF1", "ANDOR", "ONE"]), "d", "b", "f", "nokey"],
            ["BITOP", "NOT", "n", pick(["b", "f", "nokey"])],
            ["SORT", "l", "BY", "w_*", "STORE", "sl"], ["SORT", "s", "ALPHA", "DESC", "STORE", "ss"],
            ["SORT", "s", "BY", "nosort", "STORE", "ss2"], ["SORT", "z", "ALPHA", "GET", "h_*->f", "GET", "#", "STORE", "sz"],
            ["SORT", "nokey", "STORE", "sl"], ["RPUSH", "l", str(n)], ["SADD", "s", str(n % 50)],
        ]))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_effects_replay_to_the_same_keyspace(seed):
    source = InProcess()
    for argv in commands(random.Random(seed)):
        reply = source.run(*argv)
        assert not isinstance(reply, Exception), (argv, reply)
    replica = InProcess()
    for _db, argv in [e for e in source.effects if e[1][0] not in (b"MULTI", b"EXEC")]:
        replica.run(*argv)
    assert replica.digest() == source.digest() != "0" * 40


def _fill(client) -> None:
    for argv in commands(random.Random(5)):
        client.execute_command(*argv)


def test_aof_and_snapshot_restart(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    _fill(client)
    before = digest(client)
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before
    assert client.save() is True
    node.kill()
    node.start()
    assert digest(node.client()) == before
