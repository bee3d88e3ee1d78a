"""XADD's and SET's hand-specialised bodies equal their general forms.

`xadd` answers `XADD key * f v ...` and `XADD key MAXLEN [~|=] n * ...`
(compiled, also `XADD key ms-seq f v ...`)
without option parsing, and `set_` answers `SET key value` the same way.
The issue on one write path allows such fast bodies only under a property
test: generated command sequences (with wrong types, odd field counts, trims,
deletions, expiring keys and a clock that jumps back) run on two servers, one
answering XADD and SET with the table's handlers, the other with the general
bodies alone. Replies, effects and the resulting streams (XINFO STREAM FULL,
node layout included) must be the same.
"""

from __future__ import annotations

import time
from array import array
from types import MethodType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands import streams, strings, zsets
from rillet.compiled import compiled
from rillet.dispatch import Dispatcher
from rillet.engine.listpack_size import element_size
from rillet.engine.stream_node import StreamNode
from rillet.persistence.aoflog import encode_command, encode_select
from rillet.state import PUBLISHED, ServerState
from tests.helpers.bodies import TICKS, Server, Twins, bodies, expire_own, other_ttls
from tests.helpers.effects import recorder

GENERAL = {"xadd": streams._xadd_general, "set": strings._set_general}
# The Python fast bodies: with the compiled ones (commands/_writes.pyx) built,
# the table holds those, and both forms are held to the general bodies.
PYTHON_FAST = {"xadd": streams.xadd, "set": strings.set_, "get": strings.get}


def general_bodies():
    return bodies(GENERAL)


keys = st.sampled_from([b"s", b"t", b"str"])
# Values listpack stores as integers or not (canonical int64 decimals only), and
# long ones, so node sizes and boundaries are exercised.
numbers = st.sampled_from([b"0", b"7", b"-0", b"007", b"127", b"128", b"-4096", b"4095", b"-32769",
                           b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
                           b"-9223372036854775809", b"12345678901234567890", b"1e3", b"+5", b" 5",
                           b"-", b"99999999999999999999"])
values = st.one_of(st.binary(min_size=0, max_size=12), numbers,
                   st.integers(0, 5000).map(lambda n: b"x" * n))
same_fields = st.sampled_from([[b"f"], [b"a", b"b"], [b"temp", b"hum", b"p"]]).flatmap(
    lambda names: st.lists(values, min_size=len(names), max_size=len(names)).map(
        lambda vals: [x for pair in zip(names, vals, strict=True) for x in pair]))
fields = st.one_of(st.lists(st.binary(min_size=0, max_size=12), min_size=1, max_size=7),
                   same_fields, same_fields)
xadd_star = st.builds(lambda k, f: [b"XADD", k, b"*", *f], keys, fields)
xadd_maxlen = st.builds(
    lambda k, op, n, f: [b"XADD", k, b"MAXLEN", *op, n, b"*", *f],
    keys, st.sampled_from([[], [b"~"], [b"="]]),
    st.sampled_from([b"0", b"1", b"3", b"100", b"-1", b"x", b"99999999999999999999"]), fields,
)
# Explicit IDs (a replica's and an AOF replay's form, compiled too): plain `ms-seq`
# ones, some not greater than the last, and the forms the Python body judges.
xadd_id = st.builds(
    lambda k, i, f: [b"XADD", k, i, *f], keys,
    st.one_of(st.builds(lambda ms, seq: b"%d-%d" % (ms, seq),
                        st.integers(0, 3) | st.integers(4 * 10**12, 4 * 10**12 + 2),
                        st.integers(0, 3) | st.just(2**64 - 1)),
              st.sampled_from([b"0-0", b"5", b"5-*", b"01-1", b"1-01", b"-1-1", b"1-1-1",
                               b"18446744073709551615-18446744073709551615",
                               b"18446744073709551616-0", b"1-18446744073709551616", b"1-"])),
    fields,
)
set_plain = st.builds(lambda k, v: [b"SET", k, v], keys, st.binary(max_size=8))
others = st.sampled_from([
    [b"XTRIM", b"s", b"MAXLEN", b"2"], [b"XDEL", b"s", b"0-1"], [b"DEL", b"t"],
    [b"SET", b"str", b"v", b"PX", b"5"], [b"EXPIRE", b"s", b"3"], [b"PEXPIRE", b"t", b"5"],
    [b"PEXPIRE", b"s", b"100000"], [b"XLEN", b"s"], [b"GET", b"str"],
    [b"XADD", b"t", b"NOMKSTREAM", b"*", b"f", b"v"], [b"XSETID", b"s", b"99999999999999-0"],
    [b"SELECT", b"1"], [b"SELECT", b"0"], [b"MULTI"], [b"EXEC"],
])
steps = st.lists(
    st.tuples(st.one_of(xadd_star, xadd_maxlen, xadd_id, set_plain, others),
              st.sampled_from([0, 0, 1, 7, -3, 10_000])),  # clock moves, sometimes back
    max_size=40,
)


