"""rillet and Redis 8.2.3 replicating from each other: the full sync is an RDB, the stream RESP."""

from __future__ import annotations

import pytest

from tests.helpers import servers
from tests.replication import support, workload

pytestmark = pytest.mark.needs_redis


@pytest.fixture(autouse=True)
def _need_redis8():
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")


def _entries(client, key="s"):
    return client.xrange(key)


@pytest.mark.parametrize("master_kind,replica_kind", [("rillet", "redis8"), ("redis8", "rillet")])
def test_cross_replication(master_kind, replica_kind):
    master = support.start(master_kind)
    replica = None
    try:
        m = master.client()
        for i in range(50):  # before the replica: they come in the RDB
            m.xadd("s", {"i": str(i)})
        m.execute_command("XGROUP", "CREATE", "s", "g", "0")
        m.execute_command("XREADGROUP", "GROUP", "g", "c1", "COUNT", "10", "STREAMS", "s", ">")
        m.set("str", "v")
        replica = support.start(replica_kind, "--replicaof", "127.0.0.1", str(master.port))
        r = replica.client()
        support.wait_synced(m, r)
        for i in range(50):  # after: they come in the stream
            m.xadd("s", {"j": str(i)}, maxlen=80, approximate=False)
        m.execute_command("XREADGROUP", "GROUP", "g", "c2", "COUNT", "5", "STREAMS", "s", ">")
        ids = [e[0] for e in m.xrange("s", count=3)]
        m.xack("s", "g", *ids)
        support.wait_synced(m, r)
        assert _entries(r) == _entries(m)
        assert r.get("str") == b"v"
        # PELs with delivery counts (XINFO STREAM FULL has fields only rillet knows).
        view_m, view_r = workload.view(m), workload.view(r)
        assert view_m[b"s"]["pending"] == view_r[b"s"]["pending"]
        assert r.xinfo_groups("s")[0]["last-delivered-id"] == \
            m.xinfo_groups("s")[0]["last-delivered-id"]
        assert support.info(r)["master_link_status"] == "up"
        # A lost link: the other implementation continues partially from the backlog.
        before = support.stats(m)
        m.execute_command("CLIENT", "KILL", "TYPE", "replica")
        m.xadd("s", {"after": "kill"})
        support.wait_synced(m, r)
        after = support.stats(m)
        assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
        assert after["sync_full"] == before["sync_full"]
        assert _entries(r) == _entries(m)
    finally:
        if replica is not None:
            replica.stop()
        master.stop()
