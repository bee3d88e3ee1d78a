"""RDB codecs for lists, sets, sorted sets and hashes (rdb.c rdbSaveObject / rdbLoadObject).

Written as Redis 8.2.3 writes the same value, the RDB type chosen by the
encoding OBJECT ENCODING reports:

    list     LIST_QUICKLIST_2 (18): len nodes, (len container, string node)*;
             container 2 (PACKED) is a listpack, 1 (PLAIN) one big element. A
             `listpack` list is one packed node; a `quicklist` is split where
             Redis's quicklist splits it when the elements are pushed at the
             tail one by one (the listpack until it converts, then nodes
             filled up to list-max-listpack-size, elements above the limit in
             PLAIN nodes).
    set      SET_INTSET (11) string intset | SET_LISTPACK (20) string listpack
             | SET (2) len, string*
    zset     ZSET_LISTPACK (17) string listpack (member, score)* by score |
             ZSET_2 (5) len, (string member, 8-byte LE double)* greatest first
    hash     HASH_LISTPACK (16) string listpack (field, value)* |
             HASH (4) len, (field, value)* |
             HASH_LISTPACK_EX (25) 8-byte min TTL (0 if none), listpack
             (field, value, ttl)* with TTL'd fields by deadline first, 0 for none |
             HASH_METADATA (24) 8-byte min TTL, len, (len ttl-min+1 or 0, field, value)*

Read: all of those, plus the older forms still on disk: LIST (1), LIST_ZIPLIST
(10), LIST_QUICKLIST (14, ziplist nodes), ZSET (3, ASCII scores), ZSET_ZIPLIST
(12), HASH_ZIPLIST (13), HASH_ZIPMAP (9). A loaded value gets the encoding
Redis gives it on load (the compact encodings stay compact unless over the
configured limits; the others get the encoding their content would).
"""

from __future__ import annotations

import struct
from typing import Any

from rillet.engine.doubles import strtod
from rillet.engine.hashes import Hash
from rillet.engine.lists import List
from rillet.engine.sets import HASHTABLE, INTSET, LISTPACK, Set
from rillet.engine.zsets import ZSet
from rillet.persistence import rdb
from rillet.persistence.rdb_format import (
    TYPE_HASH,
    TYPE_HASH_LISTPACK,
    TYPE_HASH_LISTPACK_EX,
    TYPE_HASH_METADATA,
    TYPE_HASH_ZIPLIST,
    TYPE_HASH_ZIPMAP,
    TYPE_LIST,
    TYPE_LIST_QUICKLIST,
    TYPE_LIST_QUICKLIST_2,
    TYPE_LIST_ZIPLIST,
    TYPE_SET,
    TYPE_SET_INTSET,
    TYPE_SET_LISTPACK,
    TYPE_ZSET,
    TYPE_ZSET_2,
    TYPE_ZSET_LISTPACK,
    TYPE_ZSET_ZIPLIST,
    RDBReader,
    as_bytes,
    intset_decode,
    intset_encode,
    lp_decode,
    lp_element,
    lp_finish,
    lp_int,
    zipmap_decode,
    zl_decode,
)
from rillet.resp.encoder import format_double

_F64 = struct.Struct("<d")
_LP_EMPTY = 7  # listpack header (6) + end byte
_PLAIN, _PACKED = 1, 2  # QUICKLIST_NODE_CONTAINER_*
_NEG_FILL = {-1: 4096, -2: 8192, -3: 16384, -4: 32768, -5: 65536}
_SIZE_SAFETY_LIMIT = 8192
_SIZE_ESTIMATE_OVERHEAD = 8
_DEFAULTS = {
    "list-max-listpack-size": -2, "hash-max-listpack-entries": 512,
    "hash-max-listpack-value": 64, "set-max-intset-entries": 512,
    "set-max-listpack-entries": 128, "set-max-listpack-value": 64,
    "zset-max-listpack-entries": 128, "zset-max-listpack-value": 64,
}


def _conf(config: Any, name: str) -> int:
    return _DEFAULTS[name] if config is None else int(config[name])


def _state_conf(context: rdb.LoadContext, name: str) -> int:
    state = context.state
    return _conf(None if state is None else state.config, name)


def _elements(reader: RDBReader, decode: Any, what: str, at: int) -> list:
    blob = reader.string(what)
    try:
        return decode(blob)
    except (ValueError, IndexError, struct.error) as exc:
        raise reader.fail(f"a valid {what} ({exc})", at) from None


def _listpack(encoded: list[bytes]) -> bytes:
    return lp_finish(b"".join(encoded), len(encoded))


