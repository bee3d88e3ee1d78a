"""DEBUG DIGEST: an order-independent hash of the logical content of the keyspace.

Like Redis's computeDatasetDigest, each key's hash (db, key, type, value, TTL)
is XORed into a 20-byte accumulator, so two keyspaces with the same content
give the same 40 hex digits whatever their insertion order or internal layout
(stream node boundaries, PEL index shapes). An empty keyspace is 40 zeros, as
in Redis. The value of Redis's digest is not reproduced (different hashing).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

from rillet.persistence.valuetypes import CodecContext, type_of

_KEY_HEAD = struct.Struct("<IIB")


def value_digest(key: bytes, value: object, deadline_ms: int | None, db_index: int,
                 context: CodecContext) -> bytes:
    """The 20-byte hash of one key."""
    codec = type_of(value)
    h = hashlib.sha1(_KEY_HEAD.pack(db_index, len(key), codec.tag))
    h.update(key)
    h.update(codec.digest(value, context))
    h.update(b"ttl:%d" % (-1 if deadline_ms is None else deadline_ms))
    return h.digest()


def keyspace_digest(state: Any) -> str:
    from rillet.persistence import containers, streams  # noqa: F401  (register the value codecs)

    context = CodecContext(state)
    acc = 0
    for db in state.keyspace.dbs:
        if not db.data:
            continue
        for key in db.keys():  # skips keys whose TTL has passed
            value = db.data[key]
            digest = value_digest(key, value, db.expires.get(key), db.index, context)
            acc ^= int.from_bytes(digest, "big")
    return f"{acc:040x}"


def key_digest(state: Any, db: Any, key: bytes) -> str:
    value = db.get(key)
    if value is None:
        return "0" * 40
    return value_digest(key, value, db.expires.get(key), db.index, CodecContext(state)).hex()