# StreamNode's fields as Python reads them (the entry fields through their properties).
_FIELDS = [name.lstrip("_") for name in StreamNode.__slots__]


def _layout(server: Server, key: bytes) -> object:
    """The stream's nodes as the engine holds them: boundaries, sizes, counts."""
    stream = server.state.keyspace[0].data.get(key)
    if stream is None or not hasattr(stream, "nodes"):
        return stream
    # Every field: the compiled XADD builds new nodes field by field (_writes.pyx
    # `_append_open`), so a field added to StreamNode and not set there fails here.
    return [[(name, _packed(getattr(n, name))) for name in _FIELDS] + [n.lp_bytes()]
            for n in stream.nodes] + [(stream.length, stream.last_id, stream.entries_added,
                                       stream.radix_tree_keys, stream.radix_tree_nodes)]


def _packed(value: object) -> object:
    """An array with its item type (compact_array's choice is part of the layout)."""
    if isinstance(value, array):
        return (value.typecode, list(value))
    return value


def _observe(server: Server) -> list[object]:
    return [server.run([b"XINFO", b"STREAM", key, b"FULL"]) for key in (b"s", b"t")] + [
        server.run([b"GET", b"str"]), server.run([b"DBSIZE"]), server.state.dirty] + [
        server.run([b"PTTL", key]) for key in (b"s", b"t", b"str")] + [
        _layout(server, key) for key in (b"s", b"t")]


@settings(max_examples=300, deadline=None)
@given(steps, st.sampled_from([1, 2, 100]), st.sampled_from([0, 64, 300, 4096]),
       st.sampled_from(["table", "python"]), st.sampled_from([False, True, "stream"]), st.booleans())
def test_fast_bodies_equal_general_ones(commands, node_entries, node_bytes, fast_form, sinks, ttls):
    """`table`: the table's handlers (compiled when built); `python`: the Python fast bodies.
    `sinks`: none, a recorder, or the replication stream's EffectStream (which the
    compiled XADD writes into itself: the same bytes as the published effects).
    With TTLs on other keys (`ttls`) and on the bodies' own, due or not."""
    fast, general = Server(sinks), Server(sinks)
    for server in (fast, general):
        server.state.config.set("stream-node-max-entries", str(node_entries))
        server.state.config.set("stream-node-max-bytes", str(node_bytes))
        if ttls:
            other_ttls(server)
    with bodies(PYTHON_FAST if fast_form == "python" else {}):
        for argv, tick in commands:
            for server in (fast, general):
                server.clock.advance(tick)
            ours = fast.run(argv)
            with general_bodies():
                theirs = general.run(argv)
            assert ours == theirs, argv
        assert fast.effects == general.effects
        assert fast.stream.take() == general.stream.take()
        observed = _observe(fast)
    with general_bodies():
        assert observed == _observe(general)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.binary(max_size=24), numbers))
def test_compiled_element_size_is_listpacks(value):
    """The compiled listpack element size equals listpack_size.element_size."""
    writes = compiled("rillet.commands._writes") or pytest.skip("the compiled bodies are not in use")
    assert writes.element_size(value) == element_size(value)


def test_xadd_star_reads_the_system_clock():
    """With the real clock, the compiled XADD's ID is the wall-clock millisecond."""
    state = ServerState()
    client = state.new_client(None)
    dispatcher = Dispatcher(state)
    before = time.time_ns() // 1_000_000
    reply = dispatcher.execute(client, [b"XADD", b"s", b"*", b"f", b"v"])
    after = time.time_ns() // 1_000_000
    ms, seq = map(int, reply.split(b"-"))
    assert before <= ms <= after and seq == 0


