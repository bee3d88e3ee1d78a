"""The rest of the string family: SETEX, PSETEX, GETEX, GETSET, GETRANGE/SUBSTR, SETRANGE,
MSETNX, INCRBYFLOAT, LCS.

Effects are deterministic: relative expiries become SET ... PXAT / PEXPIREAT
with the absolute time, INCRBYFLOAT becomes SET of its result with KEEPTTL
(Redis's long double arithmetic, engine/longdouble.py).
"""

from __future__ import annotations

import math
from array import array
from fractions import Fraction
from typing import Any

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.keys import MAX_EXPIRE_MS
from rillet.commands.strings import (
    IF_CONDITIONS,
    INT64_MAX,
    INT64_MIN,
    get_string,
    if_condition_holds,
    splice,
    value_digest,
)
from rillet.commands.table import command
from rillet.commands.typed import config_int
from rillet.engine import longdouble
from rillet.errors import ReplyError
from rillet.notify import GENERIC, STRING
from rillet.resp.types import OK, Map
from rillet.state import Client


def _deadline(ctx: Client, raw: bytes, unit_ms: int, absolute: bool, name: str) -> int:
    amount = parse_int(raw)
    if amount <= 0 or amount > MAX_EXPIRE_MS // unit_ms:
        raise ReplyError(errors.INVALID_EXPIRE.format(name))
    amount *= unit_ms
    if absolute:
        return amount
    now = ctx.clock.now_ms()
    if amount > MAX_EXPIRE_MS - now:
        raise ReplyError(errors.INVALID_EXPIRE.format(name))
    return now + amount


def _setex(ctx: Client, argv: list[bytes], unit_ms: int, name: str) -> object:
    deadline = _deadline(ctx, argv[2], unit_ms, False, name)
    key, value = argv[1], argv[3]
    if ctx.db.expires:
        ctx.db.get(key)  # a due key expires first, as in SET
    ctx.db.set_key(key, value)
    ctx.db.set_expire(key, deadline)
    ctx.modified(key)
    ctx.notify(STRING, b"set", key)
    ctx.notify(GENERIC, b"expire", key)
    ctx.propagate([b"SET", key, value, b"PXAT", b"%d" % deadline])
    return OK


@command("setex", 4, "write denyoom", keys=(1, 1, 1), key_flags="OW update", group="string", since="2.0.0")
def setex(ctx: Client, argv: list[bytes]) -> object:
    """SETEX key seconds value"""
    return _setex(ctx, argv, 1000, "setex")


@command("psetex", 4, "write denyoom", keys=(1, 1, 1), key_flags="OW update", group="string", since="2.6.0")
def psetex(ctx: Client, argv: list[bytes]) -> object:
    """PSETEX key milliseconds value"""
    return _setex(ctx, argv, 1, "psetex")


_GETEX_UNITS = {b"EX": (1000, False), b"PX": (1, False), b"EXAT": (1000, True), b"PXAT": (1, True)}


@command("getex", -2, "write fast", keys=(1, 1, 1), key_flags="RW access update", group="string", since="6.2.0",
         key_notes="RW and UPDATE because it changes the TTL")
def getex(ctx: Client, argv: list[bytes]) -> object:
    """GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST]"""
    unit = None
    persist = False
    raw = b""
    i = 2
    while i < len(argv):
        word = argv[i].upper()
        # Redis's parseExtendedStringArguments: an option may repeat (the last value
        # wins), but two different ones conflict.
        if word in _GETEX_UNITS and unit in (None, word) and not persist and i + 1 < len(argv):
            unit = word
            raw = argv[i + 1]
            i += 2
        elif word == b"PERSIST" and unit is None:
            persist = True
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
    key = argv[1]
    value = get_string(ctx, key)
    if value is None:
        return None  # Redis reads the time after the key: a missing key answers nil
    deadline = None
    if unit is not None:
        ms, absolute = _GETEX_UNITS[unit]
        deadline = _deadline(ctx, raw, ms, absolute, "getex")
    db = ctx.db
    if deadline is not None:
        if deadline <= ctx.clock.now_ms() and not ctx.server.loading:
            db.delete(key)
            ctx.modified(key)
            ctx.notify(GENERIC, b"del", key)
            ctx.propagate([b"DEL", key])
        else:
            db.set_expire(key, deadline)
            ctx.modified(key)
            ctx.notify(GENERIC, b"expire", key)
            ctx.propagate([b"PEXPIREAT", key, b"%d" % deadline])
    elif persist and db.persist(key):
        ctx.modified(key)
        ctx.notify(GENERIC, b"persist", key)
        ctx.propagate([b"PERSIST", key])
    return value


