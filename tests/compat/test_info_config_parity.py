"""INFO and CONFIG as Redis 8 prints them: field names, formats, parameters, errors.

Tools read INFO and CONFIG GET by name (redis_exporter, RedisInsight, Sentinel,
health checks). Each test compares rillet with the Redis 8.2.3 fixture in the same
situation and fails on any INFO field or CONFIG parameter Redis has and rillet
lacks, unless it is in the allow-lists below, each with the reason for leaving it
out. Both servers are this module's own (CONFIG SET and replicas would disturb
the session's).
"""

from __future__ import annotations

import contextlib
import functools
import re
import socket
import time

import pytest

from tests.helpers import servers
from tests.helpers.diff import with_lrm_policies
from tests.helpers.wire import Wire

# --- INFO -------------------------------------------------------------------------------

# INFO fields Redis 8.2 prints that rillet deliberately does not, by section (none now:
# jemalloc's allocator_* and the event loop's figures have rillet's counterparts,
# docs/compat.md).
INFO_OMITTED: dict[str, set[str]] = {}
# Sections Redis 8.2 prints that rillet does not (their fields are all omitted above).
SECTIONS_OMITTED: set[str] = set()
# Redis lists these in its command dict's order, which is no order.
UNORDERED = {"Commandstats", "Latencystats", "Errorstats"}
# Fields whose text is an identifier: their format is not compared.
TEXT_FIELDS = {"redis_git_sha1", "redis_build_id", "run_id", "master_replid", "master_replid2",
               "gcc_version", "redis_version", "os", "executable", "config_file",
               "mem_allocator", "master_host"}


def info(port: int, *sections: str) -> dict[str, dict[str, str]]:
    with Wire(port) as wire:
        raw = wire.call("INFO", *sections)
    assert raw.startswith(b"$"), raw[:200]
    text = raw.split(b"\r\n", 1)[1].decode()
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.split("\r\n"):
        if line.startswith("# "):
            current = out.setdefault(line[2:], {})
        elif line:
            name, _, value = line.partition(":")
            current[name] = value
    return out


_FLOAT = re.compile(r"-?\d+\.(\d+)")
_HUMAN = re.compile(r"\d+(\.\d\d)?[BKMGTP]")
_PERCENT = re.compile(r"-?\d+\.\d\d%")


def value_format(name: str, value: str) -> object:
    """The shape of a value: int, float with its decimals, percent, human size, k=v keys."""
    if name in TEXT_FIELDS:
        return "text"
    if re.fullmatch(r"-?\d+", value):
        return "int"
    match = _FLOAT.fullmatch(value)
    if match:
        return ("float", len(match.group(1)))
    if _PERCENT.fullmatch(value):
        return "percent"
    if name.endswith("_human") and _HUMAN.fullmatch(value):
        return "human"
    if "=" in value:
        return ("k=v", tuple(part.partition("=")[0] for part in value.split(",")))
    return "text"


# Lists whose keys depend on the data (keysizes' bins, per-slave lines' offsets...).
_KEYS_VARY = re.compile(r"db\d+_distrib_.*|latency_percentiles_usec_.*")


def compare_info(ours_port: int, ref_port: int, situation: str, *sections: str) -> None:
    ours = info(ours_port, *(sections or ("everything",)))
    ref = info(ref_port, *(sections or ("everything",)))
    problems = []
    assert [s for s in ref if s not in SECTIONS_OMITTED] == list(ours), situation
    for section, fields in ref.items():
        omitted = INFO_OMITTED.get(section, set())
        mine = ours.get(section, {})
        for name, value in fields.items():
            if name in omitted:
                continue
            if name not in mine:
                problems.append(f"{section}: {name} missing (Redis: {value!r})")
                continue
            ref_format = value_format(name, value)
            our_format = value_format(name, mine[name])
            if _KEYS_VARY.fullmatch(name) and ref_format[0] == "k=v":
                continue
            if our_format != ref_format:
                problems.append(f"{section}: {name} is {mine[name]!r}, Redis {value!r}")
        # Redis's order among the fields both print.
        shared = [name for name in fields if name in mine]
        order = [name for name in mine if name in fields]
        if shared != order and section not in UNORDERED:
            problems.append(f"{section}: order {order} != Redis's {shared}")
    assert not problems, f"{situation}:\n  " + "\n  ".join(problems)