def test_compiled_xadd_writes_its_effect_into_the_stream(monkeypatch):
    """With the replication stream's EffectStream as the only sink, the compiled XADD
    writes its effect into it itself (the publish step finds it PUBLISHED), a
    SELECT first when the stream is in another db; with any other sink beside it,
    it publishes as before. Either way the bytes are the reference encoder's."""
    if compiled("rillet.commands._writes") is None:
        pytest.skip("the compiled XADD is not in use")
    seen = []
    publish_write = ServerState.publish_write

    def spy(self, db_index, argv, dirty_before):
        seen.append(self._effects is PUBLISHED)
        publish_write(self, db_index, argv, dirty_before)

    server = Server(sinks="stream")
    # (On the instance: ServerState is an extension type, its methods are not patchable.)
    monkeypatch.setattr(server.state, "publish_write", MethodType(spy, server.state))
    server.stream.selected_db = 0
    commands = [[b"XADD", b"s", b"*", b"f", b"v"], [b"SELECT", b"3"],
                [b"XADD", b"s", b"MAXLEN", b"~", b"1", b"*", b"f", b"v"],
                [b"XADD", b"s", b"99999999999999-1", b"f", b"v", b"g", b"w"]]
    replies = [server.run(argv) for argv in commands]
    assert seen == [True, True, True]  # (SELECT is no write)
    ids = [reply.split(b"\r\n")[1] for reply in (replies[0], replies[2])]
    assert server.stream.take() == b"".join([
        encode_command([b"XADD", b"s", ids[0], b"f", b"v"]), encode_select(3),
        encode_command([b"XADD", b"s", b"MAXLEN", b"=", b"1", ids[1], b"f", b"v"]),
        encode_command(commands[3])])
    recorded: list = []
    server.state.effect_sinks.append(recorder(recorded))
    server.run([b"XADD", b"s", b"*", b"f", b"v"])
    assert seen[-1] is False and len(recorded) == 1
    assert server.stream.take() == encode_command(recorded[0][1])


# --- ZADD (commands/_zsets.pyx) against zsets.zadd, the reference -----------------------------

