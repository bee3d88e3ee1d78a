"""Holding a command's body (compiled or hand-specialised) to a reference body.

Generated command sequences run on two in-process servers: `Twins.fast` answers
with the table's handlers (the compiled bodies when built), `Twins.reference`
with the reference bodies swapped into the table for each call. Replies,
effects, keyspace events and whatever the test observes afterwards must be the
same. tests/server/test_*_bodies.py use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hypothesis import strategies as st

from rillet.clock import ManualClock
from rillet.commands.table import COMMANDS
from rillet.dispatch import Dispatcher
from rillet.replication.protocol import EffectStream
from rillet.resp.encoder import encode_into
from rillet.state import Block, ServerState
from tests.helpers.effects import recorder

Body = Callable[..., object]

# Clock moves between commands: a key's own short TTL (`expire_own`) falls due.
TICKS = st.sampled_from([0, 0, 0, 1, 5, 40])


def expire_own(keys: st.SearchStrategy[bytes]) -> st.SearchStrategy[list[bytes]]:
    """PEXPIRE on a body's own key: due within a tick or two, or far off."""
    return st.builds(lambda key, ms: [b"PEXPIRE", key, ms], keys,
                     st.sampled_from([b"1", b"30", b"100000"]))


def other_ttls(server) -> None:
    """Other keys holding TTLs (sessions, caches), some falling due as the clock
    moves: the compiled bodies must answer as if they were not there. Through
    `server.run`, so each twin records the same effects."""
    for i in range(8):
        server.run([b"SET", b"ttl:%d" % i, b"v", b"PX", b"%d" % (3 + 20 * i)])
    server.run([b"SET", b"ttl:far", b"v", b"EX", b"100000"])


@contextmanager
def bodies(replacements: dict[str, Body]) -> Iterator[None]:
    """The table answers `name` with `replacements[name]` meanwhile."""
    saved = {name: COMMANDS[name].handler for name in replacements}
    try:
        for name, body in replacements.items():
            COMMANDS[name].handler = body
        yield
    finally:
        for name, handler in saved.items():
            COMMANDS[name].handler = handler


class Server:
    """A ServerState on a manual clock, its effects kept in `effects` (when `sinks`);
    with sinks="stream", in `stream` instead: the replication stream's sink, an
    EffectStream, which the compiled XADD writes into directly."""

    def __init__(self, sinks: bool | str = True) -> None:
        self.clock = ManualClock()
        self.state = ServerState(clock=self.clock)
        self.effects: list = []
        self.stream = EffectStream()
        if sinks == "stream":
            self.state.effect_sinks.append(self.stream)
        elif sinks:
            self.state.effect_sinks.append(recorder(self.effects))
        self.dispatcher = Dispatcher(self.state)
        self.client = self.state.new_client(None)

    def run(self, argv: list[bytes], client=None) -> object:
        """The reply's bytes in the client's protocol, or what a Block asks for (the
        connection would park the client)."""
        client = client or self.client
        reply = self.dispatcher.execute(client, argv)
        if isinstance(reply, Block):
            return ("block", reply.keys, reply.timeout_ms)
        out = bytearray()
        encode_into(out, reply, client.resp3)
        return bytes(out)


def counted(calls: list[list[bytes]]) -> Callable[[Body], Body]:
    """Wraps a body so that each call appends its argv to `calls` (to show which calls
    reached the Python body and which the compiled one kept)."""

    def wrap(body: Body) -> Body:
        def run(ctx, argv):
            calls.append(argv)
            return body(ctx, argv)
        return run

    return wrap


class Twins:
    """Two servers, configured alike: `fast` with the table's handlers, `reference`
    with `reference_bodies`. `config` is set on both; with `events`, keyspace events
    are on and each server's notifications are recorded instead of published; with
    `ttls`, other keys hold TTLs (`other_ttls`)."""

    def __init__(self, reference_bodies: dict[str, Body], sinks: bool | str = True,
                 events: bool = False, config: dict[str, str] | None = None,
                 ttls: bool = False) -> None:
        self.reference_bodies = reference_bodies
        self.fast, self.reference = Server(sinks), Server(sinks)
        self.notes: dict[int, list] = {id(self.fast): [], id(self.reference): []}
        for server in (self.fast, self.reference):
            for name, value in (config or {}).items():
                server.state.config.set(name, value)
            if events:
                server.state.config.set("notify-keyspace-events", "KEA")
                server.state.notify = (lambda *a, _n=self.notes[id(server)]: _n.append(a))
            if ttls:
                other_ttls(server)

    def run(self, argv: list[bytes], tick: int = 0) -> object:
        """One command on both (after moving both clocks by `tick` ms): same reply."""
        if tick:
            for server in (self.fast, self.reference):
                server.clock.advance(tick)
        ours = self.fast.run(argv)
        with bodies(self.reference_bodies):
            theirs = self.reference.run(argv)
        assert ours == theirs, argv
        return ours

    def check(self, observe: Callable[[Server], object]) -> None:
        """Same effects and notifications so far, and the same `observe(server)` (the
        reference observed with its own bodies too)."""
        assert self.fast.effects == self.reference.effects
        assert self.fast.stream.take() == self.reference.stream.take()
        assert self.notes[id(self.fast)] == self.notes[id(self.reference)]
        ours = observe(self.fast)
        with bodies(self.reference_bodies):
            theirs = observe(self.reference)
        assert ours == theirs
