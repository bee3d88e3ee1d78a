"""Model-based test: the packed stream log against the naive list model.

Random XADD (`*` with a clock that also goes back, `ms-*`, explicit IDs), XDEL,
XTRIM (MAXLEN/MINID, =/~, LIMIT, ACKED/DELREF hooks), XRANGE/XREVRANGE and
CONFIG SET of the node limits, with tiny nodes so every boundary is crossed.
Node shapes (master IDs, sizes, tombstones) must match, not just the contents.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from rillet.engine.ids import U64_MAX, StreamID
from rillet.engine.stream import Stream
from rillet.errors import ReplyError
from tests.helpers.stream_model import StreamModel

# Values chosen to hit listpack integer and string encodings of every width.
VALUES = st.sampled_from(
    [
        b"",
        b"0",
        b"7",
        b"127",
        b"128",
        b"-1",
        b"-4096",
        b"4095",
        b"99999",
        b"-0",
        b"007",
        b"+5",
        b"1.5",
        b"abc",
        b"x" * 63,
        b"y" * 64,
        b"z" * 130,
        b"9223372036854775807",
        b"9223372036854775808",
        b"-9223372036854775808",
    ]
)
FIELD_NAMES = st.sampled_from([b"a", b"b", b"temp", b"0", b"12", b"field"])
FIELDS = st.lists(st.tuples(FIELD_NAMES, VALUES), min_size=1, max_size=3).map(
    lambda pairs: [x for pair in pairs for x in pair]
)


class StreamMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.stream = Stream(node_max_entries=3, node_max_bytes=80)
        self.model = StreamModel(node_max_entries=3, node_max_bytes=80)
        self.now_ms = 1000
        self.ids: list[StreamID] = []

    def _add(self, ms: int | None, seq: int | None, fields: list[bytes]) -> None:
        try:
            sid = self.stream.next_id(ms, seq, self.now_ms)
        except ReplyError:
            last = self.model.last_id
            if ms is None:
                assert last == (U64_MAX, U64_MAX)
            elif seq is None:
                assert (ms, 0) <= last or last == (U64_MAX, U64_MAX)
            else:
                assert (ms, seq) <= last or last == (U64_MAX, U64_MAX)
            return
        self.stream.append(sid, fields)
        self.model.append(tuple(sid), fields)
        self.ids.append(sid)

    @rule(fields=FIELDS, clock_step=st.integers(-3, 3))
    def add_auto(self, fields, clock_step):
        self.now_ms = max(0, self.now_ms + clock_step)
        self._add(None, None, fields)

    @rule(fields=FIELDS, ms_step=st.integers(-1, 2))
    def add_ms_star(self, fields, ms_step):
        self._add(max(0, self.model.last_id[0] + ms_step), None, fields)

    @rule(fields=FIELDS, ms_step=st.integers(0, 200), seq=st.sampled_from([0, 1, 5, 300, U64_MAX]))
    def add_explicit(self, fields, ms_step, seq):
        self._add(self.model.last_id[0] + ms_step, seq, fields)

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def delete_known(self, data):
        sid = data.draw(st.sampled_from(self.ids))
        assert self.stream.delete(sid) == self.model.delete(tuple(sid))

    @rule(ms=st.integers(0, 2000), seq=st.integers(0, 3))
    def delete_any(self, ms, seq):
        assert self.stream.delete(StreamID(ms, seq)) == self.model.delete((ms, seq))

    @rule(
        maxlen=st.integers(0, 30),
        approx=st.booleans(),
        limit=st.sampled_from([0, 1, 3, 5, 10]),
        hooks=st.sampled_from(["keepref", "delref", "acked"]),
    )
    def trim_maxlen(self, maxlen, approx, limit, hooks):
        self._trim(maxlen, None, approx, limit if approx else 0, hooks)

    @precondition(lambda self: self.ids)
    @rule(
        data=st.data(),
        approx=st.booleans(),
        limit=st.sampled_from([0, 1, 3, 5, 10]),
        hooks=st.sampled_from(["keepref", "delref", "acked"]),
    )
    def trim_minid(self, data, approx, limit, hooks):
        base = data.draw(st.sampled_from(self.ids))
        minid = StreamID(base.ms, min(base.seq + data.draw(st.integers(0, 2)), U64_MAX))
        self._trim(None, minid, approx, limit if approx else 0, hooks)

    def _trim(self, maxlen, minid, approx, limit, hooks):
        # ACKED stand-in: an entry is "referenced" when its seq is odd.
        veto = (lambda sid: sid[1] % 2 == 0) if hooks == "acked" else None
        got, want = [], []
        ours_cb = got.extend if hooks == "delref" else None
        model_cb = want.extend if hooks == "delref" else None
        if maxlen is not None:
            ours = self.stream.trim_maxlen(maxlen, approx, limit, veto, ours_cb)
        else:
            ours = self.stream.trim_minid(minid, approx, limit, veto, ours_cb)
        theirs = self.model.trim(maxlen, minid, approx, limit, veto, model_cb)
        assert ours == theirs
        assert [tuple(x) for x in got] == want

    @rule(
        entries=st.sampled_from([0, 1, 2, 3, 5, 100]),
        max_bytes=st.sampled_from([0, 40, 80, 200, 4096]),
    )
    def config_set(self, entries, max_bytes):
        self.stream.node_max_entries = entries
        self.stream.node_max_bytes = max_bytes
        self.model.node_max_entries = entries
        self.model.node_max_bytes = max_bytes

    @rule(
        a=st.tuples(st.integers(0, 2100), st.sampled_from([0, 1, 2, U64_MAX])),
        b=st.tuples(st.integers(0, 2100), st.sampled_from([0, 1, 2, U64_MAX])),
        count=st.none() | st.integers(0, 6),
        reverse=st.booleans(),
    )
    def read_range(self, a, b, count, reverse):
        start, end = StreamID(*a), StreamID(*b)
        ours = self.stream.range(start, end, count, reverse)
        assert [(tuple(i), f) for i, f in ours] == self.model.range(a, b, count, reverse)

    @invariant()
    def same_state(self):
        self.stream.check_invariants()
        assert self.stream.length == self.model.length
        assert self.stream.last_id == self.model.last_id
        assert self.stream.entries_added == self.model.entries_added
        assert self.stream.max_deleted_id == self.model.max_deleted_id
        assert self.stream.first_id == self.model.first_id
        shapes = [((node.ms0, node.seq0), node.n, node.live) for node in self.stream._nodes]
        assert shapes == self.model.node_shapes()
        assert [node.lp_bytes() for node in self.stream._nodes] == [
            node.lp_bytes() for node in self.model.nodes
        ]
        everything = self.stream.range(StreamID(0, 0), StreamID(U64_MAX, U64_MAX))
        assert [(tuple(i), f) for i, f in everything] == self.model.live_entries()
        for sid in self.ids[-3:]:
            live = dict(self.model.live_entries())
            assert self.stream.get(sid) == live.get(tuple(sid))


StreamMachine.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_stream_machine = StreamMachine.TestCase
