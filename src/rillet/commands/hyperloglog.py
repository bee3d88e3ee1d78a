"""HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.

HLLs are string values holding Redis's representation (engine/hyperloglog.py),
so GET, DUMP, persistence, replication and DEBUG DIGEST-VALUE see them as the
strings they are. A command that changes one stores it back keeping its TTL
and, as Redis's dbUnshareStringValue makes it, `raw` for OBJECT ENCODING.
PFCOUNT of one key writes the refreshed cached cardinality into the value, as
Redis does, and propagates itself so that replicas and the AOF hold the same bytes.
"""

from __future__ import annotations

import random
from typing import Any

from rillet import errors
from rillet.commands.table import command
from rillet.commands.typed import config_int
from rillet.engine import hyperloglog as hll
from rillet.errors import ReplyError
from rillet.notify import STRING
from rillet.resp.types import OK, SimpleString
from rillet.state import Client


def _hll_value(ctx: Client, key: bytes) -> bytes | None:
    """The HLL at `key` (None if missing); WRONGTYPE for another type or a string
    that is not an HLL (isHLLObjectOrReply)."""
    value = ctx.db.get(key)
    if value is None:
        return None
    if value.__class__ is not bytes:
        raise ReplyError(errors.WRONGTYPE)
    if not hll.is_hll(value):
        raise ReplyError(errors.HLL_WRONGTYPE)
    return value


def _store(ctx: Client, key: bytes, buf: bytearray) -> None:
    ctx.db.set(key, bytes(buf), keep_ttl=True)
    ctx.db.encodings[key] = b"raw"  # built with createObject / unshared: a raw string


@command("pfadd", -2, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="hyperloglog",
         since="2.8.9", acl="write hyperloglog fast")
def pfadd(ctx: Client, argv: list[bytes]) -> object:
    """PFADD key [element [element ...]]"""
    key = argv[1]
    value = _hll_value(ctx, key)
    if value is None:
        buf = hll.new_sparse()
        created = 1
    else:
        buf = bytearray(value)
        created = 0
    updated, buf = hll.add(buf, argv[2:], config_int(ctx, "hll-sparse-max-bytes"))
    if updated < 0:
        raise ReplyError(errors.HLL_CORRUPT)
    if not updated and not created:
        ctx.db.encodings[key] = b"raw"
        return 0
    hll.invalidate_cache(buf)
    _store(ctx, key, buf)
    ctx.modified(key)
    ctx.notify(STRING, b"pfadd", key)
    return 1


@command("pfcount", -2, "readonly may_replicate", keys=(1, -1, 1), key_flags="RW access", group="hyperloglog",
         since="2.8.9", acl="read hyperloglog slow",
         key_notes="RW because it may change the internal representation of the key, "
                   "and propagate to replicas")
def pfcount(ctx: Client, argv: list[bytes]) -> object:
    """PFCOUNT key [key ...]"""
    if len(argv) > 2:
        # The union's cardinality; nothing is cached or changed.
        registers = bytearray(hll.REGISTERS)
        for key in argv[1:]:
            value = _hll_value(ctx, key)
            if value is not None and not hll.merge_into(registers, value):
                raise ReplyError(errors.HLL_CORRUPT)
        return hll.estimate(hll.raw_histogram(registers))
    key = argv[1]
    value = _hll_value(ctx, key)
    if value is None:
        return 0
    ctx.db.encodings[key] = b"raw"
    if hll.cache_valid(value):
        return hll.cached_card(value)
    hist = hll.histogram(value)
    if hist is None:
        raise ReplyError(errors.HLL_CORRUPT)
    card = hll.estimate(hist)
    buf = bytearray(value)
    hll.store_card(buf, card)
    _store(ctx, key, buf)
    ctx.modified(key)
    # A read-only command that changed the value: Redis propagates it as sent.
    ctx.server.publish([(ctx.db.index, [b"PFCOUNT", key])])
    return card


@command("pfmerge", -2, "write denyoom", keys=(1, -1, 1), key_flags="RW access insert|RO access",
         group="hyperloglog", since="2.8.9", acl="write hyperloglog slow")
