"""maxmemory in process, with a manual clock: the gate, eviction's effects and choices,
the LRU/LFU field, and the accounting kept in step with the keyspace.

The differential tests against Redis are in tests/compat/test_maxmemory.py.
"""

from __future__ import annotations

import random

from rillet import errors
from rillet.clock import ManualClock
from rillet.config import Config
from rillet.dispatch import Dispatcher
from rillet.engine.eviction import LFU_INIT_VAL, LfuParams, lfu_decayed, lfu_touch
from rillet.memory import STARTUP_BYTES
from rillet.notify import EVICTED, KEYEVENT
from rillet.state import ServerState
from tests.helpers.effects import recorder


def _setup():
    clock = ManualClock()
    state = ServerState(Config(), clock)
    dispatcher = Dispatcher(state)
    effects: list = []
    state.effect_sinks.append(recorder(effects))
    return state, dispatcher, state.new_client(None), effects, clock


def _run(dispatcher, client, *args):
    argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return dispatcher.execute(client, argv)


def test_a_limit_does_not_gate_clients_and_is_checked_on_denyoom_commands():
    state, dispatcher, client, _, _ = _setup()
    _run(dispatcher, client, "SET", "k", "v")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", "1")
    assert not client.gated and not state.gated  # the compiled fast path stays in use
    assert _run(dispatcher, client, "SET", "k", "v2").message == errors.OOM
    assert _run(dispatcher, client, "GET", "k") == b"v"
    assert _run(dispatcher, client, "EVAL", "#!lua\nreturn 1", "0").message == errors.OOM
    assert _run(dispatcher, client, "EVAL", "return 1", "0") == 1
    _run(dispatcher, client, "MULTI")  # a gated client: every command is checked
    assert _run(dispatcher, client, "SET", "k", "v3").message == errors.OOM


def test_a_configured_limit_applies_from_the_start():
    config = Config()
    config.set("maxmemory", "1")
    state = ServerState(config, ManualClock())
    dispatcher = Dispatcher(state)
    client = state.new_client(None)
    assert _run(dispatcher, client, "SET", "k", "v").message == errors.OOM


def test_accounting_follows_writes_and_deletes():
    state, dispatcher, client, _, _ = _setup()
    memory = state.memory
    assert memory.used() == STARTUP_BYTES
    _run(dispatcher, client, "SET", "k", "x" * 1000)
    one = memory.used() - STARTUP_BYTES
    assert 1000 < one < 1600
    for _ in range(100):
        _run(dispatcher, client, "XADD", "s", "*", "f", "v" * 500)
    with_stream = memory.used() - STARTUP_BYTES
    assert 100 * 500 < with_stream - one < 100 * 900
    _run(dispatcher, client, "DEL", "s")
    assert memory.used() - STARTUP_BYTES == one
    _run(dispatcher, client, "RENAME", "k", "k2")
    assert memory.used() - STARTUP_BYTES == one + 1  # the key is one byte longer
    _run(dispatcher, client, "FLUSHALL")
    assert memory.used() == STARTUP_BYTES
    # A key written in another db, and SWAPDB moving it.
    _run(dispatcher, client, "SELECT", "3")
    _run(dispatcher, client, "HSET", "h", "f", "v")
    assert state.keyspace[3].measure() > 0
    _run(dispatcher, client, "SWAPDB", "3", "4")
    assert state.keyspace[3].measure() == 0 and state.keyspace[4].measure() > 0
    assert state.keyspace[4].remeasure() == state.keyspace[4].used


def test_eviction_is_a_del_effect_with_its_event_and_stat():
    state, dispatcher, client, effects, _ = _setup()
    subscriber = state.new_client(None)
    published = []
    state.pubsub.publish = lambda channel, message: published.append((channel, message))  # type: ignore[method-assign]
    for i in range(20):
        _run(dispatcher, client, "SET", f"k{i}", "x" * 1000)
    _run(dispatcher, client, "CONFIG", "SET", "notify-keyspace-events", "Ee")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    limit = state.memory.used() - 5000
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", limit)
    effects.clear()
    assert _run(dispatcher, subscriber, "PING").__class__.__name__ == "SimpleString"
    assert not effects  # a command that cannot grow memory does not evict (the cron does)
    state.memory.cron()
    dels = [argv for _, argv in effects if argv[0] == b"DEL"]
    assert 4 <= len(dels) <= 6
    assert state.stats.evicted_keys == len(dels)
    assert len(state.keyspace[0]) == 20 - len(dels)
    assert published == [(b"__keyevent@0__:evicted", argv[1]) for argv in dels]
    assert state.memory.used() <= limit
    assert state.config["notify-keyspace-events"] & (EVICTED | KEYEVENT)  # type: ignore[operator]


