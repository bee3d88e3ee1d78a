"""The compiled command loop and the pure-Python one agree on generated traffic.

server/_fastpath.pyx repeats the lines of ClientConnection.data_received/_run
and Dispatcher.call for the common case. This test is what keeps the copies
honest: seeded generators build scenarios of several clients sending
pipelines that mix reads, writes (the XADD/SET fast bodies included), errors,
unknown and mixed-case commands, AUTH and NOAUTH, WATCH/MULTI/EXEC/DISCARD,
BLOCKing reads woken by other clients' writes, and RESP2/RESP3 switches.
Each scenario runs in a process with the compiled modules and in one with
RILLET_PURE=1, on a manual clock; every client's reply bytes, the effects the
AOF and replicas would get, the per-command statistics and the error
counters must be identical.

A second test runs every write command in the table, alone and inside
MULTI/EXEC, on both paths: the effects must be the same each way (inside a
transaction, the same effects, wrapped once in MULTI/EXEC when there are several).

RILLET_PATHS_SCENARIOS=N runs more scenarios (CI runs a fixed set).
"""

from __future__ import annotations

import ast
import functools
import os
import random
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import rillet
from rillet.compiled import compiled
from rillet.state import ANY_DB

SRC = str(Path(rillet.__file__).resolve().parent.parent)

SCRIPT = r"""
import ast, sys
from rillet.clock import ManualClock
from rillet.commands.table import COMMANDS, unique_subcommands
from rillet.config import Config
from rillet.resp import parser
from rillet.server import connection
from rillet.server.connection import ClientConnection
from rillet.server.server import Server
from tests.helpers.effects import recorder

class Transport:
    def __init__(self): self.out = []
    def write(self, data): self.out.append(bytes(data))
    def get_extra_info(self, key, default=None):
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(key)
    def set_write_buffer_limits(self, high=None): pass
    def get_write_buffer_size(self): return 0
    def is_closing(self): return False
    def close(self): pass

def specs():
    for spec in COMMANDS.values():
        yield spec
        yield from unique_subcommands(spec)

results = []
for scenario in ast.literal_eval(sys.stdin.read()):
    for spec in specs():
        spec.calls = spec.usec = spec.rejected_calls = spec.failed_calls = 0
    config = Config()
    if scenario["requirepass"]:
        config.set("requirepass", scenario["requirepass"])
    clock = ManualClock()
    server = Server(config, clock)
    effects = []  # what the AOF and replicas would get
    server.state.effect_sinks.append(recorder(effects))
    conns = []
    for _ in range(scenario["clients"]):
        conn = ClientConnection(server)
        conn.connection_made(Transport())
        conns.append(conn)
    for index, data in scenario["steps"]:
        conns[index].data_received(data)
        clock.advance(1)
    stats = server.state.stats
    results.append({
        "out": [b"".join(conn.transport.out) for conn in conns],
        "effects": effects,
        "calls": {s.name: (s.calls, s.rejected_calls, s.failed_calls)
                  for s in specs() if s.calls or s.rejected_calls or s.failed_calls},
        "errors": stats.errors, "error_replies": stats.total_error_replies,
        "net": (stats.net_input_bytes, stats.net_output_bytes,
                [(c.net_in, c.net_out, c.commands) for c in conns]),
        "last": [c.client.last_command for c in conns],
        "dirty": server.state.dirty,
        "blocked": stats.blocked_clients,
    })
print(repr({"compiled": connection._fastpath is not None and parser._scan is not None,
            "results": results}))
"""


