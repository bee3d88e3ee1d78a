"""CLIENT TRACKING's bookkeeping without a network: a client that leaves takes its
BCAST prefixes and its count with it, RESET turns tracking off, and a tracking
client is off the compiled fast path (gated) only while tracking."""

from __future__ import annotations

from rillet.clock import ManualClock
from rillet.config import Config
from rillet.dispatch import Dispatcher
from rillet.state import ServerState


def _setup():
    state = ServerState(Config(), ManualClock())
    return state, Dispatcher(state)


def test_leaving_client_takes_its_tracking_state():
    state, dispatcher = _setup()
    client = state.new_client(None)
    assert not client.gated
    assert dispatcher.execute(client, [b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"a:",
                                       b"PREFIX", b"b:"]) == b"OK"
    assert client.gated and state.tracking.clients == 1
    assert sorted(state.tracking.prefixes) == [b"a:", b"b:"]
    state.remove_client(client)
    assert state.tracking.clients == 0 and state.tracking.prefixes == {}


def test_reset_turns_tracking_off_and_ungates():
    state, dispatcher = _setup()
    client = state.new_client(None)
    dispatcher.execute(client, [b"CLIENT", b"TRACKING", b"on"])
    dispatcher.execute(client, [b"GET", b"k"])
    assert state.tracking.table == {b"k": {client.id: None}}
    dispatcher.execute(client, [b"RESET"])
    assert client.tracking is None and not client.gated and state.tracking.clients == 0
    # The table entry is dropped lazily, on the key's next change, and nothing is sent.
    other = state.new_client(None)
    dispatcher.execute(other, [b"CLIENT", b"TRACKING", b"on"])
    dispatcher.execute(other, [b"SET", b"k", b"v"])
    assert b"k" not in state.tracking.table


def test_write_commands_are_not_tracked():
    state, dispatcher = _setup()
    client = state.new_client(None)
    dispatcher.execute(client, [b"CLIENT", b"TRACKING", b"on"])
    dispatcher.execute(client, [b"SET", b"w", b"1"])
    dispatcher.execute(client, [b"EXISTS", b"r1", b"r2"])
    assert sorted(state.tracking.table) == [b"r1", b"r2"]
