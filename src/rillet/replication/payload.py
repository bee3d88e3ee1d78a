"""The full-sync payload: the one place replication touches the snapshot format.

`write_payload` runs in a forked child (the master keeps serving); the
replica loads the received file with `load_payload`. Both go through
persistence/snapshot.py's writer and loader, so a change of format (Redis's
RDB) changes these two functions only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rillet.persistence.loader import LoadProgress, load_snapshot
from rillet.persistence.manager import write_snapshot_file


def write_payload(state: Any, path: str) -> int:
    """Write the whole keyspace to `path`; returns its size in bytes."""
    return write_snapshot_file(state, path, "snapshot")


def load_payload(state: Any, path: str, progress: LoadProgress) -> Iterator[None]:
    """Load a received payload into `state` (already flushed); yields now and then.

    Keys whose TTL has passed are kept: a replica leaves expiry to its master's DELs.
    Raises persistence.loader.LoadError on a damaged payload.
    """
    yield from load_snapshot(state, path, progress, skip_expired=False)
