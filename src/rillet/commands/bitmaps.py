"""Bitmaps and bitfields: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

A bitmap is a string (the same `bytes` value GET returns): bit 0 is the most
significant bit of the first byte. Writes grow the string with zero bytes, keep
its TTL and leave it `raw` for OBJECT ENCODING, as Redis's in-place edits do
(bitops.c lookupStringForBitCommand unshares the value even when nothing
changes). Arithmetic runs on Python ints with Redis's C semantics spelled out
where they matter: BITFIELD's overflow checks on uint64/int64, `#` offsets
multiplied with wrap-around. Effects are the commands themselves, as Redis
propagates them: each is deterministic given the keys it reads.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.strings import get_string, splice
from rillet.commands.table import command
from rillet.commands.typed import config_int
from rillet.errors import ReplyError
from rillet.notify import GENERIC, STRING
from rillet.state import Client

_U64 = (1 << 64) - 1


def _int64(n: int) -> int:
    """C's wrap-around of an integer to int64."""
    n &= _U64
    return n - (1 << 64) if n >> 63 else n


def bit_offset(ctx: Client, raw: bytes, bits: int = 0) -> int:
    """getBitOffsetFromArgument: a bit offset, `#n` meaning n*bits when `bits` is given."""
    hashed = bits > 0 and raw[:1] == b"#"
    offset = parse_int(raw[1:] if hashed else raw, errors.BIT_OFFSET)
    if hashed:
        offset = _int64(offset * bits)  # long long multiply: wraps as in C
    if offset < 0 or (not ctx.is_internal and offset >> 3 >= config_int(ctx, "proto-max-bulk-len")):
        raise ReplyError(errors.BIT_OFFSET)
    return offset


def _store(ctx: Client, key: bytes, value: bytes) -> None:
    ctx.db.set(key, value, keep_ttl=True)
    ctx.db.encodings[key] = b"raw"  # edited in place: Redis reports `raw`


@command("setbit", 4, "write denyoom", keys=(1, 1, 1), key_flags="RW access update",
         group="bitmap", since="2.2.0")
def setbit(ctx: Client, argv: list[bytes]) -> object:
    """SETBIT key offset value

    Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.
    """
    offset = bit_offset(ctx, argv[2])
    on = parse_int(argv[3], errors.BIT_VALUE)
    if on & ~1:
        raise ReplyError(errors.BIT_VALUE)
    key = argv[1]
    current = get_string(ctx, key)
    byte, mask = offset >> 3, 0x80 >> (offset & 7)
    old = 1 if current is not None and byte < len(current) and current[byte] & mask else 0
    grows = current is None or byte >= len(current)
    if grows or old != on:
        was = 0 if grows else current[byte]  # type: ignore[index]
        # One copy of the string, however far it grows.
        value = splice(current, byte, bytes(((was | mask) if on else (was & ~mask),)))
        _store(ctx, key, value)
        ctx.modified(key)
        ctx.notify(STRING, b"setbit", key)
    else:
        ctx.db.encodings[key] = b"raw"  # unshared even when the bit stays
    return old


@command("getbit", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO access",
         group="bitmap", since="2.2.0")
def getbit(ctx: Client, argv: list[bytes]) -> object:
    """GETBIT key offset

    Returns a bit value by offset.
    """
    offset = bit_offset(ctx, argv[2])
    value = get_string(ctx, argv[1])
    byte = offset >> 3
    if value is None or byte >= len(value):
        return 0
    return 1 if value[byte] & (0x80 >> (offset & 7)) else 0


def _unit(raw: bytes) -> bool:
    """BIT or BYTE (True for BIT)."""
    word = raw.upper()
    if word == b"BIT":
        return True
    if word == b"BYTE":
        return False
    raise ReplyError(errors.SYNTAX)


def _clamp(start: int, end: int, total: int) -> tuple[int, int]:
    """Redis's index normalisation for BITCOUNT/BITPOS: negatives from the end, then clamped."""
    if start < 0:
        start += total
    if end < 0:
        end += total
    start, end = max(start, 0), max(end, 0)
    return start, min(end, total - 1)


