"""Keyspace notifications of the list, set, hash, sorted set, string-family and key
commands, against Redis 8.2.3: the same commands on both servers, and the exact
event stream each causes (channel and message, keyspace and keyevent, in order).

Scripted sequences cover each command's subtle cases (`del` when a container
empties, `*store` vs `del`, the hash field TTL events, no-ops that emit
nothing, errors that emit nothing); blocked clients served later emit their
pops after the write that served them; generated, seeded sequences cover
every command of these modules in random states.
"""

from __future__ import annotations

import random
import shlex
import time

import pytest

from tests.helpers.keyspace_events import Recorder, record, show
from tests.helpers.wire import Wire, encode_command


def _script(text: str) -> list[list[str]]:
    return [shlex.split(line) for line in text.strip().splitlines() if line.strip()]


SCRIPTS = {
    "lists": _script("""
        RPUSH l a b c
        LPUSH l x
        LPUSHX nol a
        RPUSHX l z
        LINSERT l BEFORE a q
        LINSERT l BEFORE nope q
        LSET l 0 y
        LPOP l
        RPOP l 2
        LPOP l 0
        LPOP nol
        LTRIM l 0 -1
        LTRIM l 0 0
        LTRIM l 5 10
        LTRIM nol 0 1
        RPUSH l a b a c a
        LREM l 2 a
        LREM l 0 zz
        LREM l 0 a
        LMOVE l l2 LEFT RIGHT
        LMOVE l2 l2 LEFT LEFT
        RPOPLPUSH l l2
        LMOVE l l2 LEFT RIGHT
        LMOVE nol l2 LEFT RIGHT
        RPUSH l3 1 2 3
        LMPOP 2 nol l3 LEFT COUNT 2
        LMPOP 1 l3 RIGHT COUNT 5
        BLPOP l2 0.01
        BRPOP l2 0.01
        RPUSH l4 1
        BLMOVE l4 l5 RIGHT LEFT 0.01
        BRPOPLPUSH l5 l6 0.01
        BLMPOP 0.01 1 l6 LEFT
        RPUSH l 1
        LPOP l 1
    """),
    "sets": _script("""
        SADD s a b c
        SADD s a
        SREM s zz
        SREM s a
        SREM nos a
        SREM s b c
        SADD s 1 2 3
        SMOVE s s2 1
        SMOVE s s2 zz
        SMOVE s s 2
        SADD s2 2
        SMOVE s s2 2
        SMOVE s s2 3
        SPOP s2
        SPOP nos
        SADD s 1 2 3
        SPOP s 0
        SPOP s 1
        SPOP s 5
        SADD a 1 2 3
        SADD b 2 3 4
        SINTERSTORE d a b
        SINTERSTORE d a nos
        SINTERSTORE d a nos
        SUNIONSTORE d a b
        SDIFFSTORE d a b
        SDIFFSTORE d a a
        SDIFFSTORE d a a
        SUNIONSTORE d nos
        SET str x
        SINTERSTORE str nos
        SADD str2 x
    """),
    "hashes": _script("""
        HSET h a 1 b 2
        HSET h a 1
        HMSET h c 3
        HSETNX h a 9
        HSETNX h z 9
        HINCRBY h a 5
        HINCRBYFLOAT h a 1.5
        HDEL h nope
        HDEL h a b
        HDEL h c z
        HSET h a 1 b 2 c 3
        HEXPIRE h 100 FIELDS 2 a nope
        HEXPIRE h 100 NX FIELDS 1 a
        HPEXPIRE h 100000 FIELDS 1 b
        HEXPIREAT h 4000000000 FIELDS 1 c
        HPEXPIREAT h 4000000000000 FIELDS 1 c
        HPERSIST h FIELDS 2 a nope
        HPERSIST h FIELDS 1 a
        HEXPIRE h 0 FIELDS 1 a
        HPEXPIREAT h 1 FIELDS 2 b c
        HEXPIRE noh 10 FIELDS 1 a
        HSET h a 1 b 2 c 3
        HGETEX h EX 100 FIELDS 1 a
        HGETEX h PERSIST FIELDS 1 a
        HGETEX h PERSIST FIELDS 1 a
        HGETEX h FIELDS 1 a
        HGETEX h PXAT 1 FIELDS 1 a
        HGETEX h EXAT 1 FIELDS 2 b c
        HGETEX noh EX 1 FIELDS 1 a
        HSETEX h FIELDS 1 a 1
        HSETEX h EX 100 FIELDS 1 a 1
        HSETEX h KEEPTTL FIELDS 1 a 2
        HSETEX h FNX FIELDS 1 a 2
        HSETEX h FXX FIELDS 1 a 3
        HSETEX h PXAT 1 FIELDS 1 a 4
        HSETEX h PXAT 1 FIELDS 1 q 4
        HSETEX h2 PXAT 1 FIELDS 1 q 4
        HSET h a 1 b 2
        HGETDEL h FIELDS 1 nope
        HGETDEL h FIELDS 1 a
        HGETDEL h FIELDS 2 b a
        HGETDEL noh FIELDS 1 a
        HSET h a 1
        HSET h b 1
    """),
    "zsets": _script("""
        ZADD z 1 a 2 b
        ZADD z 1 a
        ZADD z 3 a
        ZADD z NX 5 a
        ZADD z XX 5 new
        ZADD noz XX 1 a
        ZADD z GT 1 a
        ZADD z INCR 1 a
        ZADD z INCR 0 a
        ZINCRBY z 2 b
        ZINCRBY z 0 b
        ZINCRBY z 1 c
        ZADD z CH 9 a 9 b
        ZREM z nope
        ZREM z a
        ZREM z b c
        ZADD z 1 a 2 b 3 c 4 d 5 e
        ZREMRANGEBYSCORE z 100 200
        ZREMRANGEBYSCORE z 1 1
        ZREMRANGEBYRANK z 0 0
        ZREMRANGEBYLEX z [c [c
        ZREMRANGEBYLEX z [z [zz
        ZREMRANGEBYRANK z 0 -1
        ZADD z 1 a 2 b 3 c 4 d 5 e
        ZPOPMIN z
        ZPOPMAX z 2
        ZPOPMIN z 0
        ZPOPMIN noz
        ZPOPMAX z 5
        ZADD z 1 a 2 b 3 c
        ZMPOP 2 noz z MIN COUNT 1
        BZPOPMIN z 0.01
        BZPOPMAX z 0.01
        ZADD z 1 a 2 b 3 c
        BZMPOP 0.01 1 z MAX COUNT 10
        ZADD z1 1 a 2 b
        ZADD z2 2 b 3 c
        ZUNIONSTORE d 2 z1 z2
        ZINTERSTORE d 2 z1 z2
        ZINTERSTORE d 2 z1 noz
        ZINTERSTORE d 2 z1 noz
        ZDIFFSTORE d 2 z1 z2
        ZDIFFSTORE d 2 z1 z1
        ZRANGESTORE d z1 0 -1
        ZRANGESTORE d z1 5 6
        ZRANGESTORE d z1 5 6
        ZUNIONSTORE d 1 noz
    """),
    "strings": _script("""
        SETEX k 100 v
        PSETEX k 100000 v
        GETEX k
        GETEX k EX 100
        GETEX k PX 100000
        GETEX k EXAT 4000000000
        GETEX k PERSIST
        GETEX k PERSIST
        GETEX nok EX 100
        GETEX k PXAT 1
        SET k v
        GETSET k w
        GETSET nk w
        GETRANGE k 0 1
        SETRANGE k 1 abc
        SETRANGE k 1 ""
        SETRANGE nok 0 ""
        SETRANGE nok2 2 x
        MSETNX a 1 b 2
        MSETNX a 1 c 2
        INCRBYFLOAT f 1.5
        INCRBYFLOAT f 1
        APPEND f x
        APPEND newap x
        GETDEL newap
        GETDEL newap
        LCS k f
        SET k v IFEQ v
        SET k v2 IFEQ nope
        SET i 10
        INCR i
        DECRBY i 3
    """),
    "keys": _script("""
        SET a 1
        COPY a b
        COPY a b
        COPY a b REPLACE
        COPY a b DB 1
        COPY nokey b
        MOVE a 2
        MOVE a 2
        SET a 1
        MOVE a 2
        SWAPDB 0 1
        SWAPDB 0 1
        RENAME b c
        RENAME c c
        RENAMENX c b
        SET x 1
        RENAMENX c x
        EXPIRE c 100
        EXPIRE c 100 NX
        PEXPIRE c 100
        PERSIST c
        PERSIST c
        EXPIRE c 0
        TOUCH x
        DEL x y z
        UNLINK r
        SORT nokey STORE st
    """),
    # Inside MULTI the events come at EXEC, in order; in a script, as it runs; in db 3, there.
    "transactions": _script("""
        MULTI
        RPUSH l a b
        LPOP l 2
        SADD s a
        HSET h f v
        HINCRBY h n 2
        ZADD z 1 a
        ZPOPMIN z
        SET t x
        SETRANGE t 3 y
        EXPIRE t 100
        RENAME t u
        EXEC
        EVAL "redis.call('rpush', KEYS[1], 'x'); redis.call('lmove', KEYS[1], KEYS[2], 'left', 'left'); return redis.call('srem', KEYS[3], 'a')" 3 l l2 s
        EVAL "return redis.pcall('hdel', KEYS[1], 'f', 'n')" 1 h
        SELECT 3
        RPUSH l a
        SADD s a b
        SMOVE s s2 a
        HSET h a 1
        HGETDEL h FIELDS 1 a
        ZADD z 1 a
        ZUNIONSTORE z2 1 z
        COPY z2 z3 DB 4
        MOVE z2 5
        SELECT 0
    """),
    # RENAME over a key of another type, keys with a TTL moving around.
    "overwrites": _script("""
        APPEND e ""
        APPEND e ""
        SETRANGE e 0 ""
        SETRANGE e 1 ""
        HSET ht a 1 b 2
        HEXPIRE ht 100 FIELDS 1 a
        HINCRBYFLOAT ht a 1
        HEXPIRE ht 50 GT FIELDS 2 a b
        HEXPIRE ht 50 LT FIELDS 2 a b
        HGETEX ht PXAT 1 FIELDS 2 nope zz
        HPERSIST ht FIELDS 2 a b
        HSETEX ht FNX PX 100000 FIELDS 1 c 1
        HSETEX ht FXX KEEPTTL FIELDS 2 c d
        HSETEX ht FXX KEEPTTL FIELDS 1 c 2
        ZADD zr 1 a 2 b 3 c
        ZRANGESTORE zd zr (1 +inf BYSCORE
        ZRANGESTORE zd zr [b [z BYLEX REV
        ZRANGESTORE zd zr 0 -1 REV
        ZRANGESTORE zd zr 5 9 BYSCORE LIMIT 0 1
        ZRANGESTORE zd nokey 0 -1
        RPUSH l a
        SADD s a
        HSET h a 1
        ZADD z 1 a
        SET t x EX 100
        RENAME l s
        RENAME s h
        EXPIRE h 100
        COPY h z REPLACE
        RENAME z t
        SINTERSTORE t nokey
        SUNIONSTORE h h
        HSET h2 a 1
        ZUNIONSTORE h2 1 nokey
        EXPIRE t 0
        PEXPIREAT h2 1
        LPUSH t a
        PEXPIRE t -5
    """),
    "errors": _script("""
        SET str x
        RPUSH l a
        LPUSH str a
        SADD l a
        HSET l a 1
        ZADD l 1 a
        APPEND l x
        SETRANGE l 0 x
        INCRBYFLOAT l 1
        LMOVE str l LEFT LEFT
        LMOVE l str LEFT LEFT
        SMOVE str l a
        SINTERSTORE d str
        ZUNIONSTORE d 1 str
        HEXPIRE l 10 FIELDS 1 a
        HSET h a 1
        HEXPIRE h -1 FIELDS 1 a
        HEXPIRE h 10 FIELDS 2 a
        HINCRBY h a x
        HSET h b x
        HINCRBYFLOAT h b 1
        ZADD z 1 a
        ZADD z INCR 1 a 2 b
        ZADD z NX XX 1 a
        ZINCRBY z x a
        LSET l 5 x
        LSET nol 0 x
        SETEX k 0 v
        GETEX str EX 0
        RPOP l -1
        SPOP s -1
        COPY str str
        MOVE str 0
        RENAME nokey x
        EXPIRE str 100 NX XX
        HSETEX h FIELDS 1 a
        HGETDEL h FIELDS 0
        ZADD zi 1 a
        ZINCRBY zi +inf a
        ZINCRBY zi -inf a
        ZADD zi INCR -inf a
        ZADD zn INCR nan a
        HINCRBYFLOAT h a +inf
        INCRBYFLOAT t +inf
        LPOS l a RANK 0
        SINTERCARD 0 s
    """),
}


