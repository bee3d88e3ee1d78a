"""A `Stream`'s digest and command form (DEBUG DIGEST, the command-form AOF rewrite).

Its file format is Redis's RDB stream type (rdb_stream.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from rillet.engine.ids import format_id
from rillet.engine.pel import TOUCH_BITS
from rillet.engine.stream import Stream
from rillet.persistence.valuetypes import CodecContext, ValueType, register

STREAM_TAG = 1


def _id_bytes(key: int) -> bytes:
    return b"%d-%d" % (key >> 64, key & ((1 << 64) - 1))


def digest_stream(stream: Stream, context: CodecContext) -> bytes:
    """Logical content: entries, metadata, groups, consumers, the PEL, IDMP state.

    Consumer seen/active times and IDMP's duplicate counter are left out:
    replaying an AOF sets the times to the time of the replay and never sees
    a duplicate (it is not a write, so it is not in the AOF), in Redis as here.
    """
    h = hashlib.sha1()
    h.update(b"len:%d added:%d last:%b maxdel:%b" % (
        stream.length, stream.entries_added, format_id(stream.last_id),
        format_id(stream.max_deleted_id)))
    for node in stream.nodes:
        dead = node.dead
        for i in range(node.n):
            if dead is not None and i in dead:
                continue
            h.update(format_id(node.id_at(i)))
            for item in node.fields_at(i):
                h.update(b"%d:" % len(item))
                h.update(item)
    for name in sorted(stream.groups):
        group = stream.groups[name]
        h.update(b"group %d:%b last:%b read:%b" % (
            len(name), name, format_id(group.last_id),
            b"-" if group.entries_read is None else b"%d" % group.entries_read))
        for consumer_name in sorted(group.consumers):
            h.update(b"consumer %d:%b" % (len(consumer_name), consumer_name))
        for entry in group.pel:
            owner = entry.owner
            h.update(b"pel %b %b %d %d" % (
                _id_bytes(entry.key), b"-" if owner is None else owner,
                entry.tkey >> TOUCH_BITS, entry.delivery_count))
    idmp = stream.idmp
    if idmp is not None:
        h.update(b"idmp %r %r %d" % (idmp.duration_s, idmp.maxsize, idmp.iids_added))
        for pid, iids in idmp.producers.items():
            h.update(b"pid %d:%b" % (len(pid), pid))
            for iid, sid in iids.items():
                h.update(b"iid %d:%b %b" % (len(iid), iid, format_id(sid)))
    return h.digest()


def stream_commands(key: bytes, stream: Stream, context: CodecContext) -> Iterator[list[bytes]]:
    """Commands that rebuild the stream (Redis's rewriteStreamObject, plus 7.0 metadata).

    IDMP's lifetime counters (iids-added, iids-duplicates) have no command; the
    rest of its state is XCFGSET plus one XIDMPRECORD per remembered iid.
    """
    if stream.length:
        for node in stream.nodes:
            dead = node.dead
            for i in range(node.n):
                if dead is None or i not in dead:
                    yield [b"XADD", key, format_id(node.id_at(i)), *node.fields_at(i)]
    else:
        # An empty stream still exists: create it and trim it back to nothing.
        yield [b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]
    yield [b"XSETID", key, format_id(stream.last_id), b"ENTRIESADDED",
           b"%d" % stream.entries_added, b"MAXDELETEDID", format_id(stream.max_deleted_id)]
    for name, group in stream.groups.items():
        create = [b"XGROUP", b"CREATE", key, name, format_id(group.last_id)]
        if group.entries_read is not None:
            create += [b"ENTRIESREAD", b"%d" % group.entries_read]
        yield create
        for consumer_name in group.consumers:
            yield [b"XGROUP", b"CREATECONSUMER", key, name, consumer_name]
        for entry in group.idle_index:
            sid = _id_bytes(entry.key)
            if entry.owner is None:
                yield [b"XNACK", key, name, b"SILENT", b"IDS", b"1", sid, b"RETRYCOUNT",
                       b"%d" % entry.delivery_count, b"FORCE"]
            else:
                yield [b"XCLAIM", key, name, entry.owner, b"0", sid, b"TIME",
                       b"%d" % (entry.tkey >> TOUCH_BITS), b"RETRYCOUNT",
                       b"%d" % entry.delivery_count, b"JUSTID", b"FORCE"]
    idmp = stream.idmp
    if idmp is not None:
        settings = []
        if idmp.duration_s is not None:
            settings += [b"IDMP-DURATION", b"%d" % idmp.duration_s]
        if idmp.maxsize is not None:
            settings += [b"IDMP-MAXSIZE", b"%d" % idmp.maxsize]
        if settings:
            yield [b"XCFGSET", key, *settings]
        for pid, iids in idmp.producers.items():
            for iid, recorded in iids.items():
                yield [b"XIDMPRECORD", key, pid, iid, format_id(recorded)]
    # rillet's own policies (commands/policies.py), as their commands.
    if stream.retention_ms:
        yield [b"RILLET.XRETENTION", key, b"%d" % stream.retention_ms]
    for name, group in stream.groups.items():
        if group.dead_letter_key is not None:
            yield [b"RILLET.XDEADLETTER", key, name, b"%d" % group.max_deliveries,
                   group.dead_letter_key]


register(ValueType(STREAM_TAG, "stream", Stream, digest_stream, stream_commands))
