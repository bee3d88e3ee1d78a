"""A small string type: GET, SET, MGET, MSET, INCR family, SETNX, GETDEL, APPEND, STRLEN.

Users pair streams with strings (idempotency markers, locks, the Spark sink's
exactly-once marker), so these follow Redis exactly, including the way SET
with a relative expiry is propagated as an absolute PXAT.
"""

from __future__ import annotations

import xxhash

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.keys import MAX_EXPIRE_MS
from rillet.commands.table import COMMANDS, command
from rillet.compiled import compiled
from rillet.errors import ReplyError
from rillet.notify import GENERIC, STRING
from rillet.resp.types import OK
from rillet.state import Client

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def get_string(ctx: Client, key: bytes) -> bytes | None:
    value = ctx.db.get(key)
    if value is None or value.__class__ is bytes:
        return value
    raise ReplyError(errors.WRONGTYPE)


def splice(current: bytes | None, offset: int, patch: bytes) -> bytes:
    """`current` with `patch` written at `offset`, zero-padded up to it: one copy of the result.

    A value can be 512 MB: the pieces are views or calloc'd zeros (bytes(n),
    whose untouched pages cost no memory), so building the result never holds
    a second copy, where slicing and `+` would hold two or three.
    """
    base = current or b""
    end = offset + len(patch)
    if offset >= len(base):
        return b"".join((base, bytes(offset - len(base)), patch))
    view = memoryview(base)
    return b"".join((view[:offset], patch, view[end:])) if end < len(base) else b"".join((view[:offset], patch))


@command("get", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="string", since="1.0.0")
def get(ctx: Client, argv: list[bytes]) -> object:
    """GET key"""
    return get_string(ctx, argv[1])


_SET_EXPIRY = {b"EX": 1000, b"PX": 1, b"EXAT": 1000, b"PXAT": 1}


def _set_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    # Redis's setGetKeys: SET reads its key only with GET.
    if any(arg.upper() == b"GET" for arg in argv[3:]):
        return [(1, "RW access update")]
    return [(1, "OW update")]


@command("set", -3, "write denyoom", keys=(1, 1, 1), group="string", since="1.0.0",
         key_flags="RW access update variable_flags", find_keys=_set_keys,
         key_notes="RW and ACCESS due to the optional `GET` argument")
def set_(ctx: Client, argv: list[bytes]) -> object:
    """SET key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]"""
    if len(argv) == 3:
        # The common case, no options: the general path below gives the same
        # reply and effects, after parsing options and reading the clock.
        key, value = argv[1], argv[2]
        db = ctx.db
        if db.expires:
            db.get(key)  # a due key expires first (its DEL is propagated), as below
        if db.on_overwrite is None:
            db.set(key, value)  # set_key's common case, one call less on the hottest write
        else:
            db.set_key(key, value)
        ctx.modified(key)
        ctx.notify(STRING, b"set", key)
        return OK  # propagated as sent
    return _set_general(ctx, argv)


def _set_general(ctx: Client, argv: list[bytes]) -> object:
    """SET with options (any SET; tests/server/test_fast_bodies.py holds `set_` to it)."""
    condition = None
    compare: bytes | None = None
    want_old = False
    get_at: list[int] = []  # where GET is, to leave out of the effect
    keep_ttl = False
    expiry_unit = None
    expiry_raw = b""
    i = 3
    while i < len(argv):
        option = argv[i].upper()
        if option in (b"NX", b"XX") and condition in (None, option):
            condition = option
        elif option in IF_CONDITIONS and condition is None and i + 1 < len(argv):
            # Redis 8.4: set only if the current value (or its digest) matches.
            condition = option
            i += 1
            compare = argv[i]
        elif option == b"GET":
            want_old = True
            get_at.append(i)
        elif option == b"KEEPTTL" and expiry_unit is None:
            keep_ttl = True
        elif (option in _SET_EXPIRY and expiry_unit in (None, option) and not keep_ttl
              and i + 1 < len(argv)):
            # Repeating the same expiry option is allowed; the last value wins.
            expiry_unit = option
            i += 1
            expiry_raw = argv[i]
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    deadline = None
    now = ctx.clock.now_ms()
    if expiry_unit is not None:
        amount = parse_int(expiry_raw)
        unit = _SET_EXPIRY[expiry_unit]
        if amount <= 0 or amount * unit > MAX_EXPIRE_MS:
            raise ReplyError(errors.INVALID_EXPIRE.format("set"))
        deadline = amount * unit if expiry_unit in (b"EXAT", b"PXAT") else now + amount * unit
        if deadline > MAX_EXPIRE_MS:
            raise ReplyError(errors.INVALID_EXPIRE.format("set"))
    key, value = argv[1], argv[2]
    db = ctx.db
    old = get_string(ctx, key) if want_old or compare is not None else db.get(key)
    if (condition == b"NX" and old is not None) or (condition == b"XX" and old is None) or (
            compare is not None and not if_condition_holds(condition, compare, old)):  # type: ignore[arg-type]
        return old if want_old else None
    db.set_key(key, value, keep_ttl=keep_ttl)
    if deadline is not None:
        db.set_expire(key, deadline)
    ctx.modified(key)
    ctx.notify(STRING, b"set", key)
    if deadline is not None:
        ctx.notify(GENERIC, b"expire", key)
    # setGenericCommand: a relative expiry (or EXAT) becomes `SET key value PXAT ms`;
    # else GET is left out unless there is a PXAT; else the command goes as sent.
    if deadline is not None and expiry_unit != b"PXAT":
        ctx.propagate([b"SET", key, value, b"PXAT", b"%d" % deadline])
    elif get_at and deadline is None:
        ctx.propagate([arg for i, arg in enumerate(argv) if i not in get_at])
    return old if want_old else OK