def _compare(name: str, ours: list, ref: list) -> None:
    for (argv, our_reply, got), (_, ref_reply, want) in zip(ours, ref, strict=True):
        assert got == want, (f"{name}: {argv}\n  rillet: {show(got)}\n  redis:  {show(want)}"
                             f"\n  replies: {our_reply!r} / {ref_reply!r}")


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_scripted_events(name, rillet_server, redis8_server):
    _compare(name, record(rillet_server.port, SCRIPTS[name]), record(redis8_server.port, SCRIPTS[name]))


# --- blocked clients: the pops of a client served later follow the write that served it --------

BLOCKED = [
    ("BLPOP l 0", "RPUSH l a"),
    ("BRPOP l 0", "RPUSH l a b"),
    ("BLMOVE l d RIGHT LEFT 0", "LPUSH l a"),
    ("BLMOVE l l LEFT RIGHT 0", "RPUSH l a"),
    ("BRPOPLPUSH l d 0", "RPUSH l a b"),
    ("BLMPOP 0 2 x l LEFT COUNT 3", "RPUSH l a b"),
    ("BZPOPMIN z 0", "ZADD z 1 a"),
    ("BZPOPMAX z 0", "ZADD z 1 a 2 b"),
    ("BZMPOP 0 1 z MAX COUNT 2", "ZADD z 1 a 2 b 3 c"),
    ("BLPOP l 0", "MULTI|RPUSH l a|RPUSH l b|EXEC"),
    ("BLPOP d 0", "RPUSH l a|LMOVE l d LEFT LEFT"),
    ("BLMOVE l d LEFT RIGHT 0", "SADD d x|DEL d|RPUSH l a b"),
    ("BZPOPMIN z 0", "ZADD z 1 a|ZUNIONSTORE z2 1 z|ZADD z3 1 b|ZINTERSTORE z 1 z3"),
    ("BLPOP l 0", "MULTI|RPUSH l a|DEL l|SADD l x|RPUSH l2 y|EXEC|DEL l|RPUSH l z"),
]


