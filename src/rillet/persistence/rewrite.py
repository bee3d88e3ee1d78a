"""The keyspace as commands: what rebuilds it when replayed through the dispatcher.

Redis's rewriteAppendOnlyFileRio in command form: per database a SELECT,
then per key the commands of its value type (SET; for a stream XADD with
explicit IDs, XSETID with ENTRIESADDED / MAXDELETEDID, XGROUP CREATE with
ENTRIESREAD, XGROUP CREATECONSUMER, and XCLAIM ... TIME ... RETRYCOUNT ...
JUSTID FORCE per pending entry), then PEXPIREAT for a TTL; function
libraries first, as FUNCTION LOAD. The AOF base is an RDB unless
`aof-use-rdb-preamble no` asks for this form (persistence/rdb.py is faster to
write and to load). Consumer seen/active times and stream node boundaries are
not expressible as commands and are not kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from rillet.persistence import disk
from rillet.persistence.aoflog import encode_command, encode_select
from rillet.persistence.valuetypes import CodecContext, type_of


def keyspace_commands(state: Any) -> Iterator[tuple[int, list[bytes]]]:
    """(db index, argv) for every key of every database, in an order that replays."""
    from rillet.persistence import containers, streams  # noqa: F401  (register the value codecs)

    context = CodecContext(state)
    for db in state.keyspace.dbs:
        if not db.data:
            continue
        for key in db.keys():
            value = db.data[key]
            for argv in type_of(value).commands(key, value, context):
                yield db.index, argv
            deadline = db.expires.get(key)
            if deadline is not None:
                yield db.index, [b"PEXPIREAT", key, b"%d" % deadline]


def keyspace_resp(state: Any) -> Iterator[bytes]:
    """The same commands encoded as an AOF (RESP with SELECT where the db changes)."""
    scripting = state.scripting
    if scripting is not None:  # Redis's rewriteFunctions: the libraries come first
        for library in scripting.functions.libraries.values():
            yield encode_command([b"FUNCTION", b"LOAD", library.code])
    selected = -1
    for db_index, argv in keyspace_commands(state):
        if db_index != selected:
            yield encode_select(db_index)
            selected = db_index
        yield encode_command(argv)


def write_file(state: Any, path: str, target: str = "aof") -> int:
    """Write the keyspace as an AOF (commands) to exactly `path` and fsync it; returns its size."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    size = 0
    try:
        chunk: list[bytes] = []
        pending = 0
        for part in keyspace_resp(state):
            chunk.append(part)
            pending += len(part)
            if pending >= 1 << 20:
                size += disk.write_all(fd, b"".join(chunk), target)
                chunk, pending = [], 0
        if chunk:
            size += disk.write_all(fd, b"".join(chunk), target)
        disk.fsync(fd, target)
    finally:
        os.close(fd)
    return size
