"""A replica's streams, groups, consumers and PELs equal its master's after a mix of writes.

The same workload runs against two Redis 8.2.3 servers; where Redis's replica
diverges from its master (or refuses a command rillet has), the test prints it
instead of failing: those are Redis's known divergences, not ours.
"""

from __future__ import annotations

import pytest

from tests.helpers import servers
from tests.replication import support, workload

STEPS = 400


@pytest.fixture
def rillet_pair():
    master = support.start("rillet")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    yield master, replica
    replica.stop()
    master.stop()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replica_state_equals_master(rillet_pair, seed):
    master, replica = rillet_pair
    m, r = master.client(), replica.client()
    support.wait_synced(m, r)
    errors = workload.run(m, seed, STEPS)
    support.wait_synced(m, r)
    ours, theirs = workload.view(m), workload.view(r)
    assert ours, "the workload left no data"
    assert workload.differences(ours, theirs) == []
    # The commands that failed did so for the workload's own reasons (a group
    # that does not exist yet, an ID gone), never because rillet lacks them.
    assert not any(code.endswith("ERR") and "unknown" in code for code in errors)


def test_full_sync_of_existing_groups_then_stream(rillet_pair):
    """Data written before the replica attached arrives by snapshot, the rest by stream."""
    master, replica = rillet_pair
    m = master.client()
    replica.stop()
    workload.run(m, 7, 150)
    late = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    try:
        r = late.client()
        support.wait_synced(m, r)
        workload.run(m, 8, 150)
        support.wait_synced(m, r)
        assert workload.differences(workload.view(m), workload.view(r)) == []
    finally:
        late.stop()


@pytest.mark.needs_redis
def test_redis_replica_divergences_are_reported():
    """The same workload on Redis 8.2.3: show where its replica differs from its master."""
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    master = support.start("redis8")
    replica = support.start("redis8", "--replicaof", "127.0.0.1", str(master.port))
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        diverged = []
        for seed in (1, 2, 3):
            m.flushall()
            errors = workload.run(m, seed, STEPS)
            support.wait_synced(m, r)
            diffs = workload.differences(workload.view(m), workload.view(r))
            diverged += diffs
            print(f"redis 8.2.3 seed {seed}: {len(diffs)} divergences; errors {errors}")
            for line in diffs[:10]:
                print("   ", line)
        # Expected Redis divergences are reported, not asserted: its replicas have
        # differed from their masters on group state for years (issue 12).
    finally:
        replica.stop()
        master.stop()


def test_state_equal_through_lost_links(rillet_pair):
    """Links killed from either side while the workload runs: partial resyncs only, same state."""
    master, replica = rillet_pair
    m, r = master.client(), replica.client()
    support.wait_synced(m, r)
    full_before = support.stats(m)["sync_full"]
    for round_ in range(6):
        workload.run(m, 100 + round_, 60)
        if round_ % 2:
            m.execute_command("CLIENT", "KILL", "TYPE", "replica")
        else:
            r.execute_command("CLIENT", "KILL", "TYPE", "master")
    support.wait_synced(m, r)
    assert support.stats(m)["sync_full"] == full_before
    assert workload.differences(workload.view(m), workload.view(r)) == []
