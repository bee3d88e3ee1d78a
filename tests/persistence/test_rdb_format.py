"""RDB primitives: CRC-64, LZF (Redis's output byte for byte), lengths, strings,
listpacks, stream listpacks; the compiled forms (_rdbfast) against the Python ones."""

from __future__ import annotations

import os
import random

import pytest

from rillet.compiled import compiled
from rillet.persistence import rdb_format as fmt
from rillet.persistence import rdb_stream

try:
    from rillet.persistence import _rdbfast
except ImportError:  # pure build
    _rdbfast = None



def test_crc64_check_value():
    assert fmt.crc64(0, b"123456789") == 0xE9C6D914C4B8D9CA
    assert fmt.py_crc64(0, b"123456789") == 0xE9C6D914C4B8D9CA


# A stream listpack Redis 8.2.3 wrote, LZF-compressed by Redis (from a SAVE).
REDIS_PACKED = bytes.fromhex(
    "12690000001f0003010101020181610281620200200900002001401102050103600902030104"
    "200b40130adfff02010181630205010620270002400f019e78e01400021f8179202d00ff")
REDIS_LP = fmt.lzf_decompress(REDIS_PACKED, 105)


def test_lzf_matches_redis_output():
    redis_packed = REDIS_PACKED
    plain = fmt.py_lzf_decompress(redis_packed, 105)
    assert fmt.py_lzf_compress(plain, len(plain) - 4) == redis_packed
    if _rdbfast is not None:
        assert _rdbfast.lzf_compress(plain, len(plain) - 4) == redis_packed
        assert _rdbfast.lzf_decompress(redis_packed, 105) == plain


def _samples(rnd, count=300):
    for n in range(count):
        kind = n % 5
        if kind == 4:  # a period of 8 to 40 bytes with changes: long overlapping references
            period = os.urandom(rnd.randint(8, 40))
            yield b"".join(period[: rnd.randint(1, len(period))] if rnd.random() < 0.1
                           else period for _ in range(rnd.randint(1, 300)))
        elif kind == 0:
            yield os.urandom(rnd.randint(1, 300))
        elif kind == 1:
            yield (b"abc" * rnd.randint(1, 200))[: rnd.randint(1, 600)]
        elif kind == 2:
            yield b"".join(rnd.choice([b"field", b"value", b"12345", os.urandom(3)])
                           for _ in range(rnd.randint(1, 400)))
        else:
            yield bytes(rnd.randint(0, 3) for _ in range(rnd.randint(1, 9000)))


def test_lzf_round_trip_and_compiled_agree():
    rnd = random.Random(5)
    pure = fmt
    for data in _samples(rnd):
        packed = pure.py_lzf_compress(data, len(data) + 64)
        assert packed is not None
        assert pure.py_lzf_decompress(packed, len(data)) == data
        small = pure.py_lzf_compress(data, max(len(data) - 4, 0))
        if _rdbfast is not None:
            assert _rdbfast.lzf_compress(data, len(data) + 64) == packed
            assert _rdbfast.lzf_compress(data, max(len(data) - 4, 0)) == small
            assert _rdbfast.lzf_decompress(packed, len(data)) == data
            assert _rdbfast.crc64(7, data) == pure.py_crc64(7, data)


@pytest.mark.skipif(_rdbfast is None, reason="the compiled module")
def test_lzf_shared_table_wraps_around():
    # The compiled form keeps its hash table across calls, offset by a base that
    # grows with each input; near 2**32 the table is cleared and the base restarts.
    rnd = random.Random(9)
    samples = list(_samples(rnd, 40))
    _rdbfast.lzf_compress(b"x" * 64, 60)  # (the table exists)
    _rdbfast._lzf_set_base((1 << 32) - 20_000)
    for data in samples:
        assert _rdbfast.lzf_compress(data, len(data) + 64) == fmt.py_lzf_compress(data, len(data) + 64)


def test_lzf_decompress_refuses_damage():
    packed = fmt.lzf_compress(b"abcabcabcabcabcabcabc" * 4, 200)
    with pytest.raises(ValueError):
        fmt.lzf_decompress(packed[:-3], 84)
    with pytest.raises(ValueError):
        fmt.lzf_decompress(packed, 85)


@pytest.mark.parametrize("n", [0, 63, 64, 16383, 16384, 2**32 - 1, 2**32, 2**64 - 1])
def test_lengths_round_trip(n):
    reader = fmt.RDBReader(fmt.encode_len(n))
    assert reader.length() == n


@pytest.mark.parametrize("value", [b"0", b"-1", b"127", b"-128", b"128", b"32767", b"-32769",
                                   b"2147483647", b"-2147483648", b"2147483648", b"012", b"-0",
                                   b"+5", b"", b"x" * 21, b"y" * 1000])
@pytest.mark.parametrize("compress", [True, False])
def test_strings_round_trip(value, compress):
    encoded = fmt.encode_string(value, compress)
    assert fmt.RDBReader(encoded).string() == value
    if value in (b"0", b"-1", b"127", b"-128", b"128", b"32767", b"-32769", b"2147483647",
                 b"-2147483648"):
        assert encoded[0] >> 6 == 3  # int-encoded, as rdbTryIntegerEncoding