@command("getset", 3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="string", since="1.0.0")
def getset(ctx: Client, argv: list[bytes]) -> object:
    """GETSET key value"""
    old = get_string(ctx, argv[1])
    ctx.db.set_key(argv[1], argv[2])
    ctx.modified(argv[1])
    ctx.notify(STRING, b"set", argv[1])
    ctx.propagate([b"SET", argv[1], argv[2]])  # getsetCommand: propagated as SET
    return old


def _getrange(ctx: Client, argv: list[bytes]) -> object:
    start, end = parse_int(argv[2]), parse_int(argv[3])
    value = get_string(ctx, argv[1]) or b""
    n = len(value)
    if start < 0 and end < 0 and start > end:
        return b""
    if start < 0:
        start += n
    if end < 0:
        end += n
    start, end = max(start, 0), max(end, 0)
    end = min(end, n - 1)
    if start > end or n == 0:
        return b""
    return value[start:end + 1]


@command("getrange", 4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="string", since="2.4.0")
def getrange(ctx: Client, argv: list[bytes]) -> object:
    """GETRANGE key start end"""
    return _getrange(ctx, argv)


@command("substr", 4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="string", since="1.0.0")
def substr(ctx: Client, argv: list[bytes]) -> object:
    """SUBSTR key start end"""
    return _getrange(ctx, argv)


@command("setrange", 4, "write denyoom", keys=(1, 1, 1), key_flags="RW update", group="string", since="2.2.0")
def setrange(ctx: Client, argv: list[bytes]) -> object:
    """SETRANGE key offset value"""
    offset = parse_int(argv[2])
    if offset < 0:
        raise ReplyError(errors.OFFSET_OUT_OF_RANGE)
    key, patch = argv[1], argv[3]
    current = get_string(ctx, key)
    if not patch:
        return 0 if current is None else len(current)
    if offset + len(patch) > config_int(ctx, "proto-max-bulk-len"):
        raise ReplyError(errors.STRING_TOO_LONG)
    value = splice(current, offset, patch)
    ctx.db.set(key, value, keep_ttl=True)
    ctx.db.encodings[key] = b"raw"  # written in place: Redis reports `raw`
    ctx.modified(key)
    ctx.notify(STRING, b"setrange", key)
    return len(value)


@command("msetnx", -3, "write denyoom", keys=(1, -1, 2), key_flags="OW insert", group="string", since="1.0.1")
def msetnx(ctx: Client, argv: list[bytes]) -> object:
    """MSETNX key value [key value ...]"""
    if len(argv) % 2 == 0:
        raise ReplyError(errors.wrong_arity("msetnx"))
    db = ctx.db
    if any(db.get(argv[i]) is not None for i in range(1, len(argv), 2)):
        return 0
    for i in range(1, len(argv), 2):
        db.set(argv[i], argv[i + 1])
        ctx.modified(argv[i])
        ctx.notify(STRING, b"set", argv[i])
    return 1


@command("incrbyfloat", 3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="string", since="2.6.0")
def incrbyfloat(ctx: Client, argv: list[bytes]) -> object:
    """INCRBYFLOAT key increment"""
    current = get_string(ctx, argv[1])
    number = longdouble.parse(b"0" if current is None else current)
    delta = longdouble.parse(argv[2])
    if number is False or delta is False:
        raise ReplyError(errors.STRING_NOT_FLOAT)
    if number is None or delta is None:
        raise ReplyError(errors.INCR_NAN_OR_INF)
    result = longdouble.add(number, delta)
    if result is None:
        raise ReplyError(errors.INCR_NAN_OR_INF)
    text = longdouble.format_human(result)
    ctx.db.set(argv[1], text, keep_ttl=True)
    # createStringObjectFromLongDouble: never int-encoded.
    ctx.db.encodings[argv[1]] = b"embstr" if len(text) <= 44 else b"raw"
    ctx.modified(argv[1])
    ctx.notify(STRING, b"incrbyfloat", argv[1])
    ctx.propagate([b"SET", argv[1], text, b"KEEPTTL"])
    return text


# --- INCREX (Redis 8.8) --------------------------------------------------------------------

# -LDBL_MAX..LDBL_MAX: the x87 long double's range, INCREX's float bounds when none is given.
_LDBL_MAX = (2**64 - 1) * Fraction(2) ** (16384 - 64)
_INCREX_EXPIRES = {b"EX": (1000, False), b"PX": (1, False), b"EXAT": (1000, True),
                   b"PXAT": (1, True)}
_INCREX_VALUED = (b"BYINT", b"BYFLOAT", b"LBOUND", b"UBOUND", *_INCREX_EXPIRES)


