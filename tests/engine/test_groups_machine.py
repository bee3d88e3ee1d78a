"""Model-based tests: the indexed consumer group against GroupModel, step by step.

A hypothesis state machine drives one group on a real Stream (small nodes, so
deletions and trims cross node boundaries) through reads, history reads,
acks, XCLAIM, XAUTOCLAIM, XREADGROUP CLAIM, XNACK, consumer deletion, group
destruction and stream deletions/trims, comparing every reply and the whole
PEL with the naive model. `SortedIndex` gets its own check against a dict.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from rillet.clock import ManualClock
from rillet.engine.groups import (
    NACK_FAIL,
    NACK_FATAL,
    NACK_SILENT,
    create_group,
    destroy_group,
    group_lag,
    is_referenced,
)
from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from rillet.engine.pel import PySortedIndex, SortedIndex
from tests.helpers.group_model import (
    GroupModel,
    RealStream,
    engine_consumer_view,
    engine_snapshot,
)

CONSUMERS = st.sampled_from([b"alice", b"bob", b"carl"])
COUNTS = st.sampled_from([None, 1, 2, 3, 5])
IDLES = st.sampled_from([0, 1, 30, 60, 120, 250])
GROUP = b"g"


class GroupMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.clock = ManualClock(1_000_000)
        self.stream = RealStream(node_max_entries=4)
        self.all_ids: list[StreamID] = []
        for _ in range(3):
            self.all_ids.append(self.stream.add_next())
        self.group = create_group(self.stream, GROUP, MIN_ID)
        self.model = GroupModel(MIN_ID)

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    def pick_ids(self, data, max_size: int = 4) -> list[StreamID]:
        # Known IDs (live or deleted) plus one that never existed.
        pool = self.all_ids + [StreamID(0, 7)]
        return data.draw(st.lists(st.sampled_from(pool), max_size=max_size))

    # --- the stream ---------------------------------------------------------------
    @rule(n=st.integers(1, 4))
    def add_entries(self, n: int) -> None:
        for _ in range(n):
            self.all_ids.append(self.stream.add_next())

    @precondition(lambda self: self.all_ids)
    @rule(data=st.data())
    def delete_entry(self, data) -> None:
        sid = data.draw(st.sampled_from(self.all_ids))
        self.stream.delete(sid)

    @precondition(lambda self: len(self.group.pel) > 0)
    @rule(data=st.data())
    def delete_pending_entry(self, data) -> None:
        # Deleting what is pending is what XAUTOCLAIM/XCLAIM/CLAIM must clean up.
        pending = [StreamID(*e.id_pair) for e in self.group.pel]
        self.stream.delete(data.draw(st.sampled_from(pending)))

    @rule(maxlen=st.integers(0, 6))
    def trim(self, maxlen: int) -> None:
        self.stream.trim_to(maxlen)

    @rule(ms=st.sampled_from([0, 1, 30, 60, 120, 300]))
    def tick(self, ms: int) -> None:
        self.clock.advance(ms)

    # --- reads --------------------------------------------------------------------
    @rule(name=CONSUMERS, count=COUNTS, noack=st.booleans())
    def read_new(self, name, count, noack) -> None:
        got = self.group.read_new(self.stream, name, count, self.now, noack=noack)
        want = self.model.read_new(self.stream, name, count, self.now, noack)
        assert [sid for sid, _ in got.entries] == want
        assert all(body is not None for _, body in got.entries)
        assert self.group.last_id == self.model.last_id
        assert len(got.touched) == (0 if noack else len(want))

    @rule(name=CONSUMERS, count=COUNTS, data=st.data())
    def read_history(self, name, count, data) -> None:
        after = data.draw(st.sampled_from([MIN_ID, *self.all_ids]))
        got = self.group.read_history(self.stream, name, after, count, self.now)
        want = self.model.read_history(self.stream, name, after, count, self.now)
        assert [(sid, body is not None) for sid, body in got.entries] == want

    @rule(name=CONSUMERS, min_idle=IDLES, count=COUNTS)
    def read_claim(self, name, min_idle, count) -> None:
        got = self.group.read_claim(self.stream, name, min_idle, count, self.now)
        claimed, deleted = self.model.read_claim(self.stream, name, min_idle, count, self.now)
        assert [(sid, *prior) for (sid, _), prior in zip(got.claimed, got.prior, strict=True)] == (
            claimed
        )
        assert got.deleted == deleted

    # --- acks and claims ------------------------------------------------------------
    @rule(data=st.data())
    def ack(self, data) -> None:
        ids = self.pick_ids(data)
        assert self.group.ack(ids) == self.model.ack(ids)

    @rule(
        data=st.data(),
        name=CONSUMERS,
        min_idle=IDLES,
        justid=st.booleans(),
        force=st.booleans(),
        retry=st.sampled_from([None, None, 0, 4]),
        back=st.sampled_from([None, None, 0, 40, 5000, -10]),
        lastid=st.booleans(),
    )
    def claim(self, data, name, min_idle, justid, force, retry, back, lastid) -> None:
        ids = self.pick_ids(data)
        time = None if back is None else self.now - back
        last = data.draw(st.sampled_from(self.all_ids)) if lastid and self.all_ids else None
        got = self.group.claim(
            self.stream, name, min_idle, ids, self.now, delivery_time_ms=time,
            retry_count=retry, force=force, justid=justid, last_id=last,
        )  # fmt: skip
        claimed, deleted = self.model.claim(
            self.stream, name, min_idle, ids, self.now, time, retry, force, justid, last
        )
        assert [sid for sid, _ in got.claimed] == claimed
        assert got.deleted == deleted
        assert self.group.last_id == self.model.last_id

    @rule(data=st.data(), name=CONSUMERS, min_idle=IDLES, count=st.integers(1, 4),
          justid=st.booleans())  # fmt: skip
    def autoclaim(self, data, name, min_idle, count, justid) -> None:
        start = data.draw(st.sampled_from([MIN_ID, *self.all_ids]))
        got = self.group.autoclaim(self.stream, name, min_idle, start, count, self.now, justid)
        cursor, claimed, deleted = self.model.autoclaim(
            self.stream, name, min_idle, start, count, self.now, justid
        )
        assert (got.cursor, [sid for sid, _ in got.claimed], got.deleted) == (
            cursor,
            claimed,
            deleted,
        )

    @rule(
        data=st.data(),
        mode=st.sampled_from([NACK_SILENT, NACK_FAIL, NACK_FATAL]),
        retry=st.sampled_from([None, None, 3]),
        force=st.booleans(),
    )
    def nack(self, data, mode, retry, force) -> None:
        ids = self.pick_ids(data)
        got = self.group.nack(self.stream, ids, mode, retry_count=retry, force=force)
        assert got == self.model.nack(self.stream, ids, mode, retry, force)

    # --- consumers and the group -------------------------------------------------------
    @rule(name=CONSUMERS)
    def delete_consumer(self, name) -> None:
        assert self.group.delete_consumer(name) == self.model.delete_consumer(name)

    @rule(name=CONSUMERS)
    def create_consumer(self, name) -> None:
        created = self.group.create_consumer(name, self.now)
        assert (created is not None) == (name not in self.model.consumers)
        if created is not None:
            self.model.consumers[name] = {"seen": self.now, "active": -1}

    @rule(data=st.data())
    def set_id(self, data) -> None:
        sid = data.draw(st.sampled_from([MIN_ID, *self.all_ids]))
        self.group.set_id(sid)
        self.model.last_id = sid

    @rule(data=st.data())
    def destroy_and_recreate(self, data) -> None:
        assert destroy_group(self.stream, GROUP)
        sid = data.draw(st.sampled_from([MIN_ID, self.stream.last_id]))
        self.group = create_group(self.stream, GROUP, sid)
        self.model = GroupModel(sid)

    # --- observations ---------------------------------------------------------------
    @rule(data=st.data(), name=st.one_of(st.none(), CONSUMERS), min_idle=IDLES,
          count=st.integers(0, 5))  # fmt: skip
    def pending_range(self, data, name, min_idle, count) -> None:
        pool = [MIN_ID, *self.all_ids, MAX_ID]
        start = data.draw(st.sampled_from(pool))
        end = data.draw(st.sampled_from(pool))
        got = self.group.pending_range(start, end, count, self.now, name, min_idle)
        want = self.model.pending_range(start, end, count, self.now, name, min_idle)
        assert [StreamID(*e.id_pair) for e in got] == want

    @invariant()
    def agrees_with_model(self) -> None:
        self.group.check_invariants()
        assert engine_snapshot(self.group) == self.model.snapshot()
        assert engine_consumer_view(self.group) == self.model.consumer_view()
        assert self.group.pending_summary() == self.model.summary()
        assert self.group.last_id == self.model.last_id
        group_lag(self.stream, self.group)  # must not raise on any state
        for sid in self.all_ids[-2:]:
            is_referenced(self.stream, sid)


GroupMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestGroupMachine = GroupMachine.TestCase


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["ins", "pop", "get", "range"]), st.integers(0, 3000)),
        max_size=400,
    )
)
def test_sorted_index_matches_dict(ops) -> None:
    for index in _tiny_indexes():
        model: dict[int, int] = {}
        for op, k in ops:
            if op == "ins":
                if k not in model:
                    index.insert(k, -k)
                    model[k] = -k
            elif op == "pop":
                assert index.pop(k) == model.pop(k, None)
            elif op == "get":
                assert index.get(k) == model.get(k)
            else:
                hi = k + 500
                want = [model[x] for x in sorted(model) if k <= x <= hi][:7]
                assert index.range_values(k, hi, 7) == want
                assert list(index.iter_values(k, hi))[:7] == want
            index.check()
        assert list(index) == [model[x] for x in sorted(model)]
        assert index.first() == (model[min(model)] if model else None)


def _tiny_indexes() -> list:
    """Each implementation with tiny blocks: splits and merges on every few operations."""

    class TinyPySortedIndex(PySortedIndex):
        LOAD = 4

    indexes = [TinyPySortedIndex()]
    if SortedIndex is not PySortedIndex:  # the compiled form
        indexes.append(SortedIndex(4))
    return indexes
