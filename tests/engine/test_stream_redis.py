"""Node boundaries and trimming against real Redis: the same writes go to a
`Stream` and to redis-server (7.0 and 8.2.3), then XINFO STREAM's
radix-tree-keys / radix-tree-nodes, the metadata, the contents and MEMORY USAGE
must agree. This is what makes `~` trimming remove exactly what Redis removes.
"""

from __future__ import annotations

import random

import hiredis
import pytest

from rillet.engine.ids import MAX_ID, MIN_ID, StreamID, format_id
from rillet.engine.stream import Stream, default_trim_limit
from tests.helpers import servers
from tests.helpers.wire import Wire

pytestmark = pytest.mark.needs_redis


@pytest.fixture(scope="module", params=["redis7", "redis8"])
def redis_client(request):
    binary = servers.redis7_binary() if request.param == "redis7" else servers.redis8_binary()
    if binary is None:
        pytest.skip(f"{request.param} binary not available")
    handle = servers.start_redis(binary, kind=request.param)
    client = RawClient(handle.port)
    yield client
    client.close()
    handle.stop()


class RawClient:
    """Replies exactly as RESP gives them (redis-py would reshape XINFO), errors raised."""

    def __init__(self, port: int) -> None:
        self.wire = Wire(port)

    def execute_command(self, *args):
        reader = hiredis.Reader()
        reader.feed(self.wire.call(*args))
        reply = reader.gets()
        if isinstance(reply, hiredis.ReplyError):
            raise reply
        return reply

    def delete(self, key: bytes) -> None:
        self.execute_command("DEL", key)

    def config_set(self, name: str, value: int) -> None:
        self.execute_command("CONFIG", "SET", name, value)

    def close(self) -> None:
        self.wire.close()


def _pid(value: bytes) -> StreamID:
    ms, seq = value.split(b"-")
    return StreamID(int(ms), int(seq))


class Mirror:
    """Applies each write to both a Stream and a Redis key, then compares them."""

    def __init__(self, client, key: bytes, max_entries: int = 100, max_bytes: int = 4096) -> None:
        self.client = client
        self.key = key
        client.delete(key)
        self.config(max_entries, max_bytes)
        self.stream = Stream(max_entries, max_bytes)
        self.key_overhead: int | None = None

    def config(self, max_entries: int, max_bytes: int) -> None:
        self.client.config_set("stream-node-max-entries", max_entries)
        self.client.config_set("stream-node-max-bytes", max_bytes)
        if hasattr(self, "stream"):
            self.stream.node_max_entries = max_entries
            self.stream.node_max_bytes = max_bytes

    def xadd(self, sid: StreamID, fields: list[bytes]) -> None:
        reply = self.client.execute_command("XADD", self.key, format_id(sid), *fields)
        assert _pid(reply) == sid
        self.stream.append(self.stream.next_id(sid.ms, sid.seq, 0), fields)

    def xdel(self, sid: StreamID) -> None:
        ref = self.client.execute_command("XDEL", self.key, format_id(sid))
        assert self.stream.delete(sid) == bool(ref)

    def xtrim(self, strategy: str, threshold, approx: bool, limit: int | None = None) -> None:
        args = ["XTRIM", self.key, strategy, "~" if approx else "="]
        args.append(format_id(threshold) if strategy == "MINID" else threshold)
        if limit is not None:
            args += ["LIMIT", limit]
        ref = self.client.execute_command(*args)
        if limit is None:
            limit = default_trim_limit(self.stream.node_max_entries) if approx else 0
        if strategy == "MAXLEN":
            ours = self.stream.trim_maxlen(threshold, approx, limit)
        else:
            ours = self.stream.trim_minid(threshold, approx, limit)
        assert ours == ref, (args, ours, ref)

    def check(self) -> None:
        self.stream.check_invariants()
        raw = self.client.execute_command("XINFO", "STREAM", self.key)
        info = dict(zip(raw[::2], raw[1::2], strict=True))
        s = self.stream
        assert info[b"length"] == s.length
        assert info[b"radix-tree-keys"] == s.radix_tree_keys
        assert info[b"radix-tree-nodes"] == s.radix_tree_nodes
        assert _pid(info[b"last-generated-id"]) == s.last_id
        assert _pid(info[b"max-deleted-entry-id"]) == s.max_deleted_id
        assert info[b"entries-added"] == s.entries_added
        assert _pid(info[b"recorded-first-entry-id"]) == s.first_id
        ref_entries = self.client.execute_command("XRANGE", self.key, "-", "+")
        ours = [(format_id(sid), fields) for sid, fields in s.range(MIN_ID, MAX_ID)]
        assert [(e[0], list(e[1])) for e in ref_entries] == ours
        usage = self.client.execute_command("MEMORY", "USAGE", self.key, "SAMPLES", "0")
        overhead = usage - s.memory_usage(0)
        if self.key_overhead is None:
            self.key_overhead = overhead
        assert overhead == self.key_overhead, "MEMORY USAGE estimate drifted from Redis"