def _increx_options(argv: list[bytes]) -> dict[bytes, bytes]:
    """The options by keyword (a flag maps to b""): any order, none twice, one of BYINT/
    BYFLOAT, one expiration, PERSIST with neither an expiration nor ENX."""
    seen: dict[bytes, bytes] = {}
    i = 2
    while i < len(argv):
        word = argv[i].upper()
        if word in _INCREX_VALUED and i + 1 < len(argv):
            seen_value, i = argv[i + 1], i + 2
        elif word in (b"SATURATE", b"PERSIST", b"ENX"):
            seen_value, i = b"", i + 1
        else:
            raise ReplyError(errors.SYNTAX)
        exclusive = {b"BYINT": (b"BYFLOAT",), b"BYFLOAT": (b"BYINT",),
                     b"PERSIST": (*_INCREX_EXPIRES, b"ENX"), b"ENX": (b"PERSIST",)}.get(
            word, (*_INCREX_EXPIRES, b"PERSIST") if word in _INCREX_EXPIRES else ())
        if word in seen or any(other in seen for other in exclusive):
            raise ReplyError(errors.SYNTAX)
        seen[word] = seen_value
    return seen


def _increx_number(raw: bytes, as_float: bool, name: str) -> Any:
    """An increment or bound: an int, or a long double (±inf as a float)."""
    if not as_float:
        try:
            return parse_int(raw)
        except ReplyError:
            raise ReplyError(errors.INCREX_NOT_INTEGER.format(name)) from None
    value = longdouble.parse(raw)
    if value is False:
        raise ReplyError(errors.INCREX_NOT_FLOAT.format(name))
    if value is None:
        return -math.inf if raw.lstrip()[:1] == b"-" else math.inf
    return value


@command("increx", -2, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update",
         group="string", since="8.8.0", complexity="O(1)",
         summary="Increments the numeric value of a key by a number and sets its expiration time."
                 " Uses 0 as initial value if the key doesn't exist.")
def increx(ctx: Client, argv: list[bytes]) -> object:
    """INCREX key [BYFLOAT increment | BYINT increment] [LBOUND lowerbound] [UBOUND upperbound] [SATURATE] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST] [ENX]

    Redis 8.8's bounded counter, from redis.io's page and Redis's increx.tcl: a
    result outside [LBOUND, UBOUND] (or the type's range) leaves key and TTL
    alone and answers [current, 0], unless SATURATE clamps it to the bound; the
    reply is [new value, applied increment], bulk strings with BYFLOAT. ENX sets
    the expiry only on a key without one; an expiry already past deletes the key.
    Propagated as SET of the result (KEEPTTL, PXAT or neither for PERSIST).
    """
    opts = _increx_options(argv)
    unit = next((word for word in _INCREX_EXPIRES if word in opts), None)
    if b"ENX" in opts and unit is None:
        raise ReplyError(errors.INCREX_ENX_NEEDS_EXPIRE)
    as_float = b"BYFLOAT" in opts
    # ints, or long doubles as Fractions with ±inf as floats: compared and subtracted alike
    delta: Any = 1
    if as_float:
        delta = _increx_number(opts[b"BYFLOAT"], True, "Increment")
        if isinstance(delta, float):
            raise ReplyError(errors.INCREX_INCREMENT_INFINITY)
    elif b"BYINT" in opts:
        delta = _increx_number(opts[b"BYINT"], False, "Increment")
    low, high = (-_LDBL_MAX, _LDBL_MAX) if as_float else (INT64_MIN, INT64_MAX)
    if b"LBOUND" in opts:
        low = _increx_number(opts[b"LBOUND"], as_float, "LBOUND")
    if b"UBOUND" in opts:
        high = _increx_number(opts[b"UBOUND"], as_float, "UBOUND")
    if low > high:
        raise ReplyError(errors.INCREX_BOUNDS_ORDER)
    deadline = None
    if unit is not None:
        ms, absolute = _INCREX_EXPIRES[unit]
        deadline = _deadline(ctx, opts[unit], ms, absolute, "increx")
    key = argv[1]
    raw = get_string(ctx, key)
    current: Any
    if as_float:
        parsed = longdouble.parse(b"0" if raw is None else raw)
        if parsed is False:
            raise ReplyError(errors.STRING_NOT_FLOAT)
        if parsed is None:
            raise ReplyError(errors.INCREX_VALUE_INFINITY)
        current = parsed
        summed = longdouble.add(current, delta)
        result: Any = math.copysign(math.inf, delta) if summed is None else summed
    else:
        current = 0 if raw is None else parse_int(raw)
        result = current + delta
    if isinstance(result, float) or not low <= result <= high:
        if b"SATURATE" not in opts:
            return _increx_reply(current, 0, as_float)
        result = low if result < low else high
        if isinstance(result, float):
            raise ReplyError(errors.INCREX_DELTA_INFINITY)
    applied = result - current
    if as_float:
        applied = longdouble.round64(applied)
        if applied is None:
            raise ReplyError(errors.INCREX_DELTA_INFINITY)
    elif not INT64_MIN <= applied <= INT64_MAX:
        raise ReplyError(errors.INCREX_DELTA_OVERFLOW)
    db = ctx.db
    had_ttl = db.ttl_ms(key) is not None
    if deadline is not None and b"ENX" in opts and had_ttl:
        deadline = None
        unit = None
    text = longdouble.format_human(result) if as_float else b"%d" % result
    ctx.modified(key)
    if deadline is not None and deadline <= ctx.clock.now_ms() and not ctx.server.loading:
        # Redis returns early: the key goes with a `del` and nothing else is announced.
        db.delete(key)
        ctx.notify(GENERIC, b"del", key)
        lazy = ctx.server.config.values["lazyfree-lazy-expire"]
        ctx.propagate([b"UNLINK" if lazy else b"DEL", key])
        return _increx_reply(result, applied, as_float)
    db.set(key, text, keep_ttl=True)
    if as_float:
        db.encodings[key] = b"embstr" if len(text) <= 44 else b"raw"
    ctx.notify(STRING, b"incrbyfloat" if as_float else b"incrby", key)
    if deadline is not None:
        db.set_expire(key, deadline)
        ctx.notify(GENERIC, b"expire", key)
        ctx.propagate([b"SET", key, text, b"PXAT", b"%d" % deadline])
    elif b"PERSIST" in opts:
        if db.persist(key):
            ctx.notify(GENERIC, b"persist", key)
        ctx.propagate([b"SET", key, text])
    else:
        ctx.propagate([b"SET", key, text, b"KEEPTTL"])
    return _increx_reply(result, applied, as_float)


