"""HyperLogLog and geo keys reach replicas with the master's bytes: rillet -> Redis 8.2.3 and
rillet -> rillet, through the full sync and the stream (PFCOUNT's cache write-back included)."""

from __future__ import annotations

import pytest

from tests.helpers import servers
from tests.persistence.test_hll_geo_persist import _state, _workload
from tests.replication import support

KEYS = ("h1", "h2", "h3", "g", "gs", "gr")


@pytest.mark.parametrize("replica_kind", ["rillet", "redis8"])
def test_replicas_hold_the_same_bytes(replica_kind):
    if replica_kind == "redis8" and servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    master = support.start("rillet")
    replica = None
    try:
        m = master.client()
        m.execute_command("PFADD", "h0", "before", "the", "sync")
        replica = support.start(replica_kind, "--replicaof", "127.0.0.1", str(master.port))
        r = replica.client()
        support.wait_synced(m, r)
        _workload(m)
        support.wait_synced(m, r)
        assert _state(r) == _state(m)
        assert r.execute_command("DUMP", "h0") == m.execute_command("DUMP", "h0")
    finally:
        if replica is not None:
            replica.stop()
        master.stop()
