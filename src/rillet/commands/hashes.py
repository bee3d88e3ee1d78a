"""Hash commands, with Redis 7.4+ field expiration (HEXPIRE family, HGETEX, HSETEX, HGETDEL).

A field past its deadline is removed when its hash is next looked up; the
removal is published as an HDEL (as an expired key is published as a DEL).
Effects are deterministic: HINCRBYFLOAT becomes HSET of the result, relative
field TTLs become HPEXPIREAT with the absolute time, a field given a past
time becomes HDEL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rillet import errors
from rillet.commands.args import INT64_MAX, INT64_MIN, parse_int
from rillet.commands.table import COMMANDS, command
from rillet.commands.typed import (
    config_int,
    lookup,
    parse_cursor,
    parse_scan,
    pick,
    random_count,
    scan_members,
)
from rillet.compiled import compiled
from rillet.engine import longdouble
from rillet.engine.hashes import Hash
from rillet.errors import ReplyError
from rillet.notify import GENERIC, HASH
from rillet.resp.types import OK, Map
from rillet.state import Client, ServerState

if TYPE_CHECKING:
    from rillet.engine.keyspace import Database

# Redis's HFE_MAX_ABS_TIME_MSEC (EB_EXPIRE_TIME_MAX >> 2): the largest field deadline.
HFE_MAX_MS = ((1 << 48) - 1) >> 2


def get_hash(ctx: Client, key: bytes) -> Hash | None:
    """The hash at `key` with its due fields removed (published as HDEL), or None."""
    h: Hash | None = lookup(ctx, key, Hash)
    if h is not None and h.ttls and expire_due_fields(ctx.server, ctx.db, key, h):
        return None
    return h


def expire_due_fields(server: ServerState, db: Database, key: bytes, h: Hash) -> bool:
    """Remove the fields of `h` past their deadline: one `hexpired` (and `del` with the
    last field), published as HDEL. True if that removed the hash.

    (Redis sends one `hexpired` per field a command reads lazily, one per hash in
    its active cycle.)
    """
    due = h.due_fields(server.clock.now_ms())
    if not due:
        return False
    for field in due:
        h.delete(field)
    server.notify(HASH, b"hexpired", key, db.index, due)
    if not h.fields:
        db.delete(key)
        server.notify(GENERIC, b"del", key, db.index)
    server.key_modified(db.index, key, 0)
    server.publish([(db.index, [b"HDEL", key, *due])])
    return not h.fields


def active_expire_fields(server: ServerState, db: Database, cursor: int, count: int) -> int:
    """One step of the active expiry of hash fields (serverCron's, as Redis's
    activeExpireCycle does for its hashes with field TTLs): the next `count` keys of
    the db from `cursor`; returns the cursor to go on from (0: start over).

    rillet keeps no index of the hashes with field TTLs: the sweep walks the
    keyspace, so a big keyspace takes longer to sweep; a read of the hash removes
    its due fields meanwhile, as above.
    """
    if db.expire_mode or db.expiry_paused or server.loading:
        return cursor  # a replica's fields go with its master's HDELs; a pause waits
    next_cursor, keys = db.scan(cursor, count)
    for key in keys:
        value = db.peek(key)  # a sweep is no access: the key's LRU/LFU field stays
        if value.__class__ is Hash and value.ttls:
            expire_due_fields(server, db, key, value)
    return next_cursor


def _new_hash(ctx: Client, key: bytes) -> Hash:
    h = get_hash(ctx, key)
    if h is None:
        h = Hash()
        ctx.db.set(key, h)
    return h


def _note(ctx: Client, h: Hash, items: list[bytes]) -> None:
    h.note_sizes(config_int(ctx, "hash-max-listpack-entries"),
                 config_int(ctx, "hash-max-listpack-value"), items)


def _done(ctx: Client, key: bytes, h: Hash) -> None:
    """After a change (its event already sent): drop an emptied hash (`del`), signal."""
    if not h.fields:
        ctx.db.delete(key)
        ctx.notify(GENERIC, b"del", key)
    ctx.modified(key)


@command("hset", -4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="2.0.0")
def hset(ctx: Client, argv: list[bytes]) -> object:
    """HSET key field value [field value ...]"""
    if len(argv) % 2:
        raise ReplyError(errors.wrong_arity(argv[0].decode(errors="replace").lower()))
    h = _new_hash(ctx, argv[1])
    added = 0
    for i in range(2, len(argv), 2):
        added += h.set(argv[i], argv[i + 1])
    _note(ctx, h, argv[2:])
    ctx.modified(argv[1])
    ctx.notify(HASH, b"hset", argv[1], argv[2::2])
    return added


@command("hmset", -4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="2.0.0")
def hmset(ctx: Client, argv: list[bytes]) -> object:
    """HMSET key field value [field value ...]"""
    hset(ctx, argv)
    return OK


@command("hsetnx", 4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="hash", since="2.0.0")
def hsetnx(ctx: Client, argv: list[bytes]) -> object:
    """HSETNX key field value"""
    h = get_hash(ctx, argv[1])
    if h is not None and argv[2] in h.fields:
        return 0
    h = _new_hash(ctx, argv[1])
    h.set(argv[2], argv[3])
    _note(ctx, h, argv[2:])
    ctx.modified(argv[1])
    ctx.notify(HASH, b"hset", argv[1], [argv[2]])
    return 1


@command("hget", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="hash", since="2.0.0")
def hget(ctx: Client, argv: list[bytes]) -> object:
    """HGET key field"""
    h = get_hash(ctx, argv[1])
    return None if h is None else h.fields.get(argv[2])


@command("hmget", -3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="hash", since="2.0.0")
def hmget(ctx: Client, argv: list[bytes]) -> object:
    """HMGET key field [field ...]"""
    h = get_hash(ctx, argv[1])
    fields = {} if h is None else h.fields
    return [fields.get(f) for f in argv[2:]]


@command("hdel", -3, "write fast", keys=(1, 1, 1), key_flags="RW delete", group="hash", since="2.0.0")
def hdel(ctx: Client, argv: list[bytes]) -> object:
    """HDEL key field [field ...]"""
    h = get_hash(ctx, argv[1])
    if h is None:
        return 0
    gone = [f for f in argv[2:] if h.delete(f)]
    if gone:
        ctx.notify(HASH, b"hdel", argv[1], gone)
        _done(ctx, argv[1], h)
    return len(gone)


@command("hlen", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="hash", since="2.0.0")
def hlen(ctx: Client, argv: list[bytes]) -> object:
    """HLEN key"""
    h = get_hash(ctx, argv[1])
    return 0 if h is None else len(h.fields)


@command("hstrlen", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="hash", since="3.2.0")
def hstrlen(ctx: Client, argv: list[bytes]) -> object:
    """HSTRLEN key field"""
    h = get_hash(ctx, argv[1])
    value = None if h is None else h.fields.get(argv[2])
    return 0 if value is None else len(value)


@command("hexists", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="hash", since="2.0.0")
def hexists(ctx: Client, argv: list[bytes]) -> object:
    """HEXISTS key field"""
    h = get_hash(ctx, argv[1])
    return int(h is not None and argv[2] in h.fields)


@command("hkeys", 2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="hash", since="2.0.0")
def hkeys(ctx: Client, argv: list[bytes]) -> object:
    """HKEYS key"""
    h = get_hash(ctx, argv[1])
    return [] if h is None else list(h.fields)


@command("hvals", 2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="hash", since="2.0.0")
def hvals(ctx: Client, argv: list[bytes]) -> object:
    """HVALS key"""
    h = get_hash(ctx, argv[1])
    return [] if h is None else list(h.fields.values())


@command("hgetall", 2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="hash", since="2.0.0")
def hgetall(ctx: Client, argv: list[bytes]) -> object:
    """HGETALL key"""
    h = get_hash(ctx, argv[1])
    return Map([] if h is None else list(h.fields.items()))


@command("hincrby", 4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="hash", since="2.0.0")
def hincrby(ctx: Client, argv: list[bytes]) -> object:
    """HINCRBY key field increment"""
    delta = parse_int(argv[3])
    h = get_hash(ctx, argv[1])
    current = None if h is None else h.fields.get(argv[2])
    number = 0 if current is None else parse_int(current, errors.HASH_NOT_INTEGER)
    result = number + delta
    if not INT64_MIN <= result <= INT64_MAX:
        raise ReplyError(errors.OVERFLOW)
    h = _new_hash(ctx, argv[1])
    h.set(argv[2], b"%d" % result, keep_ttl=True)
    _note(ctx, h, [argv[2]])
    ctx.modified(argv[1])
    ctx.notify(HASH, b"hincrby", argv[1], [argv[2]])
    return result


@command("hincrbyfloat", 4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="hash", since="2.6.0")
def hincrbyfloat(ctx: Client, argv: list[bytes]) -> object:
    """HINCRBYFLOAT key field increment"""
    delta = longdouble.parse(argv[3])
    if delta is False:
        raise ReplyError(errors.STRING_NOT_FLOAT)
    if delta is None:
        raise ReplyError(errors.FLOAT_NAN_OR_INF)
    h = get_hash(ctx, argv[1])
    current = None if h is None else h.fields.get(argv[2])
    number = longdouble.parse(b"0" if current is None else current)
    if number is False:
        raise ReplyError(errors.HASH_NOT_FLOAT)
    if number is None:
        raise ReplyError(errors.INCR_NAN_OR_INF)
    result = longdouble.add(number, delta)
    if result is None:
        raise ReplyError(errors.INCR_NAN_OR_INF)
    text = longdouble.format_human(result)
    h = _new_hash(ctx, argv[1])
    h.set(argv[2], text, keep_ttl=True)
    _note(ctx, h, [argv[2], text])
    ctx.modified(argv[1])
    ctx.notify(HASH, b"hincrbyfloat", argv[1], [argv[2]])
    ctx.propagate([b"HSET", argv[1], argv[2], text])
    if argv[2] in h.ttls:
        ctx.propagate([b"HPEXPIREAT", argv[1], b"%d" % h.ttls[argv[2]], b"FIELDS", b"1", argv[2]])
    return text


@command("hrandfield", -2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="hash", since="6.2.0")
def hrandfield(ctx: Client, argv: list[bytes]) -> object:
    """HRANDFIELD key [count [WITHVALUES]]"""
    if len(argv) == 2:
        h = get_hash(ctx, argv[1])
        if h is None:
            return None
        return pick(list(h.fields), 1, False)[0]
    count, repeats = random_count(argv[2])  # the count, then the syntax, as Redis
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHVALUES"):
        raise ReplyError(errors.SYNTAX)
    withvalues = len(argv) == 4
    if withvalues and count > INT64_MAX // 2:  # either sign, as Redis (the reply doubles)
        raise ReplyError(errors.VALUE_OUT_OF_RANGE)
    h = get_hash(ctx, argv[1])
    if h is None or count == 0:
        return []
    chosen = pick(list(h.fields), count, repeats)
    if not withvalues:
        return chosen
    if ctx.resp3:
        return [[f, h.fields[f]] for f in chosen]
    return [x for f in chosen for x in (f, h.fields[f])]


@command("hscan", -3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="hash", since="2.8.0")
def hscan(ctx: Client, argv: list[bytes]) -> object:
    """HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]"""
    parse_cursor(argv[2])  # the cursor, then the key, then the options, as Redis
    h = get_hash(ctx, argv[1])
    if h is None:
        return [b"0", []]
    cursor, pattern, count, flags = parse_scan(argv, (b"NOVALUES",))
    next_cursor, found = scan_members(h.fields, cursor, count, not h.big, pattern)
    if b"NOVALUES" in flags:
        return [b"%d" % next_cursor, found]
    return [b"%d" % next_cursor, [x for f in found for x in (f, h.fields[f])]]


# --- field expiration ---------------------------------------------------------------------

def _fields(argv: list[bytes], at: int, per_field: int = 1,
            bad_count: str = errors.HFE_NUMFIELDS_COUNT,
            mismatch: str = errors.HFE_NUMFIELDS_MISMATCH, most: int = 2**63 - 1) -> list[bytes]:
    """FIELDS numfields field... starting at `at` (the FIELDS word), Redis's checks in order."""
    if at + 1 >= len(argv) or argv[at].upper() != b"FIELDS":
        raise ReplyError(errors.HFE_FIELDS_MISSING)
    n = parse_int(argv[at + 1], bad_count)
    if n < 1 or n > most:
        raise ReplyError(bad_count)
    if n * per_field != len(argv) - at - 2:
        raise ReplyError(mismatch)
    return argv[at + 2:]