def _increx_reply(value: Any, applied: Any, as_float: bool) -> list[object]:
    if as_float:
        return [longdouble.format_human(value), longdouble.format_human(applied)]
    return [value, applied]


# --- LCS -----------------------------------------------------------------------------------

@command("lcs", -3, "readonly", keys=(1, 2, 1), key_flags="RO access", group="string", since="7.0.0")
def lcs(ctx: Client, argv: list[bytes]) -> object:
    """LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]"""
    a, b = ctx.db.get(argv[1]), ctx.db.get(argv[2])
    if (a is not None and a.__class__ is not bytes) or (b is not None and b.__class__ is not bytes):
        raise ReplyError(errors.LCS_NOT_STRINGS)
    a = a or b""
    b = b or b""
    get_len = get_idx = with_len = False
    min_len = 0
    i = 3
    while i < len(argv):
        word = argv[i].upper()
        if word == b"IDX":
            get_idx = True
        elif word == b"LEN":
            get_len = True
        elif word == b"WITHMATCHLEN":
            with_len = True
        elif word == b"MINMATCHLEN" and i + 1 < len(argv):
            min_len = max(parse_int(argv[i + 1]), 0)
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    if get_idx and get_len:
        raise ReplyError(errors.LCS_LEN_AND_IDX)
    return _lcs(ctx, a, b, get_len, get_idx, with_len, min_len)


def _lcs(ctx: Client, a: bytes, b: bytes, get_len: bool, get_idx: bool, with_len: bool,
         min_len: int) -> object:
    """stringmatchlen's DP table and backtrack (t_string.c lcsCommand), ranges as Redis emits them."""
    alen, blen = len(a), len(b)
    if (alen + 1) * (blen + 1) * 4 > config_int(ctx, "proto-max-bulk-len"):
        raise ReplyError(errors.LCS_TOO_BIG)
    width = blen + 1
    table = array("I", bytes(4 * (alen + 1) * width))
    for i in range(1, alen + 1):
        ai = a[i - 1]
        row, prev = i * width, (i - 1) * width
        for j in range(1, width):
            if ai == b[j - 1]:
                table[row + j] = table[prev + j - 1] + 1
            else:
                up, left = table[prev + j], table[row + j - 1]
                table[row + j] = up if up > left else left
    idx = table[alen * width + blen]
    if get_len:
        return idx
    result = bytearray(idx)
    matches: list = []
    a_start, a_end, b_start, b_end = alen, 0, 0, 0
    i, j = alen, blen
    while i > 0 and j > 0:
        emit = False
        if a[i - 1] == b[j - 1]:
            result[idx - 1] = a[i - 1]
            if a_start == alen:
                a_start = a_end = i - 1
                b_start = b_end = j - 1
            elif a_start == i and b_start == j:
                a_start -= 1
                b_start -= 1
            else:
                emit = True
            if a_start == 0 or b_start == 0:
                emit = True
            idx -= 1
            i -= 1
            j -= 1
        else:
            if table[(i - 1) * width + j] > table[i * width + j - 1]:
                i -= 1
            else:
                j -= 1
            if a_start != alen:
                emit = True
        if emit:
            match_len = a_end - a_start + 1
            if min_len == 0 or match_len >= min_len:
                match: list[object] = [[a_start, a_end], [b_start, b_end]]
                if with_len:
                    match.append(match_len)
                matches.append(match)
            a_start = alen
    if get_idx:
        return Map([(b"matches", matches), (b"len", table[alen * width + blen])])
    return bytes(result)


