"""CLUSTER/ASKING/READONLY/READWRITE, MODULE, MEMORY, LATENCY HISTOGRAM/GRAPH, LOLWUT,
COMMAND GETKEYSANDFLAGS and SCRIPT DEBUG against a standalone Redis 8.2.3 (raw replies)."""

from __future__ import annotations

import hiredis
import pytest

from rillet import REDIS_COMPAT_VERSION
from rillet.observe import HISTOGRAM_COUNTERS, SMALL_US, hdr_index, hdr_range, values_at_percentiles


def parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    return reader.gets()


SAME = """asking|asking x|readonly|readonly x|readwrite|readwrite x|cluster|cluster help
cluster help x|cluster keyslot foo|cluster keyslot|cluster info|cluster myid|cluster myshardid
cluster nodes|cluster slots|cluster shards|cluster links|cluster countkeysinslot 1
cluster getkeysinslot 1 1|cluster addslots 1|cluster addslotsrange 1 2|cluster bumpepoch
cluster count-failure-reports x|cluster delslots 1|cluster delslotsrange 1 2|cluster failover
cluster flushslots|cluster forget x|cluster meet 127.0.0.1 1|cluster replicas x
cluster replicate x|cluster reset|cluster saveconfig|cluster set-config-epoch 1
cluster setslot 1 stable|cluster slaves x|cluster slot-stats slotsrange 0 1|cluster nosuch
cluster info x|cluster keyslot a b|CLUSTER KeySlot a|module|module help|module list x
module load /nonexistent.so|module loadex /nonexistent.so
module loadex /nonexistent.so CONFIG a b ARGS x|module unload foo|module nosuch|module load
memory|memory help|memory purge|memory nosuch|memory doctor x|memory stats x
memory malloc-stats x|lolwut version x|script debug no|script debug maybe|script debug
command getkeysandflags get a|command getkeysandflags set a b|command getkeysandflags ping
command getkeysandflags|command getkeysandflags nosuch a|command getkeysandflags get
command getkeysandflags mset a 1 b 2|command getkeysandflags rename a b
command getkeysandflags xread COUNT 1 STREAMS a b 0 0|command getkeysandflags lmove a b LEFT RIGHT
command getkeysandflags config get x|latency graph command|latency graph|latency graph nosuch
latency histogram nosuch|latency histogram nosuch other""".replace("\n", "|").split("|")


@pytest.mark.parametrize("line", SAME)
def test_same_reply(pair8, line):
    pair8.check(*line.split())


@pytest.mark.parametrize("resp", ["2", "3"])
def test_memory_doctor_and_script_debug_no(pair8, resp):
    pair8.both("HELLO", resp)
    # The report depends on each server's history (Redis's peak memory): its type only.
    ours, ref = pair8.both("MEMORY", "DOCTOR")
    assert ours[:1] == ref[:1] == (b"$" if resp == "2" else b"=")
    assert b"Hi Sam" in ours
    pair8.check("SCRIPT", "DEBUG", "NO")
    pair8.check("COMMAND", "GETKEYSANDFLAGS", "set", "k", "v", "GET")


def test_module_list_has_vectorset(pair8):
    # Redis 8 has its vector sets module built in; rillet has the same commands.
    pair8.check("MODULE", "LIST")
    pair8.check("INFO", "modules")


def test_module_load_when_allowed(rillet_server):
    from tests.helpers.servers import start_rillet
    from tests.helpers.wire import Wire

    server = start_rillet("--enable-module-command", "yes")
    try:
        with Wire(server.port) as wire:
            assert wire.call("MODULE", "LOAD", "/x.so") == (
                b"-ERR Error loading the extension. Please check the server logs.\r\n")
            assert wire.call("MODULE", "LOADEX", "/x.so", "ARGS", "a").startswith(
                b"-ERR Error loading the extension.")
            assert wire.call("MODULE", "UNLOAD", "x") == (
                b"-ERR Error unloading module: no such module with that name\r\n")
            assert wire.call("MODULE", "UNLOAD", "VectorSet") == (
                b"-ERR Error unloading module: the module can't be unloaded\r\n")
    finally:
        server.stop()


def test_script_debug_yes_is_refused(pair8):
    for mode in ("YES", "sync"):
        assert pair8.ours.call("SCRIPT", "DEBUG", mode).startswith(
            b"-ERR SCRIPT DEBUG YES/SYNC is not supported")
    for wire in (pair8.ours, pair8.ref):
        wire.call("MULTI")
        wire.call("SCRIPT", "DEBUG", "NO")
    pair8.check("EXEC")


