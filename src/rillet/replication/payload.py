"""The full-sync payload: the one place replication touches the snapshot format.

`write_payload` runs in a forked child (the master keeps serving); the
replica loads the received file with `load_payload`. The body is Redis's RDB
(persistence/rdb.py's writer, the same as dump.rdb); the loader also reads
the old private snapshot format, so a replica still takes a payload from a
master that has not been upgraded.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import Any

from rillet.persistence import rdb
from rillet.persistence.loader import LoadProgress, load_snapshot

# The payload starts with a short envelope carrying the db the stream has
# selected at the snapshot's offset (Redis's "repl-stream-db" RDB aux field):
# a replica's own replicas get its master's bytes, which re-select only when
# the db changes, so their master client must start in that db. -1: the next
# command is preceded by a SELECT (the master resets its stream's db on a fork).
_PREFIX = struct.Struct("<8si")
_MAGIC = b"RLREPL01"
PREFIX_LEN = _PREFIX.size


def payload_prefix(stream_db: int) -> bytes:
    return _PREFIX.pack(_MAGIC, stream_db)


def read_prefix(data: bytes) -> int:
    """The stream db from a payload's first PREFIX_LEN bytes; ValueError if not ours."""
    if len(data) != PREFIX_LEN:
        raise ValueError("short full-sync payload")
    magic, stream_db = _PREFIX.unpack(data)
    if magic != _MAGIC:
        raise ValueError("not a rillet full-sync payload")
    return stream_db


def write_payload(state: Any, path: str) -> int:
    """Write the whole keyspace to `path`; returns its size in bytes.

    No fsync: the file only lives until it is sent.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        size = rdb.dump_keyspace(state, out)
    assert isinstance(size, int)
    return size


def load_payload(state: Any, path: str, progress: LoadProgress) -> Iterator[None]:
    """Load a received payload into `state` (already flushed); yields now and then.

    Keys whose TTL has passed are kept: a replica leaves expiry to its master's DELs.
    Raises persistence.loader.LoadError on a damaged payload.
    """
    yield from load_snapshot(state, path, progress, skip_expired=False)
