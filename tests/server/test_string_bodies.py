"""The compiled SET (plain and with NX/XX/GET/KEEPTTL/expiries), GET and INCR family
(commands/_writes.pyx) against their Python bodies in commands/strings.py, the reference: generated command sequences run
through both on two in-process servers (integers at the int64 edges and in
forms Redis rejects, other types under the key, expiring keys, keyspace events
on or off, effect sinks or none); replies, effects, events, dirty counts, and
per key the value, OBJECT ENCODING, MEMORY USAGE, DUMP, TTL, the LRU record and
the SCAN order must be the same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands import strings
from rillet.commands.table import COMMANDS
from rillet.compiled import compiled
from tests.helpers.bodies import Server, Twins, counted

_writes = compiled("rillet.commands._writes") or pytest.skip("the compiled bodies are not in use", allow_module_level=True)
if COMMANDS["incr"].handler is not _writes.incr:  # RILLET_PURE: the table holds the Python
    pytest.skip("the compiled bodies are not in use", allow_module_level=True)

REFERENCE = {"set": strings.set_, "get": strings.get, "incr": strings.incr, "decr": strings.decr,
             "incrby": strings.incrby, "decrby": strings.decrby}
KEYS = [b"n", b"m", b"s", b"l"]

keys = st.sampled_from(KEYS)
numbers = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(lambda n: b"%d" % n),
    st.sampled_from([b"0", b"1", b"-1", b"9223372036854775807", b"-9223372036854775808",
                     b"9223372036854775806", b"-9223372036854775807", b"9223372036854775808",
                     b"-9223372036854775809", b"-0", b"007", b"+5", b" 5", b"5 ", b"1e3", b"",
                     b"-", b"12345678901234567890", b"0x10", b"abc", b"99999999999999999999"]),
)
values = st.one_of(numbers, st.binary(max_size=8), st.just(b"x" * 50))
set_plain = st.builds(lambda k, v: [b"SET", k, v], keys, values)
set_options = st.builds(
    lambda k, v, o: [b"SET", k, v, *o], keys, values,
    st.sampled_from([[b"NX"], [b"XX"], [b"GET"], [b"KEEPTTL"], [b"EX", b"100"], [b"PX", b"5"],
                     [b"XX", b"GET"], [b"ex", b"1"], [b"NX", b"XX"], [b"get", b"nx"],
                     [b"PX", b"5", b"px", b"7"], [b"EXAT", b"1"], [b"PXAT", b"99999999999999"],
                     [b"KEEPTTL", b"GET"], [b"KEEPTTL", b"EX", b"5"], [b"EX", b"5", b"KEEPTTL"],
                     [b"EX", b"0"], [b"PX", b"-1"], [b"EX", b"abc"], [b"EX"], [b"NXX"],
                     [b"EX", b"9223372036854775807"], [b"PX", b"9223372036854775000"],
                     [b"IFEQ", b"1"], [b"IFNE", b"x", b"GET"], [b"XX", b"KEEPTTL", b"GET"]]))
incr = st.builds(lambda c, k: [c, k], st.sampled_from([b"INCR", b"DECR", b"incr"]), keys)
incrby = st.builds(lambda c, k, n: [c, k, n], st.sampled_from([b"INCRBY", b"DECRBY"]), keys, numbers)
others = st.sampled_from([
    [b"GET", b"n"], [b"GET", b"l"], [b"DEL", b"n"], [b"DEL", b"m"], [b"RPUSH", b"l", b"a"],
    [b"EXPIRE", b"m", b"100"], [b"PEXPIRE", b"s", b"3"], [b"PERSIST", b"m"], [b"APPEND", b"n", b"7"],
    [b"PEXPIRE", b"n", b"5"], [b"PEXPIRE", b"n", b"100000"], [b"GET", b"s"], [b"GET", b"m"],
    [b"SETRANGE", b"s", b"0", b"1"], [b"INCRBYFLOAT", b"n", b"1"], [b"GETSET", b"n", b"41"],
])
steps = st.lists(
    st.tuples(st.one_of(set_plain, set_options, incr, incr, incrby, others),
              st.sampled_from([0, 0, 1, 4])),  # clock moves: PX 5 keys expire
    max_size=40)


def _observe(server: Server) -> list[object]:
    db = server.state.keyspace[0]
    out: list[object] = [server.state.dirty, server.run([b"DBSIZE"]),
                         server.run([b"SCAN", b"0", b"COUNT", b"100"]), dict(db.access)]
    for key in KEYS:
        out += [server.run([b"GET", key]), server.run([b"OBJECT", b"ENCODING", key]),
                server.run([b"MEMORY", b"USAGE", key]), server.run([b"DUMP", key]),
                server.run([b"PTTL", key])]
    return out


@settings(max_examples=200, deadline=None)
@given(steps, st.booleans(), st.booleans(), st.booleans())
def test_compiled_string_bodies_equal_the_reference(commands, sinks, events, ttls):
    """With TTLs on other keys (`ttls`) and on the bodies' own, due or not."""
    twins = Twins(REFERENCE, sinks, events, ttls=ttls)
    for argv, tick in commands:
        twins.run(argv, tick)
    twins.check(_observe)


