"""Generic keyspace commands: DEL, EXISTS, TYPE, KEYS, SCAN, RENAME, expiry, OBJECT, MEMORY."""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_c_int, parse_int
from rillet.commands.table import command, help_reply
from rillet.commands.typed import parse_cursor
from rillet.engine.eviction import idle_ms, lfu_decayed
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.notify import GENERIC
from rillet.resp.types import OK, SimpleString
from rillet.state import Client

MAX_EXPIRE_MS = 2**63 - 1


def type_name(value: object) -> bytes:
    if value.__class__ is bytes:
        return b"string"
    return getattr(value, "TYPE_NAME", b"none")


@command("del", -2, "write", keys=(1, -1, 1), group="generic", since="1.0.0",
         key_flags="RM delete")
def del_(ctx: Client, argv: list[bytes]) -> object:
    """DEL key [key ...]"""
    db = ctx.db
    deleted = 0
    for key in argv[1:]:
        if db.delete(key):
            ctx.modified(key)
            ctx.notify(GENERIC, b"del", key)
            deleted += 1
    return deleted


@command("unlink", -2, "write fast", keys=(1, -1, 1), group="generic", since="4.0.0",
         key_flags="RM delete")
def unlink(ctx: Client, argv: list[bytes]) -> object:
    """UNLINK key [key ...]"""
    return del_(ctx, argv)


@command("exists", -2, "readonly fast", keys=(1, -1, 1), key_flags="RO", group="generic", since="1.0.0")
def exists(ctx: Client, argv: list[bytes]) -> object:
    """EXISTS key [key ...]"""
    db = ctx.db
    return sum(1 for key in argv[1:] if db.peek(key) is not None)  # LOOKUP_NOTOUCH, as Redis


@command("type", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="generic", since="1.0.0")
def type_(ctx: Client, argv: list[bytes]) -> object:
    """TYPE key"""
    value = ctx.db.peek(argv[1])
    return SimpleString(b"none" if value is None else type_name(value))


@command("keys", 2, "readonly", group="generic", since="1.0.0",
         acl="keyspace read slow dangerous")
def keys_(ctx: Client, argv: list[bytes]) -> object:
    """KEYS pattern"""
    pattern = argv[1]
    if pattern == b"*":
        return list(ctx.db.keys())
    return [key for key in ctx.db.keys() if glob_match(pattern, key)]


@command("scan", -2, "readonly", group="generic", since="2.8.0")
def scan(ctx: Client, argv: list[bytes]) -> object:
    """SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]"""
    cursor = parse_cursor(argv[1])
    pattern = None
    count = 10
    wanted_type = None
    i = 2
    while i < len(argv):
        option = argv[i].upper()
        if i + 1 >= len(argv):
            raise ReplyError(errors.SYNTAX)
        if option == b"MATCH":
            pattern = argv[i + 1]
        elif option == b"COUNT":
            count = parse_int(argv[i + 1])
            if count < 1:
                raise ReplyError(errors.SYNTAX)
        elif option == b"TYPE":
            wanted_type = argv[i + 1].lower()
        else:
            raise ReplyError(errors.SYNTAX)
        i += 2
    db = ctx.db
    next_cursor, found = db.scan(cursor, count)
    if pattern is not None and pattern != b"*":
        found = [key for key in found if glob_match(pattern, key)]
    result = []
    for key in found:
        value = db.get(key)
        if value is None:
            continue
        if wanted_type is not None and type_name(value) != wanted_type:
            continue
        result.append(key)
    return [str(next_cursor).encode(), result]


@command("randomkey", 1, "readonly", group="generic", since="1.0.0")
def randomkey(ctx: Client, argv: list[bytes]) -> object:
    """RANDOMKEY"""
    return ctx.db.random_key()


def _rename(ctx: Client, argv: list[bytes], nx: bool) -> object:
    db = ctx.db
    old, new = argv[1], argv[2]
    if db.get(old) is None:
        raise ReplyError(errors.NO_SUCH_KEY)
    replaced = db.get(new)
    if nx and replaced is not None:
        return 0
    if old != new:
        value = db.data[old]
        db.rename(old, new)
        ctx.modified(old)
        ctx.modified(new)
        ctx.notify(GENERIC, b"rename_from", old)
        ctx.notify(GENERIC, b"rename_to", new)
        if replaced is not None:
            ctx.server.key_overwritten(db, new, replaced, value)
    return 1 if nx else OK


@command("rename", 3, "write", keys=(1, 2, 1), key_flags="RW access delete|OW update", group="generic", since="1.0.0")
def rename(ctx: Client, argv: list[bytes]) -> object:
    """RENAME key newkey"""
    return _rename(ctx, argv, nx=False)


@command("renamenx", 3, "write fast", keys=(1, 2, 1),
         key_flags="RW access delete|OW insert", group="generic", since="1.0.0")
