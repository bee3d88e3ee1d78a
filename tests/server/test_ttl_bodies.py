"""The compiled bodies with TTLs in the keyspace (commands/_bodies.pxi `_plain_for`).

Each compiled body (XADD, XREADGROUP, XACK, HSET, SADD, LPUSH, RPOP, ZADD, SET,
GET, INCR) runs on a key in the shape it compiles, in a database where other
keys hold TTLs: with its own key holding no TTL or one not yet due, it stays
compiled (its Python body, which looks the key up through Database.get, is not
called) and keeps the TTL as the Python body does; with its own key due,
the Python body expires it first. Either way the reply, the effects (a lazily
expired key's DEL), keyspace events (`expired`), stats, WATCH and the key's
TTL equal the Python bodies' (the reference, run on a twin server).
"""

from __future__ import annotations

import sys

import pytest

from rillet.commands import groups, hashes, lists, sets, streams, strings, zsets
from rillet.commands.table import COMMANDS
from rillet.compiled import compiled
from tests.helpers.bodies import Server, Twins

_writes = compiled("rillet.commands._writes") or pytest.skip("the compiled bodies are not in use", allow_module_level=True)
if COMMANDS["xadd"].handler is not _writes.xadd:  # RILLET_PURE: the table holds the Python
    pytest.skip("the compiled bodies are not in use", allow_module_level=True)

SMALL = {"hash-max-listpack-entries": "1", "set-max-listpack-entries": "1",
         "set-max-intset-entries": "1"}  # HSET and SADD compile the big encodings only
STREAM = [[b"XADD", b"k", b"1-1", b"f", b"v"], [b"XADD", b"k", b"2-1", b"f", b"v"],
          [b"XADD", b"k", b"3-1", b"f", b"v"], [b"XGROUP", b"CREATE", b"k", b"g", b"0"],
          [b"XGROUP", b"CREATECONSUMER", b"k", b"g", b"c"],
          [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", b"k", b">"]]
# name: (the Python body, the commands that make key `k`, the command under test)
CASES = {
    "xadd": (streams._xadd_general, STREAM[:1], [b"XADD", b"k", b"*", b"f", b"v"]),
    "xreadgroup": (groups.xreadgroup, STREAM,
                   [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", b"k", b">"]),
    "xack": (groups.xack, STREAM, [b"XACK", b"k", b"g", b"1-1"]),
    "hset": (hashes.hset, [[b"HSET", b"k", b"a", b"1", b"b", b"2"]], [b"HSET", b"k", b"c", b"3"]),
    "sadd": (sets.sadd, [[b"SADD", b"k", b"a", b"b"]], [b"SADD", b"k", b"c"]),
    "lpush": (lists.lpush, [[b"RPUSH", b"k", b"a"]], [b"LPUSH", b"k", b"b"]),
    "rpop": (lists.rpop, [[b"RPUSH", b"k", b"a", b"b"]], [b"RPOP", b"k"]),
    "zadd": (zsets.zadd, [[b"ZADD", b"k", b"1", b"a"]], [b"ZADD", b"k", b"2", b"b"]),
    "set": (strings.set_, [[b"SET", b"k", b"v"]], [b"SET", b"k", b"w"]),
    "set xx get": (strings.set_, [[b"SET", b"k", b"v"]], [b"SET", b"k", b"w", b"XX", b"GET"]),
    "get": (strings.get, [[b"SET", b"k", b"v"]], [b"GET", b"k"]),
    "incr": (strings.incr, [[b"SET", b"k", b"1"]], [b"INCR", b"k"]),
}


def _twins(name: str, ttl_ms: int | None, watch: bool) -> tuple[Twins, list[bytes]]:
    body, setup, argv = CASES[name]
    twins = Twins({argv[0].decode().lower(): body}, sinks=True, events=True, config=SMALL, ttls=True)
    for command in setup:
        twins.run(command)
    if ttl_ms is not None:
        twins.run([b"PEXPIRE", b"k", b"%d" % ttl_ms])
    for server in (twins.fast, twins.reference):
        server.watcher = server.state.new_client(None)
        if watch:
            server.run([b"WATCH", b"k"], server.watcher)
    return twins, argv


def _observe(server: Server) -> list[object]:
    stats = server.state.stats
    return [server.run([b"PTTL", b"k"]), server.run([b"TYPE", b"k"]), server.run([b"DBSIZE"]),
            server.state.dirty, server.watcher.dirty_cas,
            (stats.expired_keys, stats.keyspace_hits, stats.keyspace_misses)]


class _BodyCalls:
    """Counts calls of a Python body (a profile hook: Database is an extension type,
    its methods cannot be wrapped), on either server."""

    def __init__(self, body) -> None:
        self.code = getattr(body, "__wrapped__", body).__code__
        self.count = 0

    def __enter__(self) -> _BodyCalls:
        def hook(frame, event, arg):
            if event == "call" and frame.f_code is self.code:
                self.count += 1
        self.saved = sys.getprofile()
        sys.setprofile(hook)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(self.saved)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("ttl_ms", [None, 100_000])
def test_ttls_elsewhere_or_not_due_stay_compiled(name, ttl_ms):
    """Other keys' TTLs (some due) and the key's own TTL not yet due: the compiled body
    answers (the Python body, which looks the key up through Database.get, does not
    run), and everything equals the Python body."""
    twins, argv = _twins(name, ttl_ms, watch=True)
    twins.fast.clock.advance(50)  # some of the other keys' TTLs are due now
    twins.reference.clock.advance(50)
    with _BodyCalls(CASES[name][0]) as calls:
        twins.run(argv)
    assert calls.count == 1  # the reference's own run, none from the compiled body
    twins.check(_observe)
    if ttl_ms is not None and name not in ("set", "set xx get"):
        assert twins.fast.run([b"PTTL", b"k"]) == b":99950\r\n"  # kept (SET drops it)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("watch", [False, True])
def test_a_due_key_expires_as_in_python(name, watch):
    """The key's own TTL is due: expired first (DEL effect, `expired` event, stats,
    WATCH), then the command, exactly as the Python body does it."""
    twins, argv = _twins(name, 5, watch)
    twins.run(argv, tick=10)
    twins.check(_observe)
    assert (0, [b"DEL", b"k"]) in twins.fast.effects
    assert twins.fast.state.stats.expired_keys >= 1
