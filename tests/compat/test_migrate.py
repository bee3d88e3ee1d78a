"""MIGRATE and RESTORE-ASKING: rillet -> Redis 8.2.3, rillet -> rillet, Redis 8.2.3 -> rillet.

The differential test runs the same MIGRATE lines on rillet and on Redis 8.2.3,
each sending to a Redis 8.2.3 target of its own (same password, same history),
and compares the raw replies and what the targets hold afterwards.
"""

from __future__ import annotations

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire


@pytest.fixture(scope="module")
def targets():
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    handles = [servers.start_redis(binary, "--requirepass", "pw", kind="redis8")
               for _ in range(2)]
    yield handles
    for handle in handles:
        handle.stop()


@pytest.fixture(scope="module")
def rillet_target():
    handle = servers.start_rillet()
    yield handle
    handle.stop()


def _flush(port: int, password: str | None = None) -> None:
    with Wire(port) as wire:
        if password:
            wire.call("AUTH", password)
        wire.call("FLUSHALL")


# {port} is the side's own target; a closed port for the I/O error.
LINES = """SET k v|RPUSH l a b c|PEXPIRE l 100000|HSET h f 1 g 2|ZADD z 1 a 2 b|SADD s x y
XADD st 1-1 f v|MIGRATE 127.0.0.1 {port} k 0 1000
MIGRATE 127.0.0.1 {port} k 0 1000 AUTH bad|MIGRATE 127.0.0.1 {port} k 0 1000 AUTH2 default bad
MIGRATE 127.0.0.1 {port} nokey 0 1000 AUTH pw|MIGRATE 127.0.0.1 {port} k x 1000
MIGRATE 127.0.0.1 {port} k 0 x|MIGRATE 127.0.0.1 {port} k x 1000 BOGUS
MIGRATE 127.0.0.1 {port} k 0 1000 AUTH|MIGRATE 127.0.0.1 {port} k 0 1000 AUTH2 a
MIGRATE 127.0.0.1 {port} k 0 1000 KEYS a|MIGRATE 127.0.0.1 {port} k 99 1000 AUTH pw
MIGRATE 127.0.0.1 {port} k 0 1000 AUTH pw COPY|EXISTS k
MIGRATE 127.0.0.1 {port} k 0 1000 AUTH pw COPY|MIGRATE 127.0.0.1 {port} k 0 1000 AUTH pw
MIGRATE 127.0.0.1 {port} k 0 -5 AUTH pw REPLACE|EXISTS k
MIGRATE 127.0.0.1 {port} ~ 3 1000 AUTH pw KEYS l h nokey z s st|DBSIZE
MIGRATE 127.0.0.1 {port} ~ 3 1000 AUTH pw KEYS nokey|MIGRATE 127.0.0.1 {port} ~ 3 1000 KEYS
SET k2 v|MIGRATE 127.0.0.1 {port} k2 0 1000 AUTH2 default pw COPY|EXISTS k2
MIGRATE 127.0.0.1 {closed} k2 0 1000|EXISTS k2
MULTI|MIGRATE 127.0.0.1 {port} k2 1 1000 AUTH pw|EXEC|EXISTS k2""".replace("\n", "|").split("|")


def _argv(line: str, port: int, closed: int) -> list[str]:
    return [("" if word == "~" else word.format(port=port, closed=closed))
            for word in line.split()]


def test_migrate_to_redis_matches_redis(pair8, targets):
    for target in targets:
        _flush(target.port, "pw")
    closed = servers.free_port()
    for line in LINES:
        ours = pair8.ours.call(*_argv(line, targets[0].port, closed))
        ref = pair8.ref.call(*_argv(line, targets[1].port, closed))
        assert ours == ref, f"{line}:\n  rillet: {ours!r}\n  redis:  {ref!r}"
    # What arrived: the same keys, types, values and (roughly) TTLs.
    contents = []
    for target in targets:
        with Wire(target.port) as wire:
            wire.call("AUTH", "pw")
            held = {}
            for db in (0, 1, 3):
                wire.call("SELECT", db)
                for key in ("k", "k2", "l", "h", "z", "s", "st"):
                    held[(db, key)] = (wire.call("DUMP", key), wire.call("TTL", key) > b":0")
            contents.append(held)
    assert contents[0] == contents[1]


