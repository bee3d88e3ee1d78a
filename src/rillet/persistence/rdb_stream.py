"""The stream codec for RDB: RDB_TYPE_STREAM_LISTPACKS_3 out; _5 to _2 and the 5.0 form in.

Payload (rdb.c rdbSaveObject for OBJ_STREAM):

    len nodes, (string 16-byte master ID big-endian, string listpack)*
    len length, len last-id ms, len last-id seq,
    [_2+: len first-id ms, seq, len max-deleted ms, seq, len entries-added]
    len groups, per group in name order:
        string name, len last-id ms, len last-id seq, [_2+: len entries-read]
        len PEL, (16-byte ID, 8-byte delivery ms LE, len delivery count)* in ID order
        len consumers, per consumer in name order:
            string name, 8-byte seen-time, [_3: 8-byte active-time],
            len PEL, 16-byte ID* in ID order

Each node is one listpack in t_stream.c's layout: master entry (count,
deleted, num-fields, fields..., 0), then per entry flags, ms-diff, seq-diff,
[num-fields, fields and values | values when SAMEFIELDS], lp-count. rillet's
nodes close where Redis's listpacks do, so nodes map one to one.

Newer Redis versions append to that layout (read here, not written, so that
Redis 8.2 loads rillet's dumps):

    _4 (RDB 13, Redis 8.6), after the groups: len IDMP duration s, len IDMP
        max size, len producers, per producer: string pid, len entries,
        (string iid, len ms, len seq)*; then len iids-added, len iids-duplicates.
    _5 (RDB 14, Redis 8.8), per group after its consumers: len NACK zone size,
        16-byte ID* of the entries XNACK released, in zone order.

Entries released by XNACK (no owner, Redis 8.8) are in the group PEL and in
no consumer's PEL. The IDMP state (Redis 8.6) is written as an AUX field per
stream ("rillet-idmp"), which Redis 8.2 ignores: see docs/compat.md.
"""

from __future__ import annotations

import struct
from itertools import accumulate
from typing import Any

from rillet.compiled import compiled
from rillet.engine import groups as groups_engine
from rillet.engine.idmp import IDMP_DURATION_MAX_S, IDMP_MAXSIZE_MAX
from rillet.engine.ids import StreamID
from rillet.engine.listpack_size import int_size
from rillet.engine.pel import SEQ_BITS, SEQ_MASK, TOUCH_BITS
from rillet.engine.stream import Stream
from rillet.engine.stream_node import StreamNode, compact_array
from rillet.persistence import rdb
from rillet.persistence.rdb_format import (
    TYPE_STREAM_LISTPACKS,
    TYPE_STREAM_LISTPACKS_2,
    TYPE_STREAM_LISTPACKS_3,
    TYPE_STREAM_LISTPACKS_4,
    TYPE_STREAM_LISTPACKS_5,
    RDBReader,
    encode_len,
    lp_decode,
    lp_element,
    lp_finish,
    lp_int,
    stream_id_bytes,
)

FLAG_DELETED = 1
FLAG_SAMEFIELDS = 2
_U64 = 1 << 64
_I64_MAX = (1 << 63) - 1
_ID = struct.Struct(">QQ")
_UNPACK_MS = struct.Struct("<q").unpack_from
_PEL_TAIL = struct.Struct("<q")


def _diff(a: int, b: int) -> int:
    """a - b in uint64, read as int64 (t_stream.c's ms-diff/seq-diff)."""
    d = (a - b) % _U64
    return d - _U64 if d > _I64_MAX else d


_ELEMENT_CACHE: dict[bytes, bytes] = {}


def _element(value: bytes) -> bytes:
    encoded = _ELEMENT_CACHE.get(value)
    if encoded is None:
        encoded = lp_element(value)
        if len(value) < 24:
            if len(_ELEMENT_CACHE) >= 8192:
                _ELEMENT_CACHE.clear()
            _ELEMENT_CACHE[value] = encoded
    return encoded


