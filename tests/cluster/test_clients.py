"""Cluster clients on two rillet nodes that know each other through their nodes.conf:
redis-py's RedisCluster discovers the slots (CLUSTER SLOTS), follows them, and runs
keys, streams with a consumer group, pipelines, Lua in one slot and sharded pub/sub."""

from __future__ import annotations

import time

import pytest

from tests.cluster import support
from tests.helpers.wire import Wire

A = "a" * 40
B = "b" * 40


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("redis")
    from redis.cluster import ClusterNode, RedisCluster

    a, b = support.two_rillet_masters(A, B)
    client = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", a.port)],
                          decode_responses=True)
    yield client, a, b
    client.close()
    a.stop()
    b.stop()


def test_keys_land_on_their_slots_node(cluster):
    client, a, b = cluster
    keys = [f"key:{n}" for n in range(200)]
    for key in keys:
        client.set(key, key.upper())
    assert [client.get(key) for key in keys] == [key.upper() for key in keys]
    counts = []
    for node in (a, b):
        wire = Wire(node.port)
        counts.append(int(wire.call("DBSIZE")[1:-2]))
        wire.close()
    assert sum(counts) == 200 and all(counts)
    assert client.mget_nonatomic(keys[:50]) == [key.upper() for key in keys[:50]]


def test_streams_with_a_consumer_group(cluster):
    client, _a, _b = cluster
    for n in range(6):
        stream = f"orders:{n}"
        ids = [client.xadd(stream, {"n": str(i)}) for i in range(5)]
        client.xgroup_create(stream, "workers", id="0")
        read = client.xreadgroup("workers", "c1", {stream: ">"}, count=3)
        assert [entry[0] for entry in read[0][1]] == ids[:3]
        assert client.xack(stream, "workers", *ids[:2]) == 2
        assert client.xpending(stream, "workers")["pending"] == 1


def test_pipelines_and_lua_in_one_slot(cluster):
    client, _a, _b = cluster
    pipe = client.pipeline()
    for n in range(50):
        pipe.incr(f"counter:{n}")
    assert pipe.execute() == [1] * 50
    script = client.register_script(
        "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[2])")
    client.set("{user:1}:name", "ann")
    assert script(keys=["{user:1}:tmp", "{user:1}:name"], args=["x"]) == "ann"
    with pytest.raises(Exception, match="don't hash to the same slot"):  # -CROSSSLOT
        client.execute_command("EVAL", "return 1", 2, "a", "b",
                               target_nodes=client.get_primaries()[0])


def test_sharded_pub_sub(cluster):
    client, _a, _b = cluster
    pubsub = client.pubsub()
    pubsub.ssubscribe("news:{1}")
    deadline = time.monotonic() + 10
    message = None
    while message is None and time.monotonic() < deadline:
        message = pubsub.get_sharded_message(timeout=0.2)
    assert message["type"] == "ssubscribe"
    assert client.spublish("news:{1}", "hello") == 1
    message = None
    deadline = time.monotonic() + 10
    while message is None and time.monotonic() < deadline:
        message = pubsub.get_sharded_message(timeout=0.2)
    assert message["data"] == "hello"
    pubsub.close()