def test_listpack_elements_round_trip():
    rnd = random.Random(9)
    values = [b"", b"a", b"x" * 63, b"x" * 64, b"y" * 4095, b"z" * 4096, b"0", b"-1", b"127",
              b"128", b"-4096", b"4095", b"-4097", b"32767", b"-32768", b"8388607",
              b"-8388609", b"2147483647", b"-2147483649", b"9223372036854775807",
              b"-9223372036854775808", b"9223372036854775808", b"01", b"-0"]
    values += [os.urandom(rnd.randint(0, 200)) for _ in range(50)]
    lp = fmt.lp_finish(b"".join(map(fmt.lp_element, values)), len(values))
    decoded = [fmt.as_bytes(e) for e in fmt.lp_decode(lp)]
    assert decoded == values
    if _rdbfast is not None:
        assert _rdbfast.lp_decode(lp) == fmt.py_lp_decode(lp)


def test_redis_stream_listpack_decodes_the_same_both_ways():
    pure = rdb_stream
    want = pure.stream_lp_decode(REDIS_LP, 1)
    assert want[0] == 3 and want[1] == 1 and want[2] == [b"a", b"b"]
    if _rdbfast is not None:
        got = _rdbfast.stream_lp_decode(REDIS_LP, 1)
        assert got[:3] == want[:3] and got[5] == want[5] and got[8] == want[8]
        assert got[9] == want[9]
        for a, b in zip(got[3:8], want[3:8], strict=True):
            assert (a is None and b is None) or list(a) == list(b)


def test_node_listpack_round_trip():
    node = rdb_stream.node_from_listpack(1, 1, REDIS_LP, {})
    assert rdb_stream.node_listpack(node) == REDIS_LP


def _random_stream(seed: int):
    from rillet.engine.ids import StreamID
    from rillet.engine.stream import Stream

    rnd = random.Random(seed)
    stream = Stream(node_max_entries=rnd.choice([5, 100, 0]), node_max_bytes=rnd.choice([0, 4096]))
    ms = rnd.choice([0, 1, 2**63 - 5, 2**64 - 400])
    for i in range(rnd.randint(1, 300)):
        ms += rnd.randint(0, 1)
        if rnd.random() < 0.7:
            fields = [b"a", b"%d" % rnd.randint(-2**63, 2**63 - 1), b"b", os.urandom(3)]
        else:
            fields = [os.urandom(2), b"x" * rnd.choice([0, 1, 70, 5000]), b"-0", b"007"]
        stream.append(StreamID(ms, i if ms < 2**64 - 1 else i), fields)
    for node in stream.nodes:
        for i in range(node.n):
            if rnd.random() < 0.2 and node.live > 1:
                stream.delete(node.id_at(i))
    return stream


@pytest.mark.parametrize("seed", range(12))
def test_stream_listpacks_encode_decode_both_forms(seed):
    pure = rdb_stream
    stream = _random_stream(seed)
    for node in stream.nodes:
        lp = pure.node_listpack(node)
        back = pure.node_from_listpack(node.ms0, node.seq0, lp, {})
        assert pure.node_listpack(back) == lp
        assert back.lp_bytes() == len(lp) == node.lp_bytes() or node.fresh
        assert [back.fields_at(i) for i in range(back.n)] == [node.fields_at(i)
                                                             for i in range(node.n)]
        if _rdbfast is not None:
            assert rdb_stream._node_listpack_fast(node, _rdbfast.stream_lp_encode) == lp
            got = _rdbfast.stream_lp_decode(lp, node.seq0)
            want = pure.stream_lp_decode(lp, node.seq0)
            assert got[:3] == want[:3] and got[5] == want[5] and got[8:] == want[8:]
            for a, b in zip(got[3:8], want[3:8], strict=True):
                assert (a is None and b is None) or list(a) == list(b)


# (The batch reads the compiled StreamNode's fields: not the pure-Python class's.)
@pytest.mark.skipif(_rdbfast is None or compiled("rillet.engine.stream_node") is None,
                    reason="the compiled module and StreamNode")
@pytest.mark.parametrize("compress", [True, False])
def test_stream_nodes_rdb_writes_what_the_node_loop_writes(compress):
    # save_stream's compiled batch against its loop's parts: the master ID and the
    # listpack (pure encoder; a loaded node's stored bytes) as RDB strings.
    def encode_open(node):  # (the module's own pick is the pure one under RILLET_PURE)
        return rdb_stream._node_listpack_fast(node, _rdbfast.stream_lp_encode)

    for seed in range(8):
        stream = _random_stream(seed)
        nodes = list(stream.nodes)
        for i in range(0, len(nodes), 2):
            node = nodes[i]
            if not node.is_open:
                nodes[i] = rdb_stream.node_from_listpack(
                    node.ms0, node.seq0, rdb_stream.node_listpack(node), {})
        want = b"".join(
            fmt.encode_string(fmt.stream_id_bytes(node.ms0, node.seq0), compress)
            + fmt.encode_string(node.lp if node.lp is not None
                                else rdb_stream.node_listpack(node), compress)
            for node in nodes)
        got = _rdbfast.stream_nodes_rdb(nodes, 0, len(nodes), compress, encode_open)
        assert got == want
        middle = len(nodes) // 2
        assert _rdbfast.stream_nodes_rdb(nodes, 0, middle, compress, encode_open) + \
            _rdbfast.stream_nodes_rdb(nodes, middle, len(nodes), compress, encode_open) == want