def node_listpack(node: StreamNode) -> bytes:
    """The listpack Redis holds for this node (byte for byte)."""
    mf = node.mf
    k = len(mf)
    n = node.n
    parts = [lp_int(node.live), lp_int(n - node.live), lp_int(k)]
    parts += map(_element, mf)
    parts.append(b"\x00\x01")
    count = 4 + k
    dead = node.dead
    ms0, seq0 = node.ms0, node.seq0
    ms_arr, seq_arr = node.ms, node.seq
    estart, same = node.estart, node.same
    if node.is_open:
        elems = node.elems or []
    else:
        offs, data = node.offs, node.data
        elems = list(map(data.__getitem__, map(slice, offs, offs[1:])))
    same_count = lp_int(k + 3)
    append = parts.append
    for i in range(n):
        dms = ms_arr[i]
        dseq = _diff(seq_arr[i], seq0)
        if estart is None:
            a, b, is_same = i * k, i * k + k, True
        else:
            a, b, is_same = estart[i], estart[i + 1], bool(same[i])
        flags = (FLAG_DELETED if dead is not None and i in dead else 0)
        if is_same:
            append(lp_int(flags | FLAG_SAMEFIELDS))
            append(lp_int(dms if dms <= _I64_MAX else _diff(dms + ms0, ms0)))
            append(lp_int(dseq))
            parts += map(_element, elems[a:b])
            append(same_count)
            count += 4 + k
        else:
            nf = (b - a) >> 1
            append(lp_int(flags))
            append(lp_int(dms if dms <= _I64_MAX else _diff(dms + ms0, ms0)))
            append(lp_int(dseq))
            append(lp_int(nf))
            parts += map(_element, elems[a:b])
            append(lp_int(2 * nf + 4))
            count += 5 + 2 * nf
    return lp_finish(b"".join(parts), count)


def _node_listpack_fast(node: StreamNode, encode: Any = None) -> bytes:
    if node.is_open:
        # Pack a copy: the live node must not change under a foreground SAVE.
        elems = node.elems or []
        data = b"".join(elems)
        offs = list(accumulate(map(len, elems), initial=0))
    else:
        data, offs = node.data, node.offs
    return (encode or _encode)(node.live, node.n - node.live, node.mf, node.ms, node.seq, node.seq0,
                   data, offs, node.estart, node.same, node.dead)


def save_stream(writer: rdb.RDBWriter, stream: Stream,
                rdb_type: int = TYPE_STREAM_LISTPACKS_3) -> None:
    """The payload of `rdb_type`: _3 as dumps are written; _5 (Redis 8.8's) on request."""
    nodes = stream.nodes
    writer.length(len(nodes))
    if _nodes_rdb is not None:
        # The same bytes as the loop below, a batch of nodes per call.
        for start in range(0, len(nodes), _NODE_BATCH):
            writer.raw(_nodes_rdb(nodes, start, min(start + _NODE_BATCH, len(nodes)),
                                  writer.compress, _listpack))
            writer.maybe_flush()
    else:
        for node in nodes:
            writer.string(stream_id_bytes(node.ms0, node.seq0))
            # A node not read since it was loaded goes back out as the bytes it came in as.
            writer.string(node.lp if node.lp is not None else _listpack(node))  # (a LoadedNode's)
            writer.maybe_flush()
    length = writer.length
    length(stream.length)
    length(stream.last_id[0])
    length(stream.last_id[1])
    first = stream.first_id
    length(first[0])
    length(first[1])
    length(stream.max_deleted_id[0])
    length(stream.max_deleted_id[1])
    length(stream.entries_added)
    groups = groups_engine.groups_in_order(stream)
    length(len(groups))
    for group in groups:
        writer.string(group.name)
        length(group.last_id[0])
        length(group.last_id[1])
        length(-1 % _U64 if group.entries_read is None else group.entries_read)
        pel = list(group.pel)
        length(len(pel))
        out = []
        for entry in pel:
            key = entry.key
            out.append(_ID.pack(key >> SEQ_BITS, key & SEQ_MASK))
            out.append(_PEL_TAIL.pack(entry.tkey >> TOUCH_BITS))
            out.append(encode_len(entry.delivery_count))
        writer.raw(b"".join(out))
        writer.maybe_flush()
        consumers = group.consumers_in_order()
        length(len(consumers))
        for consumer in consumers:
            writer.string(consumer.name)
            writer.millis(consumer.seen_time_ms)
            writer.millis(consumer.active_time_ms)
            length(len(consumer.pel))
            writer.raw(b"".join(_ID.pack(key >> SEQ_BITS, key & SEQ_MASK)
                                for key in consumer.pel.keys()))
            writer.maybe_flush()
        if rdb_type >= TYPE_STREAM_LISTPACKS_5:
            zone = [entry.key for entry in group.pending_in_idle_order() if entry.owner is None]
            length(len(zone))
            writer.raw(b"".join(_ID.pack(key >> SEQ_BITS, key & SEQ_MASK) for key in zone))
    if rdb_type >= TYPE_STREAM_LISTPACKS_4:
        _save_idmp(writer, stream)


