"""INFO replication and the sync counters of INFO stats, field for field as Redis 8.2.3 prints them."""

from __future__ import annotations

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire
from tests.replication import support


def _fields(port: int, section: str) -> list[str]:
    with Wire(port) as wire:
        reply = wire.call("INFO", section)
    body = reply.split(b"\r\n", 1)[1].decode()
    return [line.split(":", 1)[0] for line in body.splitlines() if line and ":" in line
            and not line.startswith("#")]


def _roles(kind: str):
    master = support.start(kind)
    replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port))
    support.wait_synced(master.client(), replica.client())
    master.client().set("k", "v")
    support.wait_synced(master.client(), replica.client())
    return master, replica


@pytest.mark.needs_redis
def test_info_replication_fields_match_redis():
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    started = []
    try:
        ours = _roles("rillet")
        started += ours
        theirs = _roles("redis8")
        started += theirs
        for ours_one, theirs_one in zip(ours, theirs, strict=True):
            assert _fields(ours_one.port, "replication") == _fields(theirs_one.port, "replication")
        # sync_full / sync_partial_ok / sync_partial_err sit where Redis puts them.
        for handle in (ours[0], theirs[0]):
            stats = _fields(handle.port, "stats")
            at = stats.index("sync_full")
            assert stats[at - 1:at + 3] == [
                "rejected_connections", "sync_full", "sync_partial_ok", "sync_partial_err"]
    finally:
        for handle in started:
            handle.stop()
