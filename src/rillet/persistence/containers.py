"""Digest and command form of hashes, lists, sets, sorted sets and arrays.

Each goes through its engine type's plain structures (dict / list / set /
dict of scores). The commands that rebuild each come in chunks of 128
elements, as Redis's rewrite does (AOF_REWRITE_ITEMS_PER_CMD).
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
from rillet.persistence.valuetypes import CodecContext, ValueType, register
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

def _list_digest(value: List, context: CodecContext) -> bytes:
    return _digest(b"list", value.to_list())


def _list_commands(key: bytes, value: List, context: CodecContext) -> Iterator[list[bytes]]:
    for chunk in _chunks(value.to_list()):
        yield [b"RPUSH", key, *chunk]


# --- set -----------------------------------------------------------------------------

def _set_digest(value: Set, context: CodecContext) -> bytes:
    return _digest(b"set", sorted(value.to_set()))


def _set_commands(key: bytes, value: Set, context: CodecContext) -> Iterator[list[bytes]]:
    for chunk in _chunks(list(value.members)):
        yield [b"SADD", key, *chunk]


# --- sorted set ---------------------------------------------------------------------------

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


register(ValueType(HASH_TAG, "hash", Hash, _hash_digest, _hash_commands))
register(ValueType(LIST_TAG, "list", List, _list_digest, _list_commands))
register(ValueType(SET_TAG, "set", Set, _set_digest, _set_commands))
register(ValueType(ZSET_TAG, "zset", ZSet, _zset_digest, _zset_commands))


# --- array (Redis 8.8) ----------------------------------------------------------------------
# The rebuild is ARMSET in chunks, then ARSEEK for the ARINSERT/ARRING cursor.

ARRAY_TAG = 6


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


register(ValueType(ARRAY_TAG, "array", Array, _array_digest, _array_commands))