def _deadline(ctx: Client, raw: bytes, unit_ms: int, absolute: bool, name: str) -> int:
    amount = parse_int(raw)
    if amount < 0:
        raise ReplyError(errors.HFE_NEGATIVE)
    if unit_ms == 1000:
        if amount > HFE_MAX_MS // 1000:
            raise ReplyError(errors.INVALID_EXPIRE.format(name))
        amount *= 1000
    base = 0 if absolute else ctx.clock.now_ms()
    if amount > HFE_MAX_MS - base:
        raise ReplyError(errors.INVALID_EXPIRE.format(name))
    return amount + base


_CONDITIONS = (b"NX", b"XX", b"GT", b"LT")


def _set_field_ttls(ctx: Client, key: bytes, h: Hash, fields: list[bytes], deadline: int,
                    condition: bytes | None) -> list[int]:
    now = ctx.clock.now_ms()
    replies = []
    updated: list[bytes] = []
    deleted: list[bytes] = []
    for field in fields:
        if field not in h.fields:
            replies.append(-2)
            continue
        current = h.ttls.get(field)
        if ((condition == b"NX" and current is not None)
                or (condition == b"XX" and current is None)
                or (condition == b"GT" and (current is None or deadline <= current))
                or (condition == b"LT" and current is not None and deadline >= current)):
            replies.append(0)
            continue
        if deadline <= now:
            h.delete(field)
            deleted.append(field)
            replies.append(2)
            continue
        h.set_ttl(field, deadline)
        updated.append(field)
        replies.append(1)
    if updated or deleted:
        # One deadline: the fields are all past it (deleted) or all not (updated).
        ctx.notify(HASH, b"hdel" if deleted else b"hexpire", key, deleted or updated)
        if deleted:
            ctx.propagate([b"HDEL", key, *deleted])
        if updated:
            ctx.propagate([b"HPEXPIREAT", key, b"%d" % deadline, b"FIELDS",
                           b"%d" % len(updated), *updated])
        _done(ctx, key, h)
    return replies


