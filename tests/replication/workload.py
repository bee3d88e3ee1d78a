"""A seeded mix of stream and consumer-group writes, and a comparable view of the state."""

from __future__ import annotations

import random
import time

import redis

KEYS = [b"s0", b"s1", b"s2"]
GROUPS = [b"g0", b"g1"]
CONSUMERS = [b"c0", b"c1", b"c2"]
# Per-consumer and per-entry clocks that a replica sets when it applies the
# stream, not copied from the master (see docs/compat.md, replication).
# `iids-duplicates` counts XADDs the master answered from its IDMP table: they
# change nothing, so nothing is propagated (as in Redis).
CLOCK_FIELDS = {b"seen-time", b"active-time", b"iids-duplicates"}


def raw(client: redis.Redis) -> redis.Redis:
    """The same server without redis-py's reply parsing: replies as the server sent them."""
    plain = redis.Redis(connection_pool=client.connection_pool)
    plain.response_callbacks = {}
    return plain


def run(client: redis.Redis, seed: int, steps: int) -> dict[str, int]:
    """Run `steps` random writes on `client` (the master); returns errors per command."""
    client = raw(client)
    rng = random.Random(seed)
    errors: dict[str, int] = {}
    fresh = iter(b"n%d" % i for i in range(10**6))
    for key in KEYS:
        _call(client, errors, "XGROUP", "CREATE", key, GROUPS[0], "0", "MKSTREAM")
    for _ in range(steps):
        key = rng.choice(KEYS)
        group = rng.choice(GROUPS)
        consumer = rng.choice(CONSUMERS)
        op = rng.randrange(100)
        if op < 30:
            argv = ["XADD", key]
            if rng.random() < 0.2:
                argv += ["IDMP", f"p{rng.randrange(3)}", f"i{rng.randrange(20)}"]
            if rng.random() < 0.3:
                argv += ["MAXLEN", rng.choice(["=", "~"]), rng.randrange(5, 40)]
            argv += ["*", "f", rng.randrange(1000)]
            _call(client, errors, *argv)
        elif op < 45:
            argv = ["XREADGROUP", "GROUP", group, consumer, "COUNT", rng.randrange(1, 6)]
            if rng.random() < 0.3:
                argv.append("NOACK")
            _call(client, errors, *argv, "STREAMS", key, ">")
        elif op < 48:
            # A new consumer whose read returns nothing still exists afterwards.
            _call(client, errors, "XREADGROUP", "GROUP", group, next(fresh), "COUNT", 1,
                  "STREAMS", key, "999999999999999-0")
        elif op < 58:
            ids = _pending_ids(client, key, group, rng)
            if ids:
                _call(client, errors, "XACK", key, group, *ids)
        elif op < 62:
            ids = _pending_ids(client, key, group, rng)
            if ids:
                _call(client, errors, "XACKDEL", key, group, rng.choice(["KEEPREF", "DELREF", "ACKED"]),
                      "IDS", len(ids), *ids)
        elif op < 67:
            ids = _pending_ids(client, key, group, rng)
            if ids:
                _call(client, errors, "XCLAIM", key, group, consumer, 0, *ids)
        elif op < 71:
            _call(client, errors, "XAUTOCLAIM", key, group, consumer, 0, "0-0", "COUNT",
                  rng.randrange(1, 5))
        elif op < 74:
            ids = _pending_ids(client, key, group, rng)
            if ids:
                _call(client, errors, "XNACK", key, group, rng.choice(["SILENT", "FAIL"]),
                      "IDS", len(ids), *ids)
        elif op < 79:
            ids = _entry_ids(client, key, rng)
            if ids:
                _call(client, errors, "XDEL", key, *ids)
        elif op < 82:
            ids = _entry_ids(client, key, rng)
            if ids:
                _call(client, errors, "XDELEX", key, rng.choice(["KEEPREF", "DELREF", "ACKED"]),
                      "IDS", len(ids), *ids)
        elif op < 85:
            _call(client, errors, "XGROUP", "CREATE", key, group, rng.choice(["0", "$"]), "MKSTREAM")
        elif op < 87:
            ids = _entry_ids(client, key, rng)
            _call(client, errors, "XGROUP", "SETID", key, group, ids[0] if ids else "0")
        elif op < 89:
            _call(client, errors, "XGROUP", "CREATECONSUMER", key, group, next(fresh))
        elif op < 91:
            _call(client, errors, "XGROUP", "DELCONSUMER", key, group, consumer)
        elif op < 92:
            _call(client, errors, "XGROUP", "DESTROY", key, group)
        elif op < 94:
            _call(client, errors, "XTRIM", key, "MAXLEN", rng.randrange(0, 30))
        elif op < 97:
            # Expiry: a short-lived stream that the master expires (its DEL replicates).
            _call(client, errors, "XADD", b"tmp", "*", "f", 1)
            _call(client, errors, "PEXPIRE", b"tmp", rng.randrange(1, 30))
        else:
            time.sleep(0.03)
            client.exists(b"tmp")  # expires it on the master if due
    time.sleep(0.05)
    client.exists(b"tmp")
    return errors


