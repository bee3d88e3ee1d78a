"""Under `appendfsync always` the stream waits for the fsync, then leaves on its own.

A replica's stream bytes go out after the turn's replies, so they may take a
later durability ticket than anything else sent that turn: that ticket must be
sealed too, or the bytes wait in the master until some later write.
"""

from __future__ import annotations

from tests.replication import support


def test_the_stream_reaches_the_replica_without_a_later_write():
    master = support.start("rillet", "--appendonly", "yes", "--appendfsync", "always")
    replica = None
    try:
        m = master.client()
        replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
        r = replica.client()
        support.wait_synced(m, r)
        for n in range(12):  # each round's last bytes used to stay held, often
            pipe = m.pipeline(transaction=False)
            for i in range(100):
                pipe.xadd("s", {"n": str(n), "i": str(i), "pad": "x" * 200})
            pipe.execute()
            support.wait_synced(m, r, timeout_s=10)
        assert r.xlen("s") == m.xlen("s") == 1200
    finally:
        if replica is not None:
            replica.stop()
        master.stop()