def _hexpire(ctx: Client, argv: list[bytes], unit_ms: int, absolute: bool) -> object:
    name = argv[0].decode(errors="replace").lower()
    h = get_hash(ctx, argv[1])
    deadline = _deadline(ctx, argv[2], unit_ms, absolute, name)
    at = 3
    condition = argv[3].upper() if argv[3].upper() in _CONDITIONS else None
    if condition is not None:
        at += 1
    fields = _fields(argv, at, bad_count=errors.HFE_NUMFIELDS_POSITIVE)
    if h is None:
        return [-2] * len(fields)
    h.ex = True  # Redis converts to listpackex whatever the outcome
    return _set_field_ttls(ctx, argv[1], h, fields, deadline, condition)


@command("hexpire", -6, "write fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="7.4.0")
def hexpire(ctx: Client, argv: list[bytes]) -> object:
    """HEXPIRE key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _hexpire(ctx, argv, 1000, False)


@command("hpexpire", -6, "write fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="7.4.0")
def hpexpire(ctx: Client, argv: list[bytes]) -> object:
    """HPEXPIRE key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _hexpire(ctx, argv, 1, False)


@command("hexpireat", -6, "write fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="7.4.0")
def hexpireat(ctx: Client, argv: list[bytes]) -> object:
    """HEXPIREAT key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _hexpire(ctx, argv, 1000, True)


@command("hpexpireat", -6, "write fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="7.4.0")
def hpexpireat(ctx: Client, argv: list[bytes]) -> object:
    """HPEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _hexpire(ctx, argv, 1, True)


def _httl(ctx: Client, argv: list[bytes], kind: str) -> object:
    h = get_hash(ctx, argv[1])
    fields = _fields(argv, 2)
    if h is None:
        return [-2] * len(fields)
    now = ctx.clock.now_ms()
    out: list[int] = []
    for field in fields:
        if field not in h.fields:
            out.append(-2)
            continue
        deadline = h.ttls.get(field)
        if deadline is None:
            out.append(-1)
        elif kind == "ttl":
            out.append((deadline - now + 999) // 1000)
        elif kind == "pttl":
            out.append(deadline - now)
        elif kind == "expiretime":
            out.append(deadline // 1000)
        else:
            out.append(deadline)
    return out


@command("httl", -5, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="hash", since="7.4.0")
def httl(ctx: Client, argv: list[bytes]) -> object:
    """HTTL key FIELDS numfields field [field ...]"""
    return _httl(ctx, argv, "ttl")


@command("hpttl", -5, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="hash", since="7.4.0")
def hpttl(ctx: Client, argv: list[bytes]) -> object:
    """HPTTL key FIELDS numfields field [field ...]"""
    return _httl(ctx, argv, "pttl")


@command("hexpiretime", -5, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="hash", since="7.4.0")
def hexpiretime(ctx: Client, argv: list[bytes]) -> object:
    """HEXPIRETIME key FIELDS numfields field [field ...]"""
    return _httl(ctx, argv, "expiretime")


@command("hpexpiretime", -5, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="hash", since="7.4.0")
def hpexpiretime(ctx: Client, argv: list[bytes]) -> object:
    """HPEXPIRETIME key FIELDS numfields field [field ...]"""
    return _httl(ctx, argv, "pexpiretime")


@command("hpersist", -5, "write fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="7.4.0")
def hpersist(ctx: Client, argv: list[bytes]) -> object:
    """HPERSIST key FIELDS numfields field [field ...]"""
    h = get_hash(ctx, argv[1])
    fields = _fields(argv, 2)
    if h is None:
        return [-2] * len(fields)
    out = []
    persisted = []
    for field in fields:
        if field not in h.fields:
            out.append(-2)
        elif not h.persist(field):
            out.append(-1)
        else:
            out.append(1)
            persisted.append(field)
    if persisted:
        ctx.modified(argv[1])
        ctx.notify(HASH, b"hpersist", argv[1], persisted)
    return out


_EXPIRY_UNITS = {b"EX": (1000, False), b"PX": (1, False), b"EXAT": (1000, True),
                 b"PXAT": (1, True)}


@command("hgetex", -5, "write fast", keys=(1, 1, 1), key_flags="RW access update", group="hash", since="8.0.0",
         key_notes="RW and UPDATE because it changes the TTL")
def hgetex(ctx: Client, argv: list[bytes]) -> object:
    """HGETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]"""
    h = get_hash(ctx, argv[1])
    word = argv[2].upper()
    at = 2
    deadline = None
    persist = False
    if word in _EXPIRY_UNITS:
        unit, absolute = _EXPIRY_UNITS[word]
        deadline = _deadline(ctx, argv[3], unit, absolute, "hgetex")
        at = 4
    elif word == b"PERSIST":
        persist = True
        at = 3
    fields = _fields(argv, at)
    if h is None:
        return [None] * len(fields)
    values = [h.fields.get(f) for f in fields]
    if deadline is not None and deadline <= ctx.clock.now_ms():
        # Redis answers and expires field by field: a field given again after a deadline
        # in the past deleted it answers nil.
        seen: set[bytes] = set()
        for n, f in enumerate(fields):
            if f in seen:
                values[n] = None
            seen.add(f)
    if deadline is not None or persist:
        h.ex = True  # Redis converts to listpackex whatever the outcome
    if deadline is not None:
        _set_field_ttls(ctx, argv[1], h, fields, deadline, None)
    elif persist:
        gone = [f for f in fields if f in h.fields and h.persist(f)]
        if gone:
            ctx.modified(argv[1])
            ctx.notify(HASH, b"hpersist", argv[1], gone)
            ctx.propagate([b"HPERSIST", argv[1], b"FIELDS", b"%d" % len(gone), *gone])
    return values


@command("hsetex", -6, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="hash", since="8.0.0")
def hsetex(ctx: Client, argv: list[bytes]) -> object:
    """HSETEX key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]"""
    condition = None
    expiry: bytes | None = None
    deadline = None
    i = 2
    while i < len(argv) and argv[i].upper() != b"FIELDS":
        word = argv[i].upper()
        if word in (b"FNX", b"FXX"):
            if condition is not None:
                raise ReplyError(errors.HFE_FNX_FXX)
            condition = word
            i += 1
        elif word in _EXPIRY_UNITS or word == b"KEEPTTL":
            if expiry is not None:
                raise ReplyError(errors.HFE_ONE_EXPIRY)
            expiry = word
            if word == b"KEEPTTL":
                i += 1
                continue
            if i + 1 >= len(argv):
                raise ReplyError(errors.SYNTAX)
            unit, absolute = _EXPIRY_UNITS[word]
            deadline = _deadline(ctx, argv[i + 1], unit, absolute, "hsetex")
            i += 2
        else:
            raise ReplyError(errors.HFE_UNKNOWN_ARGUMENT.format(
                argv[i].decode("utf-8", "replace")))
    # HSETEX reads numfields as an int (up to INT_MAX), the others as a long.
    pairs = _fields(argv, i, 2, errors.HFE_INVALID_NUMFIELDS, errors.wrong_arity("hsetex"), 2**31 - 1)
    h = get_hash(ctx, argv[1])
    fields = pairs[0::2]
    if condition == b"FNX" and h is not None and any(f in h.fields for f in fields):
        return 0
    if condition == b"FXX" and (h is None or not all(f in h.fields for f in fields)):
        return 0
    h = _new_hash(ctx, argv[1])
    keep = expiry == b"KEEPTTL"
    for j in range(0, len(pairs), 2):
        h.set(pairs[j], pairs[j + 1], keep_ttl=keep)
    _note(ctx, h, pairs)
    ctx.notify(HASH, b"hset", argv[1], fields)
    effect = [b"HSETEX", argv[1]]
    if deadline is not None:
        if deadline <= ctx.clock.now_ms():
            h.ex = True  # Redis converts to listpackex before it finds the time past
            for f in fields:
                h.delete(f)
            ctx.notify(HASH, b"hdel", argv[1], fields)
            ctx.propagate([b"HDEL", argv[1], *fields])
            _done(ctx, argv[1], h)
            return 1
        for f in fields:
            h.set_ttl(f, deadline)
        ctx.notify(HASH, b"hexpire", argv[1], fields)
        effect += [b"PXAT", b"%d" % deadline]
    elif keep:
        effect.append(b"KEEPTTL")
    ctx.propagate(effect + argv[i:])
    ctx.modified(argv[1])
    return 1


@command("hgetdel", -5, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="hash", since="8.0.0")
def hgetdel(ctx: Client, argv: list[bytes]) -> object:
    """HGETDEL key FIELDS numfields field [field ...]"""
    h = get_hash(ctx, argv[1])
    fields = _fields(argv, 2)
    if h is None:
        return [None] * len(fields)
    # One field at a time, as Redis: a field named twice answers nil the second time.
    values = []
    gone = []
    for f in fields:
        values.append(h.fields.get(f))
        if h.delete(f):
            gone.append(f)
    if gone:
        ctx.notify(HASH, b"hdel", argv[1], gone)
        ctx.propagate([b"HDEL", argv[1], *gone])
        _done(ctx, argv[1], h)
    return values


# HSET onto a big hash compiled (commands/_hashes.pyx, see rillet/compiled.py);
# `hset` above (the reference) answers the other forms, or every form without it.
_hashes = compiled("rillet.commands._hashes")
if _hashes is not None:
    _hashes.bind(hset)
    COMMANDS["hset"].handler = _hashes.hset
