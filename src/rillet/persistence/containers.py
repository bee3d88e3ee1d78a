"""Snapshot codecs for hashes, lists, sets and sorted sets.

Thin on purpose: each goes through its engine type's plain structures
(dict / list / set / dict of scores), which an RDB codec can share. Payloads
after the key (snapshot.py):

    hash (tag 2):  u8 flags (1 hashtable, 2 listpackex), u32 n, (blob field, blob value)*, u32 t, (blob field, u64 ms)*
    list (tag 3):  u32 n, blob*
    set  (tag 4):  u8 encoding (0 intset, 1 listpack, 2 hashtable), u32 n, blob*
    zset (tag 5):  u8 skiplist, u32 n, (blob member, f64 score)*

The commands that rebuild each (replication's full sync, tools) come in
chunks of 128 elements, as Redis's rewrite does (AOF_REWRITE_ITEMS_PER_CMD).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator

from rillet.engine.arrays import Array
from rillet.engine.hashes import Hash
from rillet.engine.lists import List
from rillet.engine.sets import Set
from rillet.engine.zsets import ZSet
from rillet.persistence.snapshot import (
    CodecContext,
    SnapshotReader,
    SnapshotWriter,
    ValueType,
    register,
)
from rillet.resp.fpconv import dtoa

HASH_TAG, LIST_TAG, SET_TAG, ZSET_TAG = 2, 3, 4, 5
_F64 = struct.Struct("<d")
_CHUNK = 128


def _chunks(items: list, size: int = _CHUNK) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _digest(kind: bytes, parts: list[bytes]) -> bytes:
    h = hashlib.sha1(kind)
    for part in parts:
        h.update(struct.pack("<I", len(part)))
        h.update(part)
    return h.digest()


# --- hash ----------------------------------------------------------------------------

def _hash_dump(writer: SnapshotWriter, value: Hash, context: CodecContext) -> None:
    fields = value.to_dict()
    writer.u8((1 if value.big else 0) | (2 if value.ex else 0))
    writer.u32(len(fields))
    for f, v in fields.items():
        writer.blob(f)
        writer.blob(v)
        writer.maybe_flush()
    ttls = value.field_ttls()
    writer.u32(len(ttls))
    for f, ms in ttls.items():
        writer.blob(f)
        writer.u64(ms)


def _hash_load(reader: SnapshotReader, context: CodecContext) -> Hash:
    flags = reader.u8()
    fields = {}
    for _ in range(reader.u32()):
        f = reader.blob()
        fields[f] = reader.blob()
    ttls = {}
    for _ in range(reader.u32()):
        f = reader.blob()
        ttls[f] = reader.u64()
    return Hash.from_dict(fields, ttls, bool(flags & 1), bool(flags & 2))


def _hash_digest(value: Hash, context: CodecContext) -> bytes:
    ttls = value.field_ttls()
    parts = []
    for f, v in sorted(value.to_dict().items()):
        parts += [f, v, b"%d" % ttls.get(f, -1)]
    return _digest(b"hash", parts)


def _hash_commands(key: bytes, value: Hash, context: CodecContext) -> Iterator[list[bytes]]:
    pairs = [x for item in value.to_dict().items() for x in item]
    for chunk in _chunks(pairs, 2 * _CHUNK):
        yield [b"HSET", key, *chunk]
    for f, ms in value.field_ttls().items():
        yield [b"HPEXPIREAT", key, b"%d" % ms, b"FIELDS", b"1", f]


# --- list ----------------------------------------------------------------------------

def _list_dump(writer: SnapshotWriter, value: List, context: CodecContext) -> None:
    items = value.to_list()
    writer.u32(len(items))
    for item in items:
        writer.blob(item)
        writer.maybe_flush()


def _list_load(reader: SnapshotReader, context: CodecContext) -> List:
    return List.from_list(reader.blobs(), int(context.state.config["list-max-listpack-size"]))


def _list_digest(value: List, context: CodecContext) -> bytes:
    return _digest(b"list", value.to_list())


def _list_commands(key: bytes, value: List, context: CodecContext) -> Iterator[list[bytes]]:
    for chunk in _chunks(value.to_list()):
        yield [b"RPUSH", key, *chunk]


# --- set -----------------------------------------------------------------------------

def _set_dump(writer: SnapshotWriter, value: Set, context: CodecContext) -> None:
    writer.u8(value.kind)
    members = list(value.members)
    writer.u32(len(members))
    for m in members:
        writer.blob(m)
        writer.maybe_flush()


def _set_load(reader: SnapshotReader, context: CodecContext) -> Set:
    kind = reader.u8()
    value = Set.from_members(reader.blobs())
    value.kind = kind
    return value


def _set_digest(value: Set, context: CodecContext) -> bytes:
    return _digest(b"set", sorted(value.to_set()))


def _set_commands(key: bytes, value: Set, context: CodecContext) -> Iterator[list[bytes]]:
    for chunk in _chunks(list(value.members)):
        yield [b"SADD", key, *chunk]


# --- sorted set ---------------------------------------------------------------------------

def _zset_dump(writer: SnapshotWriter, value: ZSet, context: CodecContext) -> None:
    scores = value.to_dict()
    writer.u8(1 if value.big else 0)
    writer.u32(len(scores))
    for m, s in scores.items():
        writer.blob(m)
        writer.buf += _F64.pack(s)
        writer.maybe_flush()


def _zset_load(reader: SnapshotReader, context: CodecContext) -> ZSet:
    big = bool(reader.u8())
    scores = {}
    for _ in range(reader.u32()):
        m = reader.blob()
        scores[m] = _F64.unpack(reader.raw(8))[0]
    return ZSet.from_dict(scores, big)


def _zset_digest(value: ZSet, context: CodecContext) -> bytes:
    parts = []
    for m, s in sorted(value.to_dict().items()):
        parts += [m, _F64.pack(s)]
    return _digest(b"zset", parts)


def _zset_commands(key: bytes, value: ZSet, context: CodecContext) -> Iterator[list[bytes]]:
    # rewriteSortedSetObject writes each score with rioWriteBulkDouble: fpconv_dtoa itself
    # (so 3.0 is "3" and 2**62 "4611686018427388000", not d2string's integer).
    pairs = [x for m, s in value.to_dict().items() for x in (dtoa(s), m)]
    for chunk in _chunks(pairs, 2 * _CHUNK):
        yield [b"ZADD", key, *chunk]


register(ValueType(HASH_TAG, "hash", Hash, _hash_dump, _hash_load, _hash_digest, _hash_commands))
register(ValueType(LIST_TAG, "list", List, _list_dump, _list_load, _list_digest, _list_commands))
register(ValueType(SET_TAG, "set", Set, _set_dump, _set_load, _set_digest, _set_commands))
register(ValueType(ZSET_TAG, "zset", ZSet, _zset_dump, _zset_load, _zset_digest, _zset_commands))


# --- array (Redis 8.8) ----------------------------------------------------------------------
# Payload (tag 6): u8 has cursor, u64 cursor, u64 n, (u64 index, blob value)*. The rebuild
# is ARMSET in chunks, then ARSEEK for the ARINSERT/ARRING cursor.

ARRAY_TAG = 6


def _array_dump(writer: SnapshotWriter, value: Array, context: CodecContext) -> None:
    writer.u8(0 if value.insert_idx is None else 1)
    writer.u64(value.insert_idx or 0)
    writer.u64(value.count)
    for idx, item in value.items():
        writer.u64(idx)
        writer.blob(item)
        writer.maybe_flush()


def _array_load(reader: SnapshotReader, context: CodecContext) -> Array:
    value = Array()
    has_cursor = reader.u8()
    cursor = reader.u64()
    for _ in range(reader.u64()):
        idx = reader.u64()
        value.set(idx, reader.blob())
    value.insert_idx = cursor if has_cursor else None
    return value


def _array_digest(value: Array, context: CodecContext) -> bytes:
    parts = [b"cursor:%d" % (-1 if value.insert_idx is None else value.insert_idx)]
    for idx, item in value.items():
        parts += [b"%d" % idx, item]
    return _digest(b"array", parts)


def _array_commands(key: bytes, value: Array, context: CodecContext) -> Iterator[list[bytes]]:
    pairs = [x for idx, item in value.items() for x in (b"%d" % idx, item)]
    for chunk in _chunks(pairs, 2 * _CHUNK):
        yield [b"ARMSET", key, *chunk]
    if value.insert_idx is not None:
        yield [b"ARSEEK", key, b"%d" % (value.insert_idx + 1)]


register(ValueType(ARRAY_TAG, "array", Array, _array_dump, _array_load, _array_digest,
                   _array_commands))