def _call(client: redis.Redis, errors: dict[str, int], *argv) -> object:
    try:
        return client.execute_command(*argv)
    except redis.ResponseError as error:
        name = str(argv[0]).upper()
        code = str(error).split(" ", 1)[0]
        errors[f"{name} {code}"] = errors.get(f"{name} {code}", 0) + 1
        return None


def _pending_ids(client: redis.Redis, key: bytes, group: bytes, rng: random.Random) -> list[bytes]:
    try:
        rows = client.execute_command("XPENDING", key, group, "-", "+", 20)
    except redis.ResponseError:
        return []
    ids = [row[0] for row in rows]
    return rng.sample(ids, min(len(ids), rng.randrange(1, 4))) if ids else []


def _entry_ids(client: redis.Redis, key: bytes, rng: random.Random) -> list[bytes]:
    rows = client.execute_command("XRANGE", key, "-", "+", "COUNT", 30)
    ids = [row[0] for row in rows or []]
    return rng.sample(ids, min(len(ids), rng.randrange(1, 3))) if ids else []


def view(client: redis.Redis) -> dict:
    """Everything the replica must agree on: entries, groups, consumers, PELs."""
    client = raw(client)
    out: dict = {}
    for key in sorted(client.keys("*")):
        kind = client.type(key)
        if kind != b"stream":
            out[key] = (kind, client.get(key) if kind == b"string" else None)
            continue
        groups = client.execute_command("XINFO", "GROUPS", key)
        pending = {}
        for group in groups:
            name = group[b"name"] if isinstance(group, dict) else group[1]
            rows = client.execute_command("XPENDING", key, name, "-", "+", 100000)
            # [id, consumer, idle ms, deliveries]: idle depends on when one asks.
            pending[name] = [(row[0], row[1], row[3]) for row in rows]
        out[key] = {
            "entries": client.execute_command("XRANGE", key, "-", "+"),
            "full": _strip_clocks(client.execute_command("XINFO", "STREAM", key, "FULL")),
            "pending": pending,
        }
    return out


def _strip_clocks(value):
    if isinstance(value, dict):
        return {k: None if k in CLOCK_FIELDS else _strip_clocks(v) for k, v in value.items()}
    if isinstance(value, list):
        out = []
        skip = False
        for item in value:
            if skip:
                out.append(None)
                skip = False
                continue
            if isinstance(item, bytes) and item in CLOCK_FIELDS:
                skip = True
            out.append(_strip_clocks(item))
        return out
    return value


def differences(a, b, path: str = "") -> list[str]:
    """Paths where two views differ (for a readable failure and the Redis report)."""
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b), key=repr):
            if k not in a or k not in b:
                out.append(f"{path}/{k!r}: only on {'master' if k in a else 'replica'}")
            else:
                out += differences(a[k], b[k], f"{path}/{k!r}")
        return out
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}: {a!r} != {b!r}"[:400]]
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += differences(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]