def _bits_in(value: bytes, first_bit: int, last_bit: int) -> int:
    """The bits [first_bit, last_bit] of `value` as an int (first_bit most significant)."""
    lo, hi = first_bit >> 3, last_bit >> 3
    n = int.from_bytes(value[lo:hi + 1], "big")
    n >>= 7 - (last_bit & 7)
    return n & ((1 << (last_bit - first_bit + 1)) - 1)


_CHUNK = 1 << 16  # big strings are worked on in slices: no int of the whole string


def popcount(value: bytes, lo: int, hi: int) -> int:
    """Set bits in value[lo:hi]."""
    return sum(int.from_bytes(value[i:min(i + _CHUNK, hi)], "little").bit_count()
               for i in range(lo, hi, _CHUNK))


def _skip_bytes(value: bytes, lo: int, hi: int, skip: int) -> int:
    """The index of the first byte in value[lo:hi] other than `skip`, or hi."""
    filler = bytes((skip,))
    full = filler * _CHUNK
    for i in range(lo, hi, _CHUNK):
        chunk = value[i:min(i + _CHUNK, hi)]
        if chunk != full[:len(chunk)]:
            return i + len(chunk) - len(chunk.lstrip(filler))
    return hi


def _first_in(bits: int, width: int, bit: int) -> int:
    """Index (from the most significant) of the first `bit` in a `width`-bit int, or -1."""
    if not bit:
        bits = ~bits & ((1 << width) - 1)
    return width - bits.bit_length() if bits else -1


def first_bit(value: bytes, first: int, last: int, bit: int) -> int:
    """The position of the first `bit` among bits [first, last] of `value`, or -1."""
    lo, hi = first >> 3, last >> 3
    if hi - lo < 2:
        found = _first_in(_bits_in(value, first, last), last - first + 1, bit)
        return -1 if found < 0 else first + found
    head_end = lo * 8 + 7
    found = _first_in(_bits_in(value, first, head_end), head_end - first + 1, bit)
    if found >= 0:
        return first + found
    at = _skip_bytes(value, lo + 1, hi, 0 if bit else 0xFF)
    if at < hi:
        return at * 8 + _first_in(value[at], 8, bit)
    found = _first_in(_bits_in(value, hi * 8, last), last - hi * 8 + 1, bit)
    return -1 if found < 0 else hi * 8 + found


@command("bitcount", -2, "readonly", keys=(1, 1, 1), key_flags="RO access",
         group="bitmap", since="2.6.0")
def bitcount(ctx: Client, argv: list[bytes]) -> object:
    """BITCOUNT key [start end [BYTE | BIT]]

    Counts the number of set bits (population counting) in a string.
    """
    argc = len(argv)
    if argc == 2:
        value = get_string(ctx, argv[1])
        return 0 if value is None else popcount(value, 0, len(value))
    if argc not in (4, 5):
        raise ReplyError(errors.SYNTAX)
    start, end = parse_int(argv[2]), parse_int(argv[3])
    is_bit = _unit(argv[4]) if argc == 5 else False
    value = get_string(ctx, argv[1])
    if value is None or (start < 0 and end < 0 and start > end):
        return 0
    total = len(value) * 8 if is_bit else len(value)
    start, end = _clamp(start, end, total)
    if start > end:
        return 0
    if not is_bit:
        return popcount(value, start, end + 1)
    lo, hi = start >> 3, end >> 3
    # The whole bytes, less the bits of the edge bytes outside the range (as Redis does).
    outside = (value[lo] >> (8 - (start & 7))).bit_count() + (value[hi] & ((1 << (7 - (end & 7))) - 1)).bit_count()
    return popcount(value, lo, hi + 1) - outside


@command("bitpos", -3, "readonly", keys=(1, 1, 1), key_flags="RO access",
         group="bitmap", since="2.8.7")
