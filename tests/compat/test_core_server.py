"""Server commands against Redis: INFO, CONFIG GET/SET/RESETSTAT, COMMAND, FUNCTION FLUSH, SHUTDOWN errors.

CONFIG changes are undone after each test: the servers are shared by the session.
"""

from __future__ import annotations

import hiredis
import pytest

from tests.helpers.diff import with_lrm_policies
from tests.helpers.wire import Wire

# Values the shared servers run with, restored after every CONFIG SET test.
DEFAULTS = {
    "timeout": "0", "hz": "10", "maxmemory": "0", "maxmemory-policy": "noeviction",
    "replica-read-only": "yes", "loglevel": "notice", "stream-node-max-entries": "100",
    "stream-node-max-bytes": "4096", "maxclients": "10000", "proto-max-bulk-len": "536870912",
    "slowlog-max-len": "128", "save": "",
}


def parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    return reader.gets()


def as_dict(raw: bytes) -> dict:
    value = parse(raw)
    if isinstance(value, dict):
        return value
    return dict(zip(value[::2], value[1::2], strict=True))


@pytest.fixture
def cfg(pair):
    yield pair
    for wire in (pair.ours, pair.ref):
        for name, value in DEFAULTS.items():
            assert wire.call("CONFIG", "SET", name, value) == b"+OK\r\n", name


def config_get_same(pair, *patterns: str) -> dict:
    """CONFIG GET with several results: Redis orders them by its hash table."""
    ours, ref = pair.both("CONFIG", "GET", *patterns)
    assert ours[:1] == ref[:1]
    assert as_dict(ours) == as_dict(ref), patterns
    return as_dict(ours)


# --- CONFIG ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["maxclients", "timeout", "save", "appendonly", "databases",
                                  "stream-node-max-entries", "stream-node-max-bytes",
                                  "proto-max-bulk-len", "client-query-buffer-limit", "hz",
                                  "maxmemory", "maxmemory-policy", "requirepass", "TIMEOUT",
                                  "Maxclients", "slave-read-only", "replica-read-only",
                                  "nosuchparam", "tcp-backlog", "loglevel", "dbfilename"])
def test_config_get_one(pair, name):
    pair.check("CONFIG", "GET", name)


@pytest.mark.parametrize("patterns", [("stream-node-max-*",), ("*read-only",), ("TIME*",),
                                      ("timeout", "maxclients"), ("maxclients", "timeout"),
                                      ("timeout", "TIMEOUT"), ("TIMEOUT", "timeout"),
                                      ("timeout", "time*"), ("time*", "timeout"),
                                      ("slave-read-only", "replica-read-only"), ("max?lients",),
                                      ("[tm]axclients",), ("nosuch*",), ("appendonly", "save")])
def test_config_get_patterns(pair, patterns):
    config_get_same(pair, *patterns)


def test_config_get_star_covers_our_parameters(pair8):
    ours = as_dict(pair8.ours.call("CONFIG", "GET", "*"))
    ref = as_dict(pair8.ref.call("CONFIG", "GET", "*"))
    # Parameters rillet adds of its own, or of Redis 8.6 (stream-idmp-*, tls-auth-clients-user);
    # every other one is one of Redis 8.2's.
    own = {b"gc-freeze-interval", b"gc-sweep-growth", b"maxblockedclients", b"stream-idmp-duration",
           b"stream-idmp-maxsize", b"http-port", b"http-bind", b"tls-auth-clients-user"}
    assert set(ours) - own <= set(ref)
    for name in (b"save", b"appendonly", b"stream-node-max-entries", b"stream-node-max-bytes",
                 b"maxclients", b"timeout", b"proto-max-bulk-len", b"client-query-buffer-limit"):
        assert name in ours
    same = {b"maxclients", b"timeout", b"databases", b"hz", b"stream-node-max-entries",
            b"stream-node-max-bytes", b"proto-max-bulk-len", b"client-query-buffer-limit",
            b"maxmemory", b"maxmemory-policy", b"appendonly", b"tcp-backlog"}
    assert {k: ours[k] for k in same} == {k: ref[k] for k in same}


def test_config_get_arity(pair):
    pair.check("CONFIG", "GET")
    pair.check("CONFIG")
    pair.check("CONFIG", "NOSUCH")
    pair.check("CONFIG", "RESETSTAT", "x")


