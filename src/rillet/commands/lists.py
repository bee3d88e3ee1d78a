"""List commands, including the blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP).

A blocking pop with nothing to pop returns a `Block` on its keys; the server
re-runs it (with `blocked_retry` set) when one of them is written, in FIFO
order per key, and it pops or says KEEP_WAITING. Inside MULTI it answers as
if it timed out (the dispatcher does that). Every pop propagates as the
non-blocking form of what it did (BLPOP -> LPOP key, BLMOVE -> LMOVE ...).
"""

from __future__ import annotations

import math

from rillet import errors
from rillet.commands.args import parse_int, parse_mpop
from rillet.commands.table import COMMANDS, command
from rillet.commands.typed import config_int, lookup
from rillet.compiled import compiled
from rillet.engine import longdouble
from rillet.engine.lists import List
from rillet.errors import ReplyError
from rillet.notify import GENERIC, LIST
from rillet.resp.types import NULL_ARRAY, OK
from rillet.state import KEEP_WAITING, Block, Client

INT64_MAX = 2**63 - 1


def get_list(ctx: Client, key: bytes) -> List | None:
    return lookup(ctx, key, List)


def _max_size(ctx: Client) -> int:
    return config_int(ctx, "list-max-listpack-size")


def _written(ctx: Client, key: bytes, value: List, changes: int = 1) -> None:
    """After a change (its event already sent): drop an emptied list (`del`), convert a
    shrunk one back, signal (`changes` counted for the save rules)."""
    if not len(value):
        ctx.db.delete(key)
        ctx.notify(GENERIC, b"del", key)
    else:
        value.shrunk(_max_size(ctx))
    ctx.modified(key, changes)


def get_list_to_serve(ctx: Client, key: bytes) -> List | None:
    """For a woken blocked client: a key now holding another type is not served (keeps waiting)."""
    if ctx.blocked_retry:
        value = ctx.db.get(key)
        return value if value.__class__ is List else None
    return get_list(ctx, key)


def _push(ctx: Client, argv: list[bytes], left: bool, only_existing: bool) -> object:
    key = argv[1]
    value = get_list(ctx, key)
    if value is None:
        if only_existing:
            return 0
        value = List()
        ctx.db.set(key, value)
    value.will_add(argv[2:], _max_size(ctx))
    value.push(argv[2:], left)
    ctx.notify(LIST, b"lpush" if left else b"rpush", key)
    _written(ctx, key, value)
    return len(value)


@command("lpush", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="list", since="1.0.0")
def lpush(ctx: Client, argv: list[bytes]) -> object:
    """LPUSH key element [element ...]"""
    return _push(ctx, argv, True, False)


@command("rpush", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="list", since="1.0.0")
def rpush(ctx: Client, argv: list[bytes]) -> object:
    """RPUSH key element [element ...]"""
    return _push(ctx, argv, False, False)


@command("lpushx", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="list", since="2.2.0")
def lpushx(ctx: Client, argv: list[bytes]) -> object:
    """LPUSHX key element [element ...]"""
    return _push(ctx, argv, True, True)


@command("rpushx", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="list", since="2.2.0")
def rpushx(ctx: Client, argv: list[bytes]) -> object:
    """RPUSHX key element [element ...]"""
    return _push(ctx, argv, False, True)


# The pushes' and LPOP/RPOP's bodies compiled (commands/_lists.pyx, see
# rillet/compiled.py), or None: the Python bodies here run. Registered below,
# once all four push commands and both pops are in the table.
_compiled = compiled("rillet.commands._lists")


@command("llen", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="list", since="1.0.0")
def llen(ctx: Client, argv: list[bytes]) -> object:
    """LLEN key"""
    value = get_list(ctx, argv[1])
    return 0 if value is None else len(value)


def _pop_n(ctx: Client, key: bytes, value: List, left: bool, count: int) -> list[bytes]:
    """Pops up to `count` (each one a change for the save rules, as listElementsRemoved);
    LPOP/RPOP propagate as sent, the others say their effect."""
    out = value.pop_many(left, count)
    ctx.notify(LIST, b"lpop" if left else b"rpop", key)
    _written(ctx, key, value, len(out))
    return out


def _pop(ctx: Client, argv: list[bytes], left: bool) -> object:
    if len(argv) > 3:
        raise ReplyError(errors.wrong_arity("lpop" if left else "rpop"))
    count = None
    if len(argv) == 3:
        count = parse_int(argv[2], errors.COUNT_MUST_BE_POSITIVE)
        if count < 0:
            raise ReplyError(errors.COUNT_MUST_BE_POSITIVE)
    value = get_list(ctx, argv[1])
    if value is None:
        return None if count is None else NULL_ARRAY
    if count is None:
        return _pop_n(ctx, argv[1], value, left, 1)[0]
    if count == 0:
        return []
    return _pop_n(ctx, argv[1], value, left, count)