def _save_idmp(writer: rdb.RDBWriter, stream: Stream) -> None:
    config = writer.config
    defaults = ((config["stream-idmp-duration"], config["stream-idmp-maxsize"])
                if config is not None else (100, 100))
    idmp = stream.idmp
    if idmp is None:
        writer.raw(encode_len(defaults[0]) + encode_len(defaults[1]) + b"\0\0\0")
        return
    duration, maxsize = idmp.settings(*defaults)
    writer.length(duration)
    writer.length(maxsize)
    writer.length(len(idmp.producers))
    for pid, iids in idmp.producers.items():
        writer.string(pid)
        writer.length(len(iids))
        for iid, sid in iids.items():
            writer.string(iid)
            writer.length(sid[0])
            writer.length(sid[1])
    writer.length(idmp.iids_added)
    writer.length(idmp.iids_duplicates)


# --- load --------------------------------------------------------------------------------

def _int(element: Any, what: str) -> int:
    if element.__class__ is not int:
        raise ValueError(f"{what} is not an integer")
    return element


def stream_lp_decode(lp: bytes, seq0: int) -> tuple:
    """Decode a stream listpack: (live, ndead, fields, ms, seq, data, offs, estart, same, dead).

    `ms` holds ms-diffs (uint64), `seq` absolute seqs, `data`/`offs` the
    stored elements (arrays as StreamNode keeps them); `estart`/`same` are
    None when every entry is SAMEFIELDS. ValueError if it is not a valid node.
    """
    elements = lp_decode(lp)
    if len(elements) < 4:
        raise ValueError("stream listpack without a master entry")
    live = _int(elements[0], "master count")
    ndead = _int(elements[1], "master deleted count")
    k = _int(elements[2], "master field count")
    if k < 0 or len(elements) < 4 + k:
        raise ValueError("stream listpack master entry truncated")
    fields = [e if e.__class__ is bytes else b"%d" % e for e in elements[3 : 3 + k]]
    p = 4 + k
    if elements[p - 1] != 0 or elements[p - 1].__class__ is not int:
        raise ValueError("stream master entry not terminated by 0")
    total = len(elements)
    ms_list: list[int] = []
    seq_list: list[int] = []
    stored: list[bytes] = []
    estart: list[int] = []
    same = bytearray()
    dead: list[int] = []
    mixed = False
    i = 0
    while p < total:
        flags = _int(elements[p], "entry flags")
        ms_list.append(_int(elements[p + 1], "ms-diff") % _U64)
        seq_list.append((seq0 + _int(elements[p + 2], "seq-diff")) % _U64)
        p += 3
        estart.append(len(stored))
        if flags & FLAG_SAMEFIELDS:
            values = elements[p : p + k]
            p += k
            same.append(1)
            lp_count = k + 3
        else:
            nf = _int(elements[p], "entry field count")
            values = elements[p + 1 : p + 1 + 2 * nf]
            p += 1 + 2 * nf
            same.append(0)
            mixed = True
            lp_count = 2 * nf + 4
        if p >= total or elements[p] != lp_count or elements[p].__class__ is not int:
            raise ValueError("stream entry with a wrong lp-count")
        p += 1
        stored += [e if e.__class__ is bytes else b"%d" % e for e in values]
        if flags & FLAG_DELETED:
            dead.append(i)
        i += 1
    if len(dead) != ndead or i - ndead != live:
        raise ValueError("stream listpack counts disagree with its entries")
    estart.append(len(stored))
    offs = [0]
    pos = 0
    for item in stored:
        pos += len(item)
        offs.append(pos)
    return (live, ndead, fields, compact_array(ms_list), compact_array(seq_list), b"".join(stored),
            compact_array(offs), compact_array(estart) if mixed else None,
            bytes(same) if mixed else None, dead)