def _fill(mirror: Mirror, rnd: random.Random, count: int, make_fields, ms_gap=(0, 3)) -> None:
    ms = 1_700_000_000_000
    seq = 0
    for _ in range(count):
        step = rnd.randint(*ms_gap)
        if step:
            ms += step
            seq = rnd.choice([0, 0, 0, 5, 200, 70000])
        else:
            seq += 1
        mirror.xadd(StreamID(ms, seq), make_fields(rnd))


def _sensor(rnd: random.Random) -> list[bytes]:
    return [
        b"sensor-id",
        b"%d" % rnd.randrange(1000),
        b"temperature",
        b"%.2f" % rnd.uniform(-20, 40),
    ]


def _big(rnd: random.Random) -> list[bytes]:
    size = rnd.choice([1, 20, 62, 63, 64, 126, 127, 300, 900, 4090, 4100])
    return [b"payload", bytes(rnd.choice(b"abcdef") for _ in range(size))]


def _mixed(rnd: random.Random) -> list[bytes]:
    names = rnd.choice([[b"a"], [b"a", b"b"], [b"b", b"a"], [b"x", b"y", b"z"]])
    values = [
        b"-1",
        b"0",
        b"127",
        b"128",
        b"-4096",
        b"32767",
        b"99999999",
        b"007",
        b"+3",
        b"9223372036854775807",
        b"9223372036854775808",
        b"hello",
        b"",
    ]
    out = []
    for name in names:
        out += [name, rnd.choice(values)]
    return out


@pytest.mark.parametrize(
    "make_fields,limits,ms_gap",
    [
        (_sensor, (100, 4096), (0, 3)),
        (_sensor, (100, 4096), (0, 400)),
        (_big, (100, 4096), (0, 2)),
        (_mixed, (100, 4096), (0, 5000)),
        (_mixed, (7, 0), (0, 2)),
        (_sensor, (0, 700), (0, 2)),
        (_sensor, (300, 8192), (0, 2)),
    ],
    ids=["sensor", "sensor-sparse", "big", "mixed", "mixed-7", "bytes-700", "entries-300"],
)
def test_node_boundaries_match_redis(redis_client, make_fields, limits, ms_gap):
    rnd = random.Random(7)
    mirror = Mirror(redis_client, b"rillet-nodes", *limits)
    _fill(mirror, rnd, 1200, make_fields, ms_gap)
    mirror.check()


def test_deletes_reopen_and_trims_match_redis(redis_client):
    rnd = random.Random(11)
    mirror = Mirror(redis_client, b"rillet-trims", 10, 4096)
    _fill(mirror, rnd, 300, _mixed)
    mirror.check()
    ids = [sid for sid, _ in mirror.stream.range(MIN_ID, MAX_ID)]
    # Empty the last node entirely: the one before becomes the tail again and
    # takes appends while it has room (Redis appends to whatever node is last).
    last_master = mirror.stream._keys[-1]
    for sid in [i for i in ids if i >= last_master]:
        mirror.xdel(sid)
    mirror.check()
    mirror.config(12, 4096)
    _fill_from = mirror.stream.last_id
    for j in range(1, 6):
        mirror.xadd(StreamID(_fill_from.ms + j, 0), [b"a", b"%d" % j])
    mirror.check()
    for sid in rnd.sample(ids, 60):
        mirror.xdel(sid)
    mirror.check()
    mirror.xtrim("MAXLEN", 200, approx=True)
    mirror.xtrim("MAXLEN", 150, approx=True, limit=25)
    mirror.xtrim("MAXLEN", 140, approx=False)
    mirror.check()
    remaining = [sid for sid, _ in mirror.stream.range(MIN_ID, MAX_ID)]
    mirror.xtrim("MINID", remaining[30], approx=True)
    mirror.xtrim("MINID", remaining[45], approx=False)
    mirror.check()
    # Exact MINID past every live entry of a node whose tail is a tombstone
    # leaves a node with no live entry, which Redis keeps.
    mirror.xtrim("MINID", mirror.stream.last_id, approx=False)
    mirror.check()
    mirror.xtrim("MAXLEN", 0, approx=True)
    mirror.check()
    mirror.xtrim("MAXLEN", 0, approx=False)
    mirror.check()


