"""Vector sets cross between rillet and Redis 8.2.3 by replication: the full sync's RDB
payload carries them as Redis's module-type value, then VADD/VREM/VSETATTR stream."""

from __future__ import annotations

import pytest

from tests.replication import support

pytestmark = pytest.mark.slow


def _content(client) -> dict:
    out = {}
    for key in sorted(client.keys()):
        names = sorted(client.execute_command("VSIM", key, "ELE", "a", "COUNT", "100"))
        out[key] = [(n, client.execute_command("VEMB", key, n),
                     client.execute_command("VGETATTR", key, n)) for n in names]
    return out


def _writes(m, first: bool) -> None:
    if first:
        m.execute_command("VADD", "v", "VALUES", "3", "1", "2", "3", "a", "SETATTR", '{"x": 1}')
        m.execute_command("VADD", "v", "VALUES", "3", "-1", "0.5", "3", "b")
        m.execute_command("VADD", "p", "REDUCE", "2", "VALUES", "3", "1", "2", "3", "a", "BIN")
        m.execute_command("VADD", "p", "REDUCE", "2", "VALUES", "3", "3", "-2", "1", "c", "BIN")
    else:
        m.execute_command("VADD", "v", "VALUES", "3", "0", "2", "-3", "c", "Q8")
        m.execute_command("VSETATTR", "v", "b", '{"y": 2}')
        m.execute_command("VREM", "p", "c")


@pytest.mark.parametrize("master_kind, replica_kind", [("rillet", "redis8"), ("redis8", "rillet")])
def test_vector_sets_replicate(master_kind, replica_kind):
    master = support.start(master_kind)
    try:
        m = master.client()
        _writes(m, True)
        replica = support.start(replica_kind, "--replicaof", "127.0.0.1", str(master.port))
        try:
            r = replica.client()
            support.wait_synced(m, r)
            assert _content(r) == _content(m)
            _writes(m, False)
            support.wait_synced(m, r)
            assert _content(r) == _content(m)
        finally:
            replica.stop()
    finally:
        master.stop()