IF_CONDITIONS = (b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE")


def value_digest(value: bytes) -> bytes:
    """DIGEST's form: XXH3-64 of the value as 16 lower-case hex digits."""
    return b"%016x" % xxhash.xxh3_64_intdigest(value)


def if_condition_holds(condition: bytes, compare: bytes, current: bytes | None) -> bool:
    """IFEQ/IFNE compare values, IFDEQ/IFDNE digests (hex, any case); a missing key
    matches only the negative forms."""
    if current is None:
        return condition in (b"IFNE", b"IFDNE")
    if condition in (b"IFEQ", b"IFNE"):
        return (current == compare) == (condition == b"IFEQ")
    return (value_digest(current) == compare.lower()) == (condition == b"IFDEQ")


@command("setnx", 3, "write denyoom fast", keys=(1, 1, 1), key_flags="OW insert", group="string", since="1.0.0")
def setnx(ctx: Client, argv: list[bytes]) -> object:
    """SETNX key value"""
    if ctx.db.get(argv[1]) is not None:
        return 0
    ctx.db.set(argv[1], argv[2])
    ctx.modified(argv[1])
    ctx.notify(STRING, b"set", argv[1])
    return 1


@command("getdel", 2, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="string", since="6.2.0")
def getdel(ctx: Client, argv: list[bytes]) -> object:
    """GETDEL key"""
    value = get_string(ctx, argv[1])
    if value is not None:
        ctx.db.delete(argv[1])
        ctx.modified(argv[1])
        ctx.notify(GENERIC, b"del", argv[1])
        ctx.propagate([b"DEL", argv[1]])
    return value


@command("mget", -2, "readonly fast", keys=(1, -1, 1), key_flags="RO access", group="string", since="1.0.0")
def mget(ctx: Client, argv: list[bytes]) -> object:
    """MGET key [key ...]"""
    db = ctx.db
    out = []
    for key in argv[1:]:
        value = db.get(key)
        out.append(value if value is None or value.__class__ is bytes else None)
    return out


@command("mset", -3, "write denyoom", keys=(1, -1, 2), group="string", since="1.0.1",
         key_flags="OW update")
def mset(ctx: Client, argv: list[bytes]) -> object:
    """MSET key value [key value ...]"""
    if len(argv) % 2 == 0:
        raise ReplyError(errors.wrong_arity("mset"))
    for i in range(1, len(argv), 2):
        ctx.db.set_key(argv[i], argv[i + 1])
        ctx.modified(argv[i])
        ctx.notify(STRING, b"set", argv[i])
    return OK


@command("strlen", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="string", since="2.2.0")
def strlen(ctx: Client, argv: list[bytes]) -> object:
    """STRLEN key"""
    value = get_string(ctx, argv[1])
    return 0 if value is None else len(value)


@command("append", 3, "write denyoom fast", keys=(1, 1, 1), group="string", since="2.0.0",
         key_flags="RW insert")
def append(ctx: Client, argv: list[bytes]) -> object:
    """APPEND key value"""
    current = get_string(ctx, argv[1])
    value = (current or b"") + argv[2]
    ctx.db.set(argv[1], value, keep_ttl=True)
    if current is not None:
        ctx.db.encodings[argv[1]] = b"raw"  # appended in place: Redis reports `raw`
    ctx.modified(argv[1])
    ctx.notify(STRING, b"append", argv[1])
    return len(value)


def _incr(ctx: Client, key: bytes, delta: int) -> int:
    current = get_string(ctx, key)
    if current is None:
        number = 0
    else:
        number = parse_int(current)
    result = number + delta
    if result > INT64_MAX or result < INT64_MIN:
        raise ReplyError(errors.OVERFLOW)
    ctx.db.set(key, b"%d" % result, keep_ttl=True)
    ctx.modified(key)
    ctx.notify(STRING, b"incrby", key)
    return result


@command("incr", 2, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="string", since="1.0.0")
def incr(ctx: Client, argv: list[bytes]) -> object:
    """INCR key"""
    return _incr(ctx, argv[1], 1)


@command("decr", 2, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="string", since="1.0.0")
def decr(ctx: Client, argv: list[bytes]) -> object:
    """DECR key"""
    return _incr(ctx, argv[1], -1)


@command("incrby", 3, "write denyoom fast", keys=(1, 1, 1),
         key_flags="RW access update", group="string", since="1.0.0")
def incrby(ctx: Client, argv: list[bytes]) -> object:
    """INCRBY key increment"""
    return _incr(ctx, argv[1], parse_int(argv[2]))


@command("decrby", 3, "write denyoom fast", keys=(1, 1, 1),
         key_flags="RW access update", group="string", since="1.0.0")
def decrby(ctx: Client, argv: list[bytes]) -> object:
    """DECRBY key decrement"""
    delta = parse_int(argv[2])
    if delta == INT64_MIN:
        raise ReplyError(errors.DECREMENT_OVERFLOW)
    return _incr(ctx, argv[1], -delta)


# SET's, GET's and the INCR family's common cases compiled (commands/_writes.pyx,
# see rillet/compiled.py), the bodies above their reference
# (tests/server/test_string_bodies.py); without it the Python bodies run.
_writes = compiled("rillet.commands._writes")
if _writes is not None:
    _writes.bind_set(_set_general)
    _writes.bind_incr(incr, decr, incrby, decrby)
    for _name in ("set", "get", "incr", "decr", "incrby", "decrby"):
        COMMANDS[_name].handler = getattr(_writes, "set_" if _name == "set" else _name)