def test_xtrim_approx_444_matches_redis(redis_client):
    mirror = Mirror(redis_client, b"rillet-444", 100, 4096)
    for i in range(1, 1001):
        mirror.xadd(StreamID(i, 0), [b"item", b"%d" % i])
    mirror.xtrim("MAXLEN", 444, approx=True)
    assert mirror.stream.length == 500
    mirror.check()


@pytest.fixture(scope="module")
def redis8_client():
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("redis8 binary not available")
    handle = servers.start_redis(binary, kind="redis8")
    client = RawClient(handle.port)
    yield client
    client.close()
    handle.stop()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("policy", ["ACKED", "DELREF"])
def test_exact_trim_with_group_policies_matches_redis8(redis8_client, seed, policy):
    # Redis 8.2.3 itself trims nothing under `~` with DELREF/ACKED (fixed later
    # in redis#14623, whose behaviour we follow), so only exact trims compare.
    rnd = random.Random(seed)
    mirror = Mirror(redis8_client, b"rillet-policy", 10, 4096)
    for i in range(1, 121):
        mirror.xadd(StreamID(i, 0), [b"n", b"%d" % i])
    client = mirror.client
    client.execute_command("XGROUP", "CREATE", mirror.key, "g", "0")
    delivered = rnd.randint(0, 120)
    if delivered:
        client.execute_command(
            "XREADGROUP", "GROUP", "g", "c", "COUNT", delivered, "STREAMS", mirror.key, ">"
        )
    pending = {StreamID(i, 0) for i in range(1, delivered + 1)}
    acked = rnd.sample(sorted(pending), rnd.randint(0, len(pending)))
    if acked:
        client.execute_command("XACK", mirror.key, "g", *[format_id(s) for s in acked])
    pending -= set(acked)
    last_delivered = StreamID(delivered, 0)

    def can_delete(sid):
        return sid <= last_delivered and sid not in pending

    removed: list[StreamID] = []
    if rnd.random() < 0.5:
        args, threshold = ("MAXLEN", rnd.randint(0, 120)), None
    else:
        threshold = StreamID(rnd.randint(1, 125), 0)
        args = ("MINID", format_id(threshold))
    ref = client.execute_command("XTRIM", mirror.key, args[0], "=", args[1], policy)
    hooks = (can_delete, None) if policy == "ACKED" else (None, removed.extend)
    if args[0] == "MAXLEN":
        ours = mirror.stream.trim_maxlen(args[1], False, 0, *hooks)
    else:
        ours = mirror.stream.trim_minid(threshold, False, 0, *hooks)
    assert ours == ref
    if policy == "DELREF":
        summary = client.execute_command("XPENDING", mirror.key, "g")
        assert summary[0] == len(pending - set(removed))
    mirror.check()


def test_reopened_tail_memory_usage_matches_redis(redis_client):
    mirror = Mirror(redis_client, b"rillet-reopen", 10, 4096)
    for i in range(1, 16):
        mirror.xadd(StreamID(i, 0), [b"f", b"%d" % i])
    mirror.check()
    for i in range(11, 16):
        mirror.xdel(StreamID(i, 0))
    mirror.config(20, 4096)
    for i in range(20, 25):
        mirror.xadd(StreamID(i, 0), [b"f", b"%d" % i])
    assert mirror.stream.radix_tree_keys == 1
    mirror.check()