def test_the_compiled_bodies_do_the_common_cases():
    """The generated test reaches the compiled work, not only its fallbacks: INCR on a
    missing key or an integer, INCRBY, DECRBY do not call the Python bodies (counted
    here), a non-integer does; a TTL on another key changes nothing to that."""
    calls: list[list[bytes]] = []
    server = Server()
    server.run([b"SET", b"t", b"1", b"EX", b"100"])
    _writes.bind_incr(*(counted(calls)(b) for b in (strings.incr, strings.decr, strings.incrby,
                                            strings.decrby)))
    try:
        assert server.run([b"INCR", b"n"]) == b":1\r\n"
        assert server.run([b"INCRBY", b"n", b"9223372036854775806"]) == b":9223372036854775807\r\n"
        assert server.run([b"DECRBY", b"n", b"-1"]).startswith(b"-ERR increment or decrement")
        assert server.run([b"DECR", b"n"]) == b":9223372036854775806\r\n"
        assert server.run([b"DECRBY", b"m", b"5"]) == b":-5\r\n"
        assert [argv[0] for argv in calls] == [b"DECRBY"]  # the overflow: the Python body says so
        server.run([b"SET", b"s", b"abc"])
        assert server.run([b"INCR", b"s"]) == b"-ERR value is not an integer or out of range\r\n"
        assert [argv[0] for argv in calls] == [b"DECRBY", b"INCR"]
    finally:
        _writes.bind_incr(strings.incr, strings.decr, strings.incrby, strings.decrby)
    assert server.state.dirty == 6
    assert server.effects[1:] == [(0, [b"INCR", b"n"]), (0, [b"INCRBY", b"n", b"9223372036854775806"]),
                              (0, [b"DECR", b"n"]), (0, [b"DECRBY", b"m", b"5"]),
                              (0, [b"SET", b"s", b"abc"])]


def test_set_with_options_is_compiled():
    """SET with NX, XX, GET, KEEPTTL or an expiry, on a key with or without a TTL not yet
    due, does not call the general body (counted here); IFEQ, an error and a due key do."""
    calls: list[list[bytes]] = []

    def general(ctx, argv):
        calls.append(argv[3:])
        return strings._set_general(ctx, argv)

    server = Server()
    _writes.bind_set(general)
    try:
        assert server.run([b"SET", b"k", b"1", b"EX", b"100"]) == b"+OK\r\n"
        assert server.run([b"SET", b"k", b"2", b"px", b"5000", b"GET"]) == b"$1\r\n1\r\n"
        assert server.run([b"SET", b"k", b"3", b"KEEPTTL", b"XX"]) == b"+OK\r\n"
        assert server.run([b"SET", b"k", b"4", b"NX", b"GET"]) == b"$1\r\n3\r\n"
        assert server.run([b"PTTL", b"k"]) == b":5000\r\n"
        assert server.run([b"SET", b"k", b"5", b"XX"]) == b"+OK\r\n"
        assert server.run([b"PTTL", b"k"]) == b":-1\r\n"
        assert calls == []
        server.run([b"SET", b"k", b"6", b"PX", b"10"])
        server.clock.advance(10)
        assert server.run([b"SET", b"k", b"7", b"XX"]) == b"$-1\r\n"  # due: expired first
        assert server.run([b"SET", b"k", b"8", b"IFEQ", b"1"]) == b"$-1\r\n"
        assert server.run([b"SET", b"k", b"9", b"EX", b"0"]).startswith(b"-ERR invalid expire")
        assert calls == [[b"XX"], [b"IFEQ", b"1"], [b"EX", b"0"]]
    finally:
        _writes.bind_set(strings._set_general)
    start = server.clock.now_ms() - 10
    assert [e for _, e in server.effects][:3] == [
        [b"SET", b"k", b"1", b"PXAT", b"%d" % (start + 100_000)],
        [b"SET", b"k", b"2", b"PXAT", b"%d" % (start + 5000)],
        [b"SET", b"k", b"3", b"KEEPTTL", b"XX"]]  # as sent: nothing to rewrite