def test_rillet_to_rillet_and_back(rillet_server, rillet_target):
    _flush(rillet_target.port)
    with Wire(rillet_server.port) as src, Wire(rillet_target.port) as dst:
        src.call("FLUSHALL")
        src.call("XADD", "st", "1-1", "f", "v")
        src.call("XGROUP", "CREATE", "st", "g", "0")
        src.call("RPUSH", "l", "a", "b")
        src.call("SET", "ttl", "x", "EX", "1000")
        dumps = {key: src.call("DUMP", key) for key in ("st", "l", "ttl")}
        assert src.call("MIGRATE", "127.0.0.1", rillet_target.port, "", "2", "5000",
                        "KEYS", "st", "l", "ttl") == b"+OK\r\n"
        assert src.call("DBSIZE") == b":0\r\n"
        dst.call("SELECT", "2")
        for key, dump in dumps.items():
            assert dst.call("DUMP", key) == dump, key
        assert dst.call("TTL", "ttl") in (b":1000\r\n", b":999\r\n")
        # BUSYKEY from a rillet target, then REPLACE.
        src.call("SET", "l", "new")
        assert src.call("MIGRATE", "127.0.0.1", rillet_target.port, "l", "2", "5000") == (
            b"-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n")
        assert src.call("EXISTS", "l") == b":1\r\n"
        assert src.call("MIGRATE", "127.0.0.1", rillet_target.port, "l", "2", "5000",
                        "REPLACE") == b"+OK\r\n"
        assert dst.call("GET", "l") == b"$3\r\nnew\r\n"
        # And back, with RESTORE-ASKING's sibling path (RESTORE) on the way.
        assert dst.call("MIGRATE", "127.0.0.1", rillet_server.port, "l", "0", "5000") == b"+OK\r\n"
        assert src.call("GET", "l") == b"$3\r\nnew\r\n"


def test_redis_to_rillet(redis8_server, rillet_target):
    _flush(rillet_target.port)
    with Wire(redis8_server.port) as src, Wire(rillet_target.port) as dst:
        src.call("FLUSHALL")
        src.call("XADD", "st", "1-1", "f", "v")
        src.call("HSET", "h", "a", "1")
        src.call("ZADD", "z", "1.5", "m")
        src.call("SET", "k", "v", "PX", "500000")
        expected = {key: src.call("DUMP", key) for key in ("st", "h", "z", "k")}
        assert src.call("MIGRATE", "127.0.0.1", rillet_target.port, "", "0", "5000",
                        "KEYS", "st", "h", "z", "k") == b"+OK\r\n"
        assert src.call("DBSIZE") == b":0\r\n"
        assert dst.call("XRANGE", "st", "-", "+") == (
            b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
        assert dst.call("HGETALL", "h") == b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"
        assert dst.call("ZSCORE", "z", "m") == b"$3\r\n1.5\r\n"
        assert int(dst.call("PTTL", "k")[1:]) > 400000
        assert set(expected) == {"st", "h", "z", "k"}


def test_restore_asking(pair8):
    payload = parse_bulk(pair8.ref.call("DUMP", "nokey"))
    assert payload is None
    pair8.ref.call("SET", "src", "hello")
    payload = parse_bulk(pair8.ref.call("DUMP", "src"))
    pair8.check("RESTORE-ASKING", "a", "0", payload)
    pair8.check("GET", "a")
    pair8.check("RESTORE-ASKING", "a", "0", payload)
    pair8.check("RESTORE-ASKING", "a", "0", payload, "REPLACE", "ABSTTL")
    pair8.check("RESTORE-ASKING", "a", "0", "bad")
    pair8.check("RESTORE-ASKING", "a")
    pair8.check("COMMAND", "INFO", "restore-asking", "migrate")
    for args in (("h", "p", "k", "0", "5"), ("h", "p", "", "0", "5", "KEYS", "a", "b"),
                 ("h", "p", "", "0", "5", "AUTH", "KEYS", "x", "KEYS", "a"),
                 ("h", "p", "", "0", "5", "AUTH2", "u", "p", "COPY", "KEYS", "a"),
                 ("h", "p", "k", "0", "5", "KEYS", "a"), ("h", "p", "k", "0", "5", "COPY")):
        pair8.check("COMMAND", "GETKEYS", "MIGRATE", *args)
        pair8.check("COMMAND", "GETKEYSANDFLAGS", "MIGRATE", *args)


def parse_bulk(raw: bytes) -> bytes | None:
    if raw.startswith(b"$-1"):
        return None
    header, _, rest = raw.partition(b"\r\n")
    return rest[: int(header[1:])]
