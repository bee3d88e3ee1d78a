"""Array commands (Redis 8.8): ARSET ... ARINFO, the 18 of the `array` group.

Behaviour, error texts and the order of the checks follow Redis's t_array.c
(8.8/8.10): indexes are u64 below 2^64-1 (ARSEEK also takes 2^64-1), every
index is validated before anything is written, the key goes when its last
element does, and ARGETRANGE/ARLASTITEMS refuse to answer more than a million
positions. Every write is deterministic given the array, so each propagates
as itself.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import Any

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import command
from rillet.commands.typed import lookup
from rillet.engine import longdouble
from rillet.engine.arrays import (
    TAG_FLOAT,
    TAG_INT,
    U64_MAX,
    Array,
    canonical_int,
    ring_needs_rework,
    ring_rework,
    value_tag,
)
from rillet.engine.ids import string2ull
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.notify import GENERIC
from rillet.resp.encoder import format_double
from rillet.resp.types import Map
from rillet.state import Client

MAX_REPLY_ITEMS = 1_000_000  # AR_MAX_REPLY_ITEMS: part of the commands' contract
MAX_PREDICATES = 250
MAX_RE_LEN = 2048


def parse_index(raw: bytes, allow_max: bool = False) -> int:
    """getArrayIndexFromObject: string2ull (C string: stops at a NUL), 2^64-1 only if allowed."""
    nul = raw.find(b"\0")
    value = string2ull(raw if nul < 0 else raw[:nul])
    if value is None or (value == U64_MAX and not allow_max):
        raise ReplyError(errors.ARRAY_INVALID_INDEX)
    return value


def get_array(ctx: Client, key: bytes) -> Array | None:
    return lookup(ctx, key, Array)


def array_for_write(ctx: Client, key: bytes) -> Array:
    """lookupArrayForWriteOrReply: the array at `key`, created empty if missing."""
    value = get_array(ctx, key)
    if value is None:
        value = Array()
        ctx.db.set(key, value)
    return value


def _arity(argv: list[bytes]) -> ReplyError:
    return ReplyError(errors.wrong_arity(argv[0].decode("utf-8", "replace").lower()))


def _removed_if_empty(ctx: Client, key: bytes, value: Array) -> None:
    if not value.count:
        ctx.db.delete(key)
        ctx.notify(GENERIC, b"del", key)


# --- reads of single positions ---------------------------------------------------------

@command("arget", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arget(ctx: Client, argv: list[bytes]) -> object:
    """ARGET key index

    Gets the value at an index in an array."""
    value = get_array(ctx, argv[1])
    idx = parse_index(argv[2])
    return None if value is None else value.get(idx)


@command("armget", -3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def armget(ctx: Client, argv: list[bytes]) -> object:
    """ARMGET key index [index ...]

    Gets values at multiple indices in an array."""
    value = get_array(ctx, argv[1])
    indexes = [parse_index(raw) for raw in argv[2:]]
    if value is None:
        return [None] * len(indexes)
    return [value.get(idx) for idx in indexes]


# --- writes ------------------------------------------------------------------------------

@command("arset", -4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="array",
         since="8.8.0")
def arset(ctx: Client, argv: list[bytes]) -> object:
    """ARSET key index value [value ...]

    Sets one or more contiguous values starting at an index in an array."""
    start = parse_index(argv[2])
    values = argv[3:]
    last = start + len(values) - 1
    if last >= U64_MAX:
        raise ReplyError(errors.ARRAY_INDEX_OVERFLOW)
    array = array_for_write(ctx, argv[1])
    before = array.count
    if len(values) > 1:
        array.prepare_range(start, last)
    for offset, item in enumerate(values):
        array.set(start + offset, item)
    ctx.modified(argv[1], len(values))
    return array.count - before


@command("armset", -4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="array",
         since="8.8.0")
def armset(ctx: Client, argv: list[bytes]) -> object:
    """ARMSET key index value [index value ...]

    Sets multiple index-value pairs in an array."""
    if len(argv) % 2:
        raise _arity(argv)
    indexes = [parse_index(raw) for raw in argv[2::2]]
    array = array_for_write(ctx, argv[1])
    before = array.count
    for idx, item in zip(indexes, argv[3::2], strict=True):
        array.set(idx, item)
    ctx.modified(argv[1], len(indexes))
    return array.count - before


@command("ardel", -3, "write fast", keys=(1, 1, 1), key_flags="RW delete", group="array",
         since="8.8.0")
def ardel(ctx: Client, argv: list[bytes]) -> object:
    """ARDEL key index [index ...]

    Deletes elements at the specified indices in an array."""
    indexes = [parse_index(raw) for raw in argv[2:]]
    array = get_array(ctx, argv[1])
    if array is None:
        return 0
    deleted = sum(array.delete(idx) for idx in indexes)
    if deleted:
        _removed_if_empty(ctx, argv[1], array)
        ctx.modified(argv[1], deleted)
    return deleted


@command("ardelrange", -4, "write", keys=(1, 1, 1), key_flags="RW delete", group="array",
         since="8.8.0")
def ardelrange(ctx: Client, argv: list[bytes]) -> object:
    """ARDELRANGE key start end [start end ...]

    Deletes elements in one or more ranges."""
    if len(argv) % 2:
        raise _arity(argv)
    bounds = [parse_index(raw) for raw in argv[2:]]
    array = get_array(ctx, argv[1])
    if array is None:
        return 0
    deleted = 0
    for a, b in zip(bounds[::2], bounds[1::2], strict=True):
        deleted += array.delete_range(min(a, b), max(a, b))
    if deleted:
        _removed_if_empty(ctx, argv[1], array)
        ctx.modified(argv[1], deleted)
    return deleted


# --- sizes ------------------------------------------------------------------------------

@command("arlen", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arlen(ctx: Client, argv: list[bytes]) -> object:
    """ARLEN key

    Returns the length of an array (max index + 1)."""
    array = get_array(ctx, argv[1])
    return 0 if array is None else array.length()


@command("arcount", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arcount(ctx: Client, argv: list[bytes]) -> object:
    """ARCOUNT key

    Returns the number of non-empty elements in an array."""
    array = get_array(ctx, argv[1])
    return 0 if array is None else array.count


# --- ranges ------------------------------------------------------------------------------

@command("argetrange", 4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def argetrange(ctx: Client, argv: list[bytes]) -> object:
    """ARGETRANGE key start end

    Gets values in a range of indices."""
    start, end = parse_index(argv[2]), parse_index(argv[3])
    array = get_array(ctx, argv[1])
    lo, hi = min(start, end), max(start, end)
    if hi - lo + 1 > MAX_REPLY_ITEMS:
        raise ReplyError(errors.ARRAY_RANGE_TOO_BIG)
    if array is None:
        return [None] * (hi - lo + 1)
    if start > end:
        return [array.get(idx) for idx in range(hi, lo - 1, -1)]
    return [array.get(idx) for idx in range(lo, hi + 1)]


def _parse_limit(raw: bytes) -> int:
    limit = parse_int(raw)
    if limit <= 0:
        raise ReplyError(errors.ARRAY_LIMIT_POSITIVE)
    return limit


@command("arscan", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arscan(ctx: Client, argv: list[bytes]) -> object:
    """ARSCAN key start end [LIMIT limit]

    Iterates existing elements in a range, returning index-value pairs."""
    start, end = parse_index(argv[2]), parse_index(argv[3])
    limit = None
    if len(argv) == 6:
        if argv[4].upper() != b"LIMIT":
            raise ReplyError(errors.SYNTAX)
        limit = _parse_limit(argv[5])
    elif len(argv) != 4:
        raise _arity(argv)
    array = get_array(ctx, argv[1])
    if array is None:
        return []
    out: list[list[Any]] = []
    for idx, item in array.scan(start, end):
        if limit is not None and len(out) >= limit:
            break
        out.append([idx, item])
    return out


# --- ARGREP ------------------------------------------------------------------------------

_PREDICATES = {b"EXACT", b"MATCH", b"GLOB", b"RE"}
_BACKREF = re.compile(rb"(?<!\\)(?:\\\\)*\\[1-9]")


def _compile_regex(pattern: bytes, nocase: bool) -> Any:
    """A POSIX extended regex (TRE, REG_EXTENDED), searched unanchored.

    RE2, not Python's re: like TRE it matches in time linear in the value,
    where a backtracking engine lets one pattern such as (a*)*b stop the
    server (the issue on commands that hang it). As in POSIX, `.` matches
    a newline.
    """
    if not pattern:
        raise ReplyError(errors.ARRAY_RE_EMPTY)
    if _BACKREF.search(pattern):
        raise ReplyError(errors.ARRAY_RE_BACKREFS)
    import re2  # (a C++ extension: loaded by the first ARGREP RE, not by every start)

    options = re2.Options()  # RE2 knows POSIX bracket classes ([[:alpha:]]) as TRE does
    options.case_sensitive = not nocase
    options.dot_nl = True
    options.never_capture = True
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else b""
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise ReplyError(errors.ARRAY_RE_INVALID.format(text)) from None


def _lower(data: bytes) -> bytes:
    return data.lower()  # bytes.lower() changes ASCII letters only, as arGrepLowerAscii


def _matcher(kind: bytes, pattern: bytes, nocase: bool, regex: Any):
    if kind == b"EXACT":
        if nocase:
            want = _lower(pattern)
            return lambda data: _lower(data) == want
        return lambda data: data == pattern
    if kind == b"MATCH":
        if nocase:
            want = _lower(pattern)
            return lambda data: want in _lower(data)
        return lambda data: pattern in data
    if kind == b"GLOB":
        return lambda data: glob_match(pattern, data, nocase)
    assert regex is not None
    return lambda data: regex.search(data) is not None


def _grep_bound(raw: bytes) -> int | str:
    if raw == b"-" or raw == b"+":
        return raw.decode()
    return parse_index(raw)


@command("argrep", -6, "readonly", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def argrep(ctx: Client, argv: list[bytes]) -> object:
    """ARGREP key start end <EXACT string | MATCH string | GLOB pattern | RE pattern> [<EXACT string | MATCH string | GLOB pattern | RE pattern> ...] [AND | OR] [LIMIT limit] [WITHVALUES] [NOCASE]

    Searches array elements in a range using textual predicates."""
    start_bound, end_bound = _grep_bound(argv[2]), _grep_bound(argv[3])
    preds: list[tuple[bytes, bytes]] = []
    limit = None
    withvalues = nocase = use_and = False
    i = 4
    while i < len(argv):
        word = argv[i].upper()
        if word in _PREDICATES:
            if i + 1 >= len(argv):
                raise ReplyError(errors.SYNTAX)
            if len(preds) >= MAX_PREDICATES:
                raise ReplyError(errors.ARRAY_TOO_MANY_PREDICATES)
            if word == b"RE" and len(argv[i + 1]) > MAX_RE_LEN:
                raise ReplyError(errors.ARRAY_RE_TOO_LONG)
            preds.append((word, argv[i + 1]))
            i += 2
        elif word == b"LIMIT":
            if i + 1 >= len(argv):
                raise ReplyError(errors.SYNTAX)
            limit = _parse_limit(argv[i + 1])
            i += 2
        elif word in (b"WITHVALUES", b"NOCASE", b"AND", b"OR"):
            if word == b"WITHVALUES":
                withvalues = True
            elif word == b"NOCASE":
                nocase = True
            else:
                use_and = word == b"AND"
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
    if not preds:
        raise ReplyError(errors.SYNTAX)
    tests = [_matcher(kind, pat, nocase, _compile_regex(pat, nocase) if kind == b"RE" else None)
             for kind, pat in preds]
    array = get_array(ctx, argv[1])
    if array is None or not array.count:
        return []
    top = array.length() - 1

    def resolve(bound: int | str) -> int:
        return 0 if bound == "-" else top if bound == "+" else bound  # type: ignore[return-value]  # an int here

    combine = all if use_and else any
    out: list = []
    for idx, item in array.scan(resolve(start_bound), resolve(end_bound)):
        if limit is not None and len(out) >= limit:
            break
        if combine(test(item) for test in tests):
            out.append([idx, item] if withvalues else idx)
    return out


# --- AROP --------------------------------------------------------------------------------

_OPS = {b"SUM", b"MIN", b"MAX", b"AND", b"OR", b"XOR", b"MATCH", b"USED"}
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_INF_WORDS = {b"inf", b"+inf", b"-inf", b"infinity", b"+infinity", b"-infinity"}


def _numeric(item: bytes) -> tuple[Fraction | float, bool] | None:
    """arOpAccumulate's reading of one value: (long double value, is an integer) or None."""
    payload: Any  # its type follows the tag
    tag, payload = value_tag(item, format_double)
    if tag == TAG_INT:
        return Fraction(payload), True
    if tag == TAG_FLOAT:
        return Fraction(payload), False
    number = canonical_int(item)
    if number is not None:
        return Fraction(number), True
    if item.lower() in _INF_WORDS:
        return (float("-inf") if item[:1] == b"-" else float("inf")), False
    parsed = longdouble.parse(item)
    if parsed is False or parsed is None:
        return None
    return parsed, False


