"""Arrays (Redis 8.8) survive every path: effects replayed, the rewrite's command form,
DUMP/RESTORE, DEBUG RELOAD, snapshot restart, AOF restart and rewrite, and a replica."""

from __future__ import annotations

import random
import time

import pytest

from rillet.engine.arrays import Array
from rillet.persistence import rdb
from tests.persistence.support import InProcess, digest

U64_TOP = str((1 << 64) - 2)
VALUES = ["0", "-17", "2305843009213693952", "1.5", "-0.25", "1.0", "0.1", "short", "",
          "a longer value than seven bytes", "x" * 5000, "\x00\xff"]


def commands(rng: random.Random) -> list[list[str]]:
    """Writes of every array command, deterministic per seed."""
    out: list[list[str]] = [
        ["ARSET", "a", "0", *VALUES], ["ARMSET", "sparse", "0", "a", U64_TOP, "z", "99999999999", "m"],
        ["ARINSERT", "q", "a", "b", "c"], ["ARRING", "ring", "5", *[f"r{i}" for i in range(8)]],
        ["ARSET", "dense", "100", *[str(i) for i in range(300)]],
    ]
    for _ in range(200):
        n = rng.randrange(10_000)
        pick = rng.choice
        out.append(pick([
            ["ARSET", "a", str(n % 50), pick(VALUES)], ["ARMSET", "sparse", str(n * 7919), str(n)],
            ["ARDEL", "a", str(n % 20)], ["ARDELRANGE", "dense", str(n % 400), str(n % 400 + 3)],
            ["ARINSERT", "q", str(n)], ["ARSEEK", "q", str(n % 30)], ["ARRING", "ring", str(n % 7 + 1), str(n)],
            ["ARSET", "dense", str(100 + n % 300), pick(VALUES)],
        ]))
    return out


@pytest.mark.parametrize("seed", range(3))
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
    assert copy.run("ARNEXT", "q") == source.run("ARNEXT", "q")


def test_dump_restore_round_trip_and_layout():
    s = InProcess()
    for argv in commands(random.Random(11)):
        s.run(*argv)
    s.run("ARSEEK", "sparse", str((1 << 64) - 1))  # the terminal cursor survives too
    for key in (b"a", b"sparse", b"q", b"ring", b"dense"):
        payload = s.run("DUMP", key)
        assert s.run("RESTORE", key + b"2", "0", payload) == b"OK"
        assert s.run("DUMP", key + b"2") == payload
        assert s.run("ARSCAN", key + b"2", "0", U64_TOP) == s.run("ARSCAN", key, "0", U64_TOP)
        assert s.run("ARNEXT", key + b"2") == s.run("ARNEXT", key)
    # the element tags are those of Redis's in-memory forms
    value = Array()
    for i, v in enumerate([b"5", b"1.5", b"0.1", b"abcdefgh", b"2305843009213693952"]):
        value.set(i, v)
    body = rdb.dump_value(value)
    assert body[0] == 28  # RDB_TYPE_ARRAY
    assert body[1:3] == b"\x05\x00"  # five elements, no cursor
    assert body[3:13] == b"\x00\x01" + (5).to_bytes(8, "little")  # INT
    assert body[13:15] == b"\x01\x02"  # FLOAT
    assert body[23:27] == b"\x02\x03\x030"  # "0.1": 2 low bits lost, so a small string
    assert body[29:31] == b"\x03\x00"  # 8 bytes: a heap string (SDS)


def test_restore_refuses_a_bad_payload():
    s = InProcess()
    s.run("ARSET", "a", "3", "x")
    payload = s.run("DUMP", "a")
    broken = payload[:4] + b"\x07" + payload[5:]  # an unknown element tag
    reply = s.run("RESTORE", "b", "0", broken)
    assert isinstance(reply, Exception)
    assert s.run("EXISTS", "b") == 0


def _fill(client) -> None:
    for argv in commands(random.Random(3)):
        client.execute_command(*argv)


def _content(client) -> dict:
    # redis-py (hiredis) cannot read integers past 2^63-1: the top index is read by value.
    return {k: (client.execute_command("ARSCAN", k, "0", str(2**63 - 1)),
                client.execute_command("ARGET", k, U64_TOP), client.execute_command("ARNEXT", k))
            for k in sorted(client.keys())}


def test_debug_reload_and_snapshot_restart(node_factory):
    node = node_factory().start()
    client = node.client()
    _fill(client)
    client.execute_command("EXPIRE", "a", "100000")
    before, content = digest(client), _content(client)
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", "OK", True)
    assert digest(client) == before and _content(client) == content
    assert client.execute_command("DEBUG", "DIGEST-VALUE", "a") != [b"0" * 40]
    assert client.save() is True
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before and _content(client) == content
    assert client.ttl("a") > 0
    assert client.type("a") in (b"array", "array")


def test_aof_restart_and_rewrite(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    _fill(client)
    before, content = digest(client), _content(client)
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before and _content(client) == content
    assert client.bgrewriteaof()
    for _ in range(400):
        info = client.info("persistence")
        if info["aof_rewrite_in_progress"] == 0 and info["aof_rewrite_scheduled"] == 0:
            break
        time.sleep(0.05)
    client.execute_command("ARINSERT", "q", "after")
    before, content = digest(client), _content(client)
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before and _content(client) == content
