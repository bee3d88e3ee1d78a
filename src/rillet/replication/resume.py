"""What a replica needs to continue partially after a restart: its replication ID and offset.

Redis keeps them in the RDB it saves (aux fields repl-id, repl-offset,
repl-stream-db), and so do rillet's snapshots (core.py's save_info and
_dataset_loaded). An AOF has no such fields, so a replica that shuts down
cleanly with its data persisted writes them to a small file beside the data
too (a rillet addition); the next start reads it once and removes it, so a
later crash, whose data may not match, falls back to what the snapshot names,
or to a full sync.
"""

from __future__ import annotations

import json
import logging
import os

log = logging.getLogger("rillet")

FILENAME = "rillet-replication.json"


def save(directory: str, replid: str, offset: int, stream_db: int) -> None:
    path = os.path.join(directory, FILENAME)
    temp = path + ".tmp"
    data = json.dumps({"repl-id": replid, "repl-offset": offset, "repl-stream-db": stream_db})
    try:
        with open(temp, "w") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as error:
        log.warning("Could not save the replication state: %s", error.strerror)


def take(directory: str) -> tuple[str, int, int] | None:
    """The saved (replid, offset, stream db), removing the file; None if absent or bad."""
    path = os.path.join(directory, FILENAME)
    try:
        with open(path) as handle:
            data = json.load(handle)
        os.unlink(path)
        replid = str(data["repl-id"])
        if len(replid) != 40:
            return None
        return replid, int(data["repl-offset"]), int(data["repl-stream-db"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