@command("lpop", -2, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="list", since="1.0.0")
def lpop(ctx: Client, argv: list[bytes]) -> object:
    """LPOP key [count]"""
    return _pop(ctx, argv, True)


@command("rpop", -2, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="list", since="1.0.0")
def rpop(ctx: Client, argv: list[bytes]) -> object:
    """RPOP key [count]"""
    return _pop(ctx, argv, False)


if _compiled is not None:
    _compiled.bind(_push, _pop)
    for _name in ("lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop"):
        COMMANDS[_name].handler = getattr(_compiled, _name)


def _index(value: List, raw: bytes) -> int | None:
    index = parse_int(raw)
    n = len(value)
    if index < 0:
        index += n
    return index if 0 <= index < n else None


@command("lindex", 3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="list", since="1.0.0")
def lindex(ctx: Client, argv: list[bytes]) -> object:
    """LINDEX key index"""
    value = get_list(ctx, argv[1])
    if value is None:
        return None
    index = _index(value, argv[2])
    return None if index is None else value.get(index)


@command("lset", 4, "write denyoom", keys=(1, 1, 1), key_flags="RW update", group="list", since="1.0.0")
def lset(ctx: Client, argv: list[bytes]) -> object:
    """LSET key index element"""
    value = get_list(ctx, argv[1])
    if value is None:
        raise ReplyError(errors.NO_SUCH_KEY)
    # listTypeReplaceAtIndex takes an int: Redis truncates the index to 32 bits.
    index: int | None
    index = parse_int(argv[2]) & 0xFFFFFFFF
    index = _index(value, b"%d" % (index - (1 << 32) if index >= 1 << 31 else index))
    if index is None:
        raise ReplyError(errors.INDEX_OUT_OF_RANGE)
    value.will_add([argv[3]], _max_size(ctx))
    value.set_at(index, argv[3])
    ctx.notify(LIST, b"lset", argv[1])
    _written(ctx, argv[1], value)
    return OK


def _range(n: int, start: int, stop: int) -> tuple[int, int]:
    """Redis's LRANGE/LTRIM index normalisation: a half-open [lo, hi)."""
    if start < 0:
        start = max(start + n, 0)
    if stop < 0:
        stop += n
    if start > stop or start >= n:
        return 0, 0
    return start, min(stop, n - 1) + 1


@command("lrange", 4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="list", since="1.0.0")
def lrange(ctx: Client, argv: list[bytes]) -> object:
    """LRANGE key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    value = get_list(ctx, argv[1])
    if value is None:
        return []
    lo, hi = _range(len(value), start, stop)
    return value.range(lo, hi)


@command("ltrim", 4, "write", keys=(1, 1, 1), key_flags="RW delete", group="list", since="1.0.0")
def ltrim(ctx: Client, argv: list[bytes]) -> object:
    """LTRIM key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    value = get_list(ctx, argv[1])
    if value is None:
        return OK
    lo, hi = _range(len(value), start, stop)
    ctx.notify(LIST, b"ltrim", argv[1])  # Redis signals it even when nothing is removed
    if lo == 0 and hi == len(value):
        ctx.modified(argv[1])
        return OK
    value.trim(lo, hi)
    _written(ctx, argv[1], value)
    return OK


@command("linsert", 5, "write denyoom", keys=(1, 1, 1), key_flags="RW insert", group="list", since="2.2.0")
def linsert(ctx: Client, argv: list[bytes]) -> object:
    """LINSERT key <BEFORE | AFTER> pivot element"""
    where = argv[2].upper()
    if where not in (b"BEFORE", b"AFTER"):
        raise ReplyError(errors.SYNTAX)
    value = get_list(ctx, argv[1])
    if value is None:
        return 0
    at = value.index(argv[3])
    if at < 0:
        return -1
    value.will_add([argv[4]], _max_size(ctx))
    value.insert(at if where == b"BEFORE" else at + 1, argv[4])
    ctx.notify(LIST, b"linsert", argv[1])
    _written(ctx, argv[1], value)
    return len(value)


@command("lrem", 4, "write", keys=(1, 1, 1), key_flags="RW delete", group="list", since="1.0.0")
def lrem(ctx: Client, argv: list[bytes]) -> object:
    """LREM key count element"""
    count = parse_int(argv[2])
    if count == -(2**63):
        raise ReplyError(errors.RANDOM_COUNT_RANGE)
    value = get_list(ctx, argv[1])
    if value is None:
        return 0
    removed = value.remove(argv[3], count)
    if removed:
        ctx.notify(LIST, b"lrem", argv[1])
        _written(ctx, argv[1], value)
    return removed


