"""The compiled XCLAIM, XAUTOCLAIM and XPENDING (commands/_claims.pyx) against their Python bodies in
commands/groups.py, the reference: generated command sequences (claims by known and new
consumers, IDs in every form, IDLE/TIME/RETRYCOUNT/FORCE/JUSTID/LASTID in odd forms and
repeated, XAUTOCLAIM starts, COUNTs and min-idle times, entries deleted while pending,
released by XNACK, acknowledged, consumers deleted, XPENDING ranges, IDLE and consumers, other types, expiring keys, RESP3,
keyspace events on or off, effect sinks or none) run on two in-process servers; replies,
effects, events, dirty counts and the groups' whole state (XINFO STREAM FULL, XPENDING,
XINFO CONSUMERS, the idle index's order and touch sequence, the LRU record) must be the
same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands import groups
from rillet.commands.table import COMMANDS
from rillet.compiled import compiled
from tests.helpers.bodies import Server, Twins, counted
from tests.server.test_group_bodies import T0, _observe

_claims = compiled("rillet.commands._claims") or pytest.skip("the compiled bodies are not in use", allow_module_level=True)
if COMMANDS["xclaim"].handler is not _claims.xclaim:  # RILLET_PURE: the table holds the Python
    pytest.skip("the compiled bodies are not in use", allow_module_level=True)

REFERENCE = {"xclaim": groups.xclaim, "xautoclaim": groups.xautoclaim,
             "xpending": groups.xpending}

ids = st.builds(lambda ms, seq: b"%d-%d" % (T0 + ms, seq), st.integers(0, 30), st.integers(0, 1))
odd_ids = st.sampled_from([b"1", b"0-0", b"abc", b"1-1-1", b"18446744073709551616-0", b"-",
                           b"007-1", b"-1-1", b"1-", b"+1-1", b" 1-1", b"%d" % (T0 + 3),
                           b"18446744073709551615-18446744073709551615", b"0" * 42 + b"-1"])
keys = st.sampled_from([b"s", b"s", b"s", b"s", b"t", b"str"])
group_names = st.sampled_from([b"g", b"g", b"g", b"h", b"nope"])
consumers = st.sampled_from([b"c1", b"c1", b"c2", b"c2", b"c3"])
min_idles = st.sampled_from([b"0", b"0", b"5", b"20", b"-3", b"x", b"007", b"99999999999999999999"])
numbers = st.sampled_from([b"0", b"3", b"10", b"%d" % (T0 + 5), b"-1", b"x", b"01",
                           b"99999999999999999999"])
options = st.lists(st.one_of(
    st.sampled_from([[b"JUSTID"], [b"justid"], [b"FORCE"], [b"force"], [b"BOGUS"], [b"IDLE"]]),
    st.builds(lambda w, n: [w, n],
              st.sampled_from([b"IDLE", b"TIME", b"RETRYCOUNT", b"retrycount", b"idle"]), numbers),
    st.builds(lambda i: [b"LASTID", i], st.one_of(ids, odd_ids)),
), max_size=3)
xclaim = st.builds(
    lambda k, g, c, m, i, o: [b"XCLAIM", k, g, c, m, *i, *(w for part in o for w in part)],
    keys, group_names, consumers, min_idles,
    st.lists(st.one_of(ids, ids, ids, ids, odd_ids), min_size=0, max_size=6), options)
# The form the compiled body answers, most often.
xclaim_plain = st.builds(
    lambda c, m, i, o: [b"XCLAIM", b"s", b"g", c, m, *i, *o],
    consumers, st.sampled_from([b"0", b"5"]), st.lists(ids, min_size=1, max_size=6),
    st.sampled_from([[], [b"JUSTID"], [b"FORCE"], [b"IDLE", b"3"], [b"RETRYCOUNT", b"7"],
                     [b"TIME", b"%d" % T0, b"JUSTID", b"FORCE"]]))
xautoclaim = st.builds(
    lambda k, g, c, m, s, o: [b"XAUTOCLAIM", k, g, c, m, s, *o],
    keys, group_names, consumers, min_idles, st.one_of(ids, st.sampled_from([b"0-0", b"-", b"0", b"+", b"x"])),
    st.sampled_from([[], [b"COUNT", b"1"], [b"COUNT", b"3"], [b"count", b"2", b"justid"],
                     [b"JUSTID"], [b"COUNT", b"0"], [b"COUNT", b"x"], [b"COUNT"], [b"BOGUS"],
                     [b"COUNT", b"576460752303423487"], [b"COUNT", b"576460752303423488"]]))
xautoclaim_plain = st.builds(
    lambda c, m, s, o: [b"XAUTOCLAIM", b"s", b"g", c, m, s, *o],
    consumers, st.sampled_from([b"0", b"5"]), st.one_of(ids, st.just(b"0-0")),
    st.sampled_from([[], [b"COUNT", b"2"], [b"COUNT", b"4", b"JUSTID"]]))
bounds = st.one_of(ids, st.sampled_from([b"-", b"+", b"0-0", b"(%d-0" % (T0 + 2), b"%d" % T0, b"x"]))
xpending = st.builds(
    lambda k, g, idle, lo, hi, n, c: [b"XPENDING", k, g, *idle, lo, hi, n, *c],
    keys, group_names,
    st.sampled_from([[], [], [b"IDLE", b"0"], [b"IDLE", b"5"], [b"idle", b"12"], [b"IDLE", b"-2"],
                     [b"IDLE", b"x"]]),
    bounds, bounds, st.sampled_from([b"10", b"2", b"0", b"-1", b"x", b"100"]),
    st.sampled_from([[], [], [b"c1"], [b"c2"], [b"c9"], [b"c1", b"extra"]]))
xpending_summary = st.builds(lambda k, g: [b"XPENDING", k, g], keys, group_names)
xpending_plain = st.builds(
    lambda idle, n, c: [b"XPENDING", b"s", b"g", *idle, b"-", b"+", n, *c],
    st.sampled_from([[], [b"IDLE", b"5"]]), st.sampled_from([b"3", b"10"]),
    st.sampled_from([[], [b"c1"], [b"c2"]]))
read = st.builds(
    lambda c, n: [b"XREADGROUP", b"GROUP", b"g", c, b"COUNT", n, b"STREAMS", b"s", b">"],
    consumers, st.sampled_from([b"1", b"3"]))
xadd = st.builds(lambda k: [b"XADD", k, b"*", b"f", b"v"], st.sampled_from([b"s", b"s", b"t"]))
others = st.one_of(
    st.builds(lambda i: [b"XDEL", b"s", i], ids),
    st.builds(lambda i: [b"XACK", b"s", b"g", i], ids),
    st.builds(lambda i, m: [b"XNACK", b"s", b"g", m, b"IDS", b"1", i], ids,
              st.sampled_from([b"FAIL", b"FATAL", b"SILENT"])),
    st.builds(lambda c: [b"XGROUP", b"CREATECONSUMER", b"s", b"g", c], consumers),
    st.builds(lambda c: [b"XGROUP", b"DELCONSUMER", b"s", b"g", c], consumers),
    st.sampled_from([
        [b"XTRIM", b"s", b"MAXLEN", b"4"], [b"DEL", b"t"], [b"SET", b"str", b"x"],
        [b"XGROUP", b"CREATE", b"t", b"g", b"0", b"MKSTREAM"],
        [b"XGROUP", b"CREATE", b"s", b"h", b"0"],
        [b"EXPIRE", b"t", b"100"], [b"PERSIST", b"t"],
        [b"HELLO", b"3"], [b"HELLO", b"2"],
    ]),
)
steps = st.lists(
    st.tuples(st.one_of(xclaim_plain, xclaim_plain, xclaim, xautoclaim_plain, xautoclaim_plain,
                        xautoclaim, xpending_plain, xpending, xpending_summary, read, read,
                        xadd, others),
              st.sampled_from([0, 0, 1, 4])),
    max_size=40)


def _setup(server: Server) -> None:
    server.run([b"CONFIG", b"SET", b"stream-node-max-entries", b"4"])
    for _ in range(12):
        server.run([b"XADD", b"s", b"*", b"f", b"v"])
    server.clock.advance(1)
    for _ in range(6):
        server.run([b"XADD", b"s", b"*", b"a", b"1", b"b", b"2"])
    server.run([b"XGROUP", b"CREATE", b"s", b"g", b"0"])
    server.run([b"XREADGROUP", b"GROUP", b"g", b"c1", b"COUNT", b"8", b"STREAMS", b"s", b">"])
    server.run([b"XREADGROUP", b"GROUP", b"g", b"c2", b"COUNT", b"6", b"STREAMS", b"s", b">"])
    server.clock.advance(10)


@settings(max_examples=120, deadline=None)
@given(steps, st.sampled_from([False, True, True]), st.booleans())
def test_compiled_claim_bodies_equal_the_reference(commands, sinks, events):
    twins = Twins(REFERENCE, sinks, events)
    for server in (twins.fast, twins.reference):
        _setup(server)
    for argv, tick in commands:
        twins.run(argv, tick)
    twins.check(_observe)


def test_the_compiled_bodies_do_the_common_cases():
    """The generated test reaches the compiled work, not only its fallbacks: claims by a
    known consumer with plain IDs and options, XAUTOCLAIM pages and XPENDING ranges do not call the
    Python bodies (counted here); a new consumer, LASTID, a deleted pending entry, an
    ID in another form and an XPENDING range from an exclusive start do."""
    calls: list[list[bytes]] = []
    count = counted(calls)

    server = Server(sinks=True)
    for i in range(1, 30):
        server.run([b"XADD", b"s", b"%d-1" % i, b"f", b"v"])
    server.run([b"XGROUP", b"CREATE", b"s", b"g", b"0"])
    server.run([b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"20", b"STREAMS", b"s", b">"])
    server.run([b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"d"])
    server.run([b"XPENDING", b"s", b"g"])  # sorts and caches the consumers' names
    _claims.bind(count(groups.xclaim), count(groups.xautoclaim), count(groups.xpending),
                 groups._encode_range)
    try:
        compiled = [
            [b"XCLAIM", b"s", b"g", b"d", b"0", b"1-1", b"2-1", b"99-1"],
            [b"xclaim", b"s", b"g", b"d", b"0", b"3-1", b"justid", b"idle", b"5", b"force"],
            [b"XCLAIM", b"s", b"g", b"d", b"0", b"25-1", b"FORCE", b"RETRYCOUNT", b"4"],
            [b"XAUTOCLAIM", b"s", b"g", b"d", b"0", b"0-0", b"COUNT", b"2"],
            [b"XAUTOCLAIM", b"s", b"g", b"d", b"0", b"-", b"COUNT", b"3", b"JUSTID"],
            [b"XPENDING", b"s", b"g", b"-", b"+", b"10"],
            [b"XPENDING", b"s", b"g", b"IDLE", b"0", b"2-1", b"+", b"3", b"d"],
            [b"XPENDING", b"s", b"g"],
        ]
        replies = [server.run(argv) for argv in compiled]
        assert calls == []
        assert replies[0] == (b"*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
                              b"*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
        assert replies[4].startswith(b"*3\r\n$3\r\n4-1\r\n*3\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n")
        server.run([b"XDEL", b"s", b"10-1", b"12-1"])
        handed = [
            [b"XCLAIM", b"s", b"g", b"new", b"0", b"1-1"],
            [b"XCLAIM", b"s", b"g", b"d", b"0", b"1-1", b"LASTID", b"5-0"],
            [b"XCLAIM", b"s", b"g", b"d", b"0", b"1"],
            [b"XCLAIM", b"s", b"g", b"d", b"0", b"10-1"],
            [b"XAUTOCLAIM", b"s", b"g", b"d", b"0", b"0-0", b"COUNT", b"20"],
            [b"XPENDING", b"s", b"g", b"(1-1", b"+", b"10"],
        ]
        for argv in handed:
            server.run(argv)
        assert calls == handed
    finally:
        _claims.bind(groups.xclaim, groups.xautoclaim, groups.xpending, groups._encode_range)
    server.state.keyspace[0].data[b"s"].groups[b"g"].check_invariants()


def test_the_compiled_bodies_read_a_restored_stream():
    """A stream restored from its DUMP keeps its nodes as Redis's listpacks until first
    read (rdb_stream.LoadedNode): the compiled XREADGROUP and XCLAIM decode them where
    they read the nodes' columns, and reply as on the stream it was dumped from."""
    server = Server(sinks=False)
    for i in range(1, 300):
        server.run([b"XADD", b"s", b"%d-1" % i, b"f", b"v"])
    server.run([b"XGROUP", b"CREATE", b"s", b"g", b"0"])
    server.run([b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", b"s", b">"])
    dumped = server.run([b"DUMP", b"s"])
    size, _, rest = dumped[1:].partition(b"\r\n")
    assert server.run([b"RESTORE", b"t", b"0", rest[:int(size)]]) == b"+OK\r\n"
    restored = server.state.keyspace[0].data[b"t"]
    assert all(node.lp is not None for node in restored.nodes)  # nothing decoded yet
    for key in (b"s", b"t"):
        read = server.run([b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"2", b"STREAMS",
                           key, b">"])
        assert read == (b"*1\r\n*2\r\n$1\r\n" + key + b"\r\n*2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n"
                        b"$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
        claimed = server.run([b"XCLAIM", key, b"g", b"c", b"0", b"1-1", b"JUSTID"])
        assert claimed == b"*1\r\n$3\r\n1-1\r\n"