# --- Redis 8.4: DELEX, DIGEST, MSETEX ----------------------------------------------------------

@command("digest", 2, "readonly fast", keys=(1, 1, 1), group="string", since="8.4.0")
def digest(ctx: Client, argv: list[bytes]) -> object:
    """DIGEST key"""
    value = get_string(ctx, argv[1])
    return None if value is None else value_digest(value)


def _delex_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    # delex.json's key spec is "RW delete variable_flags" (delexGetKeys): a plain DELEX
    # deletes without reading (DEL's "RM delete"), a condition reads the value first.
    if len(argv) > 2 and argv[2].upper() in IF_CONDITIONS:
        return [(1, "RW delete")]
    return [(1, "RM delete")]


@command("delex", -2, "write fast", keys=(1, 1, 1), key_flags="RW delete variable_flags",
         find_keys=_delex_keys, group="string", since="8.4.0")
def delex(ctx: Client, argv: list[bytes]) -> object:
    """DELEX key [IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest]"""
    key = argv[1]
    if len(argv) == 2:
        if not ctx.db.delete(key):
            return 0
    else:
        condition = argv[2].upper()
        if len(argv) != 4 or condition not in IF_CONDITIONS:
            raise ReplyError(errors.SYNTAX)
        current = get_string(ctx, key)
        if current is None or not if_condition_holds(condition, argv[3], current):
            return 0
        ctx.db.delete(key)
    ctx.modified(key)
    ctx.notify(GENERIC, b"del", key)
    ctx.propagate([b"DEL", key])
    return 1


@command("msetex", -4, "write denyoom movablekeys", group="string", since="8.4.0")
def msetex(ctx: Client, argv: list[bytes]) -> object:
    """MSETEX numkeys key value [key value ...] [NX | XX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]"""
    n = parse_int(argv[1], errors.NUMKEYS_POSITIVE)
    if n <= 0:
        raise ReplyError(errors.NUMKEYS_POSITIVE)
    if 2 + 2 * n > len(argv):
        raise ReplyError(errors.wrong_arity("msetex"))
    pairs = argv[2:2 + 2 * n]
    condition = None
    keep_ttl = False
    deadline = None
    i = 2 + 2 * n
    while i < len(argv):
        word = argv[i].upper()
        if word in (b"NX", b"XX") and condition is None:
            condition = word
            i += 1
        elif word == b"KEEPTTL" and deadline is None and not keep_ttl:
            keep_ttl = True
            i += 1
        elif word in _GETEX_UNITS and deadline is None and not keep_ttl and i + 1 < len(argv):
            ms, absolute = _GETEX_UNITS[word]
            deadline = _deadline(ctx, argv[i + 1], ms, absolute, "msetex")
            i += 2
        else:
            raise ReplyError(errors.SYNTAX)
    db = ctx.db
    keys = pairs[0::2]
    present = [db.get(k) is not None for k in keys]
    if (condition == b"NX" and any(present)) or (condition == b"XX" and not all(present)):
        return 0
    for j in range(0, len(pairs), 2):
        key, value = pairs[j], pairs[j + 1]
        db.set(key, value, keep_ttl=keep_ttl)
        effect = [b"SET", key, value]
        if deadline is not None:
            db.set_expire(key, deadline)
            effect += [b"PXAT", b"%d" % deadline]
        elif keep_ttl:
            effect.append(b"KEEPTTL")
        ctx.modified(key)
        # As SET: `set`, then `expire` when it sets a deadline (not verified against 8.4).
        ctx.notify(STRING, b"set", key)
        if deadline is not None:
            ctx.notify(GENERIC, b"expire", key)
        ctx.propagate(effect)
    return 1