def test_lolwut_ends_with_the_version_line(pair8):
    for args in ((), ("VERSION", "8"), ("VERSION", "7", "1", "2")):
        raw = pair8.ours.call("LOLWUT", *args)
        assert parse(raw) == f"Redis ver. {REDIS_COMPAT_VERSION}\n".encode()
    assert parse(pair8.ref.call("LOLWUT", "VERSION", "7")) == b"Redis ver. 8.2.3\n"


NAMES = ["asking", "readonly", "readwrite", "cluster", "module", "memory", "latency", "lolwut",
         "command|getkeysandflags", "script|debug"]


def _docs(raw: bytes) -> dict:
    docs = parse(raw)
    return docs if isinstance(docs, dict) else dict(zip(docs[::2], docs[1::2], strict=True))


def test_command_docs_match_redis(pair8):
    pair8.both("HELLO", "3")
    ours = _docs(pair8.ours.call("COMMAND", "DOCS", *NAMES))
    ref = _docs(pair8.ref.call("COMMAND", "DOCS", *NAMES))
    fields = (b"summary", b"since", b"group", b"complexity")

    def compare(o, r, name):
        for field in fields:
            assert o.get(field) == r.get(field), (name, field)
        assert set(o.get(b"subcommands", {})) >= set(r.get(b"subcommands", {})), name
        for sub, sub_docs in r.get(b"subcommands", {}).items():
            if sub == b"memory|usage":
                continue  # keys.py's, not this surface's
            compare(o[b"subcommands"][sub], sub_docs, sub)

    for name in ref:
        if name in (b"command", b"script"):
            continue
        compare(ours[name], ref[name], name)


def test_memory_stats_fields_in_redis_order(pair8):
    for resp in ("2", "3"):
        pair8.both("HELLO", resp)
        ours, ref = (parse(w.call("MEMORY", "STATS")) for w in (pair8.ours, pair8.ref))
        if resp == "2":
            ours, ref = ours[::2], ref[::2]
        assert list(ours) == list(ref)
    pair8.ours.call("SET", "k", "v" * 1000)
    stats = parse(pair8.ours.call("MEMORY", "STATS"))
    assert stats[b"keys.count"] == 1 and stats[b"dataset.bytes"] > 0


def test_latency_histogram_shape(pair8):
    for wire in (pair8.ours, pair8.ref):
        wire.call("CONFIG", "RESETSTAT")
        wire.call("HELLO", "3")
        for n in range(40):
            wire.call("SET", f"k{n}", "v")
        wire.call("GET", "k1")
    ours, ref = (parse(w.call("LATENCY", "HISTOGRAM", "set", "get", "nosuch", "config"))
                 for w in (pair8.ours, pair8.ref))
    assert list(ours) == list(ref) == [b"set", b"get", b"config|resetstat"]
    for name, calls in ((b"set", 40), (b"get", 1)):
        for reply in (ours, ref):
            assert list(reply[name]) == [b"calls", b"histogram_usec"]
            assert reply[name][b"calls"] == calls
            buckets = reply[name][b"histogram_usec"]
            assert list(buckets.values()) == sorted(buckets.values())
            assert list(buckets.values())[-1] == calls
        assert set(ours[name][b"histogram_usec"]) <= {
            1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633,
            135266, 270532, 541065, 1082130}
    whole = parse(pair8.ours.call("LATENCY", "HISTOGRAM"))
    assert b"set" in whole and b"hello" in whole
    pair8.ours.call("CONFIG", "SET", "latency-tracking", "no")
    pair8.ours.call("CONFIG", "RESETSTAT")
    pair8.ours.call("GET", "k1")
    assert parse(pair8.ours.call("LATENCY", "HISTOGRAM", "get")) == {}
    pair8.ours.call("CONFIG", "SET", "latency-tracking", "yes")


def _latencystats(wire) -> dict[str, dict[str, float]]:
    text = parse(wire.call("INFO", "latencystats")).decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("latency_percentiles_usec_"):
            name, _, figures = line.partition(":")
            out[name] = {k: float(v) for k, v in (part.split("=") for part in figures.split(","))}
    return out


def test_latencystats_percentiles_are_hdr_values(pair8):
    """INFO latencystats reads an HDR histogram of two significant digits, as Redis's:
    each figure is the highest value equivalent to a recorded duration (13 us prints
    13.055), not a power-of-two bucket's bound."""
    for wire in (pair8.ours, pair8.ref):
        wire.call("CONFIG", "RESETSTAT")
        for n in range(40):
            wire.call("SET", f"k{n}", "v")
        wire.call("EVAL", "for i = 1, 20000 do redis.call('GET', 'k1') end", "0")
    ours, ref = _latencystats(pair8.ours), _latencystats(pair8.ref)
    assert set(ref) == set(ours) and "latency_percentiles_usec_eval" in ref
    for figures in (ours, ref):
        for name, values in figures.items():
            assert list(values) == ["p50", "p99", "p99.9"], name
            for value in values.values():
                ns = round(value * 1000)
                assert hdr_range(hdr_index(ns))[1] == ns, (name, value)
    pair8.both("CONFIG", "SET", "latency-tracking-info-percentiles", "0 50 100")
    try:
        for figures in (_latencystats(pair8.ours), _latencystats(pair8.ref)):
            assert list(figures["latency_percentiles_usec_set"]) == ["p0", "p50", "p100"]
    finally:
        pair8.both("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")


