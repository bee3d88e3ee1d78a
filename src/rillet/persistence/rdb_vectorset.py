"""Vector sets in RDB, DUMP/RESTORE and the other persistence forms.

Redis stores a vector set as a module value: RDB_TYPE_MODULE_2 (7), the
module type id ("vectorset", encver 0, packed as moduleTypeEncodeId packs it),
then what vset.c's VectorSetRdbSave writes through the module API, each
number behind opcode UINT (2) and each string behind opcode STRING (5):

    dim, count, config (quant type | M << 8), flags (1 projection, 2 attributes),
    [projection: input dim, matrix as a float32 blob],
    per node, newest first: element, [attributes, "" for none], stored vector,
    params count, params (hnsw_serialize_node: id, version 1 << 24 | level, per
    level num_links, max_links, link ids, worst distance bits << 32 | worst index;
    then range bits << 32 | l2 bits)

and opcode EOF (0). Loading checks what vset.c's VectorSetRdbLoad and
hnsw.c's hnsw_insert_serialized/hnsw_deserialize_index check (dimensions,
quant type, vector length, unique names and ids, reciprocal links).

For the snapshot registry (DEBUG DIGEST-VALUE, the AOF rewrite without an
RDB preamble, replication's command form) a set is one RESTORE of its DUMP
payload: nothing else replays its graph and quantised vectors exactly.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from typing import Any

from rillet.engine.vectorset import (
    MAX_DIM,
    QUANT_BIN,
    QUANT_NONE,
    QUANT_Q8,
    VectorSet,
    next_uid,
)
from rillet.persistence import rdb
from rillet.persistence.rdb_format import RDBReader
from rillet.persistence.snapshot import (
    CodecContext,
    SnapshotReader,
    SnapshotWriter,
    ValueType,
    register,
)

TYPE_MODULE_2 = 7
OP_EOF, OP_UINT, OP_STRING = 0, 2, 5
FLAG_PROJECTION, FLAG_ATTRIBS = 1, 2
_CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def module_type_id(name: str, encver: int) -> int:
    """moduleTypeEncodeId: nine 6-bit name characters, then a 10-bit encoding version."""
    value = 0
    for ch in name:
        value = (value << 6) | _CHARSET.index(ch)
    return (value << 10) | encver


MODULE_ID = module_type_id("vectorset", 0)


def save_vectorset(writer: rdb.RDBWriter, value: VectorSet) -> None:
    writer.length(MODULE_ID)

    def uint(n: int) -> None:
        writer.length(OP_UINT)
        writer.length(n)

    def string(data: bytes) -> None:
        writer.length(OP_STRING)
        writer.string(data)

    uint(value.dim)
    uint(len(value.nodes))
    uint((value.quant & 0xFF) | ((value.m & 0xFFFF) << 8))
    flags = (FLAG_PROJECTION if value.proj is not None else 0) | \
        (FLAG_ATTRIBS if value.numattribs else 0)
    uint(flags)
    if value.proj is not None:
        uint(value.proj_input)
        string(array("f", value.proj).tobytes())
    for node in value.head_first():
        string(node.item)
        if value.numattribs:
            string(node.attrib or b"")
        string(value.raw_bytes(node))
        params = value.node_params(node)
        uint(len(params))
        for param in params:
            uint(param)
        writer.maybe_flush()
    writer.length(OP_EOF)


def load_vectorset(reader: RDBReader, rdb_type: int, context: Any) -> VectorSet | None:
    at = reader.pos
    module_id = reader.length("a module type id")
    if module_id >> 10 != MODULE_ID >> 10:
        raise reader.fail("a module type rillet has (vectorset)", at)
    if module_id & 1023 != 0:
        raise reader.fail("vectorset encoding version 0", at)

    def uint(what: str) -> int:
        where = reader.pos
        if reader.length("a module opcode") != OP_UINT:
            raise reader.fail(f"an unsigned ({what})", where)
        return reader.length(what)

    def string(what: str) -> bytes:
        where = reader.pos
        if reader.length("a module opcode") != OP_STRING:
            raise reader.fail(f"a string ({what})", where)
        return reader.string(what)

    dim = uint("a vector dimension")
    count = uint("an element count")
    config = uint("the HNSW config")
    quant, m = config & 0xFF, (config >> 8) & 0xFFFF
    if dim == 0 or dim > MAX_DIM:
        raise reader.fail(f"a vector dimension in 1..{MAX_DIM}", at)
    if quant not in (QUANT_NONE, QUANT_Q8, QUANT_BIN):
        raise reader.fail("a quantization type 0, 1 or 2", at)
    value = VectorSet(dim, quant, m or 16, next_uid())
    flags = uint("the save flags")
    if flags & FLAG_PROJECTION:
        input_dim = uint("a projection input dimension")
        if input_dim == 0 or input_dim > MAX_DIM or dim > input_dim:
            raise reader.fail("projection dimensions", at)
        blob = string("a projection matrix")
        if len(blob) != 4 * input_dim * dim:
            raise reader.fail("a projection matrix of input x output floats", at)
        value.proj = array("f", blob).tolist()
        value.proj_input = input_dim
    loaded = []
    need = value.quant_bytes()
    for _ in range(count):
        item = string("an element")
        attrib = None
        if flags & FLAG_ATTRIBS:
            attrib = string("attributes") or None
        raw = string("a vector")
        if len(raw) != need:
            raise reader.fail(f"a vector of {need} bytes", at)
        params = [uint("a node parameter") for _ in range(uint("a parameter count"))]
        if item in value.nodes:
            raise reader.fail("unique element names", at)
        node = value.load_node(item, attrib, raw, params)
        if node is None:
            raise reader.fail("a valid serialized HNSW node", at)
        value.nodes[item] = node[0]
        loaded.append(node)
    if not value.resolve_links(loaded):
        raise reader.fail("HNSW links that resolve and are reciprocal", at)
    if reader.length("the module EOF opcode") != OP_EOF:
        raise reader.fail("the module EOF opcode", at)
    return value if value.nodes else None


rdb.register(rdb.RDBCodec("vectorset", VectorSet, TYPE_MODULE_2, (TYPE_MODULE_2,),
                          save_vectorset, load_vectorset))


# --- the snapshot registry ----------------------------------------------------------------------

def _snapshot_dump(writer: SnapshotWriter, value: VectorSet, context: CodecContext) -> None:
    writer.blob(rdb.dump_value(value))


def _snapshot_load(reader: SnapshotReader, context: CodecContext) -> VectorSet:
    return rdb.restore_value(reader.blob(), context.state if context else None)


def _digest(value: VectorSet, context: CodecContext) -> bytes:
    """VectorSetDigest's inputs: count, dim, then per node its stored vector, element and
    attributes, in list order."""
    h = hashlib.sha1(b"vectorset")
    h.update(b"%d:%d" % (len(value.nodes), value.dim))
    for node in value.head_first():
        for part in (value.raw_bytes(node), node.item, node.attrib or b""):
            h.update(len(part).to_bytes(4, "little"))
            h.update(part)
    return h.digest()


def _commands(key: bytes, value: VectorSet, context: CodecContext) -> Iterator[list[bytes]]:
    yield [b"RESTORE", key, b"0", rdb.dump_value(value), b"REPLACE"]


register(ValueType(TYPE_MODULE_2, "vectorset", VectorSet, _snapshot_dump, _snapshot_load,
                   _digest, _commands))
