"""RDB codec for arrays (Redis 8.8's RDB_TYPE_ARRAY, 28).

The layout, as Redis 8.8 writes it (Redis's rdb.c for arrays was not at hand:
this follows the parsers written for it, see docs/compat.md "Arrays"):

    len count, len has-cursor (0|1), [len insert index],
    then per element in index order: len index, len tag, payload where
    tag 1 (INT) is an 8-byte little-endian int64, tag 2 (FLOAT) an 8-byte
    little-endian double, tag 3 (SMALLSTR, up to 7 bytes) and tag 0 (SDS) a string.

The tag is the form the value has in Redis's memory (sparsearray.c arEncode):
an integer within 62 bits, a decimal that a double with its 2 low bits cleared
prints back exactly, a string of up to 7 bytes, else a heap string. Values
read back print as they were written (arDecode), so the content round-trips.
"""

from __future__ import annotations

import struct
from typing import Any

from rillet.engine.arrays import (
    TAG_FLOAT,
    TAG_INT,
    TAG_SDS,
    TAG_SMALLSTR,
    U64_MAX,
    Array,
    value_tag,
)
from rillet.persistence import rdb
from rillet.persistence.rdb_format import RDBReader
from rillet.resp.encoder import format_double

TYPE_ARRAY = 28
_Q = struct.Struct("<q")
_D = struct.Struct("<d")


def save_array(writer: rdb.RDBWriter, value: Array) -> None:
    writer.length(value.count)
    if value.insert_idx is None:
        writer.length(0)
    else:
        writer.length(1)
        writer.length(value.insert_idx)
    for idx, item in value.items():
        writer.length(idx)
        tag, payload = value_tag(item, format_double)
        writer.length(tag)
        if tag == TAG_INT:
            writer.raw(_Q.pack(payload))
        elif tag == TAG_FLOAT:
            writer.raw(_D.pack(payload))
        else:
            writer.string(item)
        writer.maybe_flush()


def _float_text(d: float) -> bytes:
    """arFormatFloat: d2string, with ".0" restored on integer-looking finite values."""
    text = format_double(d)
    if d == d and d not in (float("inf"), float("-inf")) and not any(c in text for c in b".eE"):
        text += b".0"
    return text


def load_array(reader: RDBReader, rdb_type: int, context: Any) -> Array | None:
    value = Array()
    count = reader.length("an array's element count")
    flag = reader.length("an array's cursor flag")
    if flag not in (0, 1):
        raise reader.fail("an array cursor flag of 0 or 1")
    cursor = reader.length("an array's insert index") if flag else None
    last = -1
    for _ in range(count):
        at = reader.pos
        idx = reader.length("an array index")
        if idx >= U64_MAX or idx <= last:
            raise reader.fail("array indexes ascending below 2^64-1", at)
        last = idx
        tag = reader.length("an array element tag")
        if tag == TAG_INT:
            item = b"%d" % _Q.unpack(reader.take(8))[0]
        elif tag == TAG_FLOAT:
            item = _float_text(_D.unpack(reader.take(8))[0])
        elif tag in (TAG_SMALLSTR, TAG_SDS):
            item = reader.string("an array element")
        else:
            raise reader.fail("an array element tag 0-3", at)
        value.set(idx, item)
    if cursor is not None:
        if cursor >= U64_MAX:
            raise reader.fail("an array insert index below 2^64-1")
        value.insert_idx = cursor
    return value if value.count else None


rdb.register(rdb.RDBCodec("array", Array, TYPE_ARRAY, (TYPE_ARRAY,), save_array, load_array))
