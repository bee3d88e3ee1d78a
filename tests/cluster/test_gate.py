"""The dispatcher's cluster gate (Redis's getNodeByQuery) on a node of a two-master
cluster, against Redis 8.2.3 given the same nodes.conf: -MOVED, -ASK, -CROSSSLOT,
-TRYAGAIN, -CLUSTERDOWN, ASKING, READONLY, MULTI/EXEC, scripts, sharded pub/sub.

The other master (B) is only a line of nodes.conf: nobody listens on its ports, and
the node timeout is long enough that Redis's bus does not find it failing meanwhile.
"""

from __future__ import annotations

import pytest

from tests.cluster import support
from tests.helpers.wire import Wire

A = "a" * 40
B = "b" * 40
SHARD_A = "1" * 40
SHARD_B = "2" * 40


def nodes_conf(b_port: int) -> str:
    return (f"{A} :0@0,,tls-port=0,shard-id={SHARD_A} myself,master - 0 0 1 connected 0-8191\n"
            f"{B} 127.0.0.1:{b_port}@{b_port + 10000},,tls-port=0,shard-id={SHARD_B} master - 0 0 2"
            f" connected 8192-16383\n"
            "vars currentEpoch 2 lastVoteEpoch 0\n")


@pytest.fixture(scope="module")
def pair():
    b_port = support.free_cluster_port()
    text = nodes_conf(b_port)
    both = support.start_pair(text)
    both.b_port = b_port
    for wire in (both.ours, both.ref):
        support.wait_state(wire, b"ok")
    yield both
    both.close()


MINE = support.key_in(0, 8191, "mine")
MINE2 = support.key_in(0, 8191, "other")
THEIRS = support.key_in(8192, 16383, "theirs")


def _slot(key: str) -> int:
    from rillet.cluster.keyslot import key_slot

    return key_slot(key.encode())


def test_the_node_table_from_nodes_conf(pair):
    assert support.myid(pair.ours) == A.encode()
    pair.check("CLUSTER", "INFO", normalise=support.without_bus_stats)
    for sub in ("SLOTS", "MYSHARDID"):
        pair.check("CLUSTER", sub)
    pair.check("CLUSTER", "NODES", normalise=support.sorted_nodes)
    pair.check("CLUSTER", "REPLICAS", B)
    pair.check("CLUSTER", "COUNT-FAILURE-REPORTS", B)
    pair.check("CLUSTER", "SET-CONFIG-EPOCH", "3")


@pytest.mark.parametrize("args", [
    ("SET", MINE, "1"), ("GET", MINE), ("SET", THEIRS, "1"), ("GET", THEIRS),
    ("MSET", MINE, "1", THEIRS, "2"), ("MSET", MINE, "1", MINE2, "2"),
    ("MGET", f"{{{THEIRS}}}x", f"{{{THEIRS}}}y"), ("DEL", MINE, MINE),
    ("EVAL", "return 1", "1", THEIRS), ("EVAL", "return 1", "0"), ("EVAL", "return 1", "1", MINE),
    ("XADD", THEIRS, "*", "f", "v"), ("XREAD", "STREAMS", THEIRS, "0"),
    ("SPUBLISH", THEIRS, "m"), ("SPUBLISH", MINE, "m"), ("PUBLISH", THEIRS, "m"),
    ("PING",), ("DBSIZE",), ("KEYS", "*"), ("CLUSTER", "KEYSLOT", THEIRS),
    ("COPY", MINE, THEIRS), ("RENAME", MINE, MINE2), ("OBJECT", "ENCODING", THEIRS),
    ("READONLY",), ("GET", THEIRS), ("READWRITE",),
])
def test_routing(pair, args):
    pair.check(*args)


@pytest.mark.parametrize("args", [
    ("RPUSH", f"{{{MINE}}}l", "2", "1", "3"), ("SET", f"{{{MINE}}}w_1", "9"),
    ("SORT", f"{{{MINE}}}l", "BY", "w_*"), ("SORT", f"{{{MINE}}}l", "BY", f"{{{MINE}}}w_*"),
    ("SORT", f"{{{MINE}}}l", "BY", "nosort"), ("SORT", f"{{{MINE}}}l", "GET", "#"),
    ("SORT", f"{{{MINE}}}l", "GET", "#x"), ("SORT", f"{{{MINE}}}l", "GET", "#\x00"),
    ("SORT", f"{{{MINE}}}l", "GET", "w_*"), ("SORT", f"{{{MINE}}}l", "GET", f"{{{MINE}}}w_*"),
    ("SORT", f"{{{MINE}}}l", "GET", "plain"), ("SORT", f"{{{MINE}}}l", "GET", f"{{{MINE}}}"),
    ("SORT", f"{{{MINE}}}l", "BY", "{}w_*"),
    ("SORT", f"{{{MINE}}}l", "BY", f"\\{{{MINE}}}w_*"), ("SORT", f"{{{MINE}}}l", "BY", "w_*",
                                                          "GET", "w_*"),
    ("SORT_RO", f"{{{MINE}}}l", "GET", "w_*"), ("DEL", f"{{{MINE}}}l", f"{{{MINE}}}w_1"),
])
def test_sort_patterns_keep_to_the_slot(pair, args):
    pair.check(*args)