@pytest.fixture(scope="module")
def both():
    yield from servers.own_pair8()


def each(pair, *args):
    replies = []
    for handle in pair:
        client = handle.client()
        try:
            replies.append(client.execute_command(*args))
        finally:
            client.close()
    return replies


def test_info_fields_in_every_situation(both):
    ours, ref = both
    each(both, "FLUSHALL")
    each(both, "CONFIG", "RESETSTAT")
    compare_info(ours.port, ref.port, "empty")

    for args in (("SET", "s", "v"), ("SET", "big", "x" * 5000), ("SET", "e", "v", "EX", "100"),
                 ("RPUSH", "l", "a", "b", "c"), ("SADD", "set", "a"), ("ZADD", "z", "1", "a"),
                 ("HSET", "h", "f", "v"), ("XADD", "st", "*", "f", "v"), ("SET", "empty", ""),
                 ("SELECT", "2"), ("GET", "nosuch"), ("NOSUCHCOMMAND",),
                 ("EVAL", "return 1", "0"), ("SUBSCRIBE", "ch")):
        for handle in both:
            with Wire(handle.port) as wire:
                wire.call(*args)
    compare_info(ours.port, ref.port, "after writes")
    compare_info(ours.port, ref.port, "INFO debug", "debug")
    compare_info(ours.port, ref.port, "INFO debug and stats", "stats", "debug")
    for handle in both:
        sizes = info(handle.port, "keysizes")["Keysizes"]
        assert sizes["db0_distrib_strings_sizes"] == "0=1,1=2,4K=1", (handle.kind, sizes)
        assert sizes["db0_distrib_lists_items"] == "2=1", (handle.kind, sizes)

    # Clients blocked (one with a deadline, one that a deletion unblocks) and a
    # subscriber, each on a connection of its own.
    each(both, "XGROUP", "CREATE", "st", "g", "$")
    held = []
    for handle in both:
        for args in (("BLPOP", "nolist", "100"),
                     ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "st", ">"),
                     ("SUBSCRIBE", "news")):
            wire = Wire(handle.port)
            wire.send_raw(_command(*args))
            held.append(wire)
    try:
        for handle in both:
            # (The earlier SUBSCRIBE's connection is closed: wait until the server saw it.)
            _wait_for(lambda h=handle: _figures(h.port, "clients", "blocked_clients",
                                                "pubsub_clients") == ["2", "1"])
        compare_info(ours.port, ref.port, "clients blocked")
        for handle in both:
            clients = info(handle.port, "clients")["Clients"]
            assert clients["clients_in_timeout_table"] == "1", (handle.kind, str(clients))
            assert clients["total_blocking_keys_on_nokey"] == "1", (handle.kind, str(clients))
    finally:
        for wire in held:
            wire.close()

    # Keys expiring, then the counters reset.
    each(both, "SET", "soon", "v", "PX", "1")
    time.sleep(0.05)
    each(both, "GET", "soon")
    compare_info(ours.port, ref.port, "keys expired")
    each(both, "CONFIG", "RESETSTAT")
    compare_info(ours.port, ref.port, "after CONFIG RESETSTAT")