def renamenx(ctx: Client, argv: list[bytes]) -> object:
    """RENAMENX key newkey"""
    return _rename(ctx, argv, nx=True)


# --- expiry ---------------------------------------------------------------------

def _expire(ctx: Client, argv: list[bytes], unit_ms: int, absolute: bool) -> object:
    name = argv[0].decode().lower()
    # Redis checks the options before the time (parseExtendedExpireArgumentsOrReply).
    flags = set()
    for option in argv[3:]:
        upper = option.upper()
        if upper not in (b"NX", b"XX", b"GT", b"LT"):
            shown = option.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            raise ReplyError(errors.EXPIRE_UNSUPPORTED_OPTION.format(shown))
        flags.add(upper)
    if b"NX" in flags and flags & {b"XX", b"GT", b"LT"}:
        raise ReplyError(errors.EXPIRE_OPTIONS)
    if b"GT" in flags and b"LT" in flags:
        raise ReplyError(errors.EXPIRE_GT_LT)
    amount = parse_int(argv[2])
    now = ctx.clock.now_ms()
    # Redis's overflow checks (expireGenericCommand): the unit conversion, then
    # adding the base time; a hugely negative time simply means "already expired".
    if unit_ms == 1000:
        if not -(MAX_EXPIRE_MS // 1000) <= amount <= MAX_EXPIRE_MS // 1000:
            raise ReplyError(errors.INVALID_EXPIRE.format(name))
        amount *= 1000
    base = 0 if absolute else now
    if amount > MAX_EXPIRE_MS - base:
        raise ReplyError(errors.INVALID_EXPIRE.format(name))
    deadline = amount + base
    db = ctx.db
    key = argv[1]
    if db.get(key) is None:
        return 0
    current = db.expires.get(key)
    if b"NX" in flags and current is not None:
        return 0
    if b"XX" in flags and current is None:
        return 0
    # A key without TTL counts as an infinite TTL for GT/LT.
    if b"GT" in flags and (current is None or deadline <= current):
        return 0
    if b"LT" in flags and current is not None and deadline >= current:
        return 0
    # While loading, a deadline already past keeps the key (Redis's checkAlreadyExpired):
    # the DEL that expired it, if any, follows in the file being replayed.
    if deadline <= now and not ctx.server.loading:
        db.delete(key)
        ctx.modified(key)
        ctx.notify(GENERIC, b"del", key)
        ctx.propagate([b"DEL", key])
        return 1
    db.set_expire(key, deadline)
    ctx.modified(key)
    ctx.notify(GENERIC, b"expire", key)
    ctx.propagate([b"PEXPIREAT", key, b"%d" % deadline])
    return 1


@command("expire", -3, "write fast", keys=(1, 1, 1), key_flags="RW update", group="generic", since="1.0.0")
def expire(ctx: Client, argv: list[bytes]) -> object:
    """EXPIRE key seconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, 1000, absolute=False)


@command("pexpire", -3, "write fast", keys=(1, 1, 1), key_flags="RW update", group="generic", since="2.6.0")
def pexpire(ctx: Client, argv: list[bytes]) -> object:
    """PEXPIRE key milliseconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, 1, absolute=False)


@command("expireat", -3, "write fast", keys=(1, 1, 1), key_flags="RW update", group="generic", since="1.2.0")
def expireat(ctx: Client, argv: list[bytes]) -> object:
    """EXPIREAT key unix-time-seconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, 1000, absolute=True)


@command("pexpireat", -3, "write fast", keys=(1, 1, 1), key_flags="RW update", group="generic", since="2.6.0")
def pexpireat(ctx: Client, argv: list[bytes]) -> object:
    """PEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, 1, absolute=True)


def _ttl(ctx: Client, key: bytes, unit_ms: int) -> int:
    db = ctx.db
    if db.peek(key) is None:
        return -2
    remaining = db.ttl_ms(key)
    if remaining is None:
        return -1
    return (remaining + 500) // 1000 if unit_ms == 1000 else remaining


@command("ttl", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="generic", since="1.0.0")
def ttl(ctx: Client, argv: list[bytes]) -> object:
    """TTL key"""
    return _ttl(ctx, argv[1], 1000)


@command("pttl", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="generic", since="2.6.0")
def pttl(ctx: Client, argv: list[bytes]) -> object:
    """PTTL key"""
    return _ttl(ctx, argv[1], 1)


@command("expiretime", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="generic", since="7.0.0")
def expiretime(ctx: Client, argv: list[bytes]) -> object:
    """EXPIRETIME key"""
    db = ctx.db
    if db.peek(argv[1]) is None:
        return -2
    deadline = db.expires.get(argv[1])
    return -1 if deadline is None else deadline // 1000