def test_hdr_percentiles_match_redis_figures():
    """values_at_percentiles against figures Redis 8.2.3 printed for one-call histograms,
    and the count rounding of hdr_value_at_percentile."""
    for us, shown in ((0, 0.001), (1, 1.003), (3, 3.007), (12, 12.031), (13, 13.055),
                      (21, 21.119), (684, 684.031), (5_000_000, 1002438.655)):
        histogram = [0] * HISTOGRAM_COUNTERS
        histogram[SMALL_US[us] if us < len(SMALL_US) else hdr_index(min(us * 1000, 10**9))] = 1
        assert values_at_percentiles(histogram, [50]) == [round(shown * 1000)], us
    histogram = [0] * HISTOGRAM_COUNTERS
    for us, count in ((1, 50), (13, 49), (900, 1)):
        histogram[SMALL_US[us]] += count
    assert values_at_percentiles(histogram, [0, 50, 99, 99.9, 100]) == [
        1000, 1003, 13055, 901119, 901119]


def test_histogram_steps_end_where_a_search_finds():
    # observe._STEP_ENDS comes from each step's own counter; a search of every counter
    # says the same (LATENCY HISTOGRAM's steps against Redis: test above).
    from rillet.observe import _STEP_ENDS, _STEP_NS

    searched = [max(i + 1 for i in range(HISTOGRAM_COUNTERS) if hdr_range(i)[1] <= top)
                for top in _STEP_NS[:-1]] + [HISTOGRAM_COUNTERS]
    assert _STEP_ENDS == searched


def test_debug_is_one_command_in_its_statistics(pair8):
    # DEBUG is one (protected) command in Redis: any subcommand, known or not, is
    # refused alike and counted under cmdstat_debug.
    pair8.both("CONFIG", "RESETSTAT")
    for line in ("DEBUG HELP", "DEBUG SLEEP 0", "DEBUG nosuch", "DEBUG OBJECT k", "debug|sleep 0"):
        pair8.check(*line.split())
    ours, ref = (parse(raw).decode().splitlines() for raw in pair8.both("INFO", "commandstats"))
    debug = [[line for line in lines if "debug" in line] for lines in (ours, ref)]
    assert debug[0] == debug[1] == [
        "cmdstat_debug:calls=0,usec=0,usec_per_call=0.00,rejected_calls=4,failed_calls=0"]
    pair8.check("LATENCY", "HISTOGRAM", "debug", "debug|sleep")


def test_protected_commands_are_refused_before_multi_queues_them(pair8):
    # Redis's CMD_PROTECTED check (processCommand) comes before MULTI queues a command:
    # the refusal is the queueing reply and EXEC aborts. All of DEBUG is protected.
    pair8.check("MULTI")
    pair8.check("MODULE", "LOAD", "/nonexistent.so")
    pair8.check("MODULE", "LIST")
    pair8.check("EXEC")
    pair8.check("DEBUG", "HELP")
    pair8.check("MULTI")
    pair8.check("DEBUG", "SLEEP", "0")
    pair8.check("EXEC")


@pytest.mark.parametrize("line", [
    "eval x 2 a b c", "eval_ro x 1 k", "evalsha x 1 k", "fcall f 0", "fcall_ro f 1 k",
    "zunionstore d 2 a b", "blmpop 0 2 a b LEFT", "xreadgroup GROUP g c STREAMS s t > >",
])
def test_getkeys_of_movable_keys(pair8, line):
    pair8.check("COMMAND", "GETKEYS", *line.split())
    pair8.check("COMMAND", "GETKEYSANDFLAGS", *line.split())


def test_acl_checks_a_scripts_declared_keys(pair8):
    # Redis checks EVAL's and FCALL's declared keys against the user's key patterns
    # (their keynum key spec), before the script runs.
    pair8.check("ACL", "SETUSER", "scripter", "on", "nopass", "~foo*", "+@all")
    try:
        pair8.check("AUTH", "scripter", "x")
        pair8.check("EVAL", "return 1", "1", "foo1")
        pair8.check("EVAL", "return 1", "1", "bar")
        pair8.check("EVAL_RO", "return 1", "2", "foo1", "bar")
        pair8.check("FCALL", "nosuch", "1", "bar")
    finally:
        pair8.check("AUTH", "default", "x")
        pair8.check("ACL", "DELUSER", "scripter")
