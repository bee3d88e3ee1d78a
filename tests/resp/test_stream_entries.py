"""The compiled stream entry encoder (resp/_stream_entries.pyx) against the Python path.

Streams are generated as operation sequences (appends with the master fields,
other fields, empty and binary values, IDs near 2**64, deletions, trims,
small node limits so that there are packed nodes, an open tail and reopened
tails), then random ranges with COUNT, forward and reverse, are encoded both
ways and must be byte-equal in RESP2 and RESP3.
"""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands.stream_common import python_range_reply
from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from rillet.engine.stream import Stream
from rillet.engine.stream_node import StreamNode
from rillet.resp.encoder import python_encode_into

compiled = pytest.importorskip("rillet.resp._stream_entries")

U64_MAX = (1 << 64) - 1

values = st.one_of(
    st.binary(max_size=6),
    st.sampled_from([b"", b"0", b"-1", b"123456789012", b"a\r\nb", b"x" * 300]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(lambda n: b"%d" % n),
)
names = st.sampled_from([b"f", b"g", b"temperature", b"", b"\x00\xff"])

ops = st.lists(
    st.one_of(
        # ("add", ms step, seq step, fields: None = the stream's usual fields)
        st.tuples(st.just("add"), st.sampled_from([0, 1, 2, 1000, 2**40]),
                  st.integers(0, 3),
                  st.one_of(st.none(), st.lists(st.tuples(names, values), min_size=1,
                                                max_size=4))),
        st.tuples(st.just("del"), st.integers(0, 10**6)),
        st.tuples(st.just("trim"), st.integers(0, 40), st.booleans()),
    ),
    max_size=120,
)


def _build(operations, node_max_entries, node_max_bytes, base_ms, value) -> tuple[Stream, list]:
    stream = Stream(node_max_entries=node_max_entries, node_max_bytes=node_max_bytes)
    ids: list[StreamID] = []
    ms, seq = base_ms, 0
    usual = [b"f", value, b"g", b"2"]
    for op in operations:
        if op[0] == "add":
            _, dms, dseq, fields = op
            ms, seq = (ms + dms, 0) if dms else (ms, seq + dseq + 1)
            if ms > U64_MAX:
                break
            flat = usual if fields is None else [x for pair in fields for x in pair]
            sid = stream.next_id(ms, seq, 0)
            stream.append(sid, list(flat))
            ids.append(sid)
        elif op[0] == "del" and ids:
            stream.delete(ids[op[1] % len(ids)])
        elif op[0] == "trim":
            stream.trim_maxlen(op[1], approx=op[2])
    stream.check_invariants()
    return stream, ids


def _bound(ids, pick, shift):
    if not ids or pick is None:
        return None
    ms, seq = ids[pick % len(ids)]
    if shift < 0:
        return (ms, seq - 1) if seq else ((ms - 1, U64_MAX) if ms else MIN_ID)
    if shift > 0:
        return (ms, seq + 1) if seq < U64_MAX else ((ms + 1, 0) if ms < U64_MAX else MAX_ID)
    return StreamID(ms, seq)


def _encode(reply, resp3: bool) -> bytes:
    out = bytearray()
    python_encode_into(out, reply, resp3)
    return bytes(out)


@settings(max_examples=250, deadline=None)
@given(
    operations=ops,
    node_max_entries=st.sampled_from([0, 1, 2, 3, 5, 100]),
    node_max_bytes=st.sampled_from([0, 60, 200, 4096]),
    base_ms=st.sampled_from([0, 1, 1_700_000_000_000, 2**32 - 1, U64_MAX - 2**42]),
    value=values,
    queries=st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 500)), st.integers(-1, 1),
                  st.one_of(st.none(), st.integers(0, 500)), st.integers(-1, 1),
                  st.one_of(st.none(), st.integers(1, 30)), st.booleans()),
        min_size=1, max_size=8),
)
def test_compiled_ranges_are_the_python_bytes(operations, node_max_entries, node_max_bytes,
                                              base_ms, value, queries):
    stream, ids = _build(operations, node_max_entries, node_max_bytes, base_ms, value)
    for lo_pick, lo_shift, hi_pick, hi_shift, count, reverse in queries:
        start = _bound(ids, lo_pick, lo_shift) or MIN_ID
        end = _bound(ids, hi_pick, hi_shift) or MAX_ID
        expected = python_range_reply(stream, start, end, count, reverse)
        got = compiled.encode_range(stream, start, end, count or 0, reverse)
        assert bool(got) == bool(expected)
        for resp3 in (False, True):
            assert _encode(got, resp3) == _encode(expected, resp3)


def test_packed_nodes_from_persistence_and_a_reopened_tail():
    """Nodes rebuilt by a loader (from_packed) and a tail reopened after XDEL read the same."""
    stream = Stream(node_max_entries=3)
    for n in range(1, 11):
        fields = [b"f", b"%d" % n] if n % 4 else [b"f", b"%d" % n, b"extra", b"x" * n]
        stream.append(stream.next_id(n, 0, 0), fields)
    for n in (10, 9):  # empty the last node: the one before becomes the tail again
        stream.delete(StreamID(n, 0))
    stream.delete(StreamID(2, 0))
    stream.append(stream.next_id(11, 0, 0), [b"f", b"11"])
    clone = Stream.restore([_repacked(node) for node in stream.nodes],
                           length=stream.length, last_id=stream.last_id,
                           entries_added=stream.entries_added,
                           max_deleted_id=stream.max_deleted_id)
    assert any(node.is_open for node in stream.nodes)
    for source in (stream, clone):
        for reverse in (False, True):
            expected = python_range_reply(source, MIN_ID, MAX_ID, None, reverse)
            got = compiled.encode_range(source, MIN_ID, MAX_ID, 0, reverse)
            assert _encode(got, False) == _encode(expected, False)
    assert _encode(compiled.encode_range(clone, MIN_ID, MAX_ID, 0, False), True) == _encode(
        python_range_reply(stream, MIN_ID, MAX_ID), True)


def _repacked(node: StreamNode) -> StreamNode:
    """The node as a loader builds it: 8-byte arrays, whatever the values need."""
    elems = node.elems if node.is_open else [
        node.data[a:b] for a, b in zip(node.offs, node.offs[1:], strict=False)]
    offs = array("Q", [0])
    for item in elems:
        offs.append(offs[-1] + len(item))
    return StreamNode.from_packed(
        node.ms0, node.seq0, node.mf, array("Q", node.ms), array("Q", node.seq),
        b"".join(elems), offs, dead=set(node.dead) if node.dead else None,
        estart=array("Q", node.estart) if node.estart is not None else None,
        same=bytes(node.same) if node.same is not None else None)