@pytest.mark.parametrize("args", [
    ("timeout", "5"), ("TIMEOUT", "6"), ("timeout", "abc"), ("TIMEOUT", "abc"), ("timeout", "-1"),
    ("timeout", "9999999999"), ("timeout", "1k"), ("timeout", ""), ("hz", "0"), ("hz", "100000"),
    ("maxmemory", "10mb"), ("maxmemory", "1GB"), ("maxmemory", "10x"), ("maxmemory", "-1"),
    ("maxmemory", "1.5gb"), ("maxclients", "0"), ("maxclients", "5000"),
    ("maxmemory-policy", "allkeys-lru"), ("maxmemory-policy", "bogus"),
    ("slave-read-only", "no"), ("replica-read-only", "maybe"), ("save", "100 10 60 100"),
    ("save", "1 2 3"), ("save", "abc"), ("save", ""), ("stream-node-max-entries", "0"),
    ("stream-node-max-entries", "-1"), ("stream-node-max-entries", "x"),
    ("stream-node-max-bytes", "1kb"), ("stream-node-max-bytes", "-5"),
    ("proto-max-bulk-len", "100"), ("proto-max-bulk-len", "2mb"), ("databases", "4"),
    ("tcp-backlog", "10"), ("nosuch", "1"), ("appendonly", "maybe"),
    # several at once: atomic, first bad name decides, values checked after names
    ("timeout", "5", "maxclients", "abc"), ("timeout", "5", "timeout", "6"),
    ("timeout", "5", "TIMEOUT", "6"), ("timeout", "0", "nosuch", "1"),
    ("timeout", "abc", "nosuch", "1"), ("databases", "4", "nosuch", "1"),
    ("nosuch", "1", "databases", "4"), ("slave-read-only", "yes", "replica-read-only", "yes"),
    ("hz", "20", "timeout", "30", "maxclients", "500"),
    # odd number of arguments
    ("timeout",), ("timeout", "1", "maxclients"),
])
def test_config_set(cfg, args):
    cfg.check("CONFIG", "SET", *args, normalise=with_lrm_policies)
    names = [args[i] for i in range(0, len(args), 2)]
    config_get_same(cfg, *names)


def test_config_set_is_atomic(cfg):
    cfg.check("CONFIG", "SET", "timeout", "77", "maxmemory", "1mb", "hz", "nope")
    config_get_same(cfg, "timeout", "maxmemory", "hz")


def test_config_set_loglevel(cfg, request):
    cfg.check("CONFIG", "SET", "loglevel", "warning")
    cfg.check("CONFIG", "GET", "loglevel")
    if "redis8" in request.node.name:  # 8.x added "nothing" to the list in the error
        cfg.check("CONFIG", "SET", "loglevel", "bogus")


def test_config_resetstat(pair):
    for wire in (pair.ours, pair.ref):
        wire.call("GET", "x")
        wire.call("NOSUCHCOMMAND")
    pair.check("CONFIG", "RESETSTAT")
    for wire in (pair.ours, pair.ref):
        stats = parse(wire.call("INFO", "stats")).decode()
        assert "total_error_replies:0" in stats
        assert parse(wire.call("INFO", "errorstats")) in (b"# Errorstats\r\n",)
        commandstats = parse(wire.call("INFO", "commandstats")).decode()
        assert "cmdstat_get" not in commandstats


# --- INFO ---------------------------------------------------------------------------------

def info_sections(wire: Wire, *args: str) -> dict[str, dict[str, str]]:
    text = parse(wire.call("INFO", *args)).decode()
    sections: dict[str, dict[str, str]] = {}
    current = None
    for line in text.split("\r\n"):
        if line.startswith("# "):
            current = sections.setdefault(line[2:], {})
        elif line:
            key, _, value = line.partition(":")
            current[key] = value  # type: ignore[index]
    return sections