def _blocked_events(port: int) -> list:
    rec = Recorder(port)
    out = []
    try:
        for blocker, writes in BLOCKED:
            rec.conn.call("FLUSHALL")
            rec.drain()
            blocked = Wire(port)
            try:
                blocked.send_raw(encode_command(*shlex.split(blocker)))
                deadline = time.monotonic() + 30
                while b"blocked_clients:1\r\n" not in rec.conn.call("INFO", "clients"):
                    assert time.monotonic() < deadline, "the client never blocked"
                    time.sleep(0.01)
                for write in writes.split("|"):
                    rec.conn.call(*shlex.split(write))
                blocked.read_reply()
            finally:
                blocked.close()
            out.append(([blocker, writes], b"", rec.drain()))
    finally:
        rec.close()
    return out


def test_blocked_clients_served_later(rillet_server, redis8_server):
    _compare("blocked", _blocked_events(rillet_server.port), _blocked_events(redis8_server.port))


# --- RESTORE: `restore`, or `del` when a past TTL replaces a key --------------------------------

def _restore_events(port: int) -> list:
    rec = Recorder(port)
    try:
        rec.conn.call("FLUSHALL")
        rec.conn.call("SET", "x", "1")
        rec.conn.call("RPUSH", "l", "a", "b")
        rec.drain()
        string = rec.conn.call("DUMP", "x").split(b"\r\n", 1)[1][:-2]
        listed = rec.conn.call("DUMP", "l").split(b"\r\n", 1)[1][:-2]
        return rec.run([
            [b"RESTORE", b"r", b"0", string], [b"RESTORE", b"r", b"0", string],
            [b"RESTORE", b"r", b"0", string, b"REPLACE"], [b"RESTORE", b"t", b"100000", listed],
            [b"RESTORE", b"u", b"4000000000000", listed, b"ABSTTL"],
            [b"RESTORE", b"r", b"1", listed, b"ABSTTL", b"REPLACE"],
            [b"RESTORE", b"v", b"1", listed, b"ABSTTL"], [b"RESTORE", b"w", b"0", b"bad"],
        ])
    finally:
        rec.close()


