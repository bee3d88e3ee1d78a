"""The compiled HSET and SADD (commands/_hashes.pyx, _sets.pyx) against their Python
bodies, the reference: generated command sequences run through both on two
in-process servers, with low listpack limits so that hashes and sets change
encoding under them; replies, effects, keyspace events, dirty counts and the
values (content, order, encoding) must be the same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands import hashes, sets
from rillet.commands.table import COMMANDS
from rillet.compiled import compiled
from tests.helpers.bodies import TICKS, Server, Twins, counted, expire_own

_hashes = compiled("rillet.commands._hashes") or pytest.skip("the compiled bodies are not in use", allow_module_level=True)
if COMMANDS["hset"].handler is not _hashes.hset:  # RILLET_PURE: the table holds the Python
    pytest.skip("the compiled bodies are not in use", allow_module_level=True)

keys = st.sampled_from([b"h", b"s", b"str"])
names = st.sampled_from([b"a", b"b", b"1", b"2", b"-3", b"10", b"x" * 70, b""])
hset = st.builds(lambda k, pairs: [b"HSET", k, *[x for p in pairs for x in p]],
                 keys, st.lists(st.tuples(names, names), min_size=1, max_size=6))
hset_odd = st.builds(lambda k, n: [b"HSET", k, *n], keys, st.lists(names, min_size=1, max_size=3))
sadd = st.builds(lambda k, m: [b"SADD", k, *m], keys, st.lists(names, min_size=1, max_size=6))
others = st.sampled_from([
    [b"SET", b"str", b"v"], [b"DEL", b"h"], [b"DEL", b"s"], [b"HDEL", b"h", b"a"],
    [b"SREM", b"s", b"a", b"1"], [b"HPEXPIRE", b"h", b"100000", b"FIELDS", b"1", b"b"],
    [b"HPERSIST", b"h", b"FIELDS", b"1", b"b"], [b"EXPIRE", b"s", b"100"], [b"PERSIST", b"s"],
    [b"SPOP", b"s", b"0"], [b"HSETNX", b"h", b"new", b"v"],
])
steps = st.lists(st.tuples(st.one_of(hset, hset, hset_odd, sadd, sadd, others,
                                     expire_own(st.sampled_from([b"h", b"s"]))), TICKS),
                 max_size=40)
REFERENCE = {"hset": hashes.hset, "sadd": sets.sadd}


def _observe(server: Server) -> list[object]:
    out: list[object] = [server.state.dirty, server.run([b"DBSIZE"])]
    for key in (b"h", b"s"):
        out += [server.run([b"OBJECT", b"ENCODING", key]), server.run([b"TTL", key])]
        value = server.state.keyspace[0].data.get(key)
        if value is not None:
            out.append(list(getattr(value, "fields", None) or getattr(value, "members", {}).keys()))
    return out


@settings(max_examples=150, deadline=None)
@given(steps, st.sampled_from([1, 3, 128]), st.sampled_from([4, 64]), st.booleans(), st.booleans(),
       st.booleans())
def test_compiled_hset_and_sadd_equal_the_reference(commands, entries, value, sinks, events, ttls):
    """With TTLs on other keys (`ttls`) and on h and s themselves, due or not."""
    limits = {name: str(entries) for name in ("hash-max-listpack-entries",
                                              "set-max-listpack-entries", "set-max-intset-entries")}
    limits |= {name: str(value) for name in ("hash-max-listpack-value", "set-max-listpack-value")}
    twins = Twins(REFERENCE, sinks, events, limits, ttls)
    for argv, tick in commands:
        twins.run(argv, tick)
    twins.check(_observe)


def test_the_compiled_bodies_take_the_big_encodings():
    """The generated test reaches the compiled work, not only its fallbacks: on a big
    hash or set the Python body (counted here) is not called."""
    from rillet.commands import _hashes, _sets

    calls: list[list[bytes]] = []
    server = Server()
    for name in ("hash-max-listpack-entries", "set-max-listpack-entries", "set-max-intset-entries"):
        server.state.config.set(name, "1")
    _hashes.bind(counted(calls)(hashes.hset))
    _sets.bind(counted(calls)(sets.sadd))
    try:
        server.run([b"HSET", b"h", b"a", b"1", b"b", b"2"])  # new key: Python
        server.run([b"SADD", b"s", b"a", b"b"])
        assert [argv[0] for argv in calls] == [b"HSET", b"SADD"]
        assert server.run([b"HSET", b"h", b"c", b"3", b"a", b"9"]) == b":1\r\n"
        assert server.run([b"SADD", b"s", b"c", b"a", b"c"]) == b":1\r\n"
        assert [argv[0] for argv in calls] == [b"HSET", b"SADD"]
    finally:
        _hashes.bind(hashes.hset)
        _sets.bind(sets.sadd)
    data = server.state.keyspace[0].data
    assert data[b"h"].fields == {b"a": b"9", b"b": b"2", b"c": b"3"}
    assert list(data[b"s"].members) == [b"a", b"b", b"c"]
