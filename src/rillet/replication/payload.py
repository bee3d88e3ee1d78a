"""The full-sync payload: an RDB, as Redis's, the one place replication touches the format.

`write_payload` runs in a forked child (the master keeps serving) and writes
the keyspace with Redis's replication aux fields (repl-stream-db, repl-id,
repl-offset) into a pipe the master reads as it is made (replication/master.py
sends it on at once in Redis's disk-less `$EOF:` form); the replica loads the received file with `load_payload` and
reads `repl-stream-db` with `stream_db_of`: a replica's own replicas get its
master's bytes, which re-select only when the db changes, so their master
client must start in the db the stream was in at the snapshot's offset.
Because the payload is an RDB, Redis replicas can sync from rillet and
rillet replicas from Redis (for the types rillet has).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from rillet.persistence import disk
from rillet.persistence.loader import LoadProgress, collector_paused, load_snapshot
from rillet.persistence.rdb import MAGIC, RDBWriter, write_keyspace
from rillet.persistence.rdb_format import OP_AUX, RDBError, RDBReader

_HEAD_BYTES = 1 << 16


def write_payload(state: Any, fd: int, stream_db: int, replid: str, offset: int) -> int:
    """Write the whole keyspace as an RDB to `fd` (closed after); returns its size in bytes."""
    config = state.config
    try:
        writer = RDBWriter(lambda data: disk.write_all(fd, data, "snapshot"),
                           bool(config["rdbcompression"]), bool(config["rdbchecksum"]))
        write_keyspace(writer, state, repl=(stream_db, replid, offset))
    finally:
        os.close(fd)
    return writer.size


def load_payload(state: Any, path: str, progress: LoadProgress) -> Iterator[None]:
    """Load a received payload into `state` (already flushed); yields now and then.

    Keys whose TTL has passed are kept: a replica leaves expiry to its master's DELs.
    Raises persistence.loader.LoadError on a damaged payload.
    """
    with collector_paused():
        yield from load_snapshot(state, path, progress, skip_expired=False)


def stream_db_of(path: str) -> int:
    """The payload's repl-stream-db aux field (-1 if absent: the stream will SELECT first)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
    if not head.startswith(MAGIC):
        return -1
    reader = RDBReader(head, 9, len(head), "payload")
    try:
        # The aux fields come first, before any key.
        while reader.pos < len(head) and head[reader.pos] == OP_AUX:
            reader.u8()
            name = reader.string("an AUX field name")
            value = reader.string("an AUX field value")
            if name == b"repl-stream-db":
                return int(value)
    except (RDBError, ValueError):
        return -1
    return -1