def test_info_with_a_replica(both):
    ours, ref = both
    binary = servers.redis8_binary()
    each(both, "CONFIG", "SET", "repl-diskless-sync-delay", "0")  # (Redis waits 5 s otherwise)
    replicas = [servers.start_rillet("--replicaof", "127.0.0.1", str(ours.port)),
                servers.start_redis(binary, "--replicaof", "127.0.0.1", str(ref.port),
                                    kind="redis8")]
    try:
        each(both, "SET", "r", "1")
        for replica in replicas:
            _wait_for(lambda r=replica: info(r.port, "replication")["Replication"].get(
                "master_link_status") == "up")
        for master in both:
            _wait_for(lambda m=master: "slave0" in info(m.port, "replication")["Replication"])
        compare_info(ours.port, ref.port, "master with a replica")
        compare_info(replicas[0].port, replicas[1].port, "replica")
        # The stream's bytes are replication traffic, on both sides.
        each(both, "SET", "r", "2")
        for master in both:
            _wait_for(lambda m=master: int(
                info(m.port, "stats")["Stats"]["total_net_repl_output_bytes"]) > 0)
        for replica in replicas:
            _wait_for(lambda r=replica: int(
                info(r.port, "stats")["Stats"]["total_net_repl_input_bytes"]) > 0)
    finally:
        for replica in replicas:
            replica.stop()


def _figures(port: int, section: str, *names: str) -> list[str]:
    fields = info(port, section)[section.capitalize()]
    return [fields.get(name, "") for name in names]