def test_restore_events(rillet_server, redis8_server):
    _compare("restore", _restore_events(rillet_server.port), _restore_events(redis8_server.port))


# --- hash fields expiring: `hexpired`, and `del` with the last field ------------------------------

def _field_expiry_events(port: int) -> list:
    rec = Recorder(port)
    try:
        rec.conn.call("FLUSHALL")
        rec.conn.call("HSET", "h", "a", "1", "b", "2")
        rec.conn.call("HSET", "h1", "a", "1")
        rec.drain()
        # No drain until the end: Redis's active cycle may expire a field at any
        # time after its deadline, the events must all land in the one list.
        rec.conn.call("HPEXPIRE", "h", "5", "FIELDS", "1", "a")
        rec.conn.call("HPEXPIRE", "h1", "5", "FIELDS", "1", "a")
        # Past the deadlines the fields go by Redis's active cycle or when a command
        # reads them (lazily): the same events either way, only the timing differs.
        # (Reads such as HPTTL would not do: Redis answers -2 without expiring the field.)
        time.sleep(0.1)
        rec.conn.call("HGET", "h", "a")
        rec.conn.call("HGET", "h1", "a")
        events = rec.drain()
    finally:
        rec.close()
    # One key's events keep their order; the two keys' may interleave either way.
    return sorted(events, key=lambda e: e[0].rsplit(b":", 1)[-1] if b"keyspace" in e[0] else e[1])