def test_lru_evicts_the_least_recently_used():
    random.seed(7)
    state, dispatcher, client, effects, clock = _setup()
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-samples", "64")
    for i in range(20):
        _run(dispatcher, client, "SET", f"k{i}", "x" * 1000)
    clock.advance(10_000)
    state.memory.tick()
    for i in range(10, 20):
        _run(dispatcher, client, "GET", f"k{i}")  # the second half is recent
    assert _run(dispatcher, client, "OBJECT", "IDLETIME", "k0") == 10
    assert _run(dispatcher, client, "OBJECT", "IDLETIME", "k15") == 0
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", state.memory.used() - 8000)
    effects.clear()
    state.memory.cron()
    evicted = {argv[1] for _, argv in effects if argv[0] == b"DEL"}
    assert evicted and all(int(key[1:]) < 10 for key in evicted), evicted


def test_volatile_ttl_evicts_the_soonest_to_expire():
    random.seed(3)
    state, dispatcher, client, effects, _ = _setup()
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-samples", "64")
    for i in range(20):
        _run(dispatcher, client, "SET", f"k{i}", "x" * 1000, "PX", 100_000 + 1000 * i)
    _run(dispatcher, client, "SET", "forever", "x" * 1000)
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", state.memory.used() - 3000)
    effects.clear()
    state.memory.cron()
    evicted = [argv[1] for _, argv in effects if argv[0] == b"DEL"]
    assert evicted == [b"k0", b"k1", b"k2"][:len(evicted)] and evicted


def test_lfu_counter_follows_redis():
    params = LfuParams(log_factor=10, decay_time=1)
    params.minutes = 100
    field = (100 << 8) | LFU_INIT_VAL
    assert lfu_decayed(field, params) == LFU_INIT_VAL
    assert lfu_touch(field, params) & 255 == LFU_INIT_VAL + 1  # p = 1 at the initial value
    params.minutes = 103
    assert lfu_decayed(field, params) == LFU_INIT_VAL - 3  # one less per decay period
    params.decay_time = 0
    assert lfu_decayed(field, params) == LFU_INIT_VAL
    random.seed(1)
    params.decay_time = 1
    counter = field
    for _ in range(10_000):
        counter = lfu_touch(counter, params)
    assert 20 < counter & 255 < 60  # logarithmic: 10k hits at factor 10 land near 40


def test_lfu_policy_evicts_the_least_frequently_used():
    random.seed(11)
    state, dispatcher, client, effects, _ = _setup()
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-samples", "64")
    for i in range(20):
        _run(dispatcher, client, "SET", f"k{i}", "x" * 1000)
    for _ in range(30):
        for i in range(10, 20):
            _run(dispatcher, client, "GET", f"k{i}")
    assert _run(dispatcher, client, "OBJECT", "FREQ", "k0") == LFU_INIT_VAL
    assert _run(dispatcher, client, "OBJECT", "FREQ", "k15") > LFU_INIT_VAL
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", state.memory.used() - 8000)
    effects.clear()
    state.memory.cron()
    evicted = {argv[1] for _, argv in effects if argv[0] == b"DEL"}
    assert evicted and all(int(key[1:]) < 10 for key in evicted), evicted


def test_replica_ignores_maxmemory_and_internal_clients_pass():
    state, dispatcher, client, _, _ = _setup()
    _run(dispatcher, client, "SET", "k", "v")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", "1")
    assert _run(dispatcher, client, "SET", "k", "v").message.startswith("OOM ")
    internal = state.internal_client()
    assert _run(dispatcher, internal, "SET", "k", "v2") == b"OK"  # the AOF and a master's stream


def test_tenacity_budget_hands_over_to_the_cron():
    state, dispatcher, client, _, _ = _setup()
    for i in range(200):
        _run(dispatcher, client, "SET", f"k{i}", "x" * 100)
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-eviction-tenacity", "0")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    _run(dispatcher, client, "CONFIG", "SET", "maxmemory", STARTUP_BYTES + 1000)
    # With no time budget the first 16 keys go, the command runs, the cron carries on.
    assert _run(dispatcher, client, "SET", "new", "v") == b"OK"
    assert state.memory.running
    for _ in range(100):
        state.memory.cron()
        if not state.memory.running:
            break
    assert not state.memory.running and state.memory.used() <= STARTUP_BYTES + 1000
