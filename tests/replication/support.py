"""Master/replica sets of real servers (rillet or Redis 8.2.3) for replication tests."""

from __future__ import annotations

import time

from tests.helpers import servers


def info(client, section: str = "replication") -> dict:
    """INFO as redis-py parses it (numbers as ints, slaveN as dicts)."""
    return client.info(section)


def start(kind: str, *extra: str, **options) -> servers.ServerHandle:
    if kind == "rillet":
        return servers.start_rillet(*extra, **options)
    binary = servers.redis8_binary()
    assert binary is not None
    return servers.start_redis(binary, *extra, kind=kind, **options)


def wait_until(predicate, timeout_s: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def wait_synced(master, *replicas, timeout_s: float = 20.0) -> None:
    """Every replica's link is up and it has applied the master's whole stream."""

    def synced() -> bool:
        offset = int(info(master)["master_repl_offset"])
        for replica in replicas:
            fields = info(replica)
            if fields.get("master_link_status") != "up":
                return False
            if int(fields["slave_repl_offset"]) < offset:
                return False
        return True

    wait_until(synced, timeout_s, "replicas in sync")


def stats(client) -> dict[str, int]:
    fields = info(client, "stats")
    return {k: int(fields[k]) for k in ("sync_full", "sync_partial_ok", "sync_partial_err")}


def backlog_bytes(backlog, offset: int) -> bytes:
    """Every byte a backlog holds from `offset` on, read through a cursor."""
    data = backlog.read(backlog.cursor(offset), backlog.histlen)
    return bytes(data) if data is not None else b""
