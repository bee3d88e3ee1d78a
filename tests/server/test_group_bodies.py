"""The compiled XREADGROUP (`>` on one stream) and XACK (commands/_groups.pyx) against
their Python bodies in commands/groups.py, the reference: generated command sequences
(new and existing consumers, COUNT/NOACK/BLOCK in odd forms, history reads, CLAIM,
groups moved back with SETID so new entries are pending already, deletions and trims
ahead of the group, XNACK, XCLAIM, IDs in every form XACK meets, other types, expiring
keys, RESP3, keyspace events on or off, effect sinks or none) run on two in-process
servers; replies, effects, events, dirty counts and the groups' whole state (XINFO
STREAM FULL, XPENDING, XINFO CONSUMERS, the idle index's order and touch sequence,
the LRU record) must be the same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands import groups
from rillet.commands.table import COMMANDS
from rillet.compiled import compiled
from tests.helpers.bodies import Server, Twins, counted

_groups = compiled("rillet.commands._groups") or pytest.skip("the compiled bodies are not in use", allow_module_level=True)
if COMMANDS["xack"].handler is not _groups.xack:  # RILLET_PURE: the table holds the Python
    pytest.skip("the compiled bodies are not in use", allow_module_level=True)

REFERENCE = {"xreadgroup": groups.xreadgroup, "xack": groups.xack}

# XADD's `*` IDs: the servers' ManualClock starts at T0 and moves a few ms per step.
T0 = 1_700_000_000_000
ids = st.builds(lambda ms, seq: b"%d-%d" % (T0 + ms, seq), st.integers(0, 40), st.integers(0, 2))
odd_ids = st.sampled_from([b"1", b"0-0", b"abc", b"1-1-1", b"18446744073709551616-0",
                           b"007-1", b"-1-1", b"1-", b"+1-1", b" 1-1", b"1-18446744073709551615",
                           b"18446744073709551615-18446744073709551615", b"0" * 42 + b"-1"])
keys = st.sampled_from([b"s", b"s", b"s", b"t", b"str"])
group_names = st.sampled_from([b"g", b"g", b"h", b"nope"])
consumers = st.sampled_from([b"c1", b"c1", b"c2", b"c3"])
counts = st.sampled_from([[], [b"COUNT", b"1"], [b"COUNT", b"3"], [b"count", b"2"],
                          [b"COUNT", b"0"], [b"COUNT", b"-1"], [b"COUNT", b"02"],
                          [b"COUNT", b"x"], [b"COUNT", b"99999999999999999999"]])
flags = st.sampled_from([[], [], [b"NOACK"], [b"noack"], [b"BLOCK", b"10"], [b"BLOCK", b"-1"],
                         [b"BLOCK", b"x"], [b"CLAIM", b"0"], [b"NOACK", b"BLOCK", b"0"]])
read_ids = st.sampled_from([b">", b">", b">", b"0", b"$", b"1-0"])
xreadgroup = st.builds(
    lambda g, c, n, f, k, i: [b"XREADGROUP", b"GROUP", g, c, *n, *f, b"STREAMS", k, i],
    group_names, consumers, counts, flags, keys, read_ids)
# The form the compiled body answers, most often.
xreadgroup_new = st.builds(
    lambda c, n, f: [b"XREADGROUP", b"GROUP", b"g", c, *n, *f, b"STREAMS", b"s", b">"],
    st.sampled_from([b"c1", b"c2"]), st.sampled_from([[], [b"COUNT", b"2"], [b"COUNT", b"3"]]),
    st.sampled_from([[], [], [b"NOACK"], [b"BLOCK", b"0"]]))
xreadgroup_two = st.builds(
    lambda c, n: [b"XREADGROUP", b"GROUP", b"g", c, *n, b"STREAMS", b"s", b"t", b">", b">"],
    consumers, counts)
xack = st.builds(lambda k, g, i: [b"XACK", k, g, *i], keys, group_names,
                 st.lists(st.one_of(ids, ids, ids, odd_ids), min_size=1, max_size=5))
xadd = st.builds(lambda k, i: [b"XADD", k, i, b"f", b"v"], st.sampled_from([b"s", b"s", b"t"]),
                 st.one_of(st.just(b"*"), st.just(b"*"), st.just(b"*"), ids))
others = st.one_of(
    st.builds(lambda k, g, i: [b"XGROUP", b"CREATE", k, g, i, b"MKSTREAM"],
              st.sampled_from([b"s", b"t"]), group_names, st.sampled_from([b"0", b"$", b"3-0"])),
    # Without ENTRIESREAD the counter becomes unknown (the Python body re-derives it).
    st.builds(lambda g, i, e: [b"XGROUP", b"SETID", b"s", g, i, *e], group_names,
              st.sampled_from([b"0", b"$", b"%d-0" % (T0 + 2), b"%d-1" % (T0 + 5)]),
              st.sampled_from([[], [b"ENTRIESREAD", b"1"], [b"ENTRIESREAD", b"2"]])),
    st.builds(lambda g, c: [b"XGROUP", b"CREATECONSUMER", b"s", g, c], group_names, consumers),
    st.builds(lambda g, c: [b"XGROUP", b"DELCONSUMER", b"s", g, c], group_names, consumers),
    st.builds(lambda i: [b"XDEL", b"s", i], ids),
    st.builds(lambda i: [b"XDEL", b"s", i], ids),
    st.builds(lambda i: [b"XNACK", b"s", b"g", b"FAIL", b"IDS", b"1", i], ids),
    st.builds(lambda c, i: [b"XCLAIM", b"s", b"g", c, b"0", i], consumers, ids),
    st.sampled_from([
        [b"XTRIM", b"s", b"MAXLEN", b"2"], [b"DEL", b"t"], [b"SET", b"str", b"x"],
        [b"XSETID", b"s", b"%d-0" % (T0 + 99)],
        # Deleted entries ahead of the group with max-deleted-id lowered below them.
        [b"XSETID", b"s", b"%d-0" % (T0 + 99), b"MAXDELETEDID", b"0-0"], [b"EXPIRE", b"t", b"100"], [b"PERSIST", b"t"],
        # Its own key with a TTL: far off (the compiled bodies keep it), or due in a tick or two.
        [b"PEXPIRE", b"s", b"100000"], [b"PEXPIRE", b"s", b"100000"], [b"PEXPIRE", b"s", b"4"],
        [b"XGROUP", b"CREATE", b"s", b"g", b"0", b"ENTRIESREAD", b"1"],
        [b"XGROUP", b"SETID", b"s", b"g", b"0", b"ENTRIESREAD", b"0"],
        [b"HELLO", b"3"], [b"HELLO", b"2"], [b"DEL", b"s"],
    ]),
)
steps = st.lists(
    st.tuples(st.one_of(xreadgroup_new, xreadgroup_new, xreadgroup, xreadgroup_two, xack, xack,
                        xadd, xadd, xadd, xadd, others), st.sampled_from([0, 0, 1, 3])),
    max_size=50)


def _observe(server: Server) -> list[object]:
    out: list[object] = [server.state.dirty, dict(server.state.keyspace[0].access)]
    for key in (b"s", b"t"):
        out += [server.run([b"XINFO", b"STREAM", key, b"FULL"]), server.run([b"PTTL", key])]
        stream = server.state.keyspace[0].data.get(key)
        for name in (b"g", b"h"):
            out += [server.run([b"XPENDING", key, name, b"IDLE", b"0", b"-", b"+", b"100"]),
                    server.run([b"XINFO", b"CONSUMERS", key, name])]
            group = getattr(stream, "groups", {}).get(name)
            if group is not None:
                group.check_invariants()
                out.append([(e.key, e.tkey, e.owner, e.delivery_count) for e in group.idle_index])
                out += [group._touch_seq, group.nacked_count, group.entries_read, group.last_id]
                out.append([(c.name, c.seen_time_ms, c.active_time_ms)
                            for c in group.consumers_in_order()])
    return out


@settings(max_examples=200, deadline=None)
@given(steps, st.sampled_from([False, False, True]), st.booleans(), st.booleans())
def test_compiled_group_bodies_equal_the_reference(commands, sinks, events, ttls):
    """With TTLs on other keys (`ttls`) and on s and t themselves, due or not."""
    twins = Twins(REFERENCE, sinks, events, ttls=ttls)
    for server in (twins.fast, twins.reference):
        assert server.clock.now_ms() == T0
        # Small nodes: reads start inside one node and cross into the next.
        server.run([b"CONFIG", b"SET", b"stream-node-max-entries", b"4"])
        for _ in range(3):
            server.run([b"XADD", b"s", b"*", b"f", b"v"])
        server.run([b"XGROUP", b"CREATE", b"s", b"g", b"0"])
        server.run([b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"c1"])
        server.run([b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"c2"])
        # A first read makes entries-read valid (XGROUP CREATE ... 0 leaves it unknown).
        server.run([b"XREADGROUP", b"GROUP", b"g", b"c2", b"COUNT", b"1", b"STREAMS", b"s", b">"])
    for argv, tick in commands:
        twins.run(argv, tick)
    twins.check(_observe)


def _both(commands: list[list[bytes]], sinks: bool) -> None:
    twins = Twins(REFERENCE, sinks)
    for argv in commands:
        twins.run(argv)
    twins.check(_observe)


def _xadds(n: int) -> list[list[bytes]]:
    return [[b"XADD", b"s", b"%d-1" % i, b"f", b"v%d" % i] for i in range(1, n + 1)]


SETUP = [[b"CONFIG", b"SET", b"stream-node-max-entries", b"5"], *_xadds(40),
         [b"XGROUP", b"CREATE", b"s", b"g", b"0"],
         [b"XREADGROUP", b"GROUP", b"g", b"c1", b"COUNT", b"2", b"STREAMS", b"s", b">"]]
READ = [b"XREADGROUP", b"GROUP", b"g", b"c1"]


@pytest.mark.parametrize("commands", [
    # Deleted entries ahead of the group (the Python body re-derives entries-read; XSETID
    # cannot lower max-deleted-id below them, so the compiled walk never meets one).
    [[b"XDEL", b"s", b"4-1", b"5-1", b"9-1"], [b"XSETID", b"s", b"40-1", b"MAXDELETEDID", b"0-0"],
     [*READ, b"COUNT", b"9", b"STREAMS", b"s", b">"], [*READ, b"STREAMS", b"s", b">"]],
    # Every new entry at once (more than the 16 kept on the stack), across nodes.
    [[*READ, b"STREAMS", b"s", b">"], [*READ, b"COUNT", b"0", b"STREAMS", b"s", b">"]],
    [[*READ, b"COUNT", b"17", b"NOACK", b"STREAMS", b"s", b">"],
     [*READ, b"COUNT", b"16", b"STREAMS", b"s", b">"], [b"XACK", b"s", b"g", *[b"%d-1" % i for i in range(1, 80)]]],
    # A trimmed head: the group behind the first entry, then caught up.
    [[b"XTRIM", b"s", b"MAXLEN", b"30"], [*READ, b"COUNT", b"3", b"STREAMS", b"s", b">"],
     [*READ, b"COUNT", b"3", b"STREAMS", b"s", b">"]],
])
@pytest.mark.parametrize("sinks", [False, True])
def test_compiled_reads_equal_the_reference(commands, sinks):
    _both(SETUP + commands, sinks)


def test_the_compiled_bodies_do_the_common_cases():
    """The generated test reaches the compiled work, not only its fallbacks: a known
    consumer reading new entries (COUNT, NOACK, BLOCK, lower case) and XACK of plain IDs
    do not call the Python bodies (counted here); a new consumer, a history read and an
    ID in another form do."""
    calls: list[list[bytes]] = []
    count = counted(calls)

    server = Server(sinks=False)
    for i in range(1, 30):
        server.run([b"XADD", b"s", b"%d-1" % i, b"f", b"v"])
    server.run([b"XGROUP", b"CREATE", b"s", b"g", b"0"])
    server.run([b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", b"s", b">"])
    _groups.bind(count(groups.xreadgroup), count(groups.xack), groups._encode_range,
                 groups.parse_block_timeout)
    try:
        compiled = [
            [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"3", b"STREAMS", b"s", b">"],
            [b"xreadgroup", b"group", b"g", b"c", b"count", b"2", b"noack", b"streams", b"s", b">"],
            [b"XREADGROUP", b"GROUP", b"g", b"c", b"BLOCK", b"100", b"COUNT", b"2", b"STREAMS",
             b"s", b">"],
            [b"XACK", b"s", b"g", b"1-1", b"2-1", b"3-1", b"99-0"],
        ]
        replies = [server.run(argv) for argv in compiled]
        assert calls == []
        assert replies[0].startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*3\r\n*2\r\n$3\r\n2-1\r\n")
        assert replies[3] == b":3\r\n"
        handed = [
            [b"XREADGROUP", b"GROUP", b"g", b"new", b"COUNT", b"1", b"STREAMS", b"s", b">"],
            [b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b"0"],
            [b"XACK", b"s", b"g", b"4"],
        ]
        for argv in handed:
            server.run(argv)
        assert calls == handed
    finally:
        _groups.bind(groups.xreadgroup, groups.xack, groups._encode_range,
                     groups.parse_block_timeout)
    pending = server.state.keyspace[0].data[b"s"].groups[b"g"]
    pending.check_invariants()
    # 1-1..3-1 acknowledged, 5-1 and 6-1 read with NOACK: 4-1, 7-1, 8-1 (c) and 9-1 (new).
    assert [e.id_pair for e in pending.pel] == [(4, 1), (7, 1), (8, 1), (9, 1)]