def _command(*args: str) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _wait_for(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def _loop_figures(port: int) -> dict[str, int]:
    fields = info(port, "stats", "debug")
    return {name: int(value) for section in ("Stats", "Debug")
            for name, value in fields[section].items()
            if name.startswith(("eventloop_", "instantaneous_eventloop_"))}


def test_event_loop_figures_behave_as_redis(both):
    """What Redis's own suite checks of the eventloop_* figures (stats: eventloop
    metrics, instantaneous metrics, debug metrics), on both servers; no timing bound."""
    for handle in both:
        with Wire(handle.port) as wire:
            wire.call("CONFIG", "RESETSTAT")
            for _ in range(20):
                wire.call("PING")
        first = _loop_figures(handle.port)
        assert first["eventloop_cycles"] > 0 and first["eventloop_duration_sum"] > 0, (handle.kind, first)
        assert first["eventloop_duration_cmd_sum"] > 0, handle.kind
        # The idle loop still turns (the cron's ticks): cycles, busy time, a rate.
        _wait_for(lambda h=handle: _loop_figures(h.port)["instantaneous_eventloop_cycles_per_sec"] > 0)
        later = _loop_figures(handle.port)
        for name in ("eventloop_cycles", "eventloop_duration_sum", "eventloop_duration_cmd_sum",
                     "eventloop_duration_cron_sum"):
            assert later[name] > first[name], (handle.kind, name, first, later)
        assert later["instantaneous_eventloop_duration_usec"] > 0, handle.kind
        assert later["eventloop_cmd_per_cycle_max"] >= 1, handle.kind
        assert later["eventloop_duration_max"] > 0, handle.kind
        assert later["eventloop_duration_aof_sum"] >= 0, handle.kind
        with Wire(handle.port) as wire:
            wire.call("CONFIG", "RESETSTAT")
        reset = _loop_figures(handle.port)
        assert reset["eventloop_cycles"] < later["eventloop_cycles"], handle.kind
        assert reset["eventloop_cmd_per_cycle_max"] == 0, handle.kind
        # INFO debug is printed only when named.
        for words in ((), ("all",), ("everything",), ("default",)):
            assert "Debug" not in info(handle.port, *words), (handle.kind, words)


def test_buffer_limit_disconnections_are_counted(both):
    """Redis's suite's scenario: a client past client-query-buffer-limit, then one past
    client-output-buffer-limit, each disconnected and counted once."""
    for handle in both:
        with Wire(handle.port) as admin:
            admin.call("CONFIG", "RESETSTAT")
            admin.call("SET", "key", "a" * 100_000)
            admin.call("CONFIG", "SET", "client-query-buffer-limit", "1048576")
            try:
                with Wire(handle.port) as client:
                    client.send_raw(_command("SET", "key2", "a" * 1048576))
                    with contextlib.suppress(OSError):
                        client.read_reply()  # (the connection closes)
            finally:
                admin.call("CONFIG", "SET", "client-query-buffer-limit", "1073741824")
            admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 10 0 0")
            try:
                with Wire(handle.port) as client:
                    client.send_raw(_command("GET", "key"))
                    with contextlib.suppress(OSError):
                        client.read_reply()
            finally:
                admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
            _wait_for(lambda h=handle: _figures(
                h.port, "stats", "client_query_buffer_limit_disconnections",
                "client_output_buffer_limit_disconnections") == ["1", "1"])


# --- CONFIG -----------------------------------------------------------------------------

# CONFIG parameters of Redis 8.2 that rillet does not take, with the reason.
CONFIG_OMITTED: set[str] = set()
# Parameters whose value differs for a reason of the test, not of the servers.
VALUE_DIFFERS = {"port", "dir", "logfile", "pidfile"}
# rillet's own parameters, and Redis 8.6's (stream-idmp-*, tls-auth-clients-user), which
# the 8.2.3 reference does not have.
RILLET_ONLY = {"gc-freeze-interval", "gc-sweep-growth", "maxblockedclients",
               "stream-idmp-duration", "stream-idmp-maxsize", "http-port", "http-bind",
               "tls-auth-clients-user"}
# Parameters CONFIG SET treats differently on purpose (docs/compat.md): rillet binds
# its addresses once, at start, so `bind` is immutable here.
SET_DIFFERS = {"bind"}
# Values that CONFIG SET must reject, with Redis's message, on both servers.
PROBES = ["abc", "-1", "-9223372036854775808", "9223372036854775807", "0", "101%", "1 2",
          "yes no", "save nosave"]
# Not set to a probe value that Redis accepts: they would cut the test's own link
# (passwords, replication, listeners) or write files.
UNSAFE = {"requirepass", "masterauth", "masteruser", "replicaof", "slaveof", "save", "dir",
          "dbfilename", "appendonly", "appendfilename", "appenddirname", "port", "bind",
          "unixsocket", "tls-port", "maxclients", "maxmemory", "timeout", "logfile",
          "locale-collate", "enable-protected-configs", "enable-debug-command",
          "io-threads", "notify-keyspace-events", "client-output-buffer-limit",
          "client-query-buffer-limit", "proto-max-bulk-len", "acllog-max-len",
          "protected-mode", "min-replicas-to-write", "aclfile", "repl-backlog-size"}


def config_all(handle) -> dict[str, str]:
    client = handle.client(decode_responses=True)
    try:
        return client.config_get("*")
    finally:
        client.close()


def set_reply(wire: Wire, *args: str) -> bytes:
    return wire.call("CONFIG", "SET", *args)


def test_config_get_lists_every_redis_parameter_with_its_default(both):
    ours, ref = both
    mine = config_all(ours)
    theirs = config_all(ref)
    missing = sorted(set(theirs) - set(mine) - CONFIG_OMITTED)
    assert not missing, missing
    assert set(mine) - set(theirs) <= RILLET_ONLY, set(mine) - set(theirs) - RILLET_ONLY
    differ = {name: (mine[name], theirs[name]) for name in theirs
              if name in mine and mine[name] != theirs[name] and name not in VALUE_DIFFERS}
    assert not differ, differ


def test_config_set_validates_as_redis(both):
    ours, ref = both
    theirs = config_all(ref)
    mine = config_all(ours)
    problems = []
    with Wire(ours.port) as our_wire, Wire(ref.port) as ref_wire:
        for name in sorted(set(theirs) - CONFIG_OMITTED):
            if name.startswith("tls-") or name in SET_DIFFERS:
                continue  # (tls-*: the reference has no TLS, CONFIG SET tls-port crashes it)
            for value in PROBES:
                expected = with_lrm_policies(set_reply(ref_wire, name, value))
                if not expected.startswith(b"-"):
                    set_reply(ref_wire, name, theirs[name])
                    if name in UNSAFE:
                        continue
                got = set_reply(our_wire, name, value)
                if not got.startswith(b"-"):
                    set_reply(our_wire, name, mine[name])
                if got != expected:
                    problems.append(f"CONFIG SET {name} {value!r}: {got!r}, Redis {expected!r}")
    assert config_all(ours) == mine
    assert not problems, "\n".join(problems)


def test_config_set_special_values(both):
    cases = [
        ("oom-score-adj-values", ["1 2 3", "10 5 1", "-2001 0 0", "1 2 x", ""]),
        ("latency-tracking-info-percentiles", ["1.5 2e1", "0.0001 100", "", "101", "x", "50"]),
        ("maxmemory-clients", ["10%", "0%", "5mb", "%", "1000%", "-1%", "0"]),
        ("shutdown-on-sigint", ["save now", "now save", "nosave force", "default", "now"]),
        ("oom-score-adj", ["relative", "absolute", "yes", "no"]),
        ("sanitize-dump-payload", ["clients", "no"]),
        ("hash-max-ziplist-entries", ["100", "-1"]),
        ("cluster-slave-validity-factor", ["3", "-1"]),
        ("locale-collate", ["C", "POSIX", "xx", ""]),
        ("max-new-connections-per-cycle", ["0", "1001", "-1", "5"]),
    ]
    with Wire(both[0].port) as ours, Wire(both[1].port) as ref:
        for name, values in cases:
            for value in values:
                assert set_reply(ours, name, value) == set_reply(ref, name, value), (name, value)
                got, expected = (w.call("CONFIG", "GET", name) for w in (ours, ref))
                assert got == expected, (name, value, got, expected)


def test_config_set_several_is_all_or_nothing(both):
    with Wire(both[0].port) as ours, Wire(both[1].port) as ref:
        for args in (("activedefrag", "yes", "maxmemory-clients", "bogus"),
                     ("lazyfree-lazy-expire", "yes", "oom-score-adj-values", "1 2"),
                     ("shutdown-timeout", "3", "nosuch-param", "1"),
                     ("dynamic-hz", "no", "dynamic-hz", "yes")):
            assert set_reply(ours, *args) == set_reply(ref, *args), args
            for name in args[::2]:
                assert ours.call("CONFIG", "GET", name) == ref.call("CONFIG", "GET", name), args
        args = ("activedefrag", "yes", "shutdown-timeout", "3")
        assert set_reply(ours, *args) == set_reply(ref, *args) == b"+OK\r\n"
        for w in (ours, ref):
            set_reply(w, "activedefrag", "no", "shutdown-timeout", "10")


def test_config_set_failing_to_apply_undoes_what_it_applied(both):
    """A port that cannot be bound fails CONFIG SET after maxmemory was applied: the
    old value comes back and is applied again (restoreBackupConfig), so writes go on."""
    blocker = socket.create_server(("127.0.0.1", 0))
    busy = str(blocker.getsockname()[1])
    try:
        with Wire(both[0].port) as ours, Wire(both[1].port) as ref:
            args = ("maxmemory", "1", "port", busy)
            got = set_reply(ours, *args)
            assert got == set_reply(ref, *args) and got.startswith(b"-ERR CONFIG SET failed")
            for call in (("SET", "restored", "1"), ("CONFIG", "GET", "maxmemory"),
                         ("DEL", "restored")):
                assert ours.call(*call) == ref.call(*call), call
    finally:
        blocker.close()
        for handle in both:
            with Wire(handle.port) as wire:
                set_reply(wire, "maxmemory", "0")


def test_config_rewrite_writes_new_parameters_as_redis(tmp_path):
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("redis8 binary not available")
    changes = [("oom-score-adj-values", "1 2 3"), ("latency-tracking-info-percentiles", "50 99.9"),
               ("shutdown-on-sigterm", "now save"), ("cluster-slave-validity-factor", "3"),
               ("hash-max-ziplist-entries", "100"), ("maxmemory-clients", "10%"),
               ("activedefrag", "no"), ("proc-title-template", "{title} x"),
               ("ignore-warnings", "")]
    lines = {}
    for kind in ("rillet", "redis8"):
        work = tmp_path / kind
        work.mkdir()
        conf = work / "server.conf"
        conf.write_text("# mine\nactive-expire-effort 3\nhash-max-ziplist-value 100\n")
        if kind == "rillet":
            handle = servers.start_rillet(dir=str(work), config=str(conf))
        else:
            handle = servers.start_redis(binary, kind=kind, dir=str(work), config=str(conf))
        try:
            with Wire(handle.port) as wire:
                for name, value in changes:
                    assert set_reply(wire, name, value) == b"+OK\r\n", (kind, name)
                assert wire.call("CONFIG", "REWRITE") == b"+OK\r\n"
            text = conf.read_text()
        finally:
            handle.stop()
        names = {name for name, _ in changes} | {"active-expire-effort", "hash-max-listpack-value",
                                                 "hash-max-listpack-entries",
                                                 "cluster-replica-validity-factor"}
        lines[kind] = [line for line in text.splitlines()
                       if line.split(" ", 1)[0] in names or line.startswith("#")]
    # The same lines; the order of the appended ones is each server's table order.
    assert sorted(lines["rillet"]) == sorted(lines["redis8"]), lines
    assert lines["rillet"][:3] == lines["redis8"][:3]


@pytest.mark.parametrize(("setting", "saved"), [("nosave", False), ("default", True)])
def test_shutdown_on_sigterm_save_or_not(tmp_path, setting, saved):
    # With save points, SIGTERM saves (Redis's default); shutdown-on-sigterm NOSAVE skips it.
    handle = servers.start_rillet("--save", "3600 1000", "--shutdown-on-sigterm", setting,
                                  dir=str(tmp_path))
    try:
        with Wire(handle.port) as wire:
            assert wire.call("SET", "k", "v") == b"+OK\r\n"
    finally:
        handle.stop()  # SIGTERM
    assert handle.proc.returncode == 0
    assert (tmp_path / "dump.rdb").exists() == saved


def test_config_rewrite_after_replicaof_as_sentinel_does(tmp_path):
    """Sentinel's failover: MULTI, REPLICAOF, CONFIG REWRITE, CLIENT KILL, EXEC; then
    REPLICAOF NO ONE and a rewrite drop the line again."""
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("redis8 binary not available")
    seen = {}
    for kind in ("rillet", "redis8"):
        work = tmp_path / kind
        work.mkdir()
        conf = work / "server.conf"
        conf.write_text("# mine\nreplicaof 127.0.0.1 1\n")
        start = servers.start_rillet if kind == "rillet" else functools.partial(
            servers.start_redis, binary, kind=kind)
        handle = start(dir=str(work), config=str(conf))
        texts = []
        try:
            with Wire(handle.port) as wire:
                assert wire.call("REPLICAOF", "NO", "ONE") == b"+OK\r\n"
                assert wire.call("CONFIG", "REWRITE") == b"+OK\r\n"
                texts.append(conf.read_text())
                for args in (("MULTI",), ("REPLICAOF", "127.0.0.1", "2"), ("CONFIG", "REWRITE"),
                             ("CLIENT", "KILL", "TYPE", "pubsub")):
                    wire.call(*args)
                assert wire.call("EXEC") == b"*3\r\n+OK\r\n+OK\r\n:0\r\n"
                texts.append(conf.read_text())
        finally:
            handle.stop()
        seen[kind] = [[line for line in text.splitlines() if not line.startswith(("dir ", "save ",
                       "logfile ", "appendonly ", "daemonize ", "bind ", "port "))]
                      for text in texts]
    assert seen["rillet"] == seen["redis8"], seen
    assert seen["rillet"][1][-1] == "replicaof 127.0.0.1 2"