def test_transactions(pair):
    pair.check("MULTI")
    pair.check("SET", THEIRS, "1")
    pair.check("SET", MINE, "1")
    pair.check("EXEC")
    pair.check("MULTI")
    pair.check("SET", MINE, "1")
    pair.check("SET", MINE2, "1")
    pair.check("EXEC")
    pair.check("EXISTS", MINE)
    pair.check("MULTI")
    pair.check("INCR", MINE)
    pair.check("EXEC")
    pair.check("SSUBSCRIBE", THEIRS)


@pytest.mark.parametrize("args", [
    ("EVAL", "return redis.call('get', KEYS[1])", "1", MINE),
    ("EVAL", f"return redis.call('get', '{THEIRS}')", "0"),
    ("EVAL", f"return redis.call('get', '{MINE2}')", "1", MINE),
    ("EVAL", f"redis.call('get', '{MINE}'); return redis.call('get', '{MINE2}')", "0"),
    ("EVAL", f"return redis.call('mget', '{MINE}', '{MINE2}')", "0"),
    ("EVAL", f"return redis.pcall('set', '{THEIRS}', 1)", "0"),
    ("EVAL", f"#!lua flags=allow-cross-slot-keys\nredis.call('get', '{MINE}');"
     f" return redis.call('get', '{MINE2}')", "0"),
    ("EVAL", f"#!lua flags=allow-cross-slot-keys\nreturn redis.call('get', '{THEIRS}')", "0"),
    ("EVAL", "#!lua flags=no-cluster\nreturn 1", "0"),
    ("EVAL", f"#!lua\nredis.call('get', '{MINE}'); return redis.call('get', '{MINE2}')", "0"),
    ("EVAL", f"#!lua\nreturn redis.call('get', '{MINE2}')", "1", MINE),
    ("EVAL", f"#!lua\nreturn redis.call('get', '{MINE}')", "1", MINE),
    ("FUNCTION", "LOAD", "REPLACE", "#!lua name=gate\nredis.register_function('g',"
     " function(keys, args) return redis.call('get', args[1]) end)"),
    ("FCALL", "g", "1", MINE, MINE2), ("FCALL", "g", "0", THEIRS), ("FCALL", "g", "1", MINE, MINE),
    ("EVAL", "return redis.call('ping')", "0"),
])
def test_scripts_keep_to_their_slot(pair, args):
    pair.check(*args)


def test_ask_and_tryagain_while_a_slot_migrates(pair):
    slot = _slot(MINE)
    key = MINE
    tagged = f"{{{MINE}}}2"
    try:
        pair.check("SET", key, "v")
        pair.check("CLUSTER", "SETSLOT", slot, "MIGRATING", B)
        pair.check("CLUSTER", "NODES", normalise=support.sorted_nodes)
        pair.check("GET", key)
        pair.check("GET", tagged)
        pair.check("MGET", key, tagged)
        pair.check("MIGRATE", "127.0.0.1", pair.b_port, "", "0", "1", "KEYS", tagged)
        pair.check("SPUBLISH", tagged, "m")
        pair.check("CLUSTER", "SETSLOT", slot, "NODE", B)
        pair.check("DEL", key)
        pair.check("CLUSTER", "SETSLOT", slot, "NODE", B)
        pair.check("CLUSTER", "NODES", normalise=support.sorted_nodes)
        pair.check("GET", key)
        pair.check("CLUSTER", "SETSLOT", slot, "NODE", A)
        pair.check("CLUSTER", "INFO", normalise=support.without_bus_stats)
    finally:
        pair.both("CLUSTER", "SETSLOT", slot, "STABLE")


def test_asking_while_a_slot_is_imported(pair):
    slot = _slot(THEIRS)
    try:
        pair.check("CLUSTER", "SETSLOT", slot, "IMPORTING", B)
        pair.check("GET", THEIRS)
        pair.check("ASKING")
        pair.check("GET", THEIRS)
        pair.check("GET", THEIRS)
        pair.check("ASKING")
        pair.check("SET", THEIRS, "1")
        pair.check("ASKING")
        pair.check("MSET", THEIRS, "1", f"{{{THEIRS}}}2", "2")
        pair.check("ASKING")
        pair.check("MULTI")
        pair.check("GET", THEIRS)
        pair.check("GET", f"{{{THEIRS}}}3")
        pair.check("EXEC")
        pair.check("ASKING")
        pair.check("MGET", THEIRS, f"{{{THEIRS}}}3")
        pair.check("CLUSTER", "NODES", normalise=support.sorted_nodes)
    finally:
        pair.both("CLUSTER", "SETSLOT", slot, "STABLE")
        pair.both("ASKING")
        pair.both("DEL", THEIRS, f"{{{THEIRS}}}2")