@command("lpos", -3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="list", since="6.0.6")
def lpos(ctx: Client, argv: list[bytes]) -> object:
    """LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]"""
    rank, count, maxlen = 1, None, 0
    i = 3
    while i < len(argv):
        word = argv[i].upper()
        if i + 1 >= len(argv):
            raise ReplyError(errors.SYNTAX)
        raw = argv[i + 1]
        if word == b"RANK":
            rank = parse_int(raw)
            if rank == -(2**63):
                raise ReplyError(errors.RANDOM_COUNT_RANGE)
            if rank == 0:
                raise ReplyError(errors.LPOS_RANK_ZERO)
        elif word == b"COUNT":
            count = parse_int(raw, errors.COUNT_NEGATIVE)
            if count < 0:
                raise ReplyError(errors.COUNT_NEGATIVE)
        elif word == b"MAXLEN":
            maxlen = parse_int(raw, errors.MAXLEN_NEGATIVE)
            if maxlen < 0:
                raise ReplyError(errors.MAXLEN_NEGATIVE)
        else:
            raise ReplyError(errors.SYNTAX)
        i += 2
    value = get_list(ctx, argv[1])
    if value is None:
        return None if count is None else []
    n = len(value)
    skip = abs(rank) - 1
    matches: list[int] = []
    want = 1 if count is None else (count or n)
    for idx in value.positions(argv[2], rank < 0):
        if maxlen and (idx if rank > 0 else n - 1 - idx) >= maxlen:
            break  # MAXLEN bounds the elements compared, matches or not
        if skip:
            skip -= 1
            continue
        matches.append(idx)
        if len(matches) >= want:
            break
    if count is None:
        return matches[0] if matches else None
    return matches


def _side(word: bytes) -> bool:
    upper = word.upper()
    if upper == b"LEFT":
        return True
    if upper == b"RIGHT":
        return False
    raise ReplyError(errors.SYNTAX)


def _move(ctx: Client, src_key: bytes, dst_key: bytes, from_left: bool, to_left: bool) -> object:
    """LMOVE's body: None when the source is empty; WRONGTYPE checked on both first."""
    src = get_list_to_serve(ctx, src_key)
    dst = get_list(ctx, dst_key) if src is not None else None
    if src is None:
        return None
    element = src.pop(from_left)
    if src_key == dst_key:
        dst = src
    if dst is None:
        dst = List()
        ctx.db.set(dst_key, dst)
    dst.will_add([element], _max_size(ctx))
    dst.push([element], to_left)
    # lmoveGenericCommand: the push on the destination, then the pop (and del) of the source.
    ctx.notify(LIST, b"lpush" if to_left else b"rpush", dst_key)
    ctx.notify(LIST, b"lpop" if from_left else b"rpop", src_key)
    _written(ctx, src_key, src)
    if dst is not src:
        _written(ctx, dst_key, dst, 0)  # one change for the save rules, as Redis counts a move
    return element  # propagated as sent (LMOVE, RPOPLPUSH); the blocking forms rewrite it


@command("lmove", 5, "write denyoom", keys=(1, 2, 1), key_flags="RW access delete|RW insert", group="list", since="6.2.0")
def lmove(ctx: Client, argv: list[bytes]) -> object:
    """LMOVE source destination <LEFT | RIGHT> <LEFT | RIGHT>"""
    from_left, to_left = _side(argv[3]), _side(argv[4])
    return _move(ctx, argv[1], argv[2], from_left, to_left)


@command("rpoplpush", 3, "write denyoom", keys=(1, 2, 1), key_flags="RW access delete|RW insert", group="list", since="1.2.0")
def rpoplpush(ctx: Client, argv: list[bytes]) -> object:
    """RPOPLPUSH source destination"""
    return _move(ctx, argv[1], argv[2], False, True)


def _mpop(ctx: Client, keys: list[bytes], left: bool, count: int) -> object:
    for key in keys:
        value = get_list_to_serve(ctx, key)
        if value is not None:
            out = _pop_n(ctx, key, value, left, count)
            # Redis propagates the number popped, even one: `LPOP key n`.
            ctx.propagate([b"LPOP" if left else b"RPOP", key, b"%d" % len(out)])
            return [key, out]
    return None


@command("lmpop", -4, "write movablekeys", keys=(0, 0, 0), group="list", since="7.0.0")
def lmpop(ctx: Client, argv: list[bytes]) -> object:
    """LMPOP numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"""
    keys, left, count = parse_mpop(argv, 1, _side)
    found = _mpop(ctx, keys, left, count)
    return NULL_ARRAY if found is None else found