def stream_lp_header(lp: bytes, seq0: int) -> tuple:
    """stream_lp_decode(lp, seq0)[:3]: (live, ndead, master fields); ValueError if invalid.

    The reference for _rdbfast.stream_lp_header, which makes the same checks
    without building the entries.
    """
    return stream_lp_decode(lp, seq0)[:3]


class LoadedNode(StreamNode):
    """A closed node as loaded from an RDB: Redis's listpack (`lp`), decoded on first read.

    Most nodes of a big stream are not read between a restart and the next
    save, so loading only checks each listpack (the same checks as the decode,
    so the decode cannot fail later) and sets the fields the engine reads
    without entries: IDs of the master entry, counts, master fields, sizes.
    While `lp` is set the entry fields are empty; the first read of one (a
    StreamNode property) calls materialize, which decodes the listpack into
    the packed form and clears `lp`: from then on the node is a plain one to
    every reader and writer. Until then a save writes `lp` back as it is.
    """

    __slots__ = ()

    def materialize(self) -> None:
        lp = self.lp
        if lp is None:
            return
        _live, _ndead, _fields, ms, seq, data, offs, estart, same, dead = _decode(lp, self.seq0)
        self.set_entries(ms, seq, data, offs, estart, same, set(dead) if dead else None)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # copy/deepcopy (COPY of a stream) and pickle: the copy starts decoded.
        self.materialize()
        return super().__reduce_ex__(protocol)


def node_from_listpack(ms0: int, seq0: int, lp: bytes,
                       shared: dict[tuple[bytes, ...], list[bytes]]) -> StreamNode:
    """A closed node from a Redis stream listpack, kept as `lp` until first read
    (LoadedNode); ValueError if the listpack is not a valid stream node."""
    live, ndead, fields = _header(lp, seq0)
    # Runs of nodes with the same master fields share one list, as the engine does.
    master_fields = shared.setdefault(tuple(fields), fields)
    node = LoadedNode.closed_shell(ms0, seq0, master_fields, live + ndead, live,
                                   len(lp) - int_size(live) - int_size(ndead))
    node.lp = lp
    return node


def _stream_id(reader: RDBReader, what: str) -> StreamID:
    return StreamID(reader.length(what), reader.length(what))


def load_stream(reader: RDBReader, rdb_type: int, context: rdb.LoadContext) -> Any:
    nodes = []
    shared: dict[tuple[bytes, ...], list[bytes]] = {}
    for index in range(reader.length("the stream node count")):
        at = reader.pos
        master = reader.string("a stream node key")
        if len(master) != 16:
            raise reader.fail("a 16-byte stream node key", at)
        ms0, seq0 = _ID.unpack(master)
        at = reader.pos
        lp = reader.string("a stream listpack")
        try:
            node = node_from_listpack(ms0, seq0, lp, shared)
        except (ValueError, IndexError, struct.error) as exc:
            raise reader.fail(f"a valid stream listpack ({exc})", at) from None
        if not node.n:
            raise reader.fail("a non-empty stream listpack", at)
        nodes.append(node)
        if index & 1023 == 1023:
            yield
    length = reader.length("the stream length")
    last_id = _stream_id(reader, "the stream last ID")
    if rdb_type >= TYPE_STREAM_LISTPACKS_2:
        _stream_id(reader, "the stream first ID")  # derived from the entries here
        max_deleted_id = _stream_id(reader, "the stream max deleted ID")
        entries_added = reader.length("the stream entries-added")
    else:
        max_deleted_id = StreamID(0, 0)
        entries_added = length
    at = reader.pos
    try:
        stream = Stream.restore(nodes, length=length, last_id=last_id,
                                entries_added=entries_added, max_deleted_id=max_deleted_id,
                                limits=context.state.keyspace.stream_limits
                                if context.state is not None else None)
    except ValueError as exc:
        raise reader.fail(f"a consistent stream ({exc})", at) from None
    for _ in range(reader.length("the consumer group count")):
        yield from _load_group(reader, rdb_type, stream)
    if rdb_type >= TYPE_STREAM_LISTPACKS_4:
        _load_idmp(reader, stream, context)
    return stream