def bitpos(ctx: Client, argv: list[bytes]) -> object:
    """BITPOS key bit [start [end [BYTE | BIT]]]

    Finds the first set (1) or clear (0) bit in a string.
    """
    bit = parse_int(argv[2])
    if bit not in (0, 1):
        raise ReplyError(errors.BITPOS_BIT)
    argc = len(argv)
    if argc > 6:
        raise ReplyError(errors.SYNTAX)
    start, end, is_bit, end_given = 0, -1, False, argc >= 5
    if argc >= 4:
        start = parse_int(argv[3])
        if argc == 6:
            is_bit = _unit(argv[5])
        if end_given:
            end = parse_int(argv[4])
    value = get_string(ctx, argv[1])
    if value is None:
        return -1 if bit else 0
    total = len(value) * 8 if is_bit else len(value)
    start, end = _clamp(start, end, total)
    if start > end:
        return -1
    first, last = (start, end) if is_bit else (start * 8, end * 8 + 7)
    found = first_bit(value, first, last, bit)
    if found >= 0 or bit:
        return found
    # No clear bit in the range: past an open-ended range the string is zero padded.
    return -1 if end_given else last + 1


# --- BITOP ------------------------------------------------------------------------------------

def _or_all(values: list[int]) -> int:
    out = 0
    for v in values:
        out |= v
    return out


def _exactly_one(values: list[int]) -> int:
    once = more = 0
    for v in values:
        more |= once & v
        once |= v
    return once & ~more


def _and_all(values: list[int]) -> int:
    out = values[0]
    for v in values[1:]:
        out &= v
    return out


def _xor_all(values: list[int]) -> int:
    out = 0
    for v in values:
        out ^= v
    return out


# op -> (value of the sources, all zero-padded to the longest; mask of the result's bits)
_BITOPS = {
    b"AND": lambda xs, mask: _and_all(xs),
    b"OR": lambda xs, mask: _or_all(xs),
    b"XOR": lambda xs, mask: _xor_all(xs),
    b"NOT": lambda xs, mask: ~xs[0] & mask,
    b"DIFF": lambda xs, mask: xs[0] & ~_or_all(xs[1:]) & mask,  # X and none of the others
    b"DIFF1": lambda xs, mask: ~xs[0] & _or_all(xs[1:]) & mask,  # some other, not X
    b"ANDOR": lambda xs, mask: xs[0] & _or_all(xs[1:]),  # X and at least one other
    b"ONE": lambda xs, mask: _exactly_one(xs),  # set in exactly one source
}
_AT_LEAST_TWO = (b"DIFF", b"DIFF1", b"ANDOR")


@command("bitop", -4, "write denyoom", keys=(2, -1, 1), key_flags="OW update|RO access",
         group="bitmap", since="2.6.0")
def bitop(ctx: Client, argv: list[bytes]) -> object:
    """BITOP <AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE> destkey key [key ...]

    Performs bitwise operations on multiple strings, and stores the result.
    """
    op = argv[1].upper()
    compute = _BITOPS.get(op)
    if compute is None:
        raise ReplyError(errors.SYNTAX)
    if op == b"NOT" and len(argv) != 4:
        raise ReplyError(errors.BITOP_NOT_ONE_KEY)
    if op in _AT_LEAST_TWO and len(argv) < 5:
        raise ReplyError(errors.BITOP_TWO_KEYS.format(op.decode()))
    sources = [get_string(ctx, key) or b"" for key in argv[3:]]
    maxlen = max(map(len, sources))
    dest = argv[2]
    if maxlen:
        parts = []
        for at in range(0, maxlen, _CHUNK):
            n = min(_CHUNK, maxlen - at)
            values = [int.from_bytes(s[at:at + n].ljust(n, b"\0"), "big") for s in sources]
            parts.append(compute(values, (1 << (8 * n)) - 1).to_bytes(n, "big"))
        ctx.db.set(dest, b"".join(parts))
        ctx.db.encodings[dest] = b"raw"  # createObject(OBJ_STRING, ...): never embstr/int
        ctx.modified(dest)
        ctx.notify(STRING, b"set", dest)
    elif ctx.db.delete(dest):
        ctx.modified(dest)
        ctx.notify(GENERIC, b"del", dest)
    return maxlen


# --- BITFIELD ---------------------------------------------------------------------------------

WRAP, SAT, FAIL = 0, 1, 2
_OVERFLOW = {b"WRAP": WRAP, b"SAT": SAT, b"FAIL": FAIL}
GET, SET, INCRBY = 0, 1, 2
_OPS = {b"GET": (GET, 2), b"SET": (SET, 3), b"INCRBY": (INCRBY, 3)}


