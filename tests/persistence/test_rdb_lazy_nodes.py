"""Stream nodes loaded from RDB stay Redis's listpack until first read (rdb_stream.LoadedNode).

Every engine operation on a freshly loaded stream (each one the first to touch
its nodes) must give what the same operation gives on the stream that was
saved; a node nobody read goes back out as the bytes it came in as; the
compiled check (_rdbfast.stream_lp_header) accepts exactly what the decode
accepts, so a lazily decoded node can never fail to decode later.
"""

from __future__ import annotations

import copy
import random
import struct

import pytest

from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from rillet.engine.stream import Stream
from rillet.engine.stream_node import StreamNode
from rillet.persistence import rdb, rdb_stream
from rillet.persistence.digest import value_digest
from rillet.persistence.rdb_format import lp_element, lp_finish, lp_int
from rillet.persistence.rdb_stream import LoadedNode
from rillet.persistence.valuetypes import CodecContext

try:
    from rillet.persistence import _rdbfast
except ImportError:  # pure build
    _rdbfast = None

try:
    from rillet.resp import _stream_entries
except ImportError:
    _stream_entries = None

U64_MAX = (1 << 64) - 1


def _stream(seed: int) -> tuple[Stream, list[StreamID]]:
    """Mixed shapes, binary and integer values, tombstones, IDs near 2**64, small nodes."""
    rnd = random.Random(seed)
    stream = Stream(node_max_entries=rnd.choice([3, 7, 100]), node_max_bytes=rnd.choice([0, 300]))
    ms = rnd.choice([0, 1_700_000_000_000, U64_MAX - 10_000])
    ids = []
    for _ in range(rnd.randint(40, 260)):
        ms += rnd.choice([0, 0, 1, 7])
        if rnd.random() < 0.75:
            fields = [b"sensor", b"s-%d" % rnd.randint(0, 9), b"temp", b"%d" % rnd.randint(-300, 2**40)]
        else:
            fields = [rnd.randbytes(2), b"x" * rnd.choice([0, 1, 70, 700]), b"-0", b"007"]
        sid = stream.next_id(ms, None, 0)
        stream.append(sid, fields)
        ids.append(sid)
    for sid in rnd.sample(ids, len(ids) // 6):
        stream.delete(sid)
    stream.check_invariants()
    return stream, ids


def _load(stream: Stream) -> Stream:
    """The stream through the RDB stream codec (the DUMP form: the loader's code path)."""
    loaded = rdb.restore_value(rdb.dump_value(stream), None)
    loaded.node_max_entries = stream.node_max_entries
    loaded.node_max_bytes = stream.node_max_bytes
    return loaded


def _lazy_count(stream: Stream) -> int:
    return sum(type(node) is LoadedNode and node.lp is not None for node in stream.nodes)


def _all(stream: Stream) -> list:
    return stream.range(MIN_ID, MAX_ID)


def _same_state(mine: Stream, theirs: Stream) -> None:
    assert _all(mine) == _all(theirs)
    assert _all(mine)[::-1] == mine.range(MIN_ID, MAX_ID, reverse=True)
    assert (mine.length, mine.last_id, mine.entries_added, mine.max_deleted_id) == (
        theirs.length, theirs.last_id, theirs.entries_added, theirs.max_deleted_id)
    assert rdb.dump_value(mine) == rdb.dump_value(theirs)
    mine.check_invariants()


SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_untouched_load_reads_nothing_and_saves_the_same_bytes(seed):
    stream, _ = _stream(seed)
    loaded = _load(stream)
    assert _lazy_count(loaded) == len(loaded.nodes)
    # What needs no entry: lengths, memory, node keys, and a save.
    assert loaded.length == stream.length and loaded.radix_tree_keys == stream.radix_tree_keys
    assert loaded.memory_usage(0) == _load(stream).memory_usage(0)
    assert rdb.dump_value(loaded) == rdb.dump_value(stream)
    # A save reads the first live entry's ID (the RDB's first-id): that node only.
    assert _lazy_count(loaded) == len(loaded.nodes) - 1
    # Decoded, the nodes read as plain StreamNodes with the same listpacks.
    assert loaded.memory_usage(0) == _materialized(stream).memory_usage(0)
    _same_state(loaded, stream)
    assert _lazy_count(loaded) == 0
    assert all(isinstance(node, StreamNode) and node.lp is None for node in loaded.nodes)


def _materialized(stream: Stream) -> Stream:
    loaded = _load(stream)
    for node in loaded.nodes:
        node.materialize()
    return loaded


@pytest.mark.parametrize("seed", SEEDS)
def test_reads_on_a_fresh_load_match_the_saved_stream(seed):
    stream, ids = _stream(seed)
    rnd = random.Random(seed)
    for _ in range(6):
        lo, hi = sorted(rnd.sample(ids, 2))
        count = rnd.choice([None, 1, 5])
        for reverse in (False, True):
            assert _load(stream).range(lo, hi, count, reverse) == stream.range(lo, hi, count,
                                                                               reverse)
        assert _load(stream).range_ids(lo, hi, count) == stream.range_ids(lo, hi, count)
        sid = rnd.choice(ids)
        assert _load(stream).get(sid) == stream.get(sid)
        if _stream_entries is not None:
            got = _stream_entries.encode_range(_load(stream), lo, hi, count or 0, False)
            assert got == _stream_entries.encode_range(stream, lo, hi, count or 0, False)
    assert _load(stream).first_entry() == stream.first_entry()
    assert _load(stream).last_entry() == stream.last_entry()
    assert _load(stream).first_id == stream.first_id
    assert _load(stream).last_valid_id() == stream.last_valid_id()
    loaded = _load(stream)
    loaded.range(MIN_ID, MAX_ID, 1)  # reads the first node only
    assert _lazy_count(loaded) == len(loaded.nodes) - 1


@pytest.mark.parametrize("seed", SEEDS)
def test_writes_on_a_fresh_load_match_the_saved_stream(seed):
    rnd = random.Random(seed)
    base, ids = _stream(seed)
    ops = [
        lambda s: [s.delete(sid) for sid in rnd.sample(ids, 10)],
        lambda s: s.trim_maxlen(len(ids) // 2),
        lambda s: s.trim_maxlen(len(ids) // 3, approx=True),
        lambda s: s.trim_minid(ids[len(ids) // 2]),
        lambda s: s.trim_minid(ids[len(ids) // 2], approx=True),
        lambda s: s.trim_maxlen(5, limit=7),
        lambda s: [s.append(s.next_id(None, None, 0), [b"sensor", b"x", b"temp", b"1"])
                   for _ in range(rnd.choice([1, 150]))],
        lambda s: s.append(s.next_id(None, None, 0), [b"other", b"fields"]),
    ]
    for op in ops:
        expected_stream = copy.deepcopy(base)
        got_stream = _load(base)
        before = rnd.getstate()
        expected = op(expected_stream)
        rnd.setstate(before)
        got = op(got_stream)
        assert got == expected
        _same_state(got_stream, expected_stream)


def test_digest_of_a_fresh_load_is_the_saved_streams():
    # DEBUG DIGEST-VALUE / DEBUG DIGEST read every entry of every node.
    context = CodecContext(None)
    for seed in SEEDS[:3]:
        stream, _ = _stream(seed)
        loaded = _load(stream)
        assert value_digest(b"k", loaded, None, 0, context) == value_digest(b"k", stream, None, 0,
                                                                            context)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_copies_of_a_loaded_stream_are_independent(seed):
    stream, ids = _stream(seed)
    loaded = _load(stream)
    twin = copy.deepcopy(loaded)  # COPY
    assert _lazy_count(twin) == 0
    for sid in ids[:: 5]:
        twin.delete(sid)
    assert rdb.dump_value(loaded) == rdb.dump_value(stream)
    _same_state(loaded, stream)


def test_a_kept_listpack_is_written_back_as_it_came():
    # Redis stores "12" as an integer; this listpack has it as a string. It is
    # still a valid node: loaded and saved untouched, it keeps its bytes.
    parts = [lp_int(2), lp_int(0), lp_int(1), lp_element(b"f"), lp_int(0)]
    for dms, value in ((0, b"\x8212"), (1, b"\x83abc")):
        element = value + bytes([len(value)])
        parts += [lp_int(2), lp_int(dms), lp_int(0), element, lp_int(4)]
    lp = lp_finish(b"".join(parts), 5 + 2 * 5)
    node = rdb_stream.node_from_listpack(5, 0, lp, {})
    stream = Stream.restore([node], length=2, last_id=StreamID(6, 0), entries_added=2,
                            max_deleted_id=MIN_ID)
    payload = rdb.dump_value(stream)
    again = rdb.restore_value(payload, None)
    assert again.nodes[0].lp == lp
    assert again.range(MIN_ID, MAX_ID) == [(StreamID(5, 0), [b"f", b"12"]),
                                           (StreamID(6, 0), [b"f", b"abc"])]
    assert rdb.dump_value(again) != payload  # decoded, it is written in Redis's encoding


def _damaged(lp: bytes, rnd: random.Random) -> bytes:
    raw = bytearray(lp)
    how = rnd.randrange(4)
    if how == 0:
        raw[rnd.randrange(6, len(raw))] = rnd.randrange(256)
    elif how == 1:
        raw[4:6] = rnd.randrange(len(raw)).to_bytes(2, "little")
    elif how == 2:
        del raw[rnd.randrange(6, len(raw) - 1)]
    else:
        raw.insert(rnd.randrange(6, len(raw) - 1), rnd.randrange(256))
    raw[0:4] = len(raw).to_bytes(4, "little")  # keep the size header: look inside
    return bytes(raw)


def _outcome(decode, lp, seq0):
    try:
        return decode(lp, seq0)[:3]
    except (ValueError, IndexError, struct.error):  # what the loader reports as damage
        return "refused"


@pytest.mark.skipif(_rdbfast is None, reason="pure build: the check is the decode itself")
def test_compiled_check_accepts_exactly_what_the_decodes_accept():
    rnd = random.Random(13)
    tried = refused = 0
    for seed in range(4):
        stream, _ = _stream(seed)
        for node in stream.nodes:
            lp = rdb_stream.node_listpack(node)
            for candidate in [lp] + [_damaged(lp, rnd) for _ in range(40)]:
                check = _outcome(_rdbfast.stream_lp_header, candidate, node.seq0)
                assert check == _outcome(_rdbfast.stream_lp_decode, candidate, node.seq0)
                assert check == _outcome(rdb_stream.stream_lp_decode, candidate, node.seq0)
                tried += 1
                refused += check == "refused"
    assert tried > 1000 and 0 < refused < tried
