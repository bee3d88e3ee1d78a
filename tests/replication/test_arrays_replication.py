"""Arrays (Redis 8.8) reach a rillet replica: in the full sync's RDB payload, then as streamed
commands. (No Redis server has arrays, so only rillet to rillet.)"""

from __future__ import annotations

import pytest

from tests.replication import support

pytestmark = pytest.mark.slow


def _content(client) -> dict:
    return {k: (client.execute_command("ARSCAN", k, "0", str(2**63 - 1)),
                client.execute_command("ARNEXT", k)) for k in sorted(client.keys())}


def test_rillet_replica_of_rillet_arrays():
    master = support.start("rillet")
    try:
        m = master.client()
        m.execute_command("ARSET", "a", "0", "x", "1.5", "7")
        m.execute_command("ARMSET", "sparse", "3", "a", str(2**62), "far")
        m.execute_command("ARRING", "ring", "3", "r0", "r1", "r2", "r3")
        replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
        try:
            r = replica.client()
            support.wait_synced(m, r)
            assert _content(r) == _content(m)
            m.execute_command("ARINSERT", "ring", "r4")
            m.execute_command("ARDELRANGE", "a", "0", "1")
            m.execute_command("ARDEL", "sparse", "3", str(2**62))  # the key goes
            support.wait_synced(m, r)
            assert _content(r) == _content(m)
            assert r.exists("sparse") == 0
        finally:
            replica.stop()
    finally:
        master.stop()