def _run(scenarios: list[dict], pure: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("RILLET_PURE", None)
    if pure:
        env["RILLET_PURE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], input=repr(scenarios).encode(), env=env,
        capture_output=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return ast.literal_eval(done.stdout.decode())


def _compiled() -> bool:
    # (compiled(): None under RILLET_PURE, where the compiled loop cannot even be
    # imported: it cimports state.py's extension types.)
    return None not in (compiled("rillet.resp._multibulk"), compiled("rillet.server._fastpath"))


needs_compiled = pytest.mark.skipif(
    not _compiled() or bool(os.environ.get("RILLET_PURE")),
    reason="compiled hot path not built (or RILLET_PURE set)",
)


def _command(*args: bytes | str | int) -> bytes:
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


class Traffic:
    """Random commands over a handful of keys, so they meet each other's data."""

    KEYS = ["k", "n", "s", "t"]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def key(self) -> str:
        return self.rng.choice(self.KEYS)

    def one(self) -> list:
        rng, key = self.rng, self.key()
        choices = [
            # reads, plain and mixed-case, with and without data
            lambda: ["PING"], lambda: ["ping", "hi"], lambda: ["PiNg"], lambda: ["GET", key],
            lambda: ["ECHO", "x" * rng.randint(0, 40)], lambda: ["XLEN", "s"],
            lambda: ["XRANGE", "s", "-", "+", "COUNT", rng.randint(1, 3)], lambda: ["EXISTS", key, "t"],
            lambda: ["DBSIZE"], lambda: ["TYPE", key], lambda: ["TTL", key], lambda: ["STRLEN", key],
            lambda: ["XINFO", "STREAM", "s"], lambda: ["XPENDING", "s", "g"],
            # writes: the SET and XADD fast bodies and their general forms
            lambda: ["SET", key, rng.choice(["v", "12", ""])], lambda: ["set", key, "v", "NX"],
            lambda: ["SET", key, "v", "XX", "GET"], lambda: ["SET", key, "v", "PX", rng.randint(1, 50)],
            lambda: ["INCR", "n"], lambda: ["INCRBY", "n", rng.choice(["5", "x", "-9223372036854775808"])],
            lambda: ["DEL", key, "t"], lambda: ["APPEND", key, "z"], lambda: ["EXPIRE", key, 100],
            # TTLs on the compiled bodies' own keys (due within a few steps, or not) and elsewhere
            lambda: ["PEXPIRE", rng.choice(["s", "n", key]), rng.choice([2, 5, 100000])],
            lambda: ["SET", f"session:{rng.randint(0, 3)}", "v", "PX", rng.choice([3, 100000])],
            lambda: ["XADD", "s", "*", "f", "v"], lambda: ["xadd", "s", "*", "f", "v", "g", "w"],
            lambda: ["XADD", "s", "MAXLEN", "~", rng.randint(0, 3), "*", "f", "v"],
            lambda: ["XADD", "s", "MAXLEN", rng.randint(0, 3), "*", "f", "v"],
            lambda: ["XADD", "s", f"{rng.randint(0, 2)}-*", "f", "v"],  # may be too small
            lambda: ["XADD", "s", "*", "f"],  # odd field count
            lambda: ["XADD", key, "NOMKSTREAM", "*", "f", "v"],
            lambda: ["XGROUP", "CREATE", "s", "g", rng.choice(["$", "0"]), "MKSTREAM"],
            lambda: ["XREADGROUP", "GROUP", "g", rng.choice(["c1", "c2"]), "COUNT", 2, "STREAMS", "s", ">"],
            lambda: ["XACK", "s", "g", "0-1", f"{rng.randint(0, 2)}-0"],
            lambda: ["XTRIM", "s", "MAXLEN", rng.randint(0, 3)], lambda: ["XDEL", "s", "1-0"],
            lambda: ["XAUTOCLAIM", "s", "g", "c3", 0, "0-0", "COUNT", 2],
            # errors: unknown command, arity, wrong type
            lambda: ["NOSUCH", key], lambda: ["GET"], lambda: ["XLEN", "k"], lambda: ["INCR", "s"],
            # connection state: auth, protocol, transactions, watch
            lambda: ["AUTH", rng.choice(["pw", "bad"])], lambda: ["HELLO", rng.choice(["2", "3"])],
            lambda: ["MULTI"], lambda: ["EXEC"], lambda: ["DISCARD"], lambda: ["WATCH", key],
            lambda: ["UNWATCH"], lambda: ["SELECT", rng.choice(["0", "1"])],
            # blocking reads, woken by another client's XADD (or not)
            lambda: ["XREAD", "BLOCK", 0, "STREAMS", "s", "$"],
            lambda: ["XREADGROUP", "GROUP", "g", "cb", "BLOCK", 0, "STREAMS", "s", ">"],
        ]
        return rng.choice(choices)()

    def scenario(self) -> dict:
        rng = self.rng
        clients = rng.randint(1, 3)
        steps = []
        for _ in range(rng.randint(1, 12)):
            commands = [self.one() for _ in range(rng.choice([1, 1, 2, 5, 20]))]
            # Runs of one command, the compiled loop's kept-aside counter case.
            if rng.random() < 0.2:
                commands += [commands[-1]] * rng.randint(2, 10)
            steps.append((rng.randrange(clients), b"".join(_command(*c) for c in commands)))
        return {"clients": clients, "steps": steps,
                "requirepass": rng.choice(["", "", "pw"])}


def _scenarios(seed: int, count: int) -> list[dict]:
    traffic = Traffic(random.Random(seed))
    return [traffic.scenario() for _ in range(count)]


@needs_compiled
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_traffic_agrees(seed):
    count = int(os.environ.get("RILLET_PATHS_SCENARIOS", "150"))
    scenarios = _scenarios(seed, count)
    fast = _run(scenarios, pure=False)
    pure = _run(scenarios, pure=True)
    assert fast["compiled"] and not pure["compiled"]
    for number, (ours, theirs) in enumerate(zip(fast["results"], pure["results"], strict=True)):
        assert ours == theirs, f"seed {seed}, scenario {number}: {scenarios[number]!r}"


# One valid use of every write command, run on a stream "s" with group "g" and
# two pending entries, and string keys "k" (a number), "t" and "e" (with a TTL).
SETUP = [
    ["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "1-2", "f", "v"], ["XADD", "s", "1-3", "f", "v"],
    ["XGROUP", "CREATE", "s", "g", "0"],
    ["XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"],
    ["SET", "k", "10"], ["SET", "t", "x"], ["SET", "e", "x", "EX", "100"],
    ["HSET", "h", "a", "1", "b", "2.5"], ["HPEXPIRE", "h", "100000", "FIELDS", "1", "b"],
    ["SADD", "st", "a", "b", "c"], ["SADD", "st2", "b", "z"],
    ["RPUSH", "l", "a", "b", "c", "a"], ["ZADD", "z", "1", "a", "2", "b", "3", "c"],
    ["ARSET", "ar", "0", "a", "b", "c"], ["ARINSERT", "ar", "d"],
    ["VADD", "vs", "VALUES", "2", "1", "0", "a"], ["VADD", "vs", "VALUES", "2", "0", "1", "b"],
    ["FUNCTION", "LOAD", "#!lua name=setuplib\nredis.register_function('sf', function() return 1 end)"],
    ["PFADD", "hll", "a", "b"], ["GEOADD", "geo", "13.361389", "38.115556", "P", "15.087269", "37.502669", "C"],
]


def _dump_payload(value: bytes) -> bytes:
    """DUMP's payload for a string value (the RDB value format with Redis's footer)."""
    from rillet.persistence import rdb

    return rdb.dump_value(value)


def _function_payload(code: bytes) -> bytes:
    """A FUNCTION DUMP payload (Redis's format) holding one library."""
    from rillet.persistence import rdb

    return rdb.dump_functions([code])


def _restore_target() -> int:
    """A loopback port that answers +OK to each command (each line starting "*"): the
    target of the MIGRATE case, which the scenario runs without an event loop."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn:
            pending = b""
            while data := conn.recv(65536):
                pending += data
                # One reply per RESP command: count complete "*N" headers naively,
                # enough for AUTH/SELECT/RESTORE of the small payload below.
                commands = pending.count(b"\r\n*") + pending.startswith(b"*")
                if pending.endswith(b"\r\n"):
                    conn.sendall(b"+OK\r\n" * commands)
                    pending = b""

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]


WRITES = {
    "append": ["APPEND", "t", "y"], "decr": ["DECR", "k"], "decrby": ["DECRBY", "k", "3"],
    "del": ["DEL", "k", "t"], "expire": ["EXPIRE", "k", "100"], "expireat": ["EXPIREAT", "k", "4000000000"],
    "flushall": ["FLUSHALL"], "flushdb": ["FLUSHDB"], "getdel": ["GETDEL", "k"], "incr": ["INCR", "k"],
    "increx": ["INCREX", "k", "BYINT", "2", "UBOUND", "100", "EX", "100"],
    "incrby": ["INCRBY", "k", "7"], "mset": ["MSET", "a", "1", "b", "2"], "persist": ["PERSIST", "e"],
    "pexpire": ["PEXPIRE", "k", "100000"], "pexpireat": ["PEXPIREAT", "k", "4000000000000"],
    "rename": ["RENAME", "k", "k2"], "renamenx": ["RENAMENX", "k", "k2"],
    "set": ["SET", "k", "v", "EX", "100"], "setnx": ["SETNX", "new", "v"], "unlink": ["UNLINK", "t"],
    "xack": ["XACK", "s", "g", "1-1"], "xackdel": ["XACKDEL", "s", "g", "IDS", "1", "1-1"],
    "xadd": ["XADD", "s", "MAXLEN", "~", "1", "*", "f", "v"],
    "xautoclaim": ["XAUTOCLAIM", "s", "g", "c2", "0", "0-0"],
    "xcfgset": ["XCFGSET", "s", "IDMP-DURATION", "50"],
    "xclaim": ["XCLAIM", "s", "g", "c2", "0", "1-1"], "xdel": ["XDEL", "s", "1-3"],
    "xdelex": ["XDELEX", "s", "IDS", "1", "1-2"],
    "xidmprecord": ["XIDMPRECORD", "s", "p", "i", "1-3"],
    "xnack": ["XNACK", "s", "g", "SILENT", "IDS", "1", "1-1"],
    "xreadgroup": ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
    "xsetid": ["XSETID", "s", "5-0"], "xtrim": ["XTRIM", "s", "MINID", "1-2"],
    "rillet.xretention": ["RILLET.XRETENTION", "s", "60000"],
    "rillet.xdeadletter": ["RILLET.XDEADLETTER", "s", "g", "3", "dead"],
    "xgroup|create": ["XGROUP", "CREATE", "s", "g2", "$"],
    "xgroup|setid": ["XGROUP", "SETID", "s", "g", "$"],
    "xgroup|destroy": ["XGROUP", "DESTROY", "s", "g"],
    "xgroup|createconsumer": ["XGROUP", "CREATECONSUMER", "s", "g", "c9"],
    "xgroup|delconsumer": ["XGROUP", "DELCONSUMER", "s", "g", "c"],
    "function|flush": ["FUNCTION", "FLUSH"],
    "hset": ["HSET", "h", "c", "3"], "hmset": ["HMSET", "h", "c", "3"],
    "hsetnx": ["HSETNX", "h", "c", "3"], "hdel": ["HDEL", "h", "a"],
    "hincrby": ["HINCRBY", "h", "a", "2"], "hincrbyfloat": ["HINCRBYFLOAT", "h", "b", "0.5"],
    "hexpire": ["HEXPIRE", "h", "100", "FIELDS", "1", "a"],
    "hpexpire": ["HPEXPIRE", "h", "100", "FIELDS", "1", "a"],
    "hexpireat": ["HEXPIREAT", "h", "4000000000", "FIELDS", "1", "a"],
    "hpexpireat": ["HPEXPIREAT", "h", "4000000000000", "FIELDS", "1", "a"],
    "hpersist": ["HPERSIST", "h", "FIELDS", "1", "b"],
    "hgetex": ["HGETEX", "h", "EX", "100", "FIELDS", "1", "a"],
    "hsetex": ["HSETEX", "h", "EX", "100", "FIELDS", "1", "a", "9"],
    "hgetdel": ["HGETDEL", "h", "FIELDS", "2", "a", "b"],
    "sadd": ["SADD", "st", "d"], "srem": ["SREM", "st", "a"], "spop": ["SPOP", "st", "5"],
    "smove": ["SMOVE", "st", "st2", "a"], "sinterstore": ["SINTERSTORE", "d", "st", "st2"],
    "sunionstore": ["SUNIONSTORE", "d", "st", "st2"], "sdiffstore": ["SDIFFSTORE", "d", "st", "st2"],
    "lpush": ["LPUSH", "l", "x"], "rpush": ["RPUSH", "l", "x"], "lpushx": ["LPUSHX", "l", "x"],
    "rpushx": ["RPUSHX", "l", "x"], "lpop": ["LPOP", "l", "2"], "rpop": ["RPOP", "l"],
    "lset": ["LSET", "l", "0", "z"], "ltrim": ["LTRIM", "l", "1", "-1"],
    "linsert": ["LINSERT", "l", "BEFORE", "b", "z"], "lrem": ["LREM", "l", "0", "a"],
    "lmove": ["LMOVE", "l", "l2", "LEFT", "RIGHT"], "rpoplpush": ["RPOPLPUSH", "l", "l2"],
    "lmpop": ["LMPOP", "2", "nokey", "l", "LEFT", "COUNT", "2"], "blpop": ["BLPOP", "l", "0"],
    "brpop": ["BRPOP", "l", "0"], "blmove": ["BLMOVE", "l", "l2", "LEFT", "LEFT", "0"],
    "brpoplpush": ["BRPOPLPUSH", "l", "l2", "0"], "blmpop": ["BLMPOP", "0", "1", "l", "RIGHT"],
    "zadd": ["ZADD", "z", "GT", "CH", "5", "a"], "zincrby": ["ZINCRBY", "z", "1.5", "b"],
    "zrem": ["ZREM", "z", "a"], "zrangestore": ["ZRANGESTORE", "d", "z", "0", "1"],
    "zremrangebyrank": ["ZREMRANGEBYRANK", "z", "0", "0"],
    "zremrangebyscore": ["ZREMRANGEBYSCORE", "z", "(1", "2"],
    "zremrangebylex": ["ZREMRANGEBYLEX", "z", "-", "[a"], "zpopmin": ["ZPOPMIN", "z"],
    "zpopmax": ["ZPOPMAX", "z", "2"], "zmpop": ["ZMPOP", "1", "z", "MAX"],
    "bzpopmin": ["BZPOPMIN", "z", "0"], "bzpopmax": ["BZPOPMAX", "z", "0"],
    "bzmpop": ["BZMPOP", "0", "1", "z", "MIN", "COUNT", "2"],
    "zunionstore": ["ZUNIONSTORE", "d", "2", "z", "st", "WEIGHTS", "2", "1"],
    "setex": ["SETEX", "k", "100", "v"], "psetex": ["PSETEX", "k", "100000", "v"],
    "getex": ["GETEX", "t", "EX", "100"], "getset": ["GETSET", "t", "v"],
    "setrange": ["SETRANGE", "t", "3", "abc"], "msetnx": ["MSETNX", "n1", "1", "n2", "2"],
    "incrbyfloat": ["INCRBYFLOAT", "k", "0.1"], "copy": ["COPY", "h", "h2"], "move": ["MOVE", "t", "3"],
    "swapdb": ["SWAPDB", "0", "1"], "delex": ["DELEX", "t", "IFEQ", "x"],
    "msetex": ["MSETEX", "2", "m1", "1", "m2", "2", "PX", "100000"],
    "zinterstore": ["ZINTERSTORE", "d", "2", "z", "st"], "zdiffstore": ["ZDIFFSTORE", "d", "1", "z"],
    "pfadd": ["PFADD", "hll", "c", "d"], "pfmerge": ["PFMERGE", "hll2", "hll"],
    "pfdebug": ["PFDEBUG", "TODENSE", "hll"],
    "geoadd": ["GEOADD", "geo", "CH", "12.5", "41.9", "R"],
    "geosearchstore": ["GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
    "georadius": ["GEORADIUS", "geo", "15", "37", "200", "km", "STOREDIST", "gd"],
    "georadiusbymember": ["GEORADIUSBYMEMBER", "geo", "P", "200", "km", "STORE", "gd"],
    "restore": ["RESTORE", "r", "0", _dump_payload(b"restored")],
    "restore-asking": ["RESTORE-ASKING", "r", "0", _dump_payload(b"restored")],
    "migrate": ["MIGRATE", "127.0.0.1", str(_restore_target()), "", "0", "5000", "KEYS", "k", "t"],
    "setbit": ["SETBIT", "t", "20", "1"], "bitop": ["BITOP", "DIFF", "d", "k", "t"],
    "bitfield": ["BITFIELD", "t", "OVERFLOW", "SAT", "INCRBY", "u8", "#1", "300"],
    "sort": ["SORT", "l", "ALPHA", "DESC", "STORE", "d"],
    "function|load": ["FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f2', function() return 2 end)"],
    "function|delete": ["FUNCTION", "DELETE", "setuplib"],
    "arset": ["ARSET", "ar", "5", "x", "y"], "armset": ["ARMSET", "ar", "9", "x", "1", "y"],
    "ardel": ["ARDEL", "ar", "0", "7"], "ardelrange": ["ARDELRANGE", "ar", "2", "0"],
    "arinsert": ["ARINSERT", "ar", "e", "f"], "arring": ["ARRING", "ar", "2", "r"],
    "arseek": ["ARSEEK", "ar", "100"],
    "vadd": ["VADD", "vs", "VALUES", "2", "1", "1", "c", "SETATTR", '{"x": 1}'],
    "vrem": ["VREM", "vs", "a"], "vsetattr": ["VSETATTR", "vs", "b", '{"y": 2}'],
    "function|restore": ["FUNCTION", "RESTORE",
                         _function_payload(b"#!lua name=lib3\nredis.register_function('f3', function() return 3 end)"),
                         "REPLACE"],
}
# Writes that change nothing here.
NO_EFFECT: set[str] = set()


def _write_specs() -> list[str]:
    from rillet.commands.table import COMMANDS, unique_subcommands

    names = []
    for spec in COMMANDS.values():
        for one in [spec, *unique_subcommands(spec)]:
            if one.is_write and one.handler is not None:
                names.append(one.name)
    return sorted(set(names))


def test_every_write_command_has_a_case():
    assert sorted(set(_write_specs()) - set(WRITES)) == []


def _write_scenarios() -> list[dict]:
    setup = b"".join(_command(*c) for c in SETUP)
    scenarios = []
    for name in sorted(WRITES):
        argv = WRITES[name]
        alone = setup + _command(*argv)
        in_multi = setup + _command("MULTI") + _command(*argv) + _command("EXEC")
        scenarios.append({"clients": 1, "steps": [(0, alone)], "requirepass": ""})
        scenarios.append({"clients": 1, "steps": [(0, in_multi)], "requirepass": ""})
    return scenarios


@functools.cache
def _write_results(pure: bool) -> tuple[list, int]:
    """Results of _write_scenarios() on one path, and how many effects SETUP alone leaves.

    Run once per path for the module: both tests below read the same runs (the setup
    scenario rides along as the last one, so each path costs one subprocess)."""
    setup = {"clients": 1, "requirepass": "", "steps": [
        (0, b"".join(_command(*c) for c in SETUP))]}
    results = _run([*_write_scenarios(), setup], pure=pure)["results"]
    return results[:-1], len(results[-1]["effects"])


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_write_effects_same_alone_and_in_multi(pure):
    if not pure and not _compiled():
        pytest.skip("compiled hot path not built")
    results, setup_effects = _write_results(pure)
    for index, name in enumerate(sorted(WRITES)):
        alone = results[2 * index]["effects"][setup_effects:]
        in_multi = results[2 * index + 1]["effects"][setup_effects:]
        if name in NO_EFFECT:
            assert alone == [] and in_multi == [], name
            continue
        assert alone, f"{name} left no effect"
        if alone[0][1] == [b"MULTI"]:
            alone = alone[1:-1]  # a command of several effects is wrapped already
        # As Redis's propagatePendingCommands: MULTI/EXEC only around more than one effect.
        # MULTI has no db of its own (state.ANY_DB): the first command selects.
        expected = alone if len(alone) == 1 else [(ANY_DB, [b"MULTI"]), *alone, (0, [b"EXEC"])]
        assert in_multi == expected, name


@needs_compiled
def test_write_effects_same_on_both_paths():
    assert _write_results(False)[0] == _write_results(True)[0]
