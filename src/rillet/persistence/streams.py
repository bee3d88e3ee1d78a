"""The stream codec: snapshot payload, digest and command form of a `Stream`.

Nodes are saved in their packed shape (ID arrays, one element blob, offsets,
tombstones), so loading 1 M entries costs a few thousand node objects, not a
million appends, and node boundaries and tombstones come back exactly.
Consumer groups are saved field by field and rebuilt with the groups engine's
objects; the PEL is written in idle-index order so ties in delivery time keep
their order. Stream payload (type tag 1), after the key (snapshot.py):

    u64 length, u64 entries-added, u64 last-id ms, u64 last-id seq,
    u64 max-deleted-id ms, u64 max-deleted-id seq, u32 node count, node*,
    u32 group count, group*, u8 IDMP present, [IDMP]
    node:  u64 master ms, u64 master seq, u32 k + k blob master fields,
           u32 entries (live + deleted), u32 live, u64 listpack body size,
           u32 deleted count + u32 index each, u8 flags (1 open tail, 2 mixed),
           array ms deltas, array seqs, u32 element count, blob elements,
           array element offsets, [mixed: array entry starts, blob SAMEFIELDS flags]
    array: u8 typecode (B/H/I/Q) + blob of native little-endian items
    group: blob name, u64 last-id ms, u64 last-id seq, i64 entries-read (-1: unknown),
           u32 consumers, (blob name, i64 seen-time, i64 active-time)*,
           u64 pending, (u64 ms, u64 seq, u32 owner index or 0xFFFFFFFF, u64
           delivery time, u64 delivery count)* in idle order
    IDMP:  i64 duration s (-1: server default), i64 maxsize (-1: default), u64 iids
           added, u64 iids duplicates, u32 producers, (blob pid, u32 n, (blob iid,
           u64 ms, u64 seq)*)*  -- XADD IDMP state, kept by the stream commands
           beside the stream (engine/idmp.py `Idmp`)
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from collections.abc import Generator, Iterator
from itertools import accumulate
from typing import Any

from rillet.engine import groups as groups_engine
from rillet.engine.ids import MIN_ID, StreamID, format_id
from rillet.engine.pel import TOUCH_BITS
from rillet.engine.stream import NodeLimits, Stream
from rillet.engine.stream_node import StreamNode
from rillet.persistence.snapshot import (
    CodecContext,
    SnapshotError,
    SnapshotReader,
    SnapshotWriter,
    ValueType,
    register,
)

STREAM_TAG = 1

_OPEN = 1
_MIXED = 2
_NO_OWNER = 0xFFFFFFFF
_PEL_ENTRY = struct.Struct("<QQIQQ")
_U32_ARRAY = "I"
_BIG_ENDIAN = sys.byteorder == "big"

# Every StreamNode slot, by how a loaded node gets it back. A test fails when
# the engine adds a slot, so the format is revisited instead of losing state.
SAVED_NODE_SLOTS = frozenset({
    "ms0", "seq0", "mf", "n", "live", "dead", "body", "ms", "seq", "elems", "data", "offs",
    "estart", "same", "is_open",
})
# Computed from the master fields by StreamNode.__init__.
INIT_NODE_SLOTS = frozenset({"k", "k2", "k18", "fixed_text", "same_fixed"})
# Recomputed by _load_node: first live index, the append fast path, and `fresh`
# (False: like a listpack read back from an RDB, a loaded node has no
# pre-allocation, so MEMORY USAGE after a reload matches Redis's).
DERIVED_NODE_SLOTS = frozenset({"head", "fast", "fresh"})
# Only an RDB-loaded node not read yet holds its listpack (rdb_stream.LoadedNode):
# None on every node made here.
RDB_NODE_SLOTS = frozenset({"lp"})
KNOWN_NODE_SLOTS = SAVED_NODE_SLOTS | INIT_NODE_SLOTS | DERIVED_NODE_SLOTS | RDB_NODE_SLOTS


def _narrow(values: Any) -> array:
    top = max(values) if len(values) else 0
    code = "B" if top < 1 << 8 else "H" if top < 1 << 16 else "I" if top < 1 << 32 else "Q"
    return array(code, values)


def _write_array(writer: SnapshotWriter, values: Any) -> None:
    arr = values if isinstance(values, array) else _narrow(values)
    if _BIG_ENDIAN:  # pragma: no cover - the format is little-endian
        arr = array(arr.typecode, arr)
        arr.byteswap()
    writer.u8(ord(arr.typecode))
    writer.blob(memoryview(arr).cast("B"))


def _read_array(reader: SnapshotReader) -> array:
    code = chr(reader.u8())
    if code not in "BHIQ":
        raise SnapshotError(f"bad array type {code!r} at offset {reader.pos - 1}")
    raw = reader.raw(reader.u32())
    arr = array(code)
    arr.frombytes(raw)
    if _BIG_ENDIAN:  # pragma: no cover
        arr.byteswap()
    return arr


# --- dump ------------------------------------------------------------------------------

def _dump_node(writer: SnapshotWriter, node: StreamNode) -> None:
    writer.u64(node.ms0)
    writer.u64(node.seq0)
    writer.blobs(node.mf)
    writer.u32(node.n)
    writer.u32(node.live)
    writer.u64(node.body)
    dead = sorted(node.dead) if node.dead else []
    writer.u32(len(dead))
    if dead:
        writer.buf += array(_U32_ARRAY, dead).tobytes()
    mixed = node.estart is not None
    writer.u8((_OPEN if node.is_open else 0) | (_MIXED if mixed else 0))
    _write_array(writer, node.ms)
    _write_array(writer, node.seq)
    if node.is_open:
        # Pack a copy: the live node must not change under a foreground SAVE.
        elems = node.elems or []
        data = b"".join(elems)
        offs = _narrow(list(accumulate(map(len, elems), initial=0)))
        count = len(elems)
    else:
        data = node.data
        offs = node.offs
        count = len(offs) - 1
    writer.u32(count)
    writer.blob(data)
    _write_array(writer, offs)
    if mixed:
        _write_array(writer, node.estart)
        writer.blob(bytes(node.same))


def _dump_group(writer: SnapshotWriter, group: Any) -> None:
    writer.blob(group.name)
    writer.u64(group.last_id[0])
    writer.u64(group.last_id[1])
    writer.i64(-1 if group.entries_read is None else group.entries_read)
    consumers = list(group.consumers.values())
    index_of = {consumer.name: i for i, consumer in enumerate(consumers)}
    writer.u32(len(consumers))
    for consumer in consumers:
        writer.blob(consumer.name)
        writer.i64(consumer.seen_time_ms)
        writer.i64(consumer.active_time_ms)
    writer.u64(len(group.idle_index))
    pack = _PEL_ENTRY.pack
    seq_bits = 64
    mask = (1 << seq_bits) - 1
    batch = []
    for entry in group.idle_index:
        owner = entry.owner
        batch.append(pack(entry.key >> seq_bits, entry.key & mask,
                          _NO_OWNER if owner is None else index_of[owner],
                          entry.tkey >> TOUCH_BITS, entry.delivery_count))
        if len(batch) >= 4096:
            writer.buf += b"".join(batch)
            writer.maybe_flush()
            batch = []
    writer.buf += b"".join(batch)


def _dump_idmp(writer: SnapshotWriter, idmp: Any) -> None:
    if idmp is None:
        writer.u8(0)
        return
    writer.u8(1)
    writer.i64(-1 if idmp.duration_s is None else idmp.duration_s)
    writer.i64(-1 if idmp.maxsize is None else idmp.maxsize)
    writer.u64(idmp.iids_added)
    writer.u64(idmp.iids_duplicates)
    writer.u32(len(idmp.producers))
    for pid, iids in idmp.producers.items():
        writer.blob(pid)
        writer.u32(len(iids))
        for iid, sid in iids.items():
            writer.blob(iid)
            writer.u64(sid[0])
            writer.u64(sid[1])


def _load_idmp(reader: SnapshotReader, stream: Stream) -> None:
    if not reader.u8():
        return
    idmp = stream.ensure_idmp()
    duration = reader.i64()
    maxsize = reader.i64()
    added = reader.u64()
    duplicates = reader.u64()
    producers: dict[bytes, dict[bytes, StreamID]] = {}
    for _ in range(reader.u32()):
        pid = reader.blob()
        iids = producers[pid] = {}
        for _ in range(reader.u32()):
            iid = reader.blob()
            iids[iid] = StreamID(reader.u64(), reader.u64())
    idmp.duration_s = None if duration < 0 else duration
    idmp.maxsize = None if maxsize < 0 else maxsize
    idmp.iids_added = added
    idmp.iids_duplicates = duplicates
    idmp.producers = producers


def dump_stream(writer: SnapshotWriter, stream: Stream, context: CodecContext) -> None:
    writer.u64(stream.length)
    writer.u64(stream.entries_added)
    writer.u64(stream.last_id[0])
    writer.u64(stream.last_id[1])
    writer.u64(stream.max_deleted_id[0])
    writer.u64(stream.max_deleted_id[1])
    nodes = stream.nodes
    writer.u32(len(nodes))
    for node in nodes:
        _dump_node(writer, node)
        writer.maybe_flush()
    groups = list(stream.groups.values())
    writer.u32(len(groups))
    for group in groups:
        _dump_group(writer, group)
    _dump_idmp(writer, stream.idmp)


# --- load ------------------------------------------------------------------------------

def stream_limits(state: Any) -> NodeLimits:
    """The server's shared stream-node limits (one object CONFIG SET mutates)."""
    return state.keyspace.stream_limits


