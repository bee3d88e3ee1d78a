"""Evictions reach replicas and the AOF as DELs; a replica ignores its own maxmemory."""

from __future__ import annotations

import os

import pytest

from tests.replication import support


@pytest.fixture
def pair():
    master = support.start("rillet", "--appendonly", "yes")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    m, r = master.client(), replica.client()
    support.wait_synced(m, r)
    yield master, replica, m, r
    replica.stop()
    master.stop()


def test_evictions_replicate_and_reach_the_aof(pair):
    master, replica, m, r = pair
    pipe = m.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"key:{i}", "x" * 2000)
    pipe.execute()
    support.wait_synced(m, r)
    # The replica ignores maxmemory (replica-ignore-maxmemory yes): a tiny limit there changes nothing.
    r.config_set("maxmemory", "1")
    m.config_set("maxmemory-policy", "allkeys-random")
    m.config_set("maxmemory", str(int(m.info("memory")["used_memory"]) - 100_000))
    m.set("new", "v")
    evicted = int(m.info("stats")["evicted_keys"])
    assert evicted > 0 and m.dbsize() == 201 - evicted
    support.wait_synced(m, r)
    assert r.dbsize() == m.dbsize()
    assert sorted(r.keys()) == sorted(m.keys())
    assert int(r.info("stats")["evicted_keys"]) == 0
    # The AOF holds a DEL per evicted key. Eviction cut short by its time budget goes
    # on from a timer (as Redis's evictionTimeProc): stop it, then count.
    m.config_set("maxmemory", "0")
    evicted = int(m.info("stats")["evicted_keys"])
    m.config_set("appendfsync", "always")
    m.set("flush", "1")
    aof_dir = os.path.join(master.dir, "appendonlydir")
    text = b"".join(open(os.path.join(aof_dir, name), "rb").read()
                    for name in os.listdir(aof_dir) if ".incr." in name)
    assert text.count(b"$3\r\nDEL\r\n") == evicted
