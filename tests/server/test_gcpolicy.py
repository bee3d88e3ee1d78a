"""The collector policy (rillet/gcpolicy.py): what it freezes, its sweep, and the cycles it relies
on being cut (a closed connection must not need the collector: frozen, it never would get it)."""

from __future__ import annotations

import gc

from rillet import gcpolicy
from rillet.server.connection import ClientConnection
from rillet.server.server import Server
from tests.helpers.transport import FakeTransport
from tests.helpers.wire import encode_command as cmd


def _alive(kind: type) -> int:
    return sum(1 for obj in gc.get_objects() if type(obj) is kind)


def test_a_closed_connection_is_freed_by_reference_counting(no_collector):
    server = Server()
    before = _alive(ClientConnection)
    for _ in range(3):
        transport = FakeTransport()
        conn = ClientConnection(server)
        transport.protocol = conn
        conn.connection_made(transport)  # type: ignore[arg-type]
        conn.data_received(cmd("SET", "k", "v") + cmd("GET", "k") + cmd("NOSUCH")
                           + cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"))
        assert transport.writes
        conn.connection_lost(None)
        del conn, transport
    # With the collector off, a connection still caught in a cycle would be listed here.
    assert _alive(ClientConnection) == before


def test_cron_freezes_at_its_interval(no_collector):
    values = {"gc-freeze-interval": 1000, "gc-sweep-growth": 0}
    cron = gcpolicy.GcCron(values.__getitem__)
    cron.tick(10.0)
    frozen = gc.get_freeze_count()
    assert frozen > 0
    kept = [[i] for i in range(1000)]  # new tracked objects: young until the next freeze
    cron.tick(10.5)
    assert gc.get_freeze_count() == frozen
    cron.tick(11.0)
    assert gc.get_freeze_count() >= frozen + len(kept)
    values["gc-freeze-interval"] = 0
    more = [[i] for i in range(1000)]
    cron.tick(20.0)
    assert gc.get_freeze_count() < frozen + len(kept) + len(more)


def test_sweep_collects_cycles_that_died_frozen(no_collector):
    gc.freeze()
    gcpolicy.rebase()
    cycles = []
    for _ in range(gcpolicy.SWEEP_MIN_GROWTH // 2 + 10):
        a: list = []
        a.append(a)
        cycles.append(a)
    # 1%: the floor (SWEEP_MIN_GROWTH) decides, whatever this process's size.
    values = {"gc-freeze-interval": 1, "gc-sweep-growth": 1}
    cron = gcpolicy.GcCron(values.__getitem__)
    assert cron.tick(1.0) is None  # frozen while alive; not enough growth for a sweep yet
    dead = len(cycles)
    assert gc.get_freeze_count() >= dead
    del cycles, a  # now garbage that no young collection can see
    assert gc.collect() == 0
    more = [[i] for i in range(gcpolicy.SWEEP_MIN_GROWTH // 2 + 10)]
    found = cron.tick(2.0)  # grown past the floor: the sweep finds them
    assert found is not None and found >= dead
    assert gc.get_freeze_count() >= len(more)
    assert gcpolicy.sweep() == 0  # nothing left for a second sweep
    assert cron.tick(3.0) is None  # the sweep rebased: no growth since


def test_a_load_rebases_the_sweep(no_collector):
    """Loaded data is frozen as live: it counts in the base the sweep's growth is
    measured against, not as growth."""
    from rillet.persistence.loader import collector_paused

    gc.freeze()
    gcpolicy.rebase()
    before = gcpolicy._baseline.frozen
    with collector_paused():
        loaded = [[i] for i in range(gcpolicy.SWEEP_MIN_GROWTH * 2)]
    assert gcpolicy._baseline.frozen >= before + len(loaded)
    assert gcpolicy._baseline.added == 0
    values = {"gc-freeze-interval": 1, "gc-sweep-growth": 1}
    assert gcpolicy.GcCron(values.__getitem__).tick(1.0) is None


def test_a_collections_survivors_are_frozen_and_its_garbage_freed(no_collector):
    threshold = gc.get_threshold()
    gcpolicy.start()
    try:
        kept = [[i] for i in range(100)]
        cycle: list = []
        cycle.append(cycle)
        del cycle
        before = gc.get_freeze_count()
        assert gc.collect(0) >= 1  # the young cycle: collected, not frozen
        assert gc.get_freeze_count() >= before + len(kept)
        assert gc.get_objects(1) == [] and gc.get_objects(2) == []
    finally:
        gcpolicy.stop()
        gc.set_threshold(*threshold)
