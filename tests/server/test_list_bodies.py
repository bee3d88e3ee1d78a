"""The compiled list bodies (commands/_lists.pyx) equal the Python ones.

Generated command sequences (pushes large enough to seal chunks and change the
encoding, pops that empty keys and reopen chunks, wrong types, keys with a TTL,
keyspace events switched on, a WATCHing client, several list-max-listpack-size
values) run on two servers: one answering with the table's handlers (compiled
when built), the other with commands/lists.py's Python bodies. Replies,
effects, keyspace events, WATCH state and the lists' layout (open ends, chunks,
listpack byte count, encoding) must be the same.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rillet.clock import ManualClock
from rillet.commands import lists
from rillet.dispatch import Dispatcher
from rillet.resp.encoder import encode_into
from rillet.state import ServerState
from tests.helpers.bodies import bodies, expire_own, other_ttls
from tests.helpers.effects import recorder

PYTHON = {"lpush": lists.lpush, "rpush": lists.rpush, "lpushx": lists.lpushx,
          "rpushx": lists.rpushx, "lpop": lists.lpop, "rpop": lists.rpop}


def python_bodies():
    return bodies(PYTHON)


class Server:
    def __init__(self, max_size: int) -> None:
        self.clock = ManualClock()
        self.state = ServerState(clock=self.clock)
        self.state.config.set("list-max-listpack-size", str(max_size))
        self.effects: list = []
        self.events: list = []
        self.state.effect_sinks.append(recorder(self.effects))
        publish = self.state.pubsub.publish

        def record(channel: bytes, message: bytes, shard: bool = False) -> int:
            self.events.append((channel, message))
            return publish(channel, message, shard)

        self.state.pubsub.publish = record
        self.dispatcher = Dispatcher(self.state)
        self.client = self.state.new_client(None)
        self.watcher = self.state.new_client(None)

    def run(self, argv: list[bytes], client=None) -> bytes:
        out = bytearray()
        encode_into(out, self.dispatcher.execute(client or self.client, argv), False)
        return bytes(out)


keys = st.sampled_from([b"l", b"l", b"l", b"m", b"m", b"str"])
elements = st.one_of(st.sampled_from([b"", b"x", b"7", b"-12", b"007", b"x" * 80]),
                     st.binary(max_size=6))
push = st.builds(lambda name, k, vs: [name, k, *vs],
                 st.sampled_from([b"LPUSH", b"RPUSH", b"lpush", b"rpush", b"LPUSHX", b"RPUSHX"]),
                 keys, st.one_of(st.lists(elements, min_size=1, max_size=4),
                                 st.lists(elements, min_size=100, max_size=300)))
pop = st.builds(lambda name, k, count: [name, k, *count],
                st.sampled_from([b"LPOP", b"RPOP", b"lpop"]), keys,
                st.sampled_from([[], [], [], [b"3"], [b"0"], [b"200"], [b"-1"]]))
others = st.sampled_from([
    [b"SET", b"str", b"v"], [b"DEL", b"l"], [b"EXPIRE", b"m", b"100"], [b"PERSIST", b"m"],
    [b"LTRIM", b"l", b"5", b"-5"], [b"LSET", b"l", b"0", b"z"], [b"LINSERT", b"l", b"AFTER", b"x", b"y"],
    [b"LREM", b"l", b"0", b"x"], [b"CONFIG", b"SET", b"notify-keyspace-events", b"KEA"],
    [b"CONFIG", b"SET", b"notify-keyspace-events", b""], [b"LMOVE", b"l", b"m", b"LEFT", b"RIGHT"],
])
watch = st.just("watch")
tick = st.just("tick")  # 5 ms on both clocks: a short TTL on l or m falls due
# Each sequence starts with a push on `l`, so that the pops find something.
steps = st.builds(lambda first, rest: [first, *rest],
                  st.builds(lambda vs: [b"RPUSH", b"l", *vs], st.lists(elements, min_size=1, max_size=9)),
                  st.lists(st.one_of(push, pop, pop, pop, others, watch, tick,
                                     expire_own(st.sampled_from([b"l", b"m"]))), min_size=4, max_size=40))


def _layout(server: Server, key: bytes) -> object:
    value = server.state.keyspace[0].data.get(key)
    if value is None or not hasattr(value, "chunks"):
        return value
    return (value.head, list(value.chunks), value.tail, value.mid, value.nbytes, value.big)


def _observe(server: Server) -> list[object]:
    seen: list[object] = []
    for key in (b"l", b"m"):
        seen += [server.run([b"LRANGE", key, b"0", b"-1"]), server.run([b"OBJECT", b"ENCODING", key]),
                 _layout(server, key), server.run([b"PTTL", key])]
    return seen + [server.run([b"DBSIZE"]), server.state.dirty, server.effects, server.events]


_MANY = [b"e%d" % i for i in range(300)]


@settings(max_examples=150, deadline=None)
@given(steps, st.sampled_from([-2, -1, 4, 100]), st.booleans())
# An empty open end reopens a chunk (each side), and a pop empties a key with events on.
@example([[b"RPUSH", b"l", *_MANY], [b"LPOP", b"l"], [b"RPOP", b"l"], [b"LPOP", b"l"]], -2, False)
@example([[b"LPUSH", b"l", *_MANY], [b"RPOP", b"l"], [b"LPOP", b"l"], [b"RPOP", b"l"]], 100, False)
@example([[b"CONFIG", b"SET", b"notify-keyspace-events", b"KEA"], [b"RPUSH", b"m", b"a"],
          "watch", [b"RPOP", b"m"], [b"LPUSH", b"m", b"b"], [b"LPOP", b"m"]], -2, False)
# Its own key with a TTL (kept by pushes and pops), then due (expired, not pushed onto).
@example([[b"RPUSH", b"l", b"a", b"b"], [b"PEXPIRE", b"l", b"30"], [b"LPUSH", b"l", b"c"], [b"RPOP", b"l"],
          "tick", [b"LPUSH", b"l", b"d"], "watch", [b"PEXPIRE", b"l", b"1"], "tick", [b"LPOP", b"l"]], 4, True)
def test_compiled_list_bodies_equal_python_ones(commands, max_size, ttls):
    """With TTLs on other keys (`ttls`) and on l and m themselves, due or not."""
    fast, slow = Server(max_size), Server(max_size)
    if ttls:
        for server in (fast, slow):
            other_ttls(server)
    for argv in commands:
        if argv == "tick":
            for server in (fast, slow):
                server.clock.advance(5)
            continue
        if argv == "watch":
            for server in (fast, slow):
                server.run([b"UNWATCH"], server.watcher)
                server.run([b"WATCH", b"l", b"m"], server.watcher)
            continue
        ours = fast.run(argv)
        with python_bodies():
            theirs = slow.run(argv)
        assert ours == theirs, argv
        assert fast.watcher.dirty_cas == slow.watcher.dirty_cas, argv
        assert _layout(fast, b"l") == _layout(slow, b"l"), argv
    observed = _observe(fast)
    with python_bodies():
        assert observed == _observe(slow)


def test_compiled_element_size_is_listpacks():
    """The compiled listpack element size (commands/_lists.pyx) equals element_size."""
    import pytest

    from rillet.compiled import compiled as compiled_module
    from rillet.engine.listpack_size import element_size

    compiled = compiled_module("rillet.commands._lists") or pytest.skip("the compiled bodies are not in use")
    for value in [b"", b"0", b"-0", b"007", b"127", b"128", b"-4096", b"4095", b"-32769",
                  b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
                  b"-9223372036854775809", b"12345678901234567890", b"1e3", b"+5", b" 5", b"-",
                  b"x" * 63, b"x" * 64, b"x" * 4095, b"x" * 4096]:
        assert compiled.element_size(value) == element_size(value), value