def test_hash_fields_expiring(rillet_server, redis8_server):
    ours, ref = _field_expiry_events(rillet_server.port), _field_expiry_events(redis8_server.port)
    assert ours == ref, f"\n  rillet: {show(ours)}\n  redis:  {show(ref)}"


# --- generated sequences -----------------------------------------------------------------------
# Every command of these modules, each type on two keys of its own plus one key
# shared by all (so WRONGTYPE, overwrites by *STORE/COPY/RENAME and emptied
# containers all happen); the key commands on all of them. Nothing
# random on the server side changes state (SPOP only with a count that takes
# all), conditional expiries use absolute times only (two relative deadlines set
# in the same millisecond compare equal), and no TTL is short enough to expire
# during the run.

KEYS = {kind: [f"{kind}1", f"{kind}2", "x"] for kind in "lshzt"}
KEYS["z"] += ["s1"]  # the sorted-set algebra reads sets too
KEYS["a"] = ["l1", "s1", "h1", "z1", "t1", "x"]
VALUES = ["a", "b", "c", "1", "2"]


def _generator(rng: random.Random):  # noqa: C901 - one table of command shapes
    key = lambda kind: rng.choice(KEYS[kind])  # noqa: E731
    val = lambda: rng.choice(VALUES)  # noqa: E731
    vals = lambda: [val() for _ in range(rng.randint(1, 3))]  # noqa: E731
    side = lambda: rng.choice(["LEFT", "RIGHT"])  # noqa: E731
    idx = lambda: str(rng.randint(-3, 3))  # noqa: E731
    keys = lambda kind: rng.sample(KEYS[kind], rng.randint(1, 3))  # noqa: E731
    cond = lambda: rng.choice([[], ["NX"], ["XX"], ["GT"], ["LT"]])  # noqa: E731
    score = lambda: rng.choice(["1", "2", "3", "-1", "2.5"])  # noqa: E731
    fields = lambda: (lambda fs: ["FIELDS", str(len(fs)), *fs])(rng.sample(VALUES[:3], rng.randint(1, 2)))  # noqa: E731

    def pairs(n: int = 2) -> list[str]:
        return [x for _ in range(rng.randint(1, n)) for x in (val(), val())]

    def zpairs() -> list[str]:
        return [x for _ in range(rng.randint(1, 2)) for x in (score(), val())]

    def mkeys(kind: str) -> list[str]:
        ks = keys(kind)
        return [str(len(ks)), *ks]

    # The shapes that grow a value come more often, so that the others find something.
    grow = [
        lambda: [rng.choice(["LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "RPUSH"]), key('l'), *vals()],
        lambda: [rng.choice(["SADD", "SADD", "SREM"]), key('s'), *vals()],
        lambda: [rng.choice(["HSET", "HMSET"]), key('h'), *pairs()],
        lambda: ["ZADD", key('z'), *rng.choice([[], ["NX"], ["XX"]]), *rng.choice([[], ["GT"], ["LT"]]),
                 *rng.choice([[], ["CH"]]), *zpairs()],
    ]
    shapes = grow * 3 + [
        # lists
        lambda: [rng.choice(["LPOP", "RPOP"]), key('l'), *rng.choice([[], ["0"], ["1"], ["3"]])],
        lambda: ["LSET", key('l'), idx(), val()],
        lambda: ["LINSERT", key('l'), rng.choice(["BEFORE", "AFTER"]), val(), val()],
        lambda: ["LTRIM", key('l'), idx(), idx()],
        lambda: ["LREM", key('l'), idx(), val()],
        lambda: ["LMOVE", key('l'), key('l'), side(), side()],
        lambda: ["RPOPLPUSH", key('l'), key('l')],
        lambda: ["LMPOP", *mkeys('l'), side(), "COUNT", str(rng.randint(1, 3))],
        lambda: [rng.choice(["BLPOP", "BRPOP"]), *keys('l'), "0.01"],
        lambda: ["BLMOVE", key('l'), key('l'), side(), side(), "0.01"],
        lambda: ["BRPOPLPUSH", key('l'), key('l'), "0.01"],
        lambda: ["BLMPOP", "0.01", *mkeys('l'), side()],
        lambda: rng.choice([["LLEN", key('l')], ["LRANGE", key('l'), "0", "-1"], ["LINDEX", key('l'), "0"],
                            ["LPOS", key('l'), val()]]),
        # sets
        lambda: ["SMOVE", key('s'), key('s'), val()],
        lambda: ["SPOP", key('s'), "100"],
        lambda: [rng.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]), key('s'), *keys('s')],
        lambda: [rng.choice(["SCARD", "SMEMBERS", "SRANDMEMBER"]), key('s')],
        lambda: ["SISMEMBER", key('s'), val()],
        lambda: ["SINTERCARD", *mkeys('s')],
        # hashes
        lambda: ["HSETNX", key('h'), val(), val()],
        lambda: ["HDEL", key('h'), *vals()],
        lambda: ["HINCRBY", key('h'), val(), str(rng.randint(-2, 2))],
        lambda: ["HINCRBYFLOAT", key('h'), val(), rng.choice(["1.5", "-1", "0"])],
        lambda: [rng.choice(["HEXPIRE", "HPEXPIRE"]), key('h'), rng.choice(["0", "100000"]), *fields()],
        lambda: ["HEXPIREAT", key('h'), rng.choice(["1", "4000000000", "4100000000"]), *cond(), *fields()],
        lambda: ["HPEXPIREAT", key('h'), rng.choice(["1", "4000000000000"]), *cond(), *fields()],
        lambda: ["HPERSIST", key('h'), *fields()],
        lambda: ["HGETEX", key('h'), *rng.choice([[], ["EX", "100"], ["PXAT", "1"], ["PERSIST"],
                                              ["EXAT", "4000000000"]]), *fields()],
        lambda: ["HSETEX", key('h'), *rng.choice([[], ["FNX"], ["FXX"]]),
                 *rng.choice([[], ["EX", "100"], ["PXAT", "1"], ["KEEPTTL"]]),
                 *(lambda fs: ["FIELDS", str(len(fs)), *[x for f in fs for x in (f, val())]])(
                     rng.sample(VALUES[:3], rng.randint(1, 2)))],
        lambda: ["HGETDEL", key('h'), *fields()],
        lambda: [rng.choice(["HGET", "HEXISTS", "HSTRLEN"]), key('h'), val()],
        lambda: [rng.choice(["HGETALL", "HLEN", "HKEYS", "HVALS"]), key('h')],
        lambda: ["HTTL", key('h'), *fields()],
        # sorted sets
        lambda: ["ZADD", key('z'), "INCR", score(), val()],
        lambda: ["ZINCRBY", key('z'), rng.choice(["0", "1", "-2"]), val()],
        lambda: ["ZREM", key('z'), *vals()],
        lambda: ["ZREMRANGEBYSCORE", key('z'), rng.choice(["-inf", "1", "(1"]), rng.choice(["2", "+inf"])],
        lambda: ["ZREMRANGEBYRANK", key('z'), idx(), idx()],
        lambda: [rng.choice(["ZPOPMIN", "ZPOPMAX"]), key('z'), *rng.choice([[], ["0"], ["2"]])],
        lambda: ["ZMPOP", *mkeys('z'), rng.choice(["MIN", "MAX"]), "COUNT", str(rng.randint(1, 3))],
        lambda: [rng.choice(["BZPOPMIN", "BZPOPMAX"]), *keys('z'), "0.01"],
        lambda: ["BZMPOP", "0.01", *mkeys('z'), rng.choice(["MIN", "MAX"])],
        lambda: [rng.choice(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]), key('z'), *mkeys('z')],
        lambda: ["ZRANGESTORE", key('z'), key('z'), idx(), idx()],
        lambda: rng.choice([["ZCARD", key('z')], ["ZRANGE", key('z'), "0", "-1", "WITHSCORES"]]),
        lambda: ["ZSCORE", key('z'), val()],
        # strings
        lambda: ["SET", key('t'), val()],
        lambda: [rng.choice(["SETEX", "PSETEX"]), key('t'), "100000", val()],
        lambda: ["GETEX", key('t'), *rng.choice([[], ["EX", "100"], ["PXAT", "1"], ["PERSIST"],
                                             ["EXAT", "4000000000"]])],
        lambda: ["GETSET", key('t'), val()],
        lambda: ["SETRANGE", key('t'), str(rng.randint(0, 3)), rng.choice(["", "xy"])],
        lambda: ["MSETNX", *pairs(2)],
        lambda: ["INCRBYFLOAT", key('t'), rng.choice(["1.5", "-2"])],
        lambda: [rng.choice(["INCR", "DECR"]), key('t')],
        lambda: ["APPEND", key('t'), val()],
        lambda: ["GETDEL", key('t')],
        lambda: [rng.choice(["GET", "STRLEN"]), key('t')],
        lambda: ["GETRANGE", key('t'), "0", "-1"],
        # keys
        lambda: [rng.choice(["DEL", "UNLINK", "TOUCH", "EXISTS"]), *keys('a')],
        lambda: ["EXPIRE", key('a'), rng.choice(["0", "100"])],
        lambda: [rng.choice(["EXPIREAT", "PEXPIREAT"]), key('a'), rng.choice(["1", "4000000000", "4100000000000"]),
                 *cond()],
        lambda: ["PERSIST", key('a')],
        lambda: [rng.choice(["RENAME", "RENAMENX"]), key('a'), key('a')],
        lambda: ["COPY", key('a'), key('a'), *rng.choice([[], ["REPLACE"], ["DB", "1"], ["DB", "1", "REPLACE"]])],
        lambda: ["MOVE", key('a'), "1"],
        lambda: ["SWAPDB", "0", "1"],
        lambda: ["TYPE", key('a')],
    ]
    while True:
        yield rng.choice(shapes)()


