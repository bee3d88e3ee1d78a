"""Hashes, lists, sets and sorted sets survive every path: effects replayed, DEBUG RELOAD,
AOF restart, AOF rewrite, snapshot restart, and the rewrite's command form."""

from __future__ import annotations

import random

import pytest

from tests.persistence.support import InProcess, digest

FAR_MS = 4_000_000_000_000


def commands(rng: random.Random) -> list[list[str]]:
    """Writes of every kind over a few keys of each type, deterministic per seed."""
    out: list[list[str]] = [
        ["HSET", "h", "a", "1", "b", "2.5", "c", "x" * 70],
        ["HPEXPIREAT", "h", str(FAR_MS), "FIELDS", "1", "a"],
        ["HSET", "hbig", *[x for i in range(600) for x in (f"f{i}", str(i))]],
        ["RPUSH", "l", *[f"e{i}" for i in range(50)]], ["RPUSH", "lbig", *["y" * 100] * 200],
        ["SADD", "si", "3", "1", "2"], ["SADD", "sl", "a", "b", "c"],
        ["SADD", "sh", *[f"m{i}" for i in range(300)]],
        ["ZADD", "z", "1", "a", "2.5", "b", "inf", "c", "-inf", "d"],
        ["ZADD", "zbig", *[x for i in range(200) for x in (str(i / 3), f"m{i}")]],
    ]
    for _ in range(300):
        n = rng.randrange(1000)
        pick = rng.choice
        out.append(pick([
            ["HINCRBYFLOAT", "h", "b", pick(["0.1", "-3", "1e3"])],
            ["HINCRBY", "h", "n", str(n)], ["HDEL", "h", f"f{n % 5}"], ["HSET", "h", f"f{n % 5}", str(n)],
            ["HGETEX", "h", "PX", str(10**9 + n), "FIELDS", "1", "b"], ["HPERSIST", "h", "FIELDS", "1", "b"],
            ["HSETEX", "h", "EX", "100000", "FIELDS", "1", f"t{n % 3}", "v"],
            ["HGETDEL", "hbig", "FIELDS", "1", f"f{n % 600}"],
            ["LPUSH", "l", str(n)], ["RPOP", "l"], ["LPOP", "l", "3"], ["LTRIM", "l", "0", "40"],
            ["LMOVE", "l", "l2", "LEFT", "RIGHT"], ["LREM", "l", "0", "e1"], ["LSET", "l", "0", "z"],
            ["LINSERT", "l", "BEFORE", "z", "ins"], ["BLPOP", "l", "0"], ["BLMPOP", "0", "2", "lx", "lbig", "LEFT", "COUNT", "3"],
            ["SPOP", "sh"], ["SPOP", "sl", "2"], ["SADD", "sl", f"a{n % 20}"], ["SADD", "si", str(n)],
            ["SREM", "si", str(n % 10)], ["SMOVE", "sh", "sl", f"m{n % 300}"],
            ["SINTERSTORE", "sx", "sh", "sl"], ["SUNIONSTORE", "sx", "si", "sl"], ["SDIFFSTORE", "sx", "sh", "sl"],
            ["ZADD", "z", str(n / 7), f"m{n % 30}"], ["ZINCRBY", "z", "0.1", "a"], ["ZREM", "z", f"m{n % 30}"],
            ["ZPOPMIN", "z"], ["ZPOPMAX", "zbig", "2"], ["BZPOPMIN", "zbig", "0"],
            ["ZUNIONSTORE", "zu", "2", "z", "sl", "WEIGHTS", "0.5", "2"], ["ZINTERSTORE", "zu", "2", "zbig", "z"],
            ["ZRANGESTORE", "zr", "zbig", "10", "(50", "BYSCORE"], ["ZREMRANGEBYSCORE", "zbig", "0", "1"],
            ["ZMPOP", "1", "zbig", "MIN", "COUNT", "2"],
        ]))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_effects_replay_to_the_same_keyspace(seed):
    source = InProcess()
    for argv in commands(random.Random(seed)):
        reply = source.run(*argv)
        assert not isinstance(reply, Exception), (argv, reply)
    replica = InProcess()
    for _db, argv in [e for e in source.effects if e[1][0] not in (b"MULTI", b"EXEC")]:
        replica.run(*argv)
    assert replica.digest() == source.digest() != "0" * 40


def test_rewrite_commands_rebuild_the_keyspace():
    from rillet.persistence.rewrite import keyspace_commands

    source = InProcess()
    for argv in commands(random.Random(7)):
        source.run(*argv)
    copy = InProcess()
    for _db, argv in keyspace_commands(source.state):
        copy.run(*argv)
    assert copy.digest() == source.digest()


def test_rewrite_writes_scores_as_fpconv_dtoa():
    # rewriteSortedSetObject's rioWriteBulkDouble: fpconv_dtoa's text, not d2string's integers.
    from rillet.persistence.rewrite import keyspace_commands

    source = InProcess()
    source.run("ZADD", "z", "3", "a", repr(2.0**62), "b", "1e23", "c", "0.08218765258789063", "d")
    [(_db, argv)] = keyspace_commands(source.state)
    assert dict(zip(argv[3::2], argv[2::2], strict=True)) == {
        b"a": b"3", b"b": b"4611686018427388000", b"c": b"99999999999999990000000",
        b"d": b"0.08218765258789063"}


def _fill(client) -> None:
    for argv in commands(random.Random(3)):
        client.execute_command(*argv)


def _encodings(client) -> dict:
    return {k: client.object("ENCODING", k) for k in sorted(client.keys())}


def test_debug_reload_and_snapshot_restart(node_factory):
    node = node_factory().start()
    client = node.client()
    _fill(client)
    before, encodings = digest(client), _encodings(client)
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", "OK", True)
    assert digest(client) == before
    assert _encodings(client) == encodings
    assert client.save() is True
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before
    assert client.httl("h", "a") == [pytest.approx(client.httl("h", "a")[0])]
    assert client.execute_command("HPEXPIRETIME", "h", "FIELDS", "1", "a") == [FAR_MS]


def test_aof_restart_and_rewrite(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    _fill(client)
    before = digest(client)
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before
    assert client.bgrewriteaof()
    import time

    for _ in range(400):
        if client.info("persistence")["aof_rewrite_in_progress"] == 0 and \
                client.info("persistence")["aof_rewrite_scheduled"] == 0:
            break
        time.sleep(0.05)
    client.hset("after", "f", "v")
    before = digest(client)
    node.kill()
    node.start()
    assert digest(node.client()) == before
