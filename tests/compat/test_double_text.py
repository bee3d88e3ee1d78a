"""Doubles in Redis's text (fpconv_dtoa's Grisu2 digits, not always the shortest), byte
for byte with redis-server 8.2.3: ZSCORE in RESP2 and RESP3, ZRANGE WITHSCORES, a
listpack's DUMP (d2string-ed scores) and redis.call's number arguments.

The doubles are generated from a fixed seed: random bit patterns, float32 values
(where Grisu2 most often gives 17 digits), integers around 2**62, subnormals, huge
and tiny values. Commands go in pipelined batches, so the test takes seconds.
"""

from __future__ import annotations

import math
import random
import struct

from tests.helpers.wire import Wire, encode_command

BATCH = 500


def _doubles(count: int) -> list[float]:
    rnd = random.Random(20260824)
    out = [0.0, -0.0, math.inf, -math.inf, 5e-324, 2.2250738585072014e-308,
           1.7976931348623157e308, 2.0**62, -(2.0**62), 2.0**62 + 1024, 2.0**63, 1e23,
           0.08218765258789063, 1e-7, 1e21, 123456789.125]
    makers = [
        lambda: struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0],
        lambda: struct.unpack("<f", struct.pack("<I", rnd.getrandbits(32)))[0],
        lambda: float(rnd.randint(-(2**64), 2**64)),
        lambda: struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(52)))[0],
        lambda: rnd.uniform(-1, 1) * 10.0 ** rnd.randint(-30, 30),
        lambda: rnd.randint(-10**6, 10**6) / 2 ** rnd.randint(1, 30),
    ]
    while len(out) < count:
        value = makers[len(out) % len(makers)]()
        if value == value:  # ZADD refuses NaN
            out.append(value)
    return out


def _pipeline(wire: Wire, commands: list[list]) -> list[bytes]:
    replies = []
    for at in range(0, len(commands), BATCH):
        batch = commands[at:at + BATCH]
        wire.sock.sendall(b"".join(encode_command(*argv) for argv in batch))
        replies += [wire.reader.read() for _ in batch]
    return replies


def _both(pair, commands: list[list]) -> tuple[list[bytes], list[bytes]]:
    return _pipeline(pair.ours, commands), _pipeline(pair.ref, commands)


def _assert_same(commands, ours, ref):
    diffs = [(argv, a, b) for argv, a, b in zip(commands, ours, ref, strict=True) if a != b]
    assert not diffs, f"{len(diffs)} differ, first: {diffs[:3]}"


def test_scores_print_as_redis_prints_them(pair8, redis8_server, rillet_server):
    values = _doubles(3000)
    members = [b"m%d" % i for i in range(len(values))]
    adds = [["ZADD", "big", repr(v), m] for v, m in zip(values, members, strict=True)]
    adds += [["ZADD", "small", repr(v), m] for v, m in zip(values[:100], members[:100], strict=True)]
    ours, ref = _both(pair8, adds)
    _assert_same(adds, ours, ref)
    scores = [["ZSCORE", "big", m] for m in members] + [["ZSCORE", "small", m] for m in members[:100]]
    ours, ref = _both(pair8, scores)
    _assert_same(scores, ours, ref)
    pair8.check("ZRANGE", "small", 0, -1, "WITHSCORES")
    pair8.check("DUMP", "small")  # listpack: each score stored as d2string's text
    resp3 = [Wire(rillet_server.port), Wire(redis8_server.port)]
    try:
        assert resp3[0].call("HELLO", 3)[:1] == resp3[1].call("HELLO", 3)[:1] == b"%"
        ours, ref = _pipeline(resp3[0], scores), _pipeline(resp3[1], scores)
        _assert_same(scores, ours, ref)
        assert resp3[0].call("ZRANGE", "big", 0, 99, "WITHSCORES") == \
            resp3[1].call("ZRANGE", "big", 0, 99, "WITHSCORES")
    finally:
        for wire in resp3:
            wire.close()


_ECHO_NUMBERS = ("local out = {} for i, a in ipairs(ARGV) do "
                 "out[i] = redis.call('ECHO', tonumber(a)) end return out")


def test_lua_number_arguments_print_as_redis_prints_them(pair8):
    values = [v for v in _doubles(1000) if not math.isinf(v)] + [math.inf, -math.inf]
    for at in range(0, len(values), 250):
        pair8.check("EVAL", _ECHO_NUMBERS, 0, *[repr(v) for v in values[at:at + 250]])
    pair8.check("EVAL", "return redis.call('ECHO', 0/0)", 0)
    pair8.check("EVAL", "return redis.call('ECHO', -(0/0))", 0)
    pair8.check("EVAL", "return redis.call('ECHO', -0.0)", 0)
    pair8.check("EVAL", "return redis.sha1hex(0.1)", 0)
    pair8.check("EVAL", "return redis.sha1hex(1e15)", 0)