# --- blocking ---------------------------------------------------------------------------

def parse_timeout(ctx: Client, raw: bytes) -> int:
    """Seconds as a long double -> ms (ceil), getTimeoutFromObjectOrReply's errors; 0 = forever."""
    value = longdouble.parse(raw)
    if value is False:
        raise ReplyError(errors.TIMEOUT_NOT_FLOAT)
    if value is None:
        raise ReplyError(errors.TIMEOUT_NEGATIVE if raw.startswith(b"-") else errors.TIMEOUT_OUT_OF_RANGE)
    ms = value * 1000
    if ms > INT64_MAX:
        raise ReplyError(errors.TIMEOUT_OUT_OF_RANGE)
    tval = math.ceil(ms)
    if tval < 0:
        raise ReplyError(errors.TIMEOUT_NEGATIVE)
    if tval > 0 and tval > INT64_MAX - ctx.clock.now_ms():
        raise ReplyError(errors.TIMEOUT_OUT_OF_RANGE)
    return tval


def _check_types(ctx: Client, keys: list[bytes]) -> None:
    for key in keys:
        get_list(ctx, key)


def _wait(ctx: Client, keys: list[bytes], timeout_ms: int, argv: list[bytes]) -> object:
    if ctx.blocked_retry:
        return KEEP_WAITING
    return Block(list(keys), timeout_ms, list(argv), NULL_ARRAY)


def _bpop(ctx: Client, argv: list[bytes], left: bool) -> object:
    keys = argv[1:-1]
    timeout_ms = parse_timeout(ctx, argv[-1])
    for key in keys:
        value = get_list_to_serve(ctx, key)
        if value is not None:
            element = _pop_n(ctx, key, value, left, 1)[0]
            ctx.propagate([b"LPOP" if left else b"RPOP", key])
            return [key, element]
    return _wait(ctx, keys, timeout_ms, argv)


@command("blpop", -3, "write blocking", keys=(1, -2, 1), key_flags="RW access delete", group="list", since="2.0.0")
def blpop(ctx: Client, argv: list[bytes]) -> object:
    """BLPOP key [key ...] timeout"""
    return _bpop(ctx, argv, True)


@command("brpop", -3, "write blocking", keys=(1, -2, 1), key_flags="RW access delete", group="list", since="2.0.0")
def brpop(ctx: Client, argv: list[bytes]) -> object:
    """BRPOP key [key ...] timeout"""
    return _bpop(ctx, argv, False)


def _bmove(ctx: Client, argv: list[bytes], from_left: bool, to_left: bool, raw_timeout: bytes) -> object:
    timeout_ms = parse_timeout(ctx, raw_timeout)
    moved = _move(ctx, argv[1], argv[2], from_left, to_left)
    if moved is not None:
        # Redis's non-blocking forms, with the client's spelling of the sides.
        ctx.propagate([b"LMOVE", *argv[1:5]] if len(argv) == 6 else [b"RPOPLPUSH", argv[1], argv[2]])
        return moved
    if ctx.blocked_retry:
        return KEEP_WAITING
    if ctx.in_exec:
        return None  # blmoveGenericCommand answers a null bulk where it may not block
    return Block([argv[1]], timeout_ms, list(argv), NULL_ARRAY)


@command("blmove", 6, "write denyoom blocking", keys=(1, 2, 1), key_flags="RW access delete|RW insert", group="list", since="6.2.0")
def blmove(ctx: Client, argv: list[bytes]) -> object:
    """BLMOVE source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout"""
    from_left, to_left = _side(argv[3]), _side(argv[4])
    return _bmove(ctx, argv, from_left, to_left, argv[5])


@command("brpoplpush", 4, "write denyoom blocking", keys=(1, 2, 1), key_flags="RW access delete|RW insert", group="list", since="2.2.0")
def brpoplpush(ctx: Client, argv: list[bytes]) -> object:
    """BRPOPLPUSH source destination timeout"""
    return _bmove(ctx, argv, False, True, argv[3])


@command("blmpop", -5, "write blocking movablekeys", keys=(0, 0, 0), group="list", since="7.0.0")
def blmpop(ctx: Client, argv: list[bytes]) -> object:
    """BLMPOP timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"""
    keys, left, count = parse_mpop(argv, 2, _side)
    timeout_ms = parse_timeout(ctx, argv[1])  # after numkeys, the side and COUNT, as Redis
    found = _mpop(ctx, keys, left, count)
    if found is not None:
        return found
    return _wait(ctx, keys, timeout_ms, argv)