def _load_idmp(reader: RDBReader, stream: Stream, context: rdb.LoadContext) -> None:
    """The IDMP section of a _4+ stream (see the module docstring)."""
    at = reader.pos
    duration = reader.length("the IDMP duration")
    maxsize = reader.length("the IDMP max size")
    if not 1 <= duration <= IDMP_DURATION_MAX_S or not 1 <= maxsize <= IDMP_MAXSIZE_MAX:
        raise reader.fail(f"an IDMP duration of 1-{IDMP_DURATION_MAX_S} s and a max size"
                          f" of 1-{IDMP_MAXSIZE_MAX} (got {duration}, {maxsize})", at)
    producers: dict[bytes, dict[bytes, StreamID]] = {}
    for _ in range(reader.length("the IDMP producer count")):
        at = reader.pos
        pid = reader.string("an IDMP producer ID")
        if pid in producers:
            raise reader.fail(f"a unique IDMP producer ID (duplicate {pid!r})", at)
        iids = producers[pid] = {}
        for _ in range(reader.length("an IDMP producer's entry count")):
            iid = reader.string("an IDMP idempotent ID")
            iids[iid] = _stream_id(reader, "an IDMP entry ID")
    added = reader.length("the IDMP iids-added count")
    duplicates = reader.length("the IDMP iids-duplicates count")
    config = context.state.config if context.state is not None else None
    defaults = ((config["stream-idmp-duration"], config["stream-idmp-maxsize"])
                if config is not None else (None, None))
    if not producers and not added and not duplicates and (duration, maxsize) == defaults:
        return  # Redis writes the section for every stream: this one never used IDMP
    idmp = stream.ensure_idmp()
    # Settings equal to the server's defaults keep following them, as before XCFGSET.
    idmp.duration_s = None if duration == defaults[0] else duration
    idmp.maxsize = None if maxsize == defaults[1] else maxsize
    idmp.producers = producers
    idmp.iids_added = added
    idmp.iids_duplicates = duplicates


def _load_group(reader: RDBReader, rdb_type: int, stream: Stream) -> Any:
    at = reader.pos
    name = reader.string("a consumer group name")
    last_id = _stream_id(reader, "a group last ID")
    entries_read: int | None = None
    if rdb_type >= TYPE_STREAM_LISTPACKS_2:
        value = reader.length("a group entries-read")
        entries_read = None if value >= 1 << 63 else value
    group = groups_engine.create_group(stream, name, last_id, entries_read)
    if group is None:
        raise reader.fail(f"a unique consumer group name (duplicate {name!r})", at)
    pending: dict[int, list] = {}
    # A PEL record is a 16-byte ID, an 8-byte time and a length-encoded count,
    # almost always one byte (a count below 64): those are read in place, the
    # reader's methods only for the rest (this loop is a tenth of a load's time).
    data, end, unpack_id, unpack_ms = reader.data, reader.end, _ID.unpack_from, _UNPACK_MS
    for index in range(reader.length("a group PEL size")):
        pos = reader.pos
        if pos + 25 <= end and data[pos + 24] < 64:
            ms, seq = unpack_id(data, pos)
            time_ms = unpack_ms(data, pos + 16)[0]
            count = data[pos + 24]
            reader.pos = pos + 25
        else:
            ms, seq = _ID.unpack(reader.take(16, "a PEL ID"))
            time_ms = reader.millis()
            count = reader.length("a delivery count")
        key = (ms << SEQ_BITS) | seq
        if key in pending:
            raise reader.fail("a unique PEL ID")
        pending[key] = [key, None, time_ms, count]
        if index & 0xFFFF == 0xFFFF:
            yield
    for _ in range(reader.length("a consumer count")):
        at = reader.pos
        consumer_name = reader.string("a consumer name")
        seen = reader.millis()
        active = reader.millis() if rdb_type >= TYPE_STREAM_LISTPACKS_3 else seen
        consumer = group.create_consumer(consumer_name, seen)
        if consumer is None:
            raise reader.fail(f"a unique consumer name (duplicate {consumer_name!r})", at)
        consumer.active_time_ms = active
        size = reader.length("a consumer PEL size")
        start = reader.pos
        ids = reader.take(16 * size, "a consumer PEL ID") if size else b""
        for index, (ms, seq) in enumerate(_ID.iter_unpack(ids)):
            record = pending.get((ms << SEQ_BITS) | seq)
            if record is None or record[1] is not None:
                raise reader.fail("a consumer PEL ID present in the group PEL",
                                  start + 16 * index + 16)
            record[1] = consumer
    released: list[tuple] = []
    if rdb_type >= TYPE_STREAM_LISTPACKS_5:
        size = reader.length("a NACK zone size")
        start = reader.pos
        ids = reader.take(16 * size, "a NACK zone ID") if size else b""
        for index, (ms, seq) in enumerate(_ID.iter_unpack(ids)):
            record = pending.pop((ms << SEQ_BITS) | seq, None)
            if record is None or record[1] is not None:
                raise reader.fail("a NACK zone ID pending in the group and owned by no consumer",
                                  start + 16 * index + 16)
            record[2] = 0  # as XNACK leaves it: claimable at once, at the front of the idle order
            released.append(tuple(record))
    # Idle order: the NACK zone in its order, then oldest delivery first, ties by
    # ID (the group PEL's order).
    records = released + sorted(map(tuple, pending.values()), key=lambda r: r[2])
    group.restore_pending(records)