@command("pexpiretime", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="generic", since="7.0.0")
def pexpiretime(ctx: Client, argv: list[bytes]) -> object:
    """PEXPIRETIME key"""
    db = ctx.db
    if db.peek(argv[1]) is None:
        return -2
    deadline = db.expires.get(argv[1])
    return -1 if deadline is None else deadline


@command("persist", 2, "write fast", keys=(1, 1, 1), key_flags="RW update", group="generic", since="2.2.0")
def persist(ctx: Client, argv: list[bytes]) -> object:
    """PERSIST key"""
    db = ctx.db
    if db.get(argv[1]) is None or not db.persist(argv[1]):
        return 0
    ctx.modified(argv[1])
    ctx.notify(GENERIC, b"persist", argv[1])
    return 1


# --- OBJECT / MEMORY --------------------------------------------------------------

def _string_encoding(value: bytes) -> bytes:
    try:
        if len(value) <= 20 and str(int(value)).encode() == value and -(2**63) <= int(value) < 2**63:
            return b"int"
    except ValueError:
        pass
    return b"embstr" if len(value) <= 44 else b"raw"


@command("object|encoding", 3, "readonly", keys=(2, 2, 1), key_flags="RO", group="generic", since="2.2.3")
def object_encoding(ctx: Client, argv: list[bytes]) -> object:
    """OBJECT ENCODING key"""
    value = ctx.db.peek(argv[2])
    if value is None:
        return None
    if value.__class__ is bytes:
        return ctx.db.encodings.get(argv[2]) or _string_encoding(value)
    encoding = getattr(value, "encoding", None)
    if encoding is not None:
        return encoding()
    return getattr(value, "ENCODING", type_name(value))


@command("object|help", 2, "loading stale", group="generic", since="6.2.0")
def object_help(ctx: Client, argv: list[bytes]) -> object:
    """OBJECT HELP"""
    return help_reply(
        "OBJECT",
        b"ENCODING <key>",
        b"    Return the kind of internal representation used in order to store the value",
        b"    associated with a <key>.",
        b"FREQ <key>",
        b"    Return the access frequency index of the <key>. The returned integer is",
        b"    proportional to the logarithm of the recent access frequency of the key.",
        b"IDLETIME <key>",
        b"    Return the idle time of the <key>, that is the approximated number of",
        b"    seconds elapsed since the last access to the key.",
        b"REFCOUNT <key>",
        b"    Return the number of references of the value associated with the specified",
        b"    <key>.",
    )


def _lfu(ctx: Client) -> bool:
    return "lfu" in str(ctx.server.config["maxmemory-policy"])


@command("object|freq", 3, "readonly", keys=(2, 2, 1), key_flags="RO", group="generic", since="4.0.0")
def object_freq(ctx: Client, argv: list[bytes]) -> object:
    """OBJECT FREQ key"""
    db = ctx.db
    if db.peek(argv[2]) is None:
        return None
    if not _lfu(ctx):
        raise ReplyError(errors.NO_LFU)
    return lfu_decayed(db.access.get(argv[2], 0), ctx.server.memory.lfu)


@command("object|idletime", 3, "readonly", keys=(2, 2, 1), key_flags="RO", group="generic", since="2.2.3")
def object_idletime(ctx: Client, argv: list[bytes]) -> object:
    """OBJECT IDLETIME key"""
    db = ctx.db
    if db.peek(argv[2]) is None:
        return None
    if _lfu(ctx):
        raise ReplyError(errors.NO_LRU)
    return idle_ms(db.access.get(argv[2], db.lru_now), db.lru_now) // 1000


@command("object|refcount", 3, "readonly", keys=(2, 2, 1), key_flags="RO", group="generic", since="2.2.3")
def object_refcount(ctx: Client, argv: list[bytes]) -> object:
    """OBJECT REFCOUNT key"""
    return None if ctx.db.peek(argv[2]) is None else 1


@command("touch", -2, "readonly fast", keys=(1, -1, 1), key_flags="RO", group="generic", since="3.2.1")
def touch(ctx: Client, argv: list[bytes]) -> object:
    """TOUCH key [key ...]"""
    db = ctx.db
    return sum(1 for key in argv[1:] if db.get(key) is not None)  # records the access


def _db_index(ctx: Client, raw: bytes) -> int:
    index = parse_c_int(raw)
    if not 0 <= index < len(ctx.server.keyspace):
        raise ReplyError(errors.OUT_OF_RANGE_DB)
    return index


def copy_value(value: object) -> object:
    """A deep copy of a value (strings are immutable and shared)."""
    if value.__class__ is bytes:
        return value
    own = getattr(value, "copy", None)
    if own is not None:
        return own()
    import copy as copy_module

    return copy_module.deepcopy(value)


