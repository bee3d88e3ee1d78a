"""XADD's and SET's hand-specialised bodies equal their general forms.

`xadd` answers `XADD key * f v ...` and `XADD key MAXLEN [~|=] n * ...`
without option parsing, and `set_` answers `SET key value` the same way.
The issue on one write path allows such fast bodies only under a property
test: generated command sequences (with wrong types, odd field counts, trims,
deletions, expiring keys and a clock that jumps back) run on two servers, one
answering XADD and SET with the table's handlers, the other with the general
bodies alone. Replies, effects and the resulting streams (XINFO STREAM FULL,
node layout included) must be the same.
"""

from __future__ import annotations

from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.clock import ManualClock
from rillet.commands import streams, strings
from rillet.commands.table import COMMANDS
from rillet.dispatch import Dispatcher
from rillet.resp.encoder import encode_into
from rillet.state import ServerState

GENERAL = {"xadd": streams._xadd_general, "set": strings._set_general}


@contextmanager
def general_bodies():
    saved = {name: COMMANDS[name].handler for name in GENERAL}
    try:
        for name, body in GENERAL.items():
            COMMANDS[name].handler = body
        yield
    finally:
        for name, handler in saved.items():
            COMMANDS[name].handler = handler


class Server:
    def __init__(self) -> None:
        self.clock = ManualClock()
        self.state = ServerState(clock=self.clock)
        self.effects: list = []
        self.state.effect_sinks.append(self.effects.extend)
        self.dispatcher = Dispatcher(self.state)
        self.client = self.state.new_client(None)

    def run(self, argv: list[bytes]) -> bytes:
        out = bytearray()
        encode_into(out, self.dispatcher.execute(self.client, argv), False)
        return bytes(out)


keys = st.sampled_from([b"s", b"t", b"str"])
fields = st.lists(st.binary(min_size=0, max_size=12), min_size=1, max_size=7)
xadd_star = st.builds(lambda k, f: [b"XADD", k, b"*", *f], keys, fields)
xadd_maxlen = st.builds(
    lambda k, op, n, f: [b"XADD", k, b"MAXLEN", *op, n, b"*", *f],
    keys, st.sampled_from([[], [b"~"], [b"="]]),
    st.sampled_from([b"0", b"1", b"3", b"100", b"-1", b"x", b"99999999999999999999"]), fields,
)
set_plain = st.builds(lambda k, v: [b"SET", k, v], keys, st.binary(max_size=8))
others = st.sampled_from([
    [b"XTRIM", b"s", b"MAXLEN", b"2"], [b"XDEL", b"s", b"0-1"], [b"DEL", b"t"],
    [b"SET", b"str", b"v", b"PX", b"5"], [b"EXPIRE", b"s", b"3"], [b"XLEN", b"s"],
    [b"XADD", b"t", b"NOMKSTREAM", b"*", b"f", b"v"], [b"XSETID", b"s", b"99999999999999-0"],
])
steps = st.lists(
    st.tuples(st.one_of(xadd_star, xadd_maxlen, set_plain, others),
              st.sampled_from([0, 0, 1, 7, -3, 10_000])),  # clock moves, sometimes back
    max_size=40,
)


def _observe(server: Server) -> list[bytes]:
    return [server.run([b"XINFO", b"STREAM", key, b"FULL"]) for key in (b"s", b"t")] + [
        server.run([b"GET", b"str"]), server.run([b"DBSIZE"])]


@settings(max_examples=300, deadline=None)
@given(steps, st.sampled_from([1, 2, 100]))
def test_fast_bodies_equal_general_ones(commands, node_entries):
    fast, general = Server(), Server()
    for server in (fast, general):
        server.state.config.set("stream-node-max-entries", str(node_entries))
    for argv, tick in commands:
        for server in (fast, general):
            server.clock.advance(tick)
        ours = fast.run(argv)
        with general_bodies():
            theirs = general.run(argv)
        assert ours == theirs, argv
    assert fast.effects == general.effects
    assert _observe(fast) == _observe(general)