# --- lists -------------------------------------------------------------------------------

def _exceeds(fill: int, nbytes: int, count: int) -> bool:
    """quicklistNodeExceedsLimit."""
    if fill < 0:
        return nbytes > _NEG_FILL.get(fill, 8192)
    return nbytes > _SIZE_SAFETY_LIMIT or count > (fill or 1)


def _is_large(size: int, fill: int) -> bool:
    """quicklist.c isLargeElement: such an element gets a PLAIN node of its own."""
    if fill >= 0:
        return size > _SIZE_SAFETY_LIMIT
    return size > _NEG_FILL.get(fill, 8192)


def quicklist_nodes(items: list[bytes], fill: int, big: bool) -> list[tuple[int, bytes]]:
    """(container, node bytes) as Redis holds `items` pushed at the tail one by one."""
    if not big:
        return [(_PACKED, _listpack([lp_element(item) for item in items]))]
    nodes: list[tuple[int, bytes]] = []
    current: list[bytes] = []
    nbytes = _LP_EMPTY
    i = 0
    n = len(items)
    # While a listpack: listTypeTryConvertListpack's test (raw lengths, before adding).
    while i < n and not _exceeds(fill, nbytes + len(items[i]), len(current) + 1):
        encoded = lp_element(items[i])
        current.append(encoded)
        nbytes += len(encoded)
        i += 1
    # Converted: that listpack is the first node; then quicklistPushTail.
    for item in items[i:]:
        size = len(item)
        if _is_large(size, fill):
            if current:
                nodes.append((_PACKED, _listpack(current)))
                current, nbytes = [], _LP_EMPTY
            nodes.append((_PLAIN, item))
            continue
        if current and not _exceeds(fill, nbytes + size + _SIZE_ESTIMATE_OVERHEAD, len(current) + 1):
            encoded = lp_element(item)
            current.append(encoded)
            nbytes += len(encoded)
            continue
        if current:
            nodes.append((_PACKED, _listpack(current)))
        encoded = lp_element(item)
        current, nbytes = [encoded], _LP_EMPTY + len(encoded)
    if current:
        nodes.append((_PACKED, _listpack(current)))
    return nodes


def save_list(writer: rdb.RDBWriter, value: List) -> None:
    fill = _conf(writer.config, "list-max-listpack-size")
    nodes = quicklist_nodes(value.to_list(), fill, value.big)
    writer.length(len(nodes))
    for container, node in nodes:
        writer.length(container)
        writer.string(node)


def load_list(reader: RDBReader, rdb_type: int, context: rdb.LoadContext) -> List | None:
    at = reader.pos
    items: list[bytes] = []
    if rdb_type == TYPE_LIST:
        for _ in range(reader.length("a list length")):
            items.append(reader.string("a list element"))
    elif rdb_type == TYPE_LIST_ZIPLIST:
        items = [as_bytes(e) for e in _elements(reader, zl_decode, "ziplist", at)]
    else:
        for _ in range(reader.length("a quicklist node count")):
            node_at = reader.pos
            if rdb_type == TYPE_LIST_QUICKLIST_2:
                container = reader.length("a quicklist container")
                if container == _PLAIN:
                    items.append(reader.string("a plain quicklist node"))
                    continue
                if container != _PACKED:
                    raise reader.fail(f"a quicklist container 1 or 2 (got {container})", node_at)
                decoded = _elements(reader, lp_decode, "listpack", node_at)
            else:
                decoded = _elements(reader, zl_decode, "ziplist", node_at)
            items += map(as_bytes, decoded)
    if not items:
        return None
    return List.from_list(items, _state_conf(context, "list-max-listpack-size"))


# --- sets --------------------------------------------------------------------------------

def set_type(value: Set) -> int:
    return (TYPE_SET_INTSET, TYPE_SET_LISTPACK, TYPE_SET)[value.kind]


def save_set(writer: rdb.RDBWriter, value: Set) -> None:
    if value.kind == INTSET:
        writer.string(intset_encode([int(m) for m in value.members]))
    elif value.kind == LISTPACK:
        writer.string(_listpack([lp_element(m) for m in value.members]))
    else:
        writer.length(len(value.members))
        for member in value.members:
            writer.string(member)
            writer.maybe_flush()


def _set_limits(context: rdb.LoadContext) -> tuple[int, int, int]:
    return (_state_conf(context, "set-max-intset-entries"),
            _state_conf(context, "set-max-listpack-entries"),
            _state_conf(context, "set-max-listpack-value"))


