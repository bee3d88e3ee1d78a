"""COMMAND INFO / GETKEYS for the collection commands, and the XREAD GETKEYS fix, against Redis 8.2.3."""

from __future__ import annotations

import pytest

NAMES = """hset hget hmset hmget hsetnx hdel hlen hstrlen hexists hkeys hvals hgetall hincrby
hincrbyfloat hrandfield hscan hexpire hpexpire hexpireat hpexpireat httl hpttl hexpiretime
hpexpiretime hpersist hgetex hsetex hgetdel sadd srem scard sismember smismember smembers
srandmember spop smove sscan sinter sunion sdiff sinterstore sunionstore sdiffstore sintercard
lpush rpush lpushx rpushx llen lpop rpop lindex lset lrange ltrim linsert lrem lpos lmove
rpoplpush lmpop blpop brpop blmove brpoplpush blmpop zadd zincrby zcard zscore zmscore zrank
zrevrank zcount zlexcount zrange zrevrange zrangebyscore zrevrangebyscore zrangebylex
zrevrangebylex zrangestore zrem zremrangebyrank zremrangebyscore zremrangebylex zpopmin zpopmax
zmpop bzpopmin bzpopmax bzmpop zrandmember zscan zunion zinter zdiff zunionstore zinterstore
zdiffstore zintercard""".split()


@pytest.mark.parametrize("name", NAMES)
def test_command_info_arity_and_flags(pair8, name):
    ours, ref = pair8.both("COMMAND", "INFO", name)
    # *1, *10, name ($n, text), arity, the flags set (*n and n flags), first, last, step
    ours_fields = ours.split(b"\r\n")
    ref_fields = ref.split(b"\r\n")
    n_flags = int(ref_fields[5][1:])
    end = 6 + n_flags + 3
    assert ours_fields[:end] == ref_fields[:end]


@pytest.mark.parametrize("argv", [
    ("XREAD", "COUNT", "1", "STREAMS", "s1", "s2", "0", "0"), ("XREAD", "STREAMS", "s1", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s1", "0"), ("XREAD", "STREAMS", "s1"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"), ("ZINTERSTORE", "d", "1", "a"),
    ("BLMPOP", "0", "2", "a", "b", "LEFT"), ("LMPOP", "1", "a", "LEFT"), ("SINTERCARD", "2", "a", "b"),
    ("SINTERCARD", "0", "a"), ("ZUNION", "5", "a"), ("ZMPOP", "1", "z", "MIN"), ("BZMPOP", "1", "1", "z", "MAX"),
    ("ZDIFF", "2", "a", "b", "WITHSCORES"), ("BLPOP", "a", "b", "0"), ("HSET", "h", "f", "v"),
    ("SMOVE", "a", "b", "m"), ("LMOVE", "a", "b", "LEFT", "RIGHT"), ("ZRANGESTORE", "d", "s", "0", "1"),
])
def test_getkeys(pair8, argv):
    pair8.check("COMMAND", "GETKEYS", *argv)