zkeys = st.sampled_from([b"z", b"y", b"str"])
zscores = st.one_of(
    st.integers(-30, 30).map(lambda n: b"%d" % n),
    st.sampled_from([b"-0", b"007", b"000000012345", b"999999999999999", b"9999999999999999",
                     b"-999999999999999", b"1.5", b"1e3", b"inf", b"-inf", b"+5", b" 5", b"-",
                     b"", b"nan", b"0x10", b"5x"]),
)
zmembers = st.sampled_from([b"a", b"b", b"c", b"element:000000000001", b"", b"x" * 70])
zflags = st.lists(st.sampled_from([b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR", b"nx", b"ch"]),
                  max_size=2)
zadd_plain = st.builds(lambda k, pairs: [b"ZADD", k, *[x for p in pairs for x in p]],
                       zkeys, st.lists(st.tuples(zscores, zmembers), min_size=1, max_size=20))
zadd_flags = st.builds(lambda k, f, pairs: [b"ZADD", k, *f, *[x for p in pairs for x in p]],
                       zkeys, zflags, st.lists(st.tuples(zscores, zmembers), min_size=1, max_size=3))
zadd_odd = st.builds(lambda k, s: [b"ZADD", k, *s], zkeys, st.lists(zscores, min_size=1, max_size=3))
zothers = st.sampled_from([
    [b"SET", b"str", b"v"], [b"ZREM", b"z", b"a"], [b"ZREM", b"z", b"a", b"b", b"c"], [b"DEL", b"z"],
    [b"ZPOPMIN", b"z"], [b"ZINCRBY", b"z", b"2", b"b"], [b"EXPIRE", b"y", b"100"],
    [b"ZREMRANGEBYRANK", b"z", b"0", b"1"],
])
zsteps = st.lists(st.tuples(st.one_of(zadd_plain, zadd_plain, zadd_flags, zadd_odd, zothers,
                                      expire_own(st.sampled_from([b"z", b"y"]))), TICKS),
                  max_size=40)


def _zobserve(server: Server) -> list[object]:
    out: list[object] = [server.state.dirty, server.run([b"DBSIZE"])]
    for key in (b"z", b"y"):
        out += [server.run([b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"]),
                server.run([b"OBJECT", b"ENCODING", key]), server.run([b"PTTL", key])]
        value = server.state.keyspace[0].data.get(key)
        if value is not None and hasattr(value, "order"):
            out.append((list(value.order), dict(value.scores)))
    return out


@settings(max_examples=100, deadline=None)
@given(zsteps, st.sampled_from([0, 2, 5, 128]), st.sampled_from([8, 64]), st.booleans(), st.booleans(),
       st.booleans())
def test_compiled_zadd_equals_the_reference(commands, max_entries, max_value, sinks, events, ttls):
    """The table's ZADD (compiled when built) answers, changes and signals as `zsets.zadd`,
    with TTLs on other keys (`ttls`) and on its own, due or not."""
    twins = Twins({"zadd": zsets.zadd}, sinks, events, {
        "zset-max-listpack-entries": str(max_entries), "zset-max-listpack-value": str(max_value)}, ttls)
    for argv, tick in commands:
        twins.run(argv, tick)
    twins.check(_zobserve)


node_entries = st.lists(
    st.tuples(st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1),
              st.lists(st.binary(max_size=300), min_size=1, max_size=3)),
    min_size=1, max_size=150)


@settings(max_examples=300, deadline=None)
@given(node_entries, st.booleans())
def test_compiled_pack_is_stream_nodes(entries, reopen):
    """The compiled StreamNode.pack (node opening on the compiled XADD) equals the Python one:
    item sizes of the arrays (IDs near 2**64, long values), data, offsets, flags."""
    writes = compiled("rillet.commands._writes") or pytest.skip("the compiled bodies are not in use")

    def build() -> StreamNode:
        width = len(entries[0][2])
        node = StreamNode(0, entries[0][1], [b"f%d" % i for i in range(width)])
        for dms, seq, values in entries:
            if len(values) == width:
                node.elems.extend(values)  # type: ignore[union-attr]
                node.ms.append(dms)
                node.seq.append(seq)
                node.n += 1
                node.live += 1
            else:  # another shape: the general (estart) form
                node.add_mixed(dms, seq, [x for v in values for x in (b"g", v)], False, 0)
        if reopen:
            node.pack()
            node.unpack()
        return node

    ours, theirs = build(), build()
    writes.pack_node(ours)
    theirs.pack()
    for name in _FIELDS:
        mine, reference = getattr(ours, name), getattr(theirs, name)
        assert type(mine) is type(reference), name
        assert getattr(mine, "typecode", None) == getattr(reference, "typecode", None), name
        assert mine == reference, name


@given(st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1))
def test_compiled_stream_id_is_a_stream_id(ms, seq):
    writes = compiled("rillet.commands._writes") or pytest.skip("the compiled bodies are not in use")
    from rillet.engine.ids import StreamID

    sid = writes.new_id(ms, seq)
    assert type(sid) is StreamID and sid == (ms, seq) and sid.ms == ms and hash(sid) == hash((ms, seq))


def test_compiled_last_id_is_rewritten_in_place_only_when_unshared():
    """XADD's compiled body rewrites the stream's last_id tuple in place when the
    stream holds the only reference; an ID anyone else holds keeps its value."""
    writes = compiled("rillet.commands._writes") or pytest.skip("the compiled bodies are not in use")
    from rillet.engine.ids import MIN_ID, StreamID
    from rillet.engine.stream import Stream

    stream = Stream()
    writes.put_last_id(stream, 5, 1)  # MIN_ID is shared: a new tuple
    assert MIN_ID == (0, 0)
    held = stream.last_id
    writes.put_last_id(stream, 5, 2)
    assert held == (5, 1) and stream.last_id == (5, 2) and stream.last_id is not held
    del held
    before = id(stream.last_id)
    writes.put_last_id(stream, 1 << 63, 7)
    sid = stream.last_id
    assert id(sid) == before and type(sid) is StreamID
    assert sid == (1 << 63, 7) and sid.ms == 1 << 63 and hash(sid) == hash((1 << 63, 7))