# Redis sections rillet has no counterpart for (tests/compat/test_info_config_parity.py).
REDIS_ONLY: set[str] = set()
# In Redis's default set, only asked for by name or `all`/`everything` here: rillet
# counts them by walking the keys, which a monitor's periodic INFO (Sentinel's, every
# second during a failover) must not pay for on a large keyspace (docs/compat.md).
NOT_DEFAULT = {"Keysizes"}
# rillet's own (docs/streams-policies.md for the stream ones), and Redis 8.6's (rillet
# says 8.8; the reference is 8.2.3).
OWN_FIELDS = {"rillet_version", "python_version", "stream_retention_trimmed",
              "stream_deadlettered", "acl_access_denied_tls_cert"}
REQUIRED = {
    "Server": ["redis_version", "rillet_version", "redis_mode", "os", "arch_bits", "process_id",
               "run_id", "tcp_port", "uptime_in_seconds", "uptime_in_days", "hz", "executable",
               "config_file"],
    "Clients": ["connected_clients", "maxclients", "blocked_clients"],
    "Memory": ["used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak",
               "maxmemory", "maxmemory_policy", "mem_allocator"],
    "Persistence": ["loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
                    "rdb_last_save_time", "aof_enabled", "aof_rewrite_in_progress"],
    "Stats": ["total_connections_received", "total_commands_processed",
              "instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes",
              "rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits",
              "keyspace_misses", "total_error_replies"],
    "Replication": ["role", "connected_slaves", "master_replid", "master_repl_offset"],
    "CPU": ["used_cpu_sys", "used_cpu_user"],
    "Cluster": ["cluster_enabled"],
}


@pytest.mark.parametrize("args", [(), ("default",), ("all",), ("everything",), ("default", "keysizes"),
                                  ("server", "all"), ("everything", "nosuch")])
def test_info_sections_and_fields(pair8, args):
    ours = info_sections(pair8.ours, *args)
    ref = info_sections(pair8.ref, *args)
    left_out = REDIS_ONLY | (NOT_DEFAULT if args in ((), ("default",)) else set())
    assert list(ours) == [s for s in ref if s not in left_out]
    for section, fields in ours.items():
        if section in ("Commandstats", "Errorstats", "Keyspace", "Modules"):
            continue
        unknown = set(fields) - set(ref[section]) - OWN_FIELDS
        assert not unknown, (section, unknown)
        for name in REQUIRED.get(section, []):
            assert name in fields, (section, name)


def test_info_values(rillet_server):
    with Wire(rillet_server.port) as wire:
        info = info_sections(wire)
        assert info["Server"]["redis_version"] == "8.8.0"
        assert info["Server"]["tcp_port"] == str(rillet_server.port)
        assert info["Server"]["redis_mode"] == "standalone"
        assert info["Replication"]["role"] == "master"
        assert info["Cluster"]["cluster_enabled"] == "0"
        assert int(info["Clients"]["connected_clients"]) >= 1


def test_info_chosen_sections_in_redis_order(pair8):
    for args in (("server",), ("keyspace", "server"), ("CPU", "clients"), ("nosuch",),
                 ("server", "server"), ("commandstats",), ("errorstats", "stats")):
        assert list(info_sections(pair8.ours, *args)) == list(info_sections(pair8.ref, *args))


def test_info_keyspace_and_stats(pair):
    pair.check("SET", "a", "1")
    pair.check("SET", "b", "1", "EX", "100")
    pair.check("SELECT", "3")
    pair.check("SET", "c", "1")
    for wire in (pair.ours, pair.ref):
        keyspace = info_sections(wire, "keyspace")["Keyspace"]
        assert keyspace["db0"].startswith("keys=2,expires=1,")
        assert keyspace["db3"].startswith("keys=1,expires=0,")
    pair.check("INFO", "nosuchsection")


def test_info_errorstats_and_commandstats(pair8):
    pair8.check("CONFIG", "RESETSTAT")
    for args in (("GET",), ("NOSUCH",), ("SET", "s", "x"), ("INCR", "s"), ("GET", "s"),
                 ("MULTI",), ("EXEC",), ("EXEC",)):
        pair8.both(*args)
    pair8.check("INFO", "errorstats")
    ours = info_sections(pair8.ours, "commandstats")["Commandstats"]
    ref = info_sections(pair8.ref, "commandstats")["Commandstats"]
    assert set(ours) == set(ref) - {"cmdstat_config|resetstat"} | (
        set(ours) & {"cmdstat_config|resetstat"})

    def counts(fields):
        return {k: ",".join(p for p in v.split(",") if not p.startswith("usec")) for k, v in fields.items()}

    assert counts(ours) == counts(ref)


