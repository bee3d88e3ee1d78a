"""Generated keyspaces and content snapshots for the RDB differential tests."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile

U64_MAX = (1 << 64) - 1


def populate(client, seed: int = 1, streams: int = 6) -> None:
    """Strings (raw, integers, binary, big), TTLs, a second db, and streams with
    deletions, trimming, empty streams with groups, idle consumers, big and
    binary fields, IDs near the 64-bit limits, pending entries with counts."""
    rnd = random.Random(seed)
    c = client
    c.set("plain", "hello")
    c.set("int-small", "12")
    c.set("int-neg", "-300")
    c.set("int-big", str(2**40))
    c.set("int-huge", str(2**63 - 1))
    c.set("not-int", "0123")
    c.set("binary", bytes(range(256)) * 3)
    c.set("big", b"ab" * 40000)
    c.set("compressible", "z" * 500)
    c.set("ttl-key", "v", px=50_000_000)
    c.execute_command("SELECT", 1)
    c.set("in-db1", "yes")
    c.set("ttl-db1", "w", px=60_000_000)
    c.execute_command("SELECT", 0)
    for n in range(streams):
        key = f"stream:{n}"
        fields_a = [b"name", b"price"]
        for i in range(rnd.randint(150, 400)):
            if rnd.random() < 0.8:
                fields = [fields_a[0], b"item-%d" % rnd.randint(0, 50),
                          fields_a[1], b"%d" % rnd.randint(-10**6, 10**12)]
            else:
                fields = [b"other", os.urandom(rnd.randint(0, 40))]
                if rnd.random() < 0.2:
                    fields += [b"blob", os.urandom(rnd.randint(100, 5000))]
            c.execute_command("XADD", key, f"{1000 + i}-{rnd.randint(0, 3)}", *fields)
        ids = [e[0] for e in c.xrange(key)]
        for sid in rnd.sample(ids, len(ids) // 5):
            c.xdel(key, sid)
        if n % 3 == 1:
            c.xtrim(key, maxlen=len(ids) // 2, approximate=False)
        c.xgroup_create(key, "g1", id="0")
        c.xgroup_create(key, "g2", id="$")
        c.xgroup_createconsumer(key, "g1", "idle-consumer")
        c.xreadgroup("g1", "alice", {key: ">"}, count=rnd.randint(5, 40))
        c.xreadgroup("g1", "bob", {key: ">"}, count=rnd.randint(5, 40))
        pending = c.xpending_range(key, "g1", "-", "+", 1000)
        for entry in pending[: len(pending) // 3]:
            c.execute_command("XCLAIM", key, "g1", "carol", 0, entry["message_id"],
                              "RETRYCOUNT", rnd.randint(2, 9))
        for entry in pending[len(pending) // 3 : len(pending) // 2]:
            c.xack(key, "g1", entry["message_id"])
    # Empty stream with groups and a consumer without pending entries.
    c.execute_command("XADD", "empty", "5-5", "f", "v")
    c.xdel("empty", "5-5")
    c.xgroup_create("empty", "eg", id="$")
    c.xgroup_createconsumer("empty", "eg", "nobody")
    # IDs near the 64-bit limits.
    c.execute_command("XADD", "edge", f"{U64_MAX}-0", "a", "1")
    c.execute_command("XADD", "edge", f"{U64_MAX}-{U64_MAX - 1}", "a", "2")
    c.execute_command("XADD", "edge-low", "0-1", "a", "1")
    c.execute_command("XADD", "edge-low", f"{2**63}-{2**63 + 5}", "a", "2")
    c.execute_command("XADD", "edge-low", f"{2**63 + 1}-0", "b", "-9223372036854775808")
    c.xgroup_create("edge-low", "g", id="0")
    c.xreadgroup("g", "x", {"edge-low": ">"}, count=2)


def _pairs(flat) -> dict:
    if isinstance(flat, dict):  # a RESP3 map
        return flat
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def stream_content(client, key) -> dict:
    info = _pairs(client.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", 0))
    out = {name: info[name] for name in (b"length", b"last-generated-id",
                                          b"max-deleted-entry-id", b"entries-added",
                                          b"recorded-first-entry-id") if name in info}
    out[b"entries"] = client.execute_command("XRANGE", key, "-", "+")
    groups = []
    for raw in info[b"groups"]:
        group = _pairs(raw)
        pel = [(e[0], e[1], e[3]) for e in group[b"pending"]]  # id, consumer, count
        consumers = []
        for rawc in group[b"consumers"]:
            consumer = _pairs(rawc)
            consumers.append((consumer[b"name"], consumer[b"pel-count"],
                              [(e[0], e[2]) for e in consumer[b"pending"]]))
        groups.append((group[b"name"], group[b"last-delivered-id"], group.get(b"entries-read"),
                       group[b"pel-count"], pel, consumers))
    out[b"groups"] = groups
    return out


def content(client, dbs=(0, 1)) -> dict:
    """Everything the tests compare: per db, key -> (type, value, has-TTL / TTL in hours)."""
    import redis

    client = redis.Redis(connection_pool=client.connection_pool)
    client.response_callbacks.clear()  # raw replies: the same shape from every server
    result = {}
    for db in dbs:
        client.execute_command("SELECT", db)
        for key in sorted(client.execute_command("KEYS", "*")):
            kind = client.execute_command("TYPE", key)
            ttl = client.execute_command("PTTL", key)
            ttl_hours = round(ttl / 3_600_000) if ttl > 0 else ttl
            if kind == b"string":
                value = client.execute_command("GET", key)
            else:
                value = stream_content(client, key)
            result[(db, key)] = (kind, value, ttl_hours)
    client.execute_command("SELECT", 0)
    return result


def redis_check_rdb(redis_server: str, path: str) -> subprocess.CompletedProcess:
    """Run Redis 8.2.3's binary as redis-check-rdb (it picks its mode from argv[0])."""
    tmp = tempfile.mkdtemp(prefix="check-rdb-")
    try:
        link = os.path.join(tmp, "redis-check-rdb")
        os.symlink(redis_server, link)
        return subprocess.run([link, path], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
