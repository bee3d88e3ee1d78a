"""redis.call's inline common case and the general path agree.

scripting/engine.py `_make_call` repeats, for an unobserved call, the lines of
`Dispatcher.call` (stats, a failed handler's error, a blocking command's
timeout reply, the effects), and scripting/_calls.pyx compiles that closure.
The same scripts run through the compiled case, the closure, and with the
common case off (engine.FAST_CALLS): replies, the effects the AOF and replicas get, the
command statistics, the error counters and the data must be identical.
"""

from __future__ import annotations

import random

import pytest

from rillet.clock import ManualClock
from rillet.commands.table import COMMANDS, unique_subcommands
from rillet.config import Config
from rillet.dispatch import Dispatcher
from rillet.scripting import engine
from rillet.state import ServerState
from tests.helpers.effects import recorder

SCRIPTS = [
    (b"redis.call('INCR', KEYS[1]); local v = redis.call('GET', KEYS[1]); "
     b"return redis.call('SET', KEYS[1] .. ':copy', v)", [b"1", b"n"]),
    (b"return redis.call('SET', KEYS[1], 'abc')", [b"1", b"s"]),
    (b"return redis.pcall('INCR', KEYS[1])", [b"1", b"s"]),  # not an integer: error table
    (b"return redis.call('INCR', KEYS[1])", [b"1", b"s"]),  # raised into the script
    (b"redis.call('SET', KEYS[1], 'x'); return redis.call('LPUSH', KEYS[1], 'y')", [b"1", b"w"]),
    (b"return redis.pcall('LPUSH', KEYS[1], 'y')", [b"1", b"w"]),  # WRONGTYPE
    (b"return redis.call('BLPOP', KEYS[1], 0)", [b"1", b"empty"]),  # times out at once
    (b"redis.call('RPUSH', KEYS[1], 'a', 'b'); return redis.call('BLPOP', KEYS[1], 0)", [b"1", b"l"]),
    (b"return redis.call('INCRBYFLOAT', KEYS[1], '1.5')", [b"1", b"f"]),  # propagated as SET
    (b"redis.call('SET', KEYS[1], 'v', 'EX', '100'); return redis.call('TTL', KEYS[1])", [b"1", b"t"]),
    (b"return redis.call('SPOP', KEYS[1])", [b"1", b"set"]),  # propagated as SREM
    (b"return {redis.call('SADD', KEYS[1], 'a', 'b', 'c'), redis.call('SCARD', KEYS[1])}", [b"1", b"set"]),
    (b"return redis.call('XADD', KEYS[1], '*', 'f', 'v')", [b"1", b"st"]),
    (b"return redis.call('SET', KEYS[1], ARGV[1], 'GET')", [b"1", b"g", b"new"]),
    (b"redis.call('SET', KEYS[1], '1'); redis.call('DEL', KEYS[1]); return redis.call('EXISTS', KEYS[1])",
     [b"1", b"d"]),
    (b"return redis.call('GET', KEYS[1], 'extra')", [b"1", b"g"]),  # wrong arity
    (b"return redis.call('set', KEYS[1], 'lower')", [b"1", b"lc"]),  # not the exact name
    (b"return redis.call('SET', KEYS[1], 7)", [b"1", b"num"]),  # a number argument
    (b"redis.set_repl(redis.REPL_NONE); redis.call('SET', KEYS[1], 'a'); "
     b"redis.set_repl(redis.REPL_ALL); return redis.call('SET', KEYS[1], 'b')", [b"1", b"r"]),
    (b"#!lua flags=no-writes\nreturn redis.pcall('SET', KEYS[1], 'x')", [b"1", b"ro"]),
    (b"return redis.call('PING')", [b"0"]),
    (b"return redis.call('MSET', 'a', '1', 'b')", [b"0"]),  # MSET's own arity error
]