# --- COMMAND -------------------------------------------------------------------------------

# (Every COMMAND INFO entry against Redis 8.2.3: tests/compat/test_command_table.py.)


def test_command_shapes(pair8):
    for wire in (pair8.ours, pair8.ref):
        count = parse(wire.call("COMMAND", "COUNT"))
        every = parse(wire.call("COMMAND"))
        assert isinstance(count, int) and count == len(every) > 30
        listed = parse(wire.call("COMMAND", "LIST"))
        assert b"get" in listed and b"config|get" in listed
        docs = parse(wire.call("COMMAND", "DOCS", "get", "config", "nosuch"))
        docs = dict(zip(docs[::2], docs[1::2], strict=True))
        assert set(docs) == {b"get", b"config"}
        get_docs = dict(zip(docs[b"get"][::2], docs[b"get"][1::2], strict=True))
        assert {b"summary", b"since", b"group"} <= set(get_docs)
        assert get_docs[b"group"] == b"string"
        config_docs = dict(zip(docs[b"config"][::2], docs[b"config"][1::2], strict=True))
        assert b"subcommands" in config_docs
        all_docs = parse(wire.call("COMMAND", "DOCS"))
        assert len(all_docs) // 2 == count
    pair8.check("COMMAND", "INFO", "nosuch")
    pair8.check("COMMAND", "DOCS", "nosuch")
    pair8.check("COMMAND", "COUNT", "x")
    pair8.check("COMMAND", "NOSUCH")
    pair8.check("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch")
    pair8.check("COMMAND", "LIST", "FILTERBY", "PATTERN")
    pair8.check("COMMAND", "LIST", "FILTERBY", "bogus", "x")
    for resp in ("2", "3"):
        pair8.both("HELLO", resp)
        pair8.check("COMMAND", "INFO", "get", "config|get", "exec", "nosuch")


def test_command_getkeys(pair8):
    for args in (("GET", "a"), ("SET", "a", "b"), ("MSET", "a", "1", "b", "2"), ("DEL", "a", "b"),
                 ("RENAME", "a", "b"), ("PING",), ("GET",), ("nosuch", "a")):
        pair8.check("COMMAND", "GETKEYS", *args)


@pytest.mark.parametrize("line", [
    # found by the command fuzzer: a container alone has no keys, a container with an
    # unknown subcommand is no command, "has keys" is checked before the arity
    "xinfo", "xinfo nosuch", "XINFO Stream k", "xinfo stream", "xinfo help x", "client list",
    # XREAD/XREADGROUP: the keys are the first half of what follows STREAMS
    "xread STREAMS a b 0 0", "xread COUNT 1 STREAMS a 0", "xread STREAMS a b 0", "xread a b 0",
    "xread COUNT 1 STREAMS a", "xread a b STREAMS", "xreadgroup GROUP g c STREAMS a b 0 0",
    "xreadgroup GROUP g c STREAMS a b c", "xreadgroup STREAMS a b c d STREAMS x",
    "xreadgroup GROUP STREAMS c STREAMS a 0",
])
def test_command_getkeys_order_and_stream_keys(pair8, line):
    pair8.check("COMMAND", "GETKEYS", *line.split())


# --- FUNCTION FLUSH, SHUTDOWN errors --------------------------------------------------------

def test_function_flush(pair):
    pair.check("FUNCTION", "FLUSH")
    pair.check("FUNCTION", "FLUSH", "ASYNC")
    pair.check("FUNCTION", "FLUSH", "sync")
    pair.check("FUNCTION", "FLUSH", "x")
    pair.check("FUNCTION", "FLUSH", "a", "b")
    pair.check("FUNCTION")
    pair.check("FUNCTION", "NOSUCH")


def test_shutdown_errors(pair):
    pair.check("SHUTDOWN", "ABORT")
    pair.check("SHUTDOWN", "FOO")
    pair.check("SHUTDOWN", "NOSAVE", "SAVE")
    pair.check("MULTI")
    pair.check("SHUTDOWN")
    pair.check("EXEC")
    pair.check("PING")