_decode = stream_lp_decode
_header = stream_lp_header
_listpack = node_listpack
_encode: Any = None
_nodes_rdb: Any = None
_NODE_BATCH = 256  # nodes per compiled call (~140 KiB of listpacks at the default size)
# The compiled forms (same results; tests/persistence/test_rdb_format.py compares).
_rdbfast = compiled("rillet.persistence._rdbfast")
if _rdbfast is not None:
    _decode, _encode, _header, _nodes_rdb = (
        _rdbfast.stream_lp_decode, _rdbfast.stream_lp_encode, _rdbfast.stream_lp_header,
        _rdbfast.stream_nodes_rdb)
    _listpack = _node_listpack_fast


def dump_form(stream: Stream) -> tuple[int, int] | None:
    """DUMP's newer form for a stream whose state type _3 would lose, else None.

    Entries released by XNACK need _5 (RDB 14, Redis 8.8); IDMP state needs _4
    (RDB 13, Redis 8.6). Files carry the IDMP state in an AUX field instead, but
    a DUMP payload is one value with no room for AUX.
    """
    if any(group.nacked_count for group in stream.groups.values()):
        return TYPE_STREAM_LISTPACKS_5, 14
    if stream.idmp is not None:
        return TYPE_STREAM_LISTPACKS_4, 13
    return None


rdb.register(rdb.RDBCodec(
    "stream", Stream, TYPE_STREAM_LISTPACKS_3,
    (TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3,
     TYPE_STREAM_LISTPACKS_4, TYPE_STREAM_LISTPACKS_5),
    save_stream, load_stream, dump_form=dump_form))


# --- IDMP state (Redis 8.6) in an AUX field ------------------------------------------------

IDMP_AUX = b"rillet-idmp"


def _idmp_values(state: Any) -> list[bytes]:
    """One AUX value per stream with IDMP state: db, key, settings, counters, producers."""
    out = []
    for db in state.keyspace.dbs:
        for key, value in db.data.items():
            if value.__class__ is not Stream or value.idmp is None:
                continue
            idmp = value.idmp
            parts = [encode_len(db.index), encode_len(len(key)), key,
                     encode_len(0 if idmp.duration_s is None else idmp.duration_s + 1),
                     encode_len(0 if idmp.maxsize is None else idmp.maxsize + 1),
                     encode_len(idmp.iids_added), encode_len(idmp.iids_duplicates),
                     encode_len(len(idmp.producers))]
            for pid, iids in idmp.producers.items():
                parts += [encode_len(len(pid)), pid, encode_len(len(iids))]
                for iid, sid in iids.items():
                    parts += [encode_len(len(iid)), iid, _ID.pack(sid[0], sid[1])]
            out.append(b"".join(parts))
    return out