def _generated(count: int) -> list[tuple[bytes, list[bytes]]]:
    """Scripts of 1 to 4 random calls: commands of each reply shape, through call or
    pcall, with string, number, boolean or table arguments, returning one of them."""
    rng = random.Random(1414)
    commands = [("GET", 1, "s"), ("SET", 2, "s"), ("INCR", 1, "n"), ("INCRBYFLOAT", 2, "n"),
                ("SADD", 2, "t"), ("SMEMBERS", 1, "t"), ("HSET", 3, "h"), ("HGETALL", 1, "h"),
                ("LPUSH", 2, "l"), ("LRANGE", 3, "l"), ("TYPE", 1, "s"), ("PING", 0, ""),
                ("EXISTS", 1, "s"), ("DEL", 1, "s"), ("XADD", 4, "x"), ("ZADD", 3, "z"),
                ("ZRANGE", 4, "z"), ("SET", 3, "s"), ("INCR", 1, "s")]
    values = ["'a'", "'7'", "7", "1.5", "-3", "'0'", "ARGV[1]", "''", "'1'", "true", "{}"]
    scripts = []
    for _ in range(count):
        lines = []
        for i in range(rng.randint(1, 4)):
            name, nargs, kind = rng.choice(commands)
            args = [f"KEYS[{rng.randint(1, 2)}] .. ':{kind}'"] if nargs else []
            args += [rng.choice(values[:-2] if rng.random() < 0.9 else values) for _ in range(nargs - 1)]
            if name == "XADD":
                args[1:2] = ["'*'"]
            fn = rng.choice(["call", "pcall", "pcall"])
            lines.append(f"local r{i} = redis.{fn}('{name}'{''.join(', ' + a for a in args)})")
        pick = rng.randrange(len(lines))
        lines.append(f"return r{pick}")
        scripts.append(("; ".join(lines).encode(), [b"2", b"g1", b"g2", b"arg"]))
    return scripts


def _run() -> tuple:
    random.seed(14)  # SPOP
    for spec in COMMANDS.values():
        for each in (spec, *unique_subcommands(spec)):
            each.calls = each.usec = each.rejected_calls = each.failed_calls = 0
    state = ServerState(Config(), ManualClock())
    dispatcher = Dispatcher(state)
    effects: list = []
    state.effect_sinks.append(recorder(effects))
    client = state.new_client(None)
    replies = []
    scripts = SCRIPTS + _generated(40)
    shas = [dispatcher.execute(client, [b"SCRIPT", b"LOAD", body]) for body, _ in scripts]
    for _ in range(20):  # enough calls of each command for the timed ones (1 in 16) to occur
        for (body, rest), sha in zip(scripts, shas, strict=True):
            replies.append(dispatcher.execute(client, [b"EVAL", body, *rest]))
            replies.append(dispatcher.execute(client, [b"EVALSHA", sha, *rest]))
            state.clock.advance(1)
    stats = {}
    for spec in COMMANDS.values():
        for each in (spec, *unique_subcommands(spec)):
            if each.calls or each.failed_calls or each.rejected_calls:
                stats[each.name] = (each.calls, each.failed_calls, each.rejected_calls)
    data = {key: dispatcher.execute(client, [b"DUMP", key]) for key in state.keyspace.dbs[0].data}
    return ([repr(r) for r in replies], effects, stats, dict(state.stats.errors),
            state.stats.total_error_replies, state.dirty, data)


def test_inline_calls_agree_with_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _run()  # scripting/_calls.pyx when built
    monkeypatch.setattr(engine, "_ScriptCall", None)
    closure = _run()  # the Python closure
    monkeypatch.setattr(engine, "FAST_CALLS", False)
    general = _run()
    for run in (fast, closure):
        assert run[0] == general[0]
        assert run[1] == general[1]
        assert run[2:] == general[2:]
    assert any(b"SREM" in argv for _, argv in fast[1]) and fast[3]  # the cases ran