def _load_node(reader: SnapshotReader, shared_fields: dict[tuple[bytes, ...], list[bytes]]) -> StreamNode:
    ms0 = reader.u64()
    seq0 = reader.u64()
    fields = reader.blobs()
    # Runs of nodes with the same fields share one list, as the engine does.
    master_fields = shared_fields.setdefault(tuple(fields), fields)
    n = reader.u32()
    live = reader.u32()
    body = reader.u64()
    ndead = reader.u32()
    dead: set[int] | None = None
    if ndead:
        dead_ids = array(_U32_ARRAY)
        dead_ids.frombytes(reader.raw(4 * ndead))
        dead = set(dead_ids)
    flags = reader.u8()
    ms = _read_array(reader)
    seq = _read_array(reader)
    count = reader.u32()
    data = reader.blob()
    offs = _read_array(reader)
    estart = same = None
    if flags & _MIXED:
        estart = _read_array(reader)
        same = reader.blob()
    if len(offs) != count + 1 or len(ms) != n:
        raise SnapshotError(f"inconsistent stream node at offset {reader.pos}")
    try:
        node = StreamNode.from_packed(ms0, seq0, master_fields, ms, seq, data, offs, dead=dead,
                                      estart=estart, same=same, body=body,
                                      open_tail=bool(flags & _OPEN))
    except ValueError as exc:
        raise SnapshotError(f"inconsistent stream node at offset {reader.pos}: {exc}") from None
    if node.live != live:
        raise SnapshotError(f"inconsistent stream node at offset {reader.pos}")
    return node


