"""A master restarted from its own snapshot, side by side with Redis 8.2.3.

Redis saves repl-id / repl-offset in the RDB and takes them back as its
secondary ID when it restarts as a master, so its replicas continue partially;
keys whose TTL passed meanwhile reach them as DELs. An AOF names no history:
its replicas fully resync.
"""

from __future__ import annotations

import time

import pytest

from tests.helpers import servers
from tests.replication import support

KINDS = ["rillet", pytest.param("redis8", marks=pytest.mark.needs_redis)]


def _need(kind: str) -> None:
    if kind == "redis8" and servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")


def _shutdown(handle: servers.ServerHandle) -> None:
    handle.client().shutdown()  # (redis-py takes the closed connection as done)
    handle.proc.wait(30)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("persist", ["rdb", "aof"])
def test_master_restart_keeps_its_replicas(kind, persist):
    _need(kind)
    args = ("--save", "3600 1") if persist == "rdb" else ("--appendonly", "yes")
    master = support.start(kind, *args)
    replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port))
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        for i in range(20):
            m.set(f"k{i}", i)
        # Due while the master is down: a master that continues must send their DELs.
        due_ms = int(time.time() * 1000) + 1500
        for i in range(5):
            m.set(f"t{i}", i, pxat=due_ms)
        support.wait_synced(m, r)
        old_id = support.info(m)["master_replid"]
        _shutdown(master)
        support.wait_until(lambda: time.time() * 1000 > due_ms + 50, 10, "the TTLs to pass")
        master = support.start(kind, *args, port=master.port, dir=master.dir)
        m = master.client()
        support.wait_synced(m, r, timeout_s=30)
        stats, fields = support.stats(m), support.info(m)
        if persist == "rdb":
            assert stats == {"sync_full": 0, "sync_partial_ok": 1, "sync_partial_err": 0}
            assert fields["master_replid2"] == old_id
            assert fields["second_repl_offset"] == fields["repl_backlog_first_byte_offset"]
        else:
            assert stats == {"sync_full": 1, "sync_partial_ok": 0, "sync_partial_err": 1}
            assert fields["master_replid2"] == 0  # (redis-py reads forty zeros as 0)
        support.wait_until(lambda: r.dbsize() == 20, 10, "the expired keys' DELs")
        m.set("after", "restart")
        support.wait_synced(m, r)
        assert r.get("after") == b"restart"
        assert sorted(r.keys()) == sorted(m.keys())
    finally:
        replica.stop()
        master.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_replica_restarted_from_its_snapshot_continues(kind):
    """A replica's SAVE names its master's history at that offset: after a kill -9 it
    continues from there (the writes since come from the master's backlog)."""
    _need(kind)
    master = support.start(kind)
    replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port))
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        for i in range(20):
            m.set(f"k{i}", i)
        support.wait_synced(m, r)
        r.save()
        for i in range(20, 30):
            m.set(f"k{i}", i)
        support.wait_synced(m, r)
        replica.stop(sig_kill=True)
        before = support.stats(m)
        replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port),
                                port=replica.port, dir=replica.dir)
        r = replica.client()
        support.wait_synced(m, r, timeout_s=30)
        after = support.stats(m)
        assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
        assert after["sync_full"] == before["sync_full"]
        assert r.dbsize() == 30
    finally:
        replica.stop()
        master.stop()