def _field_type(raw: bytes) -> tuple[bool, int]:
    """getBitfieldTypeFromArgument: (signed, bits) from i1..i64 or u1..u63."""
    sign = raw[:1]
    if sign not in (b"i", b"u"):
        raise ReplyError(errors.BITFIELD_TYPE)
    digits = raw[1:].split(b"\0", 1)[0]  # strlen(p+1)
    bits = parse_int(digits, errors.BITFIELD_TYPE)
    if bits < 1 or bits > (64 if sign == b"i" else 63):
        raise ReplyError(errors.BITFIELD_TYPE)
    return sign == b"i", bits


def _get_field(buf: bytes | bytearray, offset: int, bits: int) -> int:
    """The unsigned value of `bits` bits at bit `offset`; bytes past the end read as zero."""
    first, last = offset >> 3, (offset + bits - 1) >> 3
    chunk = bytes(buf[first:last + 1]).ljust(last - first + 1, b"\0")
    n = int.from_bytes(chunk, "big") >> (7 - ((offset + bits - 1) & 7))
    return n & ((1 << bits) - 1)


def _set_field(buf: bytearray, offset: int, bits: int, value: int) -> None:
    first, last = offset >> 3, (offset + bits - 1) >> 3
    shift = 7 - ((offset + bits - 1) & 7)
    mask = ((1 << bits) - 1) << shift
    n = int.from_bytes(buf[first:last + 1], "big")
    n = (n & ~mask) | ((value << shift) & mask)
    buf[first:last + 1] = n.to_bytes(last - first + 1, "big")


def _signed(u: int, bits: int) -> int:
    return u - (1 << bits) if u >> (bits - 1) else u


def unsigned_overflow(value: int, incr: int, bits: int, owtype: int) -> tuple[int, int]:
    """checkUnsignedBitfieldOverflow on uint64 `value`: (1/-1/0, the wrapped or saturated value)."""
    top = (1 << bits) - 1
    max_incr = _int64(top - value)
    min_incr = _int64(-value)
    if value > top or (incr > 0 and incr > max_incr):
        return 1, ((value + incr) & top) if owtype == WRAP else top
    if incr < 0 and incr < min_incr:
        return -1, ((value + incr) & top) if owtype == WRAP else 0
    return 0, 0


def signed_overflow(value: int, incr: int, bits: int, owtype: int) -> tuple[int, int]:
    """checkSignedBitfieldOverflow on int64 `value`: (1/-1/0, the wrapped or saturated value)."""
    top = (1 << (bits - 1)) - 1
    bottom = -top - 1
    max_incr = _int64(top - value)
    min_incr = _int64(bottom - value)
    if value > top or (bits != 64 and incr > max_incr) or (value >= 0 and 0 < incr and incr > max_incr):
        direction, limit = 1, top
    elif value < bottom or (bits != 64 and incr < min_incr) or (value < 0 and incr < 0 and incr < min_incr):
        direction, limit = -1, bottom
    else:
        return 0, 0
    if owtype == WRAP:
        limit = _signed((value + incr) & ((1 << bits) - 1), bits)
    return direction, limit