def load_set(reader: RDBReader, rdb_type: int, context: rdb.LoadContext) -> Set | None:
    at = reader.pos
    limits = _set_limits(context)
    if rdb_type == TYPE_SET:
        count = reader.length("a set size")
        members = [reader.string("a set member") for _ in range(count)]
        value = Set.from_members(members, limits)
        if len(value) != count:
            raise reader.fail("no duplicate set members", at)
        return value or None
    if rdb_type == TYPE_SET_INTSET:
        decoded: list = _elements(reader, intset_decode, "intset", at)
        kind = INTSET if len(decoded) <= limits[0] else HASHTABLE
    else:
        decoded = _elements(reader, lp_decode, "listpack", at)
        kind = LISTPACK if len(decoded) <= limits[1] else HASHTABLE
    if not decoded:
        return None
    value = Set()
    value.members = dict.fromkeys(map(as_bytes, decoded))
    if len(value.members) != len(decoded):
        raise reader.fail("no duplicate set members", at)
    value.kind = kind
    return value


# --- sorted sets ---------------------------------------------------------------------------

def zset_type(value: ZSet) -> int:
    return TYPE_ZSET_2 if value.big else TYPE_ZSET_LISTPACK


def save_zset(writer: rdb.RDBWriter, value: ZSet) -> None:
    if not value.big:
        encoded: list[bytes] = []
        for score, member in value.order:
            encoded.append(lp_element(member))
            encoded.append(lp_element(format_double(score)))  # zzlInsertAt: d2string
        writer.string(_listpack(encoded))
        return
    writer.length(len(value.order))
    pack = _F64.pack
    for score, member in reversed(value.order):
        writer.string(member)
        writer.raw(pack(score))
        writer.maybe_flush()


def _score(element: Any) -> float:
    return float(element) if element.__class__ is int else strtod(element)[0]


def _ascii_double(reader: RDBReader) -> float:
    """rdbLoadDoubleValue: a length byte (253 nan, 254 inf, 255 -inf) and the text."""
    n = reader.u8("a score length")
    if n >= 253:
        return (float("nan"), float("inf"), float("-inf"))[n - 253]
    return strtod(bytes(reader.take(n, "a score")))[0]


def load_zset(reader: RDBReader, rdb_type: int, context: rdb.LoadContext) -> ZSet | None:
    at = reader.pos
    max_entries = _state_conf(context, "zset-max-listpack-entries")
    max_value = _state_conf(context, "zset-max-listpack-value")
    scores: dict[bytes, float] = {}
    if rdb_type in (TYPE_ZSET, TYPE_ZSET_2):
        count = reader.length("a sorted set size")
        for _ in range(count):
            member = reader.string("a sorted set member")
            if rdb_type == TYPE_ZSET_2:
                score = _F64.unpack(reader.take(8, "a binary score"))[0]
            else:
                score = _ascii_double(reader)
            if score != score:
                raise reader.fail("a score that is not NaN", at)
            scores[member] = score
        if len(scores) != count:
            raise reader.fail("no duplicate sorted set members", at)
        if not scores:
            return None
        value = ZSet.from_dict(scores)
        value.big = value.fresh_big(max_entries, max_value)
        return value
    decode = zl_decode if rdb_type == TYPE_ZSET_ZIPLIST else lp_decode
    decoded = _elements(reader, decode, "ziplist" if decode is zl_decode else "listpack", at)
    if len(decoded) % 2:
        raise reader.fail("a sorted set listpack of member, score pairs", at)
    for i in range(0, len(decoded), 2):
        scores[as_bytes(decoded[i])] = _score(decoded[i + 1])
    if len(scores) * 2 != len(decoded):
        raise reader.fail("no duplicate sorted set members", at)
    if not scores:
        return None
    return ZSet.from_dict(scores, len(scores) > max_entries)


# --- hashes --------------------------------------------------------------------------------

def hash_type(value: Hash) -> int:
    if value.big:  # Redis: HASH_METADATA while some field has a TTL
        return TYPE_HASH_METADATA if value.ttls else TYPE_HASH
    return TYPE_HASH_LISTPACK_EX if value.ex else TYPE_HASH_LISTPACK


