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


def test_table_max_keys_evicts_the_longest_tracked_and_counts_items():
    state, dispatcher = _setup()
    state.config.set("tracking-table-max-keys", "4")
    a, b = state.new_client(None), state.new_client(None)
    for client in (a, b):
        dispatcher.execute(client, [b"CLIENT", b"TRACKING", b"on"])
    dispatcher.execute(a, [b"MGET", b"k1", b"k2", b"k3"])
    dispatcher.execute(b, [b"MGET", b"k2", b"k3"])
    assert state.tracking.total_items == 5
    dispatcher.execute(a, [b"SET", b"k1", b"x"])  # k1 leaves by a change (its 1 item too)
    assert state.tracking.total_items == 4
    dispatcher.execute(b, [b"MGET", b"k4", b"k5", b"k6"])  # 5 keys: k2 (tracked longest) goes
    assert list(state.tracking.table) == [b"k3", b"k4", b"k5", b"k6"]
    assert state.tracking.total_items == 5  # k3 by both, k4..k6 by b
    info = dispatcher.execute(a, [b"INFO", b"stats"]).text
    assert b"tracking_total_keys:4\r\ntracking_total_items:5\r\ntracking_total_prefixes:0" in info
    state.config.set("tracking-table-max-keys", "2")  # applies at once
    assert list(state.tracking.table) == [b"k5", b"k6"]
    state.config.set("tracking-table-max-keys", "0")
    dispatcher.execute(a, [b"MGET", *(b"n%d" % i for i in range(10))])
    assert len(state.tracking.table) == 12


def test_table_max_keys_effort_grows_while_over():
    """Each look evicts at most 100 keys more than the last one that ended over the limit."""
    state, dispatcher = _setup()
    client = state.new_client(None)
    dispatcher.execute(client, [b"CLIENT", b"TRACKING", b"on"])
    dispatcher.execute(client, [b"MGET", *(b"k%d" % i for i in range(400))])
    state.config.values["tracking-table-max-keys"] = 10  # as if set, without its immediate pass
    tracking = state.tracking
    assert not tracking.limit() and len(tracking.table) == 300
    assert not tracking.limit() and len(tracking.table) == 100
    assert tracking.limit() and len(tracking.table) == 10
    assert tracking._over_calls == 0


def test_table_order_is_compacted_as_keys_leave():
    state, dispatcher = _setup()
    client, writer = state.new_client(None), state.new_client(None)
    dispatcher.execute(client, [b"CLIENT", b"TRACKING", b"on"])
    for i in range(1000):
        dispatcher.execute(client, [b"GET", b"k%d" % i])
        dispatcher.execute(writer, [b"SET", b"k%d" % i, b"v"])
    assert not state.tracking.table and len(state.tracking._order) <= 64 + 1
