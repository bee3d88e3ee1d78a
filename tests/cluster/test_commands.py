"""CLUSTER's subcommands on one node, byte for byte against Redis 8.2.3 (cluster-enabled yes)."""

from __future__ import annotations

import pytest

from tests.cluster import support
from tests.helpers import servers
from tests.helpers.wire import Wire


@pytest.fixture(scope="module")
def pair():
    both = support.start_pair()
    yield both
    both.close()


# Every subcommand's argument errors, on a node that serves no slot.
ERRORS = [
    ("CLUSTER", "KEYSLOT"), ("CLUSTER", "KEYSLOT", "a", "b"),
    ("CLUSTER", "COUNTKEYSINSLOT", "x"), ("CLUSTER", "COUNTKEYSINSLOT", "-1"),
    ("CLUSTER", "COUNTKEYSINSLOT", "16384"),
    ("CLUSTER", "GETKEYSINSLOT", "1", "-1"), ("CLUSTER", "GETKEYSINSLOT", "x", "1"),
    ("CLUSTER", "GETKEYSINSLOT", "16384", "1"), ("CLUSTER", "GETKEYSINSLOT", "1", "x"),
    ("CLUSTER", "ADDSLOTS", "x"), ("CLUSTER", "ADDSLOTS", "16384"), ("CLUSTER", "ADDSLOTS", "-1"),
    ("CLUSTER", "ADDSLOTS", "1", "1"), ("CLUSTER", "ADDSLOTS", "1", "x"),
    ("CLUSTER", "ADDSLOTSRANGE", "1"), ("CLUSTER", "ADDSLOTSRANGE", "5", "1"),
    ("CLUSTER", "ADDSLOTSRANGE", "1", "3", "2", "4"), ("CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"),
    ("CLUSTER", "DELSLOTS", "100"), ("CLUSTER", "DELSLOTSRANGE", "100", "200"),
    ("CLUSTER", "SETSLOT", "1", "NODE", "abc"), ("CLUSTER", "SETSLOT", "1", "foo"),
    ("CLUSTER", "SETSLOT", "1", "IMPORTING", "abc"),
    ("CLUSTER", "SETSLOT", "1", "MIGRATING", "abc"),
    ("CLUSTER", "SETSLOT", "x", "STABLE"), ("CLUSTER", "SETSLOT", "1", "STABLE", "x"),
    ("CLUSTER", "SETSLOT", "1", "NODE"),
    ("CLUSTER", "MEET", "1.2.3.x", "5"), ("CLUSTER", "MEET", "127.0.0.1", "x"),
    ("CLUSTER", "MEET", "127.0.0.1", "70000"), ("CLUSTER", "MEET", "127.0.0.1", "6000", "x"),
    ("CLUSTER", "MEET", "127.0.0.1", "60000"), ("CLUSTER", "MEET", "127.0.0.1", "5", "6", "7"),
    ("CLUSTER", "MEET", "127.0.0.1", "0"),
    ("CLUSTER", "FORGET", "abc"), ("CLUSTER", "REPLICATE", "abc"), ("CLUSTER", "REPLICAS", "abc"),
    ("CLUSTER", "SLAVES", "abc"), ("CLUSTER", "COUNT-FAILURE-REPORTS", "abc"),
    ("CLUSTER", "SET-CONFIG-EPOCH", "x"), ("CLUSTER", "SET-CONFIG-EPOCH", "-1"),
    ("CLUSTER", "RESET", "foo"), ("CLUSTER", "RESET", "soft", "foo"),
    ("CLUSTER", "FOO"), ("CLUSTER", "FAILOVER"), ("CLUSTER", "FAILOVER", "foo"),
    ("CLUSTER", "FAILOVER", "a", "b"), ("CLUSTER", "MYID", "x"),
    ("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "16384"),
    ("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "5", "1"),
    ("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "x", "1"),
    ("CLUSTER", "SLOT-STATS", "ORDERBY", "foo"), ("CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec"),
    ("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", "0"),
    ("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", "x"),
    ("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "foo"),
    ("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "ASC", "DESC"),
    ("CLUSTER", "SLOT-STATS", "FOO", "1", "2"),
    ("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "1", "2", "3"),
    ("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "2"),
    ("SELECT", "1"), ("SELECT", "x"), ("SELECT", "0"), ("SWAPDB", "0", "1"), ("MOVE", "foo", "1"),
    ("REPLICAOF", "127.0.0.1", "1"), ("SET", "foo", "1"), ("GET", "foo"),
    ("MSET", "a", "1", "b", "2"), ("MSET", "a{x}", "1", "b{x}", "2"), ("PING",), ("DBSIZE",),
    ("ASKING",), ("READONLY",), ("READWRITE",), ("ASKING", "x"),
]


@pytest.mark.parametrize("args", ERRORS, ids=" ".join)
def test_argument_errors_and_unserved_slots(pair, args):
    pair.check(*args)


@pytest.mark.parametrize("key", ["foo", "bar", "{user1000}.following", "{user1000}.followers",
                                 "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{}", "", "a{b",
                                 "}{a}", "123456789", "\xff\x00\x01"])
def test_keyslot(pair, key):
    pair.check("CLUSTER", "KEYSLOT", key)


@pytest.mark.parametrize("sub", ["INFO", "NODES", "SLOTS", "SHARDS", "MYID", "MYSHARDID", "HELP",
                                 "LINKS"])
def test_a_fresh_node(pair, sub):
    pair.check("CLUSTER", sub)


def test_info_cluster_section_and_hello_mode(pair):
    pair.check("INFO", "cluster")
    assert b"redis_mode:cluster" in pair.ours.call("INFO", "server")
    ours = Wire(pair.servers[0].port)
    try:
        assert b"cluster" in ours.call("HELLO", "3").split(b"mode\r\n")[1][:20]
    finally:
        ours.close()


def test_slots_assigned_then_taken_back(pair):
    try:
        pair.check("CLUSTER", "ADDSLOTSRANGE", "0", "100", "16000", "16383")
        pair.check("CLUSTER", "ADDSLOTS", "200", "300", "5000")
        pair.check("CLUSTER", "ADDSLOTS", "300")
        pair.check("CLUSTER", "ADDSLOTSRANGE", "90", "110")
        for sub in ("NODES", "SLOTS", "SHARDS", "INFO"):
            pair.check("CLUSTER", sub)
        pair.check("CLUSTER", "DELSLOTS", "200", "5000")
        pair.check("CLUSTER", "DELSLOTS", "200")
        pair.check("CLUSTER", "DELSLOTSRANGE", "16000", "16100", "0", "10")
        pair.check("CLUSTER", "DELSLOTSRANGE", "0", "10")
        pair.check("CLUSTER", "NODES")
        pair.check("CLUSTER", "SLOTS")
        pair.check("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "20")
        pair.check("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", "3", "ASC")
        pair.check("CLUSTER", "FLUSHSLOTS")
        pair.check("CLUSTER", "NODES")
        pair.check("CLUSTER", "INFO")
    finally:
        pair.both("CLUSTER", "FLUSHSLOTS")


def test_setslot_with_myself(pair):
    ours_id, ref_id = support.myid(pair.ours), support.myid(pair.ref)
    try:
        pair.check("CLUSTER", "ADDSLOTSRANGE", "0", "10")
        for action in ("MIGRATING", "IMPORTING", "NODE"):
            for slot in ("5", "20"):
                ours = pair.ours.call("CLUSTER", "SETSLOT", slot, action, ours_id)
                ref = pair.ref.call("CLUSTER", "SETSLOT", slot, action, ref_id)
                assert ours == ref, (slot, action)
                pair.check("CLUSTER", "NODES")
        pair.check("CLUSTER", "SETSLOT", "5", "STABLE")
        pair.check("CLUSTER", "NODES")
        assert pair.ours.call("CLUSTER", "REPLICATE", ours_id) == \
            pair.ref.call("CLUSTER", "REPLICATE", ref_id)
        assert pair.ours.call("CLUSTER", "FORGET", ours_id) == \
            pair.ref.call("CLUSTER", "FORGET", ref_id)
        assert pair.ours.call("CLUSTER", "REPLICAS", ours_id) == \
            pair.ref.call("CLUSTER", "REPLICAS", ref_id)
        assert pair.ours.call("CLUSTER", "COUNT-FAILURE-REPORTS", ours_id) == \
            pair.ref.call("CLUSTER", "COUNT-FAILURE-REPORTS", ref_id)
    finally:
        pair.both("CLUSTER", "FLUSHSLOTS")


def test_a_node_serving_every_slot(pair):
    try:
        pair.check("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        for wire in (pair.ours, pair.ref):
            support.wait_state(wire, b"ok")
        pair.check("CLUSTER", "INFO")
        pair.check("SET", "foo", "1")
        pair.check("GET", "foo")
        pair.check("MSET", "a", "1", "b", "2")
        pair.check("MSET", "a{t}", "1", "b{t}", "2")
        pair.check("CLUSTER", "COUNTKEYSINSLOT", "12182")
        pair.check("CLUSTER", "GETKEYSINSLOT", "12182", "10")
        pair.check("CLUSTER", "GETKEYSINSLOT", "12182", "0")
        pair.check("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "12180", "12183")
        pair.check("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", "2")
        pair.check("COPY", "foo", "bar", "DB", "1")
        pair.check("COPY", "foo", "f{foo}", "DB", "0")
        pair.check("COPY", "foo", "f{foo}", "DB", "0")
        pair.check("MOVE", "foo", "1")
        pair.check("EVAL", "return redis.call('get', KEYS[1])", "1", "foo")
        pair.check("EVAL", "return 1", "2", "foo", "bar")
        pair.check("MULTI")
        pair.check("SET", "a", "1")
        pair.check("SET", "b", "1")
        pair.check("EXEC")
        pair.check("GET", "a")
        pair.check("SPUBLISH", "ch", "hi")
        pair.check("SSUBSCRIBE", "a", "b")
        pair.check("CLUSTER", "RESET")
        pair.check("FLUSHALL")
        pair.check("CLUSTER", "SET-CONFIG-EPOCH", "7")
        pair.check("CLUSTER", "SET-CONFIG-EPOCH", "8")
        pair.check("CLUSTER", "BUMPEPOCH")
        pair.check("CLUSTER", "INFO")
    finally:
        pair.both("FLUSHALL")
        pair.both("CLUSTER", "FLUSHSLOTS")


def test_what_the_node_announces(pair):
    try:
        pair.check("CLUSTER", "ADDSLOTS", "1")
        pair.check("READONLY")
        pair.check("CLIENT", "INFO", normalise=lambda raw: raw.split(b" flags=")[1][:2])
        pair.check("MULTI")
        pair.check("ASKING")
        pair.check("EXEC")
        pair.check("CONFIG", "SET", "cluster-announce-ip", "10.0.0.1")
        pair.check("CLUSTER", "NODES")
        pair.check("CONFIG", "SET", "cluster-announce-hostname", "foo.example")
        pair.check("CONFIG", "SET", "cluster-announce-human-nodename", "bee")
        for kind in ("ip", "hostname", "unknown-endpoint"):
            pair.check("CONFIG", "SET", "cluster-preferred-endpoint-type", kind)
            for sub in ("NODES", "SLOTS", "SHARDS"):
                pair.check("CLUSTER", sub)
        files = [open(f"{server.dir}/nodes.conf").read() for server in pair.servers]
        ids = [support.myid(pair.ours).decode(), support.myid(pair.ref).decode()]
        shards = [support.myshardid(pair.ours).decode(), support.myshardid(pair.ref).decode()]
        for i in range(2):
            files[i] = files[i].replace(ids[i], "<id>").replace(shards[i], "<shard>").replace(
                str(pair.servers[i].port), "<port>").replace(str(pair.servers[i].port + 10000),
                                                             "<cport>")
        assert files[0] == files[1]
    finally:
        pair.both("READWRITE")
        pair.both("CONFIG", "SET", "cluster-preferred-endpoint-type", "ip")
        for name in ("cluster-announce-ip", "cluster-announce-hostname",
                     "cluster-announce-human-nodename"):
            pair.both("CONFIG", "SET", name, "")
        pair.both("CLUSTER", "FLUSHSLOTS")


def test_reset_hard_takes_a_new_name(pair):
    before = support.myid(pair.ours)
    pair.check("CLUSTER", "BUMPEPOCH")
    pair.check("CLUSTER", "RESET", "HARD")
    assert support.myid(pair.ours) != before
    pair.remask()
    pair.check("CLUSTER", "NODES")
    pair.check("CLUSTER", "INFO")


def test_cluster_disabled_answers_stay():
    ours = servers.start_rillet()
    try:
        wire = Wire(ours.port)
        disabled = b"-ERR This instance has cluster support disabled\r\n"
        assert wire.call("CLUSTER", "INFO") == disabled
        assert wire.call("ASKING") == disabled
        assert wire.call("SELECT", "1") == b"+OK\r\n"
        assert b"cluster_enabled:0" in wire.call("INFO", "cluster")
        wire.close()
    finally:
        ours.stop()