def _idmp_apply(state: Any, value: bytes) -> None:
    reader = RDBReader(value, name="rillet-idmp")
    db = state.keyspace.dbs[reader.length()]
    key = reader.take(reader.length())
    stream = db.data.get(key)
    if stream.__class__ is not Stream:
        return  # the key expired while loading or is not a stream any more
    idmp = stream.ensure_idmp()
    duration = reader.length()
    maxsize = reader.length()
    idmp.duration_s = duration - 1 if duration else None
    idmp.maxsize = maxsize - 1 if maxsize else None
    idmp.iids_added = reader.length()
    idmp.iids_duplicates = reader.length()
    producers: dict[bytes, dict[bytes, StreamID]] = {}
    for _ in range(reader.length()):
        pid = bytes(reader.take(reader.length()))
        iids = producers[pid] = {}
        for _ in range(reader.length()):
            iid = bytes(reader.take(reader.length()))
            iids[iid] = StreamID(*_ID.unpack(reader.take(16)))
    idmp.producers = producers


rdb.AUX_EXTENSIONS[IDMP_AUX] = (_idmp_values, _idmp_apply)


# --- RILLET.XRETENTION / RILLET.XDEADLETTER policies (engine/stream_policy.py) ---------------
# In an AUX field per stream in a snapshot, and after the value in a DUMP payload:
# Redis 8.2.3 ignores both (unknown AUX fields, and bytes between a RESTORE
# payload's value and its footer), rillet reads them back. See docs/compat.md.

POLICY_AUX = b"rillet-stream-policy"
POLICY_TRAILER = b"\0rillet-stream-policy\0"


def policy_bytes(stream: Stream) -> bytes | None:
    """retention-ms, then (group, max-deliveries, dead-letter key) per group with one."""
    groups = [group for group in stream.groups.values() if group.dead_letter_key is not None]
    if not stream.retention_ms and not groups:
        return None
    parts = [encode_len(stream.retention_ms), encode_len(len(groups))]
    for group in groups:
        target = group.dead_letter_key
        parts += [encode_len(len(group.name)), group.name, encode_len(group.max_deliveries),
                  encode_len(len(target)), target]
    return b"".join(parts)


def apply_policy(stream: Stream, reader: RDBReader) -> None:
    stream.retention_ms = reader.length()
    for _ in range(reader.length()):
        name = bytes(reader.take(reader.length()))
        limit = reader.length()
        target = bytes(reader.take(reader.length()))
        group = stream.groups.get(name)
        if group is not None and limit > 0:
            group.max_deliveries, group.dead_letter_key = limit, target


def _policy_values(state: Any) -> list[bytes]:
    out = []
    for db in state.keyspace.dbs:
        data = db.data
        for key in db.streams:
            value = data.get(key)
            if value.__class__ is not Stream:
                continue
            policy = policy_bytes(value)
            if policy is not None:
                out.append(encode_len(db.index) + encode_len(len(key)) + key + policy)
    return out


def _policy_apply(state: Any, value: bytes) -> None:
    reader = RDBReader(value, name="rillet-stream-policy")
    db = state.keyspace.dbs[reader.length()]
    stream = db.data.get(bytes(reader.take(reader.length())))
    if stream.__class__ is Stream:  # (not if it expired while loading)
        apply_policy(stream, reader)


def _dump_trailer(stream: Stream) -> bytes | None:
    policy = policy_bytes(stream)
    return None if policy is None else POLICY_TRAILER + policy


def _restore_trailer(stream: Stream, trailer: bytes) -> bool:
    if not trailer.startswith(POLICY_TRAILER):
        return False
    reader = RDBReader(trailer, len(POLICY_TRAILER), name="DUMP payload")
    apply_policy(stream, reader)
    return reader.pos == reader.end


rdb.AUX_EXTENSIONS[POLICY_AUX] = (_policy_values, _policy_apply)
rdb.DUMP_TRAILERS[Stream] = (_dump_trailer, _restore_trailer)