def save_hash(writer: rdb.RDBWriter, value: Hash) -> None:
    fields = value.fields
    ttls = value.ttls
    if not value.big:
        encoded: list[bytes] = []
        if not value.ex:
            for f, v in fields.items():
                encoded.append(lp_element(f))
                encoded.append(lp_element(v))
            writer.string(_listpack(encoded))
            return
        # listpackex: the engine keeps Redis's order (fields with a TTL first, by
        # deadline); 0 for no TTL, and a leading 0 when no field has one.
        writer.millis(min(ttls.values()) if ttls else 0)
        for f, v in fields.items():
            encoded += (lp_element(f), lp_element(v), lp_int(ttls.get(f, 0)))
        writer.string(_listpack(encoded))
        return
    low = min(ttls.values()) if ttls else None
    if low is not None:
        writer.millis(low)
    writer.length(len(fields))
    for f, v in fields.items():
        if low is not None:
            ms = ttls.get(f)
            writer.length(0 if ms is None else ms - low + 1)
        writer.string(f)
        writer.string(v)
        writer.maybe_flush()


def load_hash(reader: RDBReader, rdb_type: int, context: rdb.LoadContext) -> Hash | None:
    at = reader.pos
    max_entries = _state_conf(context, "hash-max-listpack-entries")
    max_value = _state_conf(context, "hash-max-listpack-value")
    fields: dict[bytes, bytes] = {}
    ttls: dict[bytes, int] = {}
    if rdb_type in (TYPE_HASH, TYPE_HASH_METADATA):
        low = reader.millis() if rdb_type == TYPE_HASH_METADATA else 0
        count = reader.length("a hash size")
        for _ in range(count):
            ttl = reader.length("a field TTL") if rdb_type == TYPE_HASH_METADATA else 0
            f = reader.string("a hash field")
            fields[f] = reader.string("a hash value")
            if ttl:
                ttls[f] = low + ttl - 1
        if len(fields) != count:
            raise reader.fail("no duplicate hash fields", at)
    else:
        if rdb_type == TYPE_HASH_LISTPACK_EX:
            reader.millis()  # the minimum TTL, recomputed from the fields
        decode = {TYPE_HASH_ZIPMAP: zipmap_decode, TYPE_HASH_ZIPLIST: zl_decode}.get(
            rdb_type, lp_decode)
        decoded = _elements(reader, decode, "hash " + decode.__name__.split("_")[0], at)
        step = 3 if rdb_type == TYPE_HASH_LISTPACK_EX else 2
        if len(decoded) % step:
            raise reader.fail("a hash listpack of whole entries", at)
        for i in range(0, len(decoded), step):
            f = as_bytes(decoded[i])
            fields[f] = as_bytes(decoded[i + 1])
            if step == 3:
                ms = decoded[i + 2]
                if ms.__class__ is not int:
                    raise reader.fail("an integer field TTL", at)
                if ms:
                    ttls[f] = ms
        if len(fields) * step != len(decoded):
            raise reader.fail("no duplicate hash fields", at)
    if not fields:
        return None
    big = len(fields) > max_entries or any(
        len(f) > max_value or len(v) > max_value for f, v in fields.items())
    ex = rdb_type in (TYPE_HASH_METADATA, TYPE_HASH_LISTPACK_EX)
    if ex and not big and rdb_type == TYPE_HASH_METADATA:
        # Compact again: a listpackex's order, fields with a TTL first by deadline.
        timed = sorted((ms, i, f) for i, (f, ms) in enumerate(ttls.items()))
        order = [f for _, _, f in timed] + [f for f in fields if f not in ttls]
        fields = {f: fields[f] for f in order}
    return Hash.from_dict(fields, ttls, big, ex)


rdb.register(rdb.RDBCodec("list", List, TYPE_LIST_QUICKLIST_2,
                          (TYPE_LIST, TYPE_LIST_ZIPLIST, TYPE_LIST_QUICKLIST, TYPE_LIST_QUICKLIST_2),
                          save_list, load_list))
rdb.register(rdb.RDBCodec("set", Set, TYPE_SET, (TYPE_SET, TYPE_SET_INTSET, TYPE_SET_LISTPACK),
                          save_set, load_set, set_type))
rdb.register(rdb.RDBCodec("zset", ZSet, TYPE_ZSET_2,
                          (TYPE_ZSET, TYPE_ZSET_2, TYPE_ZSET_ZIPLIST, TYPE_ZSET_LISTPACK),
                          save_zset, load_zset, zset_type))
rdb.register(rdb.RDBCodec("hash", Hash, TYPE_HASH,
                          (TYPE_HASH, TYPE_HASH_ZIPMAP, TYPE_HASH_ZIPLIST, TYPE_HASH_LISTPACK,
                           TYPE_HASH_METADATA, TYPE_HASH_LISTPACK_EX),
                          save_hash, load_hash, hash_type))