@command("copy", -3, "write denyoom", keys=(1, 2, 1), key_flags="RO access|OW update", group="generic", since="6.2.0")
def copy_(ctx: Client, argv: list[bytes]) -> object:
    """COPY source destination [DB destination-db] [REPLACE]"""
    src_key, dst_key = argv[1], argv[2]
    target = ctx.db.index
    replace = False
    i = 3
    while i < len(argv):
        word = argv[i].upper()
        if word == b"REPLACE":
            replace = True
        elif word == b"DB" and i + 1 < len(argv):
            target = _db_index(ctx, argv[i + 1])
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    if ctx.server.cluster is not None and (target or ctx.db.index):
        raise ReplyError(errors.COPY_DB_IN_CLUSTER)
    if src_key == dst_key and target == ctx.db.index:
        raise ReplyError(errors.SAME_OBJECT)
    src = ctx.db
    value = src.get(src_key)
    if value is None:
        return 0
    dst = ctx.server.keyspace[target]
    replaced = dst.get(dst_key)
    if replaced is not None and not replace:
        return 0
    if not getattr(value, "COPYABLE", True):  # a module type without a copy callback
        raise ReplyError(errors.VSET_NO_COPY)
    if replaced is not None:
        dst.delete(dst_key)
    dst.set(dst_key, copy_value(value))
    if src_key in src.encodings:
        dst.encodings[dst_key] = src.encodings[src_key]
    deadline = src.expires.get(src_key)
    if deadline is not None:
        dst.set_expire(dst_key, deadline)
    server = ctx.server
    server.key_modified(target, dst_key)
    server.notify(GENERIC, b"copy_to", dst_key, target)
    if replaced is not None:
        server.key_overwritten(dst, dst_key, replaced, value)
    return 1


@command("move", 3, "write fast", keys=(1, 1, 1), key_flags="RW access update", group="generic", since="1.0.0")
def move(ctx: Client, argv: list[bytes]) -> object:
    """MOVE key db"""
    if ctx.server.cluster is not None:
        raise ReplyError(errors.MOVE_IN_CLUSTER)
    key = argv[1]
    target = _db_index(ctx, argv[2])
    if target == ctx.db.index:
        raise ReplyError(errors.SAME_OBJECT)
    src = ctx.db
    value = src.get(key)
    if value is None:
        return 0
    dst = ctx.server.keyspace[target]
    if dst.get(key) is not None:
        return 0
    deadline = src.expires.get(key)
    encoding = src.encodings.get(key)
    src.delete(key)
    dst.set(key, value)
    if encoding is not None:
        dst.encodings[key] = encoding
    if deadline is not None:
        dst.set_expire(key, deadline)
    ctx.modified(key)
    ctx.server.key_modified(target, key)
    ctx.notify(GENERIC, b"move_from", key)
    ctx.server.notify(GENERIC, b"move_to", key, target)
    return 1


@command("swapdb", 3, "write fast", group="generic", since="4.0.0",
         acl="keyspace write fast dangerous")
def swapdb(ctx: Client, argv: list[bytes]) -> object:
    """SWAPDB index1 index2"""
    if ctx.server.cluster is not None:
        raise ReplyError(errors.SWAPDB_IN_CLUSTER)
    first = parse_c_int(argv[1], errors.SWAPDB_FIRST)
    second = parse_c_int(argv[2], errors.SWAPDB_SECOND)
    count = len(ctx.server.keyspace)
    if not (0 <= first < count and 0 <= second < count):
        raise ReplyError(errors.OUT_OF_RANGE_DB)
    if first != second:
        server = ctx.server
        # Watchers and blocked clients of both databases see their keys change.
        server.db_flushed(first, second)
        server.db_flushed(second, first)
        server.keyspace[first].swap_contents(server.keyspace[second])
    ctx.changed()
    return OK


@command("memory|usage", -3, "readonly", keys=(2, 2, 1), key_flags="RO", group="server", since="4.0.0")
def memory_usage(ctx: Client, argv: list[bytes]) -> object:
    """MEMORY USAGE key [SAMPLES count]"""
    samples = 5
    j = 3
    while j < len(argv):
        # memoryCommand: SAMPLES may repeat, 0 means every element, negative is a syntax error.
        if argv[j].upper() == b"SAMPLES" and j + 1 < len(argv):
            samples = parse_int(argv[j + 1])
            if samples < 0:
                raise ReplyError(errors.SYNTAX)
            j += 2
        else:
            raise ReplyError(errors.SYNTAX)
    key = argv[2]
    value = ctx.db.peek(key)  # Redis's dbFind: no access recorded
    if value is None:
        return None
    if value.__class__ is bytes:
        return 16 + len(key) + len(value) + 16
    from rillet.commands.stream_common import Stream, stream_memory_usage

    if value.__class__ is Stream:
        return stream_memory_usage(ctx.db, key, value, samples)
    return 16 + len(key) + value.memory_usage()  # type: ignore[attr-defined]  # every other type has it
