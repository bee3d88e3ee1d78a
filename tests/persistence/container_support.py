"""Generated hashes, lists, sets and sorted sets for the RDB differential tests (every encoding)."""

from __future__ import annotations

import random

import redis

FAR = 4_000_000_000_000  # a field deadline (ms) far in the future


def populate_containers(client, seed: int = 1, field_ttls: bool = True) -> None:
    """One key per encoding of each type, with big, binary and integer-like elements.

    Only commands whose resulting encoding and element order are the same in
    Redis and rillet (elements pushed or added one at a time where the node
    layout depends on it)."""
    rnd = random.Random(seed)
    c = client

    def blob(low: int, high: int) -> bytes:
        return rnd.randbytes(rnd.randint(low, high))

    # lists
    c.rpush("l:small", "a", "12", "-7", "9223372036854775807", "0123", blob(0, 30), "")
    for i in range(1200):  # quicklist: several listpack nodes
        c.rpush("l:quick", (b"%d" % rnd.randint(-10**12, 10**12)) if i % 3 else blob(5, 40))
    for item in (b"head", blob(9000, 9000), b"mid", b"x" * 20000, b"tail"):  # PLAIN nodes
        c.rpush("l:plain", item)
    c.lpush("l:left", *[b"v%d" % i for i in range(50)])
    # sets
    c.sadd("s:int", *[rnd.randint(-2**63, 2**63 - 1) for _ in range(40)], 1, 2, 3)
    c.sadd("s:int16", 5, -3, 300)
    for i in range(60):
        c.sadd("s:lp", b"m%d" % i if i % 4 else blob(1, 20))
    c.sadd("s:ht", *[b"member-%d" % i for i in range(300)])
    c.sadd("s:bigmember", "small", "y" * 100)
    # sorted sets
    scores = [1, -0.5, 3.25, 1e20, 1.5e-7, float("inf"), float("-inf"), 2**53, 0.1, -17, 123456.789]
    c.zadd("z:lp", {b"m%d" % i: s for i, s in enumerate(scores)})
    c.zadd("z:lp", {b"bin": 7, blob(1, 30): 2.5})
    c.zadd("z:skip", {b"e%d" % i: rnd.random() * 1000 - 500 for i in range(400)})
    c.zadd("z:bigmember", {"a": 1, "b" * 200: 2})
    # hashes
    c.hset("h:lp", mapping={"f1": "v1", "num": "42", "neg": "-1", "bin": blob(0, 40), "": "e"})
    c.hset("h:ht", mapping={b"f%d" % i: b"v%d" % i for i in range(600)})
    c.hset("h:bigvalue", mapping={"a": "1", "b": "z" * 300})
    if field_ttls:
        c.hset("h:lpex", mapping={"a": "1", "b": "2", "c": "3", "d": "4"})
        # The earliest deadline first: Redis saves the minimum it tracks, which a
        # later, slightly earlier deadline does not always update (accurate=0).
        c.execute_command("HPEXPIREAT", "h:lpex", FAR, "FIELDS", 1, "c")
        c.execute_command("HPEXPIREAT", "h:lpex", FAR + 500, "FIELDS", 1, "a")
        c.hset("h:persisted", mapping={"a": "1", "b": "2"})  # listpackex with no TTL left
        c.execute_command("HPEXPIREAT", "h:persisted", FAR, "FIELDS", 1, "b")
        c.execute_command("HPERSIST", "h:persisted", "FIELDS", 1, "b")
        c.hset("h:meta", mapping={b"f%d" % i: b"v%d" % i for i in range(520)})
        c.execute_command("HPEXPIREAT", "h:meta", FAR + 7, "FIELDS", 2, "f3", "f9")
        c.execute_command("HPEXPIREAT", "h:meta", FAR, "FIELDS", 1, "f100")
    c.execute_command("SELECT", 1)
    c.rpush("db1:list", "x", "y")
    c.hset("db1:hash", "k", "v")
    c.expire("db1:hash", 100_000)
    c.execute_command("SELECT", 0)


# Keys whose DUMP payload Redis makes the same every time (no hash-table iteration order).
DETERMINISTIC = ("l:small", "l:quick", "l:plain", "l:left", "s:int", "s:int16", "s:lp",
                 "z:lp", "z:skip", "z:bigmember", "h:lp", "h:lpex")


def container_content(client, dbs=(0, 1), encodings: bool = True, field_ttls: bool = True) -> dict:
    """Per db: key -> (type, content, TTL in hours[, OBJECT ENCODING]), by raw replies."""
    client = redis.Redis(connection_pool=client.connection_pool)
    client.response_callbacks.clear()
    out = {}
    for db in dbs:
        client.execute_command("SELECT", db)
        for key in sorted(client.execute_command("KEYS", "*")):
            kind = client.execute_command("TYPE", key)
            if kind == b"list":
                value = client.execute_command("LRANGE", key, 0, -1)
            elif kind == b"set":
                value = sorted(client.execute_command("SMEMBERS", key))
            elif kind == b"zset":
                value = client.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
            elif kind == b"hash":
                flat = client.execute_command("HGETALL", key)
                if isinstance(flat, dict):  # a RESP3 map
                    flat = [x for item in flat.items() for x in item]
                fields = sorted(flat[0::2])
                ttls = (client.execute_command("HPEXPIRETIME", key, "FIELDS", len(fields), *fields)
                        if field_ttls else [None] * len(fields))
                pairs = dict(zip(flat[0::2], flat[1::2], strict=True))
                value = [(f, pairs[f], t) for f, t in zip(fields, ttls, strict=True)]
            else:
                value = client.execute_command("DUMP", key)
            ttl = client.execute_command("PTTL", key)
            entry = (kind, value, round(ttl / 3_600_000) if ttl > 0 else ttl)
            if encodings:
                entry += (client.execute_command("OBJECT", "ENCODING", key),)
            out[(db, key)] = entry
    client.execute_command("SELECT", 0)
    return out