def test_a_cluster_that_is_down(pair):
    try:
        pair.check("CLUSTER", "DELSLOTSRANGE", "100", "200")
        for wire in (pair.ours, pair.ref):
            support.wait_state(wire, b"fail")
        pair.check("CLUSTER", "INFO", normalise=support.without_bus_stats)
        pair.check("SET", MINE, "1")
        pair.check("GET", MINE)
        pair.check("SPUBLISH", MINE, "m")
        pair.check("CONFIG", "SET", "cluster-allow-reads-when-down", "yes")
        pair.check("GET", MINE)
        pair.check("SET", MINE, "1")
        pair.check("CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "no")
        pair.check("SPUBLISH", MINE, "m")
        pair.check("CONFIG", "SET", "cluster-require-full-coverage", "no")
        for wire in (pair.ours, pair.ref):
            support.wait_state(wire, b"ok")
        pair.check("SET", MINE, "1")
        pair.check("GET", key := support.key_in(100, 200, "gone"))
        pair.check("SET", key, "1")
    finally:
        pair.both("CONFIG", "SET", "cluster-allow-reads-when-down", "no")
        pair.both("CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "yes")
        pair.both("CONFIG", "SET", "cluster-require-full-coverage", "yes")
        pair.both("CLUSTER", "ADDSLOTSRANGE", "100", "200")
        pair.both("DEL", MINE)


def test_shard_subscribers_of_a_slot_that_goes(pair):
    channel = support.key_in(0, 8191, "chan")
    kept = support.key_in(0, 8191, "kept")
    slot = _slot(channel)
    subscribers = [Wire(server.port) for server in pair.servers]
    try:
        for wire in subscribers:
            wire.call("SSUBSCRIBE", channel)
            wire.call("SSUBSCRIBE", kept)
        pair.check("CLUSTER", "DELSLOTS", slot)
        ours, ref = (wire.reader.read() for wire in subscribers)
        assert ours == ref == b"*3\r\n$12\r\nsunsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (
            len(channel), channel.encode())
        pair.check("PUBSUB", "SHARDNUMSUB", channel, kept)
        pair.check("CLUSTER", "ADDSLOTS", slot)
        pong = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"  # still subscribed to `kept`
        assert [wire.call("PING") for wire in subscribers] == [pong, pong]
    finally:
        for wire in subscribers:
            wire.close()
        pair.both("CLUSTER", "ADDSLOTS", slot)


def test_dead_letter_key_keeps_to_the_streams_slot(pair):
    # rillet only: RILLET.XDEADLETTER declares the dead-letter key as a key, so the
    # gate refuses one in another slot (docs/streams-policies.md). Redis gets a
    # CROSSSLOT of its own, so that errorstats below still compares equal counts.
    ours = pair.ours
    try:
        pair.check("XGROUP", "CREATE", MINE, "g", "$", "MKSTREAM")
        assert ours.call("RILLET.XDEADLETTER", MINE, "g", "3", MINE2).startswith(b"-CROSSSLOT")
        assert pair.ref.call("MSET", MINE, "1", MINE2, "2").startswith(b"-CROSSSLOT")
        assert ours.call("RILLET.XDEADLETTER", MINE, "g", "3", f"{{{MINE}}}:dead") == b"+OK\r\n"
    finally:
        pair.both("DEL", MINE)


def test_forget_the_other_master(pair):
    # Last: the node table loses B.
    pair.check("CLUSTER", "FORGET", B)
    pair.check("CLUSTER", "FORGET", B)
    pair.check("CLUSTER", "NODES")
    pair.check("CLUSTER", "SHARDS")
    pair.check("GET", THEIRS)
    pair.check("CLUSTER", "REPLICATE", A)


def test_one_key_finders_name_one_key():
    from rillet.commands import table
    from rillet.commands.cluster import ONE_KEY_FINDERS

    for name in ONE_KEY_FINDERS:
        spec = table.COMMANDS[name]
        assert spec.first_key == spec.last_key == 1
        for argv in ([name.encode(), b"k"], [name.encode(), b"k", b"v", b"GET"],
                     [name.encode(), b"k", b"GET", b"u8", b"0", b"IFEQ", b"x"]):
            try:
                positions = [position for position, _flags in spec.find_keys(argv)]
            except Exception:
                continue
            assert positions == [1], (name, argv)


def test_errorstats_count_the_redirections(pair):
    # After every test above, both servers counted the same errors (MOVED, ASK, ...).
    pair.check("INFO", "errorstats")