def _generated(seed: int, count: int) -> list[list[str]]:
    gen = _generator(random.Random(seed))
    return [next(gen) for _ in range(count)]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_generated_sequences(seed, rillet_server, redis8_server):
    commands = _generated(seed, 300)
    setup = [["FLUSHALL"], ["CONFIG", "SET", "lazyfree-lazy-user-del", "no"]]
    _compare(f"seed {seed}", record(rillet_server.port, commands, setup),
             record(redis8_server.port, commands, setup))


def _untouched_field_expiry_events(port: int) -> list:
    """A field expires with nobody reading its hash: the active cycle sends the events."""
    rec = Recorder(port)
    try:
        rec.conn.call("FLUSHALL")
        rec.conn.call("HSET", "quiet", "a", "1", "b", "2")
        rec.conn.call("HSET", "quiet1", "a", "1")
        rec.drain()
        rec.conn.call("HPEXPIRE", "quiet", "20", "FIELDS", "1", "a")
        rec.conn.call("HPEXPIRE", "quiet1", "20", "FIELDS", "1", "a")
        events: list = []
        deadline = time.monotonic() + 60
        while len(events) < 10:  # 2 hexpire, 2 hexpired, 1 del; each on both channels
            assert time.monotonic() < deadline, show(events)
            time.sleep(0.05)
            events += rec.drain()
        return sorted(events, key=lambda e: e[0].rsplit(b":", 1)[-1] if b"keyspace" in e[0] else e[1])
    finally:
        rec.close()


def test_hash_fields_expire_untouched(rillet_server, redis8_server):
    ours = _untouched_field_expiry_events(rillet_server.port)
    ref = _untouched_field_expiry_events(redis8_server.port)
    assert ours == ref, f"\n  rillet: {show(ours)}\n  redis:  {show(ref)}"