def _bitfield(ctx: Client, argv: list[bytes], read_only: bool) -> object:
    ops: list[tuple[int, int, int, int, bool, int]] = []  # (op, offset, value, owtype, signed, bits)
    owtype = WRAP
    writes = False
    highest = 0
    j = 2
    while j < len(argv):
        left = len(argv) - j - 1
        word = argv[j].upper()
        if word == b"OVERFLOW" and left >= 1:
            owtype = _OVERFLOW.get(argv[j + 1].upper(), -1)
            if owtype < 0:
                raise ReplyError(errors.BITFIELD_OVERFLOW)
            j += 2
            continue
        op, needs = _OPS.get(word, (-1, 0))
        if op < 0 or left < needs:
            raise ReplyError(errors.SYNTAX)
        signed, bits = _field_type(argv[j + 1])
        offset = bit_offset(ctx, argv[j + 2], bits)
        value = 0
        if op != GET:
            writes = True
            highest = max(highest, offset + bits - 1)
            value = parse_int(argv[j + 3])
        ops.append((op, offset, value, owtype, signed, bits))
        j += 1 + needs
    key = argv[1]
    if not writes:
        found = get_string(ctx, key) or b""
        return [_read(found, offset, signed, bits) for _, offset, _, _, signed, bits in ops]
    if read_only:
        raise ReplyError(errors.BITFIELD_RO_GET_ONLY)
    current = get_string(ctx, key)
    base = current or b""
    size = max(len(base), (highest >> 3) + 1)
    grew = size > len(base) or current is None
    # The fields lie in bytes [first, end): the ops run on that window, spliced
    # back in one copy, not on a bytearray of a string that may be 512 MB.
    first = min(op[1] for op in ops) >> 3
    end = min(size, max((op[1] + op[5] - 1) >> 3 for op in ops) + 1)
    buf = bytearray(base[first:end])
    buf.extend(bytes(end - first - len(buf)))
    shift = first << 3
    replies: list[int | None] = []
    changes = 0
    for op, at, value, ow, signed, bits in ops:
        offset = at - shift
        if op == GET:
            replies.append(_read(buf, offset, signed, bits))
            continue
        old_u = _get_field(buf, offset, bits)
        if signed:
            old = _signed(old_u, bits)
            if op == INCRBY:
                overflow, limit = signed_overflow(old, value, bits, ow)
                new = limit if overflow else old + value
                reply = new
            else:
                overflow, limit = signed_overflow(value, 0, bits, ow)
                new = limit if overflow else value
                reply = old
        else:
            old = old_u
            if op == INCRBY:
                overflow, limit = unsigned_overflow(old, value, bits, ow)
                new = limit if overflow else old + value
                reply = new
            else:
                overflow, limit = unsigned_overflow(value & _U64, 0, bits, ow)
                new = limit if overflow else value
                reply = old
        if overflow and ow == FAIL:
            replies.append(None)
            continue
        replies.append(reply)
        _set_field(buf, offset, bits, new & ((1 << bits) - 1))
        if grew or new != old:
            changes += 1
    _store(ctx, key, splice(current, first, bytes(buf)))
    if changes:
        ctx.modified(key, changes)
        ctx.notify(STRING, b"setbit", key)
    elif grew:
        # Every write failed (OVERFLOW FAIL) but the string was still created or
        # grown: Redis keeps the zero bytes without propagating them; rillet
        # propagates the command so that replicas and the AOF hold the same string.
        ctx.propagate(list(argv))
    return replies


def _read(buf: bytes | bytearray, offset: int, signed: bool, bits: int) -> int:
    value = _get_field(buf, offset, bits)
    return _signed(value, bits) if signed else value


def _bitfield_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    # Redis's bitfieldGetKeys: only GETs and OVERFLOWs (with their arguments) read the
    # key; anything else, a syntax error included, is taken as a write.
    i = 2
    while i < len(argv):
        option, left = argv[i].upper(), len(argv) - i - 1
        if option == b"GET" and left >= 2:
            i += 3
        elif option == b"OVERFLOW" and left >= 1:
            i += 2
        else:
            return [(1, "RW access update")]
    return [(1, "RO access")]


@command("bitfield", -2, "write denyoom", keys=(1, 1, 1), find_keys=_bitfield_keys,
         key_flags="RW access update variable_flags", group="bitmap", since="3.2.0",
         key_notes="This command allows both access and modification of the key")
def bitfield(ctx: Client, argv: list[bytes]) -> object:
    """BITFIELD key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> ...]]

    Performs arbitrary bitfield integer operations on strings.
    """
    return _bitfield(ctx, argv, False)


@command("bitfield_ro", -2, "readonly fast", keys=(1, 1, 1), key_flags="RO access",
         group="bitmap", since="6.0.0")
def bitfield_ro(ctx: Client, argv: list[bytes]) -> object:
    """BITFIELD_RO key [GET encoding offset [GET encoding offset ...]]

    Performs arbitrary read-only bitfield integer operations on strings.
    """
    return _bitfield(ctx, argv, True)
