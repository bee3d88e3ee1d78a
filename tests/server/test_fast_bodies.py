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
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.clock import ManualClock
from rillet.commands import streams, strings
from rillet.commands.table import COMMANDS
from rillet.dispatch import Dispatcher
from rillet.engine.listpack_size import element_size
from rillet.resp.encoder import encode_into
from rillet.state import ServerState

GENERAL = {"xadd": streams._xadd_general, "set": strings._set_general}
# The Python fast bodies: with the compiled ones (commands/_writes.pyx) built,
# the table holds those, and both forms are held to the general bodies.
PYTHON_FAST = {"xadd": streams.xadd, "set": strings.set_, "get": strings.get}


@contextmanager
def bodies(replacements):
    saved = {name: COMMANDS[name].handler for name in replacements}
    try:
        for name, body in replacements.items():
            COMMANDS[name].handler = body
        yield
    finally:
        for name, handler in saved.items():
            COMMANDS[name].handler = handler


def general_bodies():
    return bodies(GENERAL)


class Server:
    def __init__(self, sinks: bool = True) -> None:
        self.clock = ManualClock()
        self.state = ServerState(clock=self.clock)
        self.effects: list = []
        if sinks:
            self.state.effect_sinks.append(self.effects.extend)
        self.dispatcher = Dispatcher(self.state)
        self.client = self.state.new_client(None)

    def run(self, argv: list[bytes]) -> bytes:
        out = bytearray()
        encode_into(out, self.dispatcher.execute(self.client, argv), False)
        return bytes(out)


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
    [b"SET", b"str", b"v", b"PX", b"5"], [b"EXPIRE", b"s", b"3"], [b"XLEN", b"s"],
    [b"XADD", b"t", b"NOMKSTREAM", b"*", b"f", b"v"], [b"XSETID", b"s", b"99999999999999-0"],
])
steps = st.lists(
    st.tuples(st.one_of(xadd_star, xadd_maxlen, xadd_id, set_plain, others),
              st.sampled_from([0, 0, 1, 7, -3, 10_000])),  # clock moves, sometimes back
    max_size=40,
)


def _layout(server: Server, key: bytes) -> object:
    """The stream's nodes as the engine holds them: boundaries, sizes, counts."""
    stream = server.state.keyspace[0].data.get(key)
    if stream is None or not hasattr(stream, "nodes"):
        return stream
    return [(n.ms0, n.seq0, n.n, n.live, n.body, n.lp_bytes(), n.fast, list(n.ms), list(n.seq))
            for n in stream.nodes] + [(stream.length, stream.last_id, stream.entries_added)]


def _observe(server: Server) -> list[object]:
    return [server.run([b"XINFO", b"STREAM", key, b"FULL"]) for key in (b"s", b"t")] + [
        server.run([b"GET", b"str"]), server.run([b"DBSIZE"]), server.state.dirty] + [
        _layout(server, key) for key in (b"s", b"t")]


@settings(max_examples=300, deadline=None)
@given(steps, st.sampled_from([1, 2, 100]), st.sampled_from([0, 64, 300, 4096]),
       st.sampled_from(["table", "python"]), st.booleans())
def test_fast_bodies_equal_general_ones(commands, node_entries, node_bytes, fast_form, sinks):
    """`table`: the table's handlers (compiled when built); `python`: the Python fast bodies."""
    fast, general = Server(sinks), Server(sinks)
    for server in (fast, general):
        server.state.config.set("stream-node-max-entries", str(node_entries))
        server.state.config.set("stream-node-max-bytes", str(node_bytes))
    with bodies(PYTHON_FAST if fast_form == "python" else {}):
        for argv, tick in commands:
            for server in (fast, general):
                server.clock.advance(tick)
            ours = fast.run(argv)
            with general_bodies():
                theirs = general.run(argv)
            assert ours == theirs, argv
        assert fast.effects == general.effects
        observed = _observe(fast)
    with general_bodies():
        assert observed == _observe(general)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.binary(max_size=24), numbers))
def test_compiled_element_size_is_listpacks(value):
    """The compiled listpack element size equals listpack_size.element_size."""
    writes = pytest.importorskip("rillet.commands._writes")
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