def pfmerge(ctx: Client, argv: list[bytes]) -> object:
    """PFMERGE destkey [sourcekey [sourcekey ...]]"""
    registers = bytearray(hll.REGISTERS)
    use_dense = False
    for key in argv[1:]:  # the destination is one of the inputs
        value = _hll_value(ctx, key)
        if value is None:
            continue
        if value[4] == hll.DENSE:
            use_dense = True
        if not hll.merge_into(registers, value):
            raise ReplyError(errors.HLL_CORRUPT)
    dest = argv[1]
    current: Any = ctx.db.get(dest)  # (a string: checked as an input above)
    buf = hll.new_sparse() if current is None else bytearray(current)
    if use_dense and buf[4] == hll.SPARSE:
        dense = hll.sparse_to_dense(buf)
        if dense is None:
            raise ReplyError(errors.HLL_CORRUPT)
        buf = dense
    if buf[4] == hll.DENSE:
        # The destination's registers are among the maxima: they become `registers`.
        buf = hll.dense_from_registers(buf, registers)
    else:
        max_bytes = config_int(ctx, "hll-sparse-max-bytes")
        cursor = hll.Cursor()
        for index in hll.nonzero_registers(registers):
            count = registers[index]
            if buf[4] == hll.DENSE:
                if count > hll.dense_get(buf, index):
                    hll.dense_set(buf, index, count)
            else:
                _, buf = hll.sparse_set(buf, index, count, max_bytes, cursor)
    hll.invalidate_cache(buf)
    _store(ctx, dest, buf)
    ctx.modified(dest)
    ctx.notify(STRING, b"pfadd", dest)
    return OK


@command("pfdebug", 3, "write denyoom admin", keys=(2, 2, 1), key_flags="RW access", group="hyperloglog",
         since="2.8.9", acl="write hyperloglog admin slow dangerous")
def pfdebug(ctx: Client, argv: list[bytes]) -> object:
    """PFDEBUG subcommand key"""
    sub, key = argv[1], argv[2]
    if ctx.db.get(key) is None:
        raise ReplyError(errors.PFDEBUG_NO_KEY)
    value = _hll_value(ctx, key)
    assert value is not None
    ctx.db.encodings[key] = b"raw"
    word = sub.lower()
    if word in (b"getreg", b"todense"):
        converted = False
        buf = bytearray(value)
        if buf[4] == hll.SPARSE:
            dense = hll.sparse_to_dense(buf)
            if dense is None:
                raise ReplyError(errors.HLL_CORRUPT)
            buf = dense
            _store(ctx, key, buf)
            ctx.changed()  # Redis counts the encoding change, without signalling the key
            converted = True
        if word == b"todense":
            return 1 if converted else 0
        return hll.dense_registers(buf)
    if word == b"decode":
        if value[4] != hll.SPARSE:
            raise ReplyError(errors.PFDEBUG_NOT_SPARSE)
        return hll.decode_sparse(value)
    if word == b"encoding":
        return SimpleString(b"dense" if value[4] == hll.DENSE else b"sparse")
    raise ReplyError(errors.PFDEBUG_UNKNOWN.format(errors.c_text(sub)))


@command("pfselftest", 1, "admin", group="hyperloglog", since="2.8.9",
         acl="hyperloglog admin slow dangerous")
def pfselftest(ctx: Client, argv: list[bytes]) -> object:
    """PFSELFTEST"""
    # Redis's test sets random registers 1000 times and adds ten million elements;
    # this one checks the same properties on a bounded sample (well under a second).
    rng = random.Random()
    buf = bytearray(hll.DENSE_SIZE)
    for _ in range(1):
        values = [rng.getrandbits(6) for _ in range(hll.REGISTERS)]
        for i, v in enumerate(values):
            hll.dense_set(buf, i, v)
        for i, v in enumerate(values):
            if hll.dense_get(buf, i) != v:
                raise ReplyError(f"ERR TESTFAILED Register {i} should be {v} but is {hll.dense_get(buf, i)}")
    dense = hll.dense_from_registers(hll.new_sparse(), bytearray(hll.REGISTERS))
    sparse = hll.new_sparse()
    seed = rng.getrandbits(64)
    for j in range(1, 501):
        element = (j ^ seed).to_bytes(8, "little")
        _, dense = hll.add(dense, [element], 3000)
        _, sparse = hll.add(sparse, [element], 3000)
        if j in (1, 10, 100, 500):
            if j < 1500 and sparse[4] != hll.SPARSE:
                raise ReplyError("ERR TESTFAILED sparse encoding not used")
            if hll.estimate(hll.histogram(dense)) != hll.estimate(hll.histogram(sparse)):  # type: ignore[arg-type]  # both valid
                raise ReplyError("ERR TESTFAILED dense/sparse disagree")
    return OK
