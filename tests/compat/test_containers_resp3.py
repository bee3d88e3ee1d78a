"""RESP3 reply shapes of the collection commands against Redis 8.2.3 (maps, sets, doubles, nulls)."""

from __future__ import annotations

import pytest

COMMANDS = [
    ("HGETALL", "h"), ("HGETALL", "nokey"), ("HRANDFIELD", "h", "-2", "WITHVALUES"), ("HMGET", "h", "a", "zz"),
    ("HSCAN", "h", "0"), ("HINCRBYFLOAT", "h", "n", "1.5"), ("HTTL", "h", "FIELDS", "1", "a"),
    ("SMEMBERS", "s"), ("SMEMBERS", "nokey"), ("SPOP", "nokey", "2"), ("SINTER", "s", "s"), ("SUNION", "s"),
    ("SDIFF", "s"), ("SRANDMEMBER", "s", "-2"), ("SMISMEMBER", "s", "1", "x"), ("SSCAN", "s", "0"),
    ("LPOP", "nokey", "2"), ("LPOP", "l", "0"), ("LRANGE", "l", "0", "-1"), ("LMPOP", "1", "nokey", "LEFT"),
    ("LMPOP", "1", "l", "LEFT", "COUNT", "2"), ("BLPOP", "l", "0"), ("LPOS", "l", "a", "COUNT", "0"),
    ("ZSCORE", "z", "a"), ("ZSCORE", "z", "zz"), ("ZMSCORE", "z", "a", "zz"), ("ZINCRBY", "z", "0.5", "a"),
    ("ZADD", "z", "INCR", "1", "b"), ("ZADD", "z", "XX", "INCR", "1", "nope"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZRANGE", "z", "0", "-1"), ("ZRANK", "z", "a", "WITHSCORE"),
    ("ZRANK", "z", "zz", "WITHSCORE"), ("ZPOPMIN", "z"), ("ZPOPMIN", "z", "1"), ("ZPOPMAX", "z", "2"),
    ("ZPOPMIN", "nokey"), ("ZRANDMEMBER", "z", "-2", "WITHSCORES"), ("ZMPOP", "1", "z", "MIN"),
    ("ZMPOP", "1", "nokey", "MIN"), ("ZUNION", "1", "z", "WITHSCORES"), ("ZSCAN", "z", "0"),
    ("BZPOPMIN", "z", "0"), ("BZMPOP", "0", "1", "z", "MAX", "COUNT", "2"),
    ("LCS", "s1", "s2", "IDX", "WITHMATCHLEN"), ("INCRBYFLOAT", "f", "0.25"),
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_resp3_shapes(pair8, cmd):
    p = pair8
    p.both("HELLO", "3")
    p.check("HSET", "h", "a", "1")
    p.check("SADD", "s", "1", "2")
    p.check("RPUSH", "l", "a", "b", "c")
    p.check("ZADD", "z", "1.5", "a", "2", "b", "3", "c")
    p.check("MSET", "s1", "ohmytext", "s2", "mynewtext")
    if cmd[0] in ("HRANDFIELD", "SRANDMEMBER", "ZRANDMEMBER"):
        # one element each: the random pick is the same on both servers
        p.check("DEL", "h", "s", "z")
        p.check("HSET", "h", "a", "1")
        p.check("SADD", "s", "1")
        p.check("ZADD", "z", "1.5", "a")
    p.check(*cmd)