def _load_group(reader: SnapshotReader, stream: Stream) -> Iterator[None]:
    name = reader.blob()
    last_id = StreamID(reader.u64(), reader.u64())
    entries_read = reader.i64()
    group = groups_engine.create_group(stream, name, last_id,
                                       None if entries_read < 0 else entries_read)
    if group is None:
        raise SnapshotError(f"duplicate consumer group {name!r} at offset {reader.pos}")
    consumers = []
    for _ in range(reader.u32()):
        consumer_name = reader.blob()
        seen = reader.i64()
        active = reader.i64()
        consumer = group.create_consumer(consumer_name, seen)
        if consumer is None:
            raise SnapshotError(f"duplicate consumer {consumer_name!r} at offset {reader.pos}")
        consumer.active_time_ms = active
        consumers.append(consumer)
    pending = reader.u64()
    raw = reader.raw(pending * _PEL_ENTRY.size)
    records: list[tuple[int, Any, int, int]] = []
    append = records.append
    ncons = len(consumers)
    for touch, (ms, seq, owner, time_ms, count) in enumerate(_PEL_ENTRY.iter_unpack(raw)):
        if owner == _NO_OWNER:
            consumer = None
        elif owner < ncons:
            consumer = consumers[owner]
        else:
            raise SnapshotError(f"PEL entry names consumer {owner} of {ncons}")
        append(((ms << 64) | seq, consumer, time_ms, count))
        if touch & 0xFFFF == 0xFFFF:
            yield
    try:
        group.restore_pending(records)  # written in idle order
    except ValueError as exc:
        raise SnapshotError(f"consumer group {name!r}: {exc}") from None


def load_stream(reader: SnapshotReader, context: CodecContext) -> Generator[None, None, Stream]:
    length = reader.u64()
    entries_added = reader.u64()
    last_id = StreamID(reader.u64(), reader.u64())
    max_deleted_id = StreamID(reader.u64(), reader.u64())
    nodes = []
    shared: dict[tuple[bytes, ...], list[bytes]] = {}
    for index in range(reader.u32()):
        nodes.append(_load_node(reader, shared))
        if index & 1023 == 1023:
            yield
    try:
        stream = Stream.restore(nodes, length=length, last_id=last_id,
                                entries_added=entries_added, max_deleted_id=max_deleted_id,
                                limits=stream_limits(context.state))
    except ValueError as exc:
        raise SnapshotError(f"{exc} (offset {reader.pos})") from None
    for _ in range(reader.u32()):
        yield from _load_group(reader, stream)
    _load_idmp(reader, stream)
    return stream


# --- digest and command form -------------------------------------------------------------

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


register(ValueType(STREAM_TAG, "stream", Stream, dump_stream, load_stream, digest_stream,
                   stream_commands))

__all__ = ["KNOWN_NODE_SLOTS", "MIN_ID", "stream_limits"]