def _ld_add(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    if isinstance(a, float) or isinstance(b, float):
        return float(a) + float(b)
    total = longdouble.add(a, b)
    return float("inf") if total is None else total


def ld2string(value: Fraction | float) -> bytes:
    """ld2string(LD_STR_AUTO): "%.17Lg"."""
    if isinstance(value, float):
        if value != value:
            return b"nan"
        return b"inf" if value > 0 else b"-inf"
    if value == 0:
        return b"0"
    exact = Context(prec=80).divide(Decimal(value.numerator), Decimal(value.denominator))
    d = Context(prec=17, rounding=ROUND_HALF_EVEN).plus(exact)
    exponent = d.adjusted()
    if exponent < -4 or exponent >= 17:
        digits = d.as_tuple().digits
        mant = "".join(map(str, digits)).rstrip("0") or "0"
        text = mant[0] + ("." + mant[1:] if len(mant) > 1 else "")
        text += f"e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
        return (("-" if d < 0 else "") + text).encode()
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.encode()


@command("arop", -5, "readonly", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arop(ctx: Client, argv: list[bytes]) -> object:
    """AROP key start end <SUM | MIN | MAX | AND | OR | XOR | MATCH value | USED>

    Performs aggregate operations on array elements in a range."""
    start, end = parse_index(argv[2]), parse_index(argv[3])
    op = argv[4].upper()
    if op not in _OPS:
        raise ReplyError(errors.ARRAY_UNKNOWN_OP)
    if op == b"MATCH":
        if len(argv) != 6:
            raise ReplyError(errors.ARRAY_MATCH_VALUE)
    elif len(argv) != 5:
        raise _arity(argv)
    # A missing key answers before the type check, as aropCommand does.
    if ctx.db.get(argv[1]) is None:
        return 0 if op in (b"MATCH", b"USED") else None
    array = get_array(ctx, argv[1])
    assert array is not None
    items = (item for _, item in array.scan(start, end))
    if op == b"USED":
        return sum(1 for _ in items)
    if op == b"MATCH":
        return sum(1 for item in items if item == argv[5])
    if op in (b"AND", b"OR", b"XOR"):
        acc = None
        for item in items:
            read = _numeric(item)
            if read is None:
                continue
            num, is_int = read
            if not is_int:
                if isinstance(num, float) or not _I64_MIN <= num <= _I64_MAX:
                    continue
                num = int(num)  # truncation toward zero
            n = int(num)
            if acc is None:
                acc = n
            elif op == b"AND":
                acc &= n
            elif op == b"OR":
                acc |= n
            else:
                acc ^= n
        return acc
    result: Fraction | float | None = None
    for item in items:
        read = _numeric(item)
        if read is None:
            continue
        num = read[0]
        if result is None:
            result = num
        elif op == b"SUM":
            result = _ld_add(result, num)
        elif (op == b"MIN" and num < result) or (op == b"MAX" and num > result):
            result = num
    return None if result is None else ld2string(result)


# --- the insertion cursor: ARINSERT / ARRING / ARNEXT / ARSEEK / ARLASTITEMS ---------------

@command("arinsert", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update",
         group="array", since="8.8.0")
def arinsert(ctx: Client, argv: list[bytes]) -> object:
    """ARINSERT key value [value ...]

    Inserts one or more values at consecutive indices."""
    array = get_array(ctx, argv[1])
    cursor = array.insert_idx if array is not None else None
    values = argv[2:]
    if cursor is None:
        first = 0
    elif cursor >= U64_MAX - 1:
        raise ReplyError(errors.ARRAY_INSERT_OVERFLOW)
    else:
        first = cursor + 1
    last = first + len(values) - 1
    if last >= U64_MAX:
        raise ReplyError(errors.ARRAY_INSERT_OVERFLOW)
    array = array_for_write(ctx, argv[1])
    if len(values) > 1:
        array.prepare_range(first, last)
    for offset, item in enumerate(values):
        array.set(first + offset, item)
    array.insert_idx = last
    ctx.modified(argv[1], len(values))
    return last


@command("arring", -4, "write denyoom", keys=(1, 1, 1), key_flags="RW update", group="array",
         since="8.8.0")
def arring(ctx: Client, argv: list[bytes]) -> object:
    """ARRING key size value [value ...]

    Inserts values into a ring buffer of specified size, wrapping and truncating as needed."""
    size = parse_int(argv[2], errors.ARRAY_INVALID_SIZE)
    if size <= 0:
        raise ReplyError(errors.ARRAY_SIZE_POSITIVE)
    key = argv[1]
    array = array_for_write(ctx, key)
    rework = ring_needs_rework(array, size)
    if rework is not None:
        array = ring_rework(array, *rework)
        ctx.db.set(key, array, keep_ttl=True)
    cursor = 0
    for item in argv[3:]:
        cursor = 0 if array.insert_idx is None else array.insert_idx + 1
        if cursor >= size:
            cursor %= size
        array.set(cursor, item)
        array.insert_idx = cursor
    ctx.modified(key, len(argv) - 3)
    return cursor


@command("arnext", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arnext(ctx: Client, argv: list[bytes]) -> object:
    """ARNEXT key

    Returns the next index ARINSERT would use."""
    array = get_array(ctx, argv[1])
    if array is None or array.insert_idx is None:
        return 0
    if array.insert_idx == U64_MAX - 1:
        return None  # the index space is exhausted
    return array.insert_idx + 1


@command("arseek", 3, "write fast", keys=(1, 1, 1), key_flags="RW update", group="array",
         since="8.8.0")
def arseek(ctx: Client, argv: list[bytes]) -> object:
    """ARSEEK key index

    Sets the ARINSERT / ARRING cursor to a specific index."""
    idx = parse_index(argv[2], allow_max=True)
    array = get_array(ctx, argv[1])
    if array is None:
        return 0
    array.insert_idx = None if idx == 0 else idx - 1
    ctx.modified(argv[1])
    return 1


@command("arlastitems", -3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arlastitems(ctx: Client, argv: list[bytes]) -> object:
    """ARLASTITEMS key count [REV]

    Returns the most recently inserted elements."""
    count = parse_int(argv[2], errors.ARRAY_INVALID_COUNT)
    if count <= 0:
        return []
    if len(argv) == 4:
        if argv[3].upper() != b"REV":
            raise ReplyError(errors.SYNTAX)
    elif len(argv) != 3:
        raise _arity(argv)
    array = get_array(ctx, argv[1])
    if array is None:
        return []
    span = array.length()
    n = min(count, span)
    if n > array.count and n > MAX_REPLY_ITEMS:
        raise ReplyError(errors.ARRAY_COUNT_TOO_BIG)
    if n == 0:
        return []
    cursor = array.insert_idx
    idx = span - 1 if cursor is None or cursor >= span else cursor
    newest_first = []
    for _ in range(n):
        newest_first.append(array.get(idx))
        idx = span - 1 if idx == 0 else idx - 1
    if len(argv) == 4:
        return newest_first
    newest_first.reverse()
    return newest_first


@command("arinfo", -2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="array",
         since="8.8.0")
def arinfo(ctx: Client, argv: list[bytes]) -> object:
    """ARINFO key [FULL]

    Returns metadata about an array."""
    full = False
    if len(argv) > 2:
        if len(argv) == 3 and argv[2].lower() == b"full":
            full = True
        else:
            raise ReplyError(errors.SYNTAX)
    array = get_array(ctx, argv[1])
    if array is None:
        raise ReplyError(errors.NO_SUCH_KEY)
    layout = array.info()
    cursor = array.insert_idx
    fields: list = [
        (b"count", array.count),
        (b"len", array.length()),
        (b"next-insert-index", 0 if cursor is None or cursor == U64_MAX - 1 else cursor + 1),
        (b"slices", layout["slices"]),
        (b"directory-size", layout["directory-size"]),
        (b"super-dir-entries", layout["super-dir-entries"]),
        (b"slice-size", 4096),
    ]
    if full:
        dense, sparse = layout["dense"], layout["sparse"]
        winsize = layout["dense-winsize"]
        fields += [
            (b"dense-slices", dense),
            (b"sparse-slices", sparse),
            (b"avg-dense-size", winsize / dense if dense else 0.0),
            (b"avg-dense-fill", layout["dense-count"] / winsize if winsize else 0.0),
            (b"avg-sparse-size", layout["sparse-cap"] / sparse if sparse else 0.0),
        ]
    return Map(fields)
