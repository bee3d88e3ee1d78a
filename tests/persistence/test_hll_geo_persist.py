"""HyperLogLog strings and geo sorted sets survive the AOF, a snapshot and DEBUG RELOAD with
the same bytes (the HLL's cached cardinality included: PFCOUNT's write-back is an effect)."""

from __future__ import annotations

from tests.persistence.support import digest


def _workload(c) -> None:
    c.execute_command("PFADD", "h1", *[f"a{i}" for i in range(100)])
    c.execute_command("PFADD", "h2", *[f"b{i}" for i in range(5000)])
    c.execute_command("PFCOUNT", "h1")  # writes the cached cardinality back
    c.execute_command("PFMERGE", "h3", "h1", "h2")
    c.execute_command("PFCOUNT", "h3")
    c.execute_command("PFDEBUG", "TODENSE", "h1")
    c.execute_command("MULTI")
    c.execute_command("PFADD", "h1", "x")
    c.execute_command("PFCOUNT", "h1")
    c.execute_command("EXEC")
    c.execute_command("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    c.execute_command("GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST")
    c.execute_command("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr")


def _state(c) -> dict:
    return {k: c.execute_command("DUMP", k) for k in ("h1", "h2", "h3", "g", "gs", "gr")}


def test_aof_replay_and_reload_keep_the_bytes(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    c = node.client()
    _workload(c)
    before, digest_before = _state(c), digest(c)
    c.close()
    node.kill()
    node.start()
    c = node.client()
    assert _state(c) == before
    assert digest(c) == digest_before
    c.execute_command("DEBUG", "RELOAD")
    assert _state(c) == before
    c.close()
