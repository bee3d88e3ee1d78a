"""Sorted set commands: ZADD ... ZSCAN, ranges by rank/score/lex, the algebra, pops.

Scores are doubles, printed as Redis prints them (resp/encoder.py
format_double: RESP2 bulk strings, RESP3 doubles). Parsing follows Redis's
two strtod uses (engine/doubles.py). ZRANGE's option rules, checks and
error texts follow zrangeGenericCommand step by step. Blocking pops
(BZPOPMIN/BZPOPMAX/BZMPOP) park through `Block` like the list ones and
propagate as ZPOPMIN/ZPOPMAX key count.
"""

from __future__ import annotations

import math
from typing import Any, cast

from rillet import errors
from rillet.commands.args import INT64_MAX, parse_int, parse_mpop
from rillet.commands.lists import parse_timeout
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
from rillet.engine.doubles import parse_range_double, parse_score
from rillet.engine.sets import Set
from rillet.engine.zsets import ZSet
from rillet.errors import ReplyError
from rillet.notify import GENERIC, ZSET
from rillet.resp.encoder import format_double
from rillet.resp.types import NULL_ARRAY
from rillet.state import KEEP_WAITING, Block, Client

_INF = math.inf


def get_zset(ctx: Client, key: bytes) -> ZSet | None:
    return lookup(ctx, key, ZSet)


def _limits(ctx: Client) -> tuple[int, int]:
    return config_int(ctx, "zset-max-listpack-entries"), config_int(ctx, "zset-max-listpack-value")


def _written(ctx: Client, key: bytes, z: ZSet, event: bytes) -> None:
    """After a change: its event, then `del` if it emptied the sorted set."""
    ctx.notify(ZSET, event, key)
    if not z.scores:
        ctx.db.delete(key)
        ctx.notify(GENERIC, b"del", key)
    ctx.modified(key)


def _pairs_reply(ctx: Client, pairs: list[tuple[bytes, float]], withscores: bool) -> list:
    if not withscores:
        return [m for m, _ in pairs]
    if ctx.resp3:
        return [[m, s] for m, s in pairs]
    return [x for m, s in pairs for x in (m, s)]


def _note_sizes(ctx: Client, z: ZSet, members: list[bytes]) -> None:
    """After members were added: `skiplist` once the set outgrows the listpack limits."""
    z.note_sizes(*_limits(ctx), members)


def _score_arg(raw: bytes) -> float:
    value = parse_score(raw)
    if value is None:
        raise ReplyError(errors.NOT_FLOAT)
    return value  # -0 stays -0: a skiplist keeps it, a listpack stores 0 (see zadd)


# --- ZADD / ZINCRBY ------------------------------------------------------------------------

_ZADD_FLAGS = (b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR")


@command("zadd", -4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="sorted-set", since="1.2.0")
def zadd(ctx: Client, argv: list[bytes]) -> object:
    """ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]"""
    flags: set[bytes] = set()
    i = 2
    while i < len(argv) and argv[i].upper() in _ZADD_FLAGS:
        flags.add(argv[i].upper())
        i += 1
    rest = argv[i:]
    if not rest or len(rest) % 2:
        raise ReplyError(errors.SYNTAX)
    if b"NX" in flags and b"XX" in flags:
        raise ReplyError(errors.ZADD_XX_NX)
    if (b"GT" in flags) + (b"LT" in flags) + (b"NX" in flags) > 1:
        raise ReplyError(errors.ZADD_GT_LT_NX)
    incr = b"INCR" in flags
    if incr and len(rest) > 2:
        raise ReplyError(errors.ZADD_INCR_PAIR)
    scores = [_score_arg(rest[j]) for j in range(0, len(rest), 2)]
    members = rest[1::2]
    key = argv[1]
    z = get_zset(ctx, key)
    if z is None:
        if b"XX" in flags:
            return None if incr else 0
        max_entries, max_value = _limits(ctx)
        z = ZSet()
        z.big = len(members) > max_entries or max(map(len, members)) > max_value
        if max_entries == 0:
            z.big = True
        ctx.db.set(key, z)
    added = changed = 0
    result: float | None = None
    max_entries, max_value = _limits(ctx)
    for score, member in zip(scores, members, strict=True):
        old = z.scores.get(member)
        if old is None:
            if b"XX" in flags:
                continue
            if incr and score != score:
                raise ReplyError(errors.ZSET_NAN_SCORE)
            if not z.big and (len(z.scores) >= max_entries or len(member) > max_value):
                z.big = True  # Redis converts before it inserts the member
            # A listpack holds an integral score as an integer: -0 becomes 0 there; the
            # reply is the score computed, -0 included.
            z.add(member, score if z.big else score + 0.0)
            added += 1
            result = score
            continue
        if b"NX" in flags:
            continue
        new = old + score if incr else score
        if new != new:
            if not z.scores:
                ctx.db.delete(key)
            raise ReplyError(errors.ZSET_NAN_SCORE)
        if (b"GT" in flags and new <= old) or (b"LT" in flags and new >= old):
            continue
        result = new
        if new != old:
            z.add(member, new if z.big else new + 0.0)
            changed += 1
    if not z.scores:
        ctx.db.delete(key)
    if added or changed:
        if not z.big:  # only what is in the set now: XX/NX/GT/LT skip some (never added)
            _note_sizes(ctx, z, [m for m in members if m in z.scores])
        ctx.modified(key)
        ctx.notify(ZSET, b"zincr" if incr else b"zadd", key)
    if incr:
        return result
    return added + changed if b"CH" in flags else added


# ZADD's common form compiled (commands/_zsets.pyx, see rillet/compiled.py);
# `zadd` above (the reference) answers the others, or every form without it.
_zsets = compiled("rillet.commands._zsets")
if _zsets is not None:
    _zsets.bind_zadd(zadd, _score_arg, _note_sizes)
    COMMANDS["zadd"].handler = _zsets.zadd


@command("zincrby", 4, "write denyoom fast", keys=(1, 1, 1), key_flags="RW access update", group="sorted-set", since="1.2.0")
def zincrby(ctx: Client, argv: list[bytes]) -> object:
    """ZINCRBY key increment member"""
    return zadd(ctx, [b"ZADD", argv[1], b"INCR", argv[2], argv[3]])


# --- reads ------------------------------------------------------------------------------------

@command("zcard", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="sorted-set", since="1.2.0")
def zcard(ctx: Client, argv: list[bytes]) -> object:
    """ZCARD key"""
    z = get_zset(ctx, argv[1])
    return 0 if z is None else len(z)


@command("zscore", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="1.2.0")
def zscore(ctx: Client, argv: list[bytes]) -> object:
    """ZSCORE key member"""
    z = get_zset(ctx, argv[1])
    return None if z is None else z.scores.get(argv[2])


@command("zmscore", -3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="6.2.0")
def zmscore(ctx: Client, argv: list[bytes]) -> object:
    """ZMSCORE key member [member ...]"""
    z = get_zset(ctx, argv[1])
    scores = {} if z is None else z.scores
    return [scores.get(m) for m in argv[2:]]


def _zrank(ctx: Client, argv: list[bytes], reverse: bool) -> object:
    if len(argv) > 4:
        raise ReplyError(errors.wrong_arity(argv[0].decode(errors="replace").lower()))
    if len(argv) == 4 and argv[3].upper() != b"WITHSCORE":
        raise ReplyError(errors.SYNTAX)
    withscore = len(argv) == 4
    z = get_zset(ctx, argv[1])
    rank = None if z is None else z.rank(argv[2])
    if rank is None or z is None:
        return NULL_ARRAY if withscore else None
    if reverse:
        rank = len(z) - 1 - rank
    return [rank, z.scores[argv[2]]] if withscore else rank


@command("zrank", -3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.0.0")
def zrank(ctx: Client, argv: list[bytes]) -> object:
    """ZRANK key member [WITHSCORE]"""
    return _zrank(ctx, argv, False)


@command("zrevrank", -3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.0.0")
def zrevrank(ctx: Client, argv: list[bytes]) -> object:
    """ZREVRANK key member [WITHSCORE]"""
    return _zrank(ctx, argv, True)


def _score_range(min_raw: bytes, max_raw: bytes) -> tuple[float, bool, float, bool]:
    out: list[Any] = []
    for raw in (min_raw, max_raw):
        raw = raw.split(b"\0", 1)[0]  # zslParseRange reads a C string: "\x001" is "", 0
        exclusive = raw[:1] == b"("
        value = parse_range_double(raw[1:] if exclusive else raw)
        if value is None:
            raise ReplyError(errors.ZSET_MIN_MAX_FLOAT)
        out += [value, exclusive]
    return out[0], out[1], out[2], out[3]


def _lex_item(raw: bytes) -> tuple[int, bytes]:
    if raw == b"-":
        return -1, b""
    if raw == b"+":
        return 1, b""
    if raw[:1] == b"[":
        return 0, raw[1:]
    if raw[:1] == b"(":
        return 2, raw[1:]
    raise ReplyError(errors.ZSET_MIN_MAX_LEX)


def _lex_range(min_raw: bytes, max_raw: bytes) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
    return _lex_item(min_raw), _lex_item(max_raw)


def _bounds_score(z: ZSet, rng: tuple[float, bool, float, bool]) -> tuple[int, int]:
    low, low_ex, high, high_ex = rng
    if low > high or (low == high and (low_ex or high_ex)):
        return 0, 0
    return z.score_bounds(low, low_ex, high, high_ex)


def _bounds_lex(z: ZSet, rng: tuple[tuple[int, bytes], tuple[int, bytes]],
                reverse: bool = False) -> tuple[int, int]:
    return z.lex_bounds(*rng, reverse=reverse)


def _rank_bounds(n: int, start: int, stop: int) -> tuple[int, int]:
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    start = max(start, 0)
    if start > stop or start >= n:
        return 0, 0
    return start, min(stop, n - 1) + 1


@command("zcount", 4, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.0.0")
def zcount(ctx: Client, argv: list[bytes]) -> object:
    """ZCOUNT key min max"""
    rng = _score_range(argv[2], argv[3])
    z = get_zset(ctx, argv[1])
    if z is None:
        return 0
    lo, hi = _bounds_score(z, rng)
    return hi - lo


@command("zlexcount", 4, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.8.9")
def zlexcount(ctx: Client, argv: list[bytes]) -> object:
    """ZLEXCOUNT key min max"""
    rng = _lex_range(argv[2], argv[3])
    z = get_zset(ctx, argv[1])
    if z is None:
        return 0
    lo, hi = _bounds_lex(z, rng)
    return hi - lo


# --- ZRANGE and its family ----------------------------------------------------------------------

RANK, SCORE, LEX = "rank", "score", "lex"


def _zrange_parse(argv: list[bytes], at: int, rangetype: str | None, reverse: bool | None,
                  store: bool) -> tuple:
    """zrangeGenericCommand steps 1-2: options from `at`+3 on, then the range."""
    withscores = False
    offset, limit = 0, -1
    j = at + 3
    while j < len(argv):
        word = argv[j].upper()
        left = len(argv) - j - 1
        if word == b"WITHSCORES" and not store:
            withscores = True
        elif word == b"LIMIT" and left >= 2:
            offset = parse_int(argv[j + 1])
            limit = parse_int(argv[j + 2])
            j += 2
        elif reverse is None and word == b"REV":
            reverse = True
        elif rangetype is None and word == b"BYLEX":
            rangetype = LEX
        elif rangetype is None and word == b"BYSCORE":
            rangetype = SCORE
        else:
            raise ReplyError(errors.SYNTAX)
        j += 1
    reverse = bool(reverse)
    rangetype = rangetype or RANK
    # Redis checks only the (last) count: `LIMIT <any offset> -1` on ranks is accepted
    # and ignored.
    if limit != -1 and rangetype == RANK:
        raise ReplyError(errors.ZRANGE_LIMIT_RANK)
    if withscores and rangetype == LEX:
        raise ReplyError(errors.ZRANGE_WITHSCORES_LEX)
    min_raw, max_raw = argv[at + 1], argv[at + 2]
    if reverse and rangetype != RANK:
        min_raw, max_raw = max_raw, min_raw
    if rangetype == RANK:
        rng: Any = (parse_int(min_raw), parse_int(max_raw))  # its type follows rangetype
    elif rangetype == SCORE:
        rng = _score_range(min_raw, max_raw)
    else:
        rng = _lex_range(min_raw, max_raw)
    return rangetype, reverse, rng, withscores, offset, limit


def _zrange_pairs(z: ZSet, rangetype: str, reverse: bool, rng: Any, offset: int,
                  limit: int) -> list[tuple[bytes, float]]:
    n = len(z)
    if rangetype == RANK:
        start, stop = rng
        if reverse:
            lo, hi = _rank_bounds(n, start, stop)
            lo, hi = n - hi, n - lo
            return [(m, s) for s, m in reversed(z.order[lo:hi])]
        lo, hi = _rank_bounds(n, start, stop)
        return [(m, s) for s, m in z.order[lo:hi]]
    lo, hi = _bounds_score(z, rng) if rangetype == SCORE else _bounds_lex(z, rng, reverse)
    if offset < 0:
        return []
    if reverse:
        end = hi - offset
        start = lo if limit < 0 else max(lo, end - limit)
        if end <= start:
            return []
        return [(m, s) for s, m in reversed(z.order[start:end])]
    start = lo + offset
    end = hi if limit < 0 else min(hi, start + limit)
    if end <= start:
        return []
    return [(m, s) for s, m in z.order[start:end]]


def _zrange(ctx: Client, argv: list[bytes], rangetype: str | None, reverse: bool | None) -> object:
    rangetype, reverse, rng, withscores, offset, limit = _zrange_parse(argv, 1, rangetype, reverse, False)
    z = get_zset(ctx, argv[1])
    if z is None:
        return []
    return _pairs_reply(ctx, _zrange_pairs(z, rangetype, reverse, rng, offset, limit), withscores)


@command("zrange", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="1.2.0")
def zrange(ctx: Client, argv: list[bytes]) -> object:
    """ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]"""
    return _zrange(ctx, argv, None, None)


@command("zrevrange", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="1.2.0")
def zrevrange(ctx: Client, argv: list[bytes]) -> object:
    """ZREVRANGE key start stop [WITHSCORES]"""
    return _zrange(ctx, argv, RANK, True)


@command("zrangebyscore", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="1.0.5")
def zrangebyscore(ctx: Client, argv: list[bytes]) -> object:
    """ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]"""
    return _zrange(ctx, argv, SCORE, False)


@command("zrevrangebyscore", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.2.0")
def zrevrangebyscore(ctx: Client, argv: list[bytes]) -> object:
    """ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]"""
    return _zrange(ctx, argv, SCORE, True)


@command("zrangebylex", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.8.9")
def zrangebylex(ctx: Client, argv: list[bytes]) -> object:
    """ZRANGEBYLEX key min max [LIMIT offset count]"""
    return _zrange(ctx, argv, LEX, False)


@command("zrevrangebylex", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.8.9")
def zrevrangebylex(ctx: Client, argv: list[bytes]) -> object:
    """ZREVRANGEBYLEX key max min [LIMIT offset count]"""
    return _zrange(ctx, argv, LEX, True)


def _store_zset(ctx: Client, dst: bytes, scores: dict[bytes, float], event: bytes) -> int:
    """Replace `dst` with a new sorted set (deleted if empty), encoded as Redis builds it."""
    if scores:
        z = ZSet.from_dict(scores)
        z.big = z.fresh_big(*_limits(ctx))
        if not z.big and any(s == 0 for s in scores.values()):
            z = ZSet.from_dict({m: s + 0.0 for m, s in scores.items()})  # a listpack's -0 is 0
        ctx.db.set(dst, z)
        ctx.modified(dst)
        ctx.notify(ZSET, event, dst)
    elif ctx.db.delete(dst):
        ctx.modified(dst)
        ctx.notify(GENERIC, b"del", dst)
    return len(scores)


@command("zrangestore", -5, "write denyoom", keys=(1, 2, 1), key_flags="OW update|RO access", group="sorted-set", since="6.2.0")
def zrangestore(ctx: Client, argv: list[bytes]) -> object:
    """ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]"""
    rangetype, reverse, rng, _, offset, limit = _zrange_parse(argv, 2, None, None, True)
    z = get_zset(ctx, argv[2])
    pairs = [] if z is None else _zrange_pairs(z, rangetype, reverse, rng, offset, limit)
    return _store_zset(ctx, argv[1], dict(pairs), b"zrangestore")


# --- removal ---------------------------------------------------------------------------------

@command("zrem", -3, "write fast", keys=(1, 1, 1), key_flags="RW delete", group="sorted-set", since="1.2.0")
def zrem(ctx: Client, argv: list[bytes]) -> object:
    """ZREM key member [member ...]"""
    z = get_zset(ctx, argv[1])
    if z is None:
        return 0
    removed = sum(z.remove(m) for m in argv[2:])
    if removed:
        _written(ctx, argv[1], z, b"zrem")
    return removed


def _remove_slice(ctx: Client, key: bytes, z: ZSet, event: bytes, lo: int, hi: int) -> int:
    if hi <= lo:
        return 0
    for _, m in z.order[lo:hi]:
        del z.scores[m]
    del z.order[lo:hi]
    _written(ctx, key, z, event)
    return hi - lo


@command("zremrangebyrank", 4, "write", keys=(1, 1, 1), key_flags="RW delete", group="sorted-set", since="2.0.0")
def zremrangebyrank(ctx: Client, argv: list[bytes]) -> object:
    """ZREMRANGEBYRANK key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    z = get_zset(ctx, argv[1])
    if z is None:
        return 0
    return _remove_slice(ctx, argv[1], z, b"zremrangebyrank", *_rank_bounds(len(z), start, stop))


@command("zremrangebyscore", 4, "write", keys=(1, 1, 1), key_flags="RW delete", group="sorted-set", since="1.2.0")
def zremrangebyscore(ctx: Client, argv: list[bytes]) -> object:
    """ZREMRANGEBYSCORE key min max"""
    rng = _score_range(argv[2], argv[3])
    z = get_zset(ctx, argv[1])
    if z is None:
        return 0
    return _remove_slice(ctx, argv[1], z, b"zremrangebyscore", *_bounds_score(z, rng))


@command("zremrangebylex", 4, "write", keys=(1, 1, 1), key_flags="RW delete", group="sorted-set", since="2.8.9")
def zremrangebylex(ctx: Client, argv: list[bytes]) -> object:
    """ZREMRANGEBYLEX key min max"""
    rng = _lex_range(argv[2], argv[3])
    z = get_zset(ctx, argv[1])
    if z is None:
        return 0
    return _remove_slice(ctx, argv[1], z, b"zremrangebylex", *_bounds_lex(z, rng))


# --- pops ------------------------------------------------------------------------------------

def _pop_pairs(ctx: Client, key: bytes, z: ZSet, maximum: bool, count: int) -> list[tuple[bytes, float]]:
    count = min(count, len(z))
    if maximum:
        taken = z.order[len(z.order) - count:][::-1]
        del z.order[len(z.order) - count:]
    else:
        taken = z.order[:count]
        del z.order[:count]
    for _, m in taken:
        del z.scores[m]
    _written(ctx, key, z, b"zpopmax" if maximum else b"zpopmin")
    ctx.propagate([b"ZPOPMAX" if maximum else b"ZPOPMIN", key, b"%d" % count])
    return [(m, s) for s, m in taken]


def _zpop(ctx: Client, argv: list[bytes], maximum: bool) -> object:
    if len(argv) > 3:
        raise ReplyError(errors.SYNTAX)
    count = None
    if len(argv) == 3:
        count = parse_int(argv[2], errors.COUNT_MUST_BE_POSITIVE)
        if count < 0:
            raise ReplyError(errors.COUNT_MUST_BE_POSITIVE)
    z = get_zset(ctx, argv[1])
    if z is None or count == 0:
        return []
    pairs = _pop_pairs(ctx, argv[1], z, maximum, 1 if count is None else count)
    if count is None or not ctx.resp3:
        return [x for m, s in pairs for x in (m, s)]
    return [[m, s] for m, s in pairs]


@command("zpopmin", -2, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="sorted-set", since="5.0.0")
def zpopmin(ctx: Client, argv: list[bytes]) -> object:
    """ZPOPMIN key [count]"""
    return _zpop(ctx, argv, False)


@command("zpopmax", -2, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="sorted-set", since="5.0.0")
def zpopmax(ctx: Client, argv: list[bytes]) -> object:
    """ZPOPMAX key [count]"""
    return _zpop(ctx, argv, True)


def _minmax(word: bytes) -> bool:
    upper = word.upper()
    if upper == b"MIN":
        return False
    if upper == b"MAX":
        return True
    raise ReplyError(errors.SYNTAX)


def _to_serve(ctx: Client, key: bytes) -> ZSet | None:
    if ctx.blocked_retry:
        value = ctx.db.get(key)
        return value if value.__class__ is ZSet else None
    return get_zset(ctx, key)


def _zmpop(ctx: Client, keys: list[bytes], maximum: bool, count: int) -> object:
    for key in keys:
        z = _to_serve(ctx, key)
        if z is not None:
            pairs = _pop_pairs(ctx, key, z, maximum, count)
            return [key, [[m, s] for m, s in pairs]]
    return None


@command("zmpop", -4, "write movablekeys", keys=(0, 0, 0), group="sorted-set", since="7.0.0")
def zmpop(ctx: Client, argv: list[bytes]) -> object:
    """ZMPOP numkeys key [key ...] <MIN | MAX> [COUNT count]"""
    keys, maximum, count = parse_mpop(argv, 1, _minmax)
    found = _zmpop(ctx, keys, maximum, count)
    return NULL_ARRAY if found is None else found


def _bzpop(ctx: Client, argv: list[bytes], maximum: bool) -> object:
    timeout_ms = parse_timeout(ctx, argv[-1])
    keys = argv[1:-1]
    for key in keys:
        z = _to_serve(ctx, key)
        if z is not None:
            (m, s), = _pop_pairs(ctx, key, z, maximum, 1)
            return [key, m, s]
    if ctx.blocked_retry:
        return KEEP_WAITING
    return Block(list(keys), timeout_ms, list(argv), NULL_ARRAY)


@command("bzpopmin", -3, "write blocking fast", keys=(1, -2, 1), key_flags="RW access delete", group="sorted-set", since="5.0.0")
def bzpopmin(ctx: Client, argv: list[bytes]) -> object:
    """BZPOPMIN key [key ...] timeout"""
    return _bzpop(ctx, argv, False)


@command("bzpopmax", -3, "write blocking fast", keys=(1, -2, 1), key_flags="RW access delete", group="sorted-set", since="5.0.0")
def bzpopmax(ctx: Client, argv: list[bytes]) -> object:
    """BZPOPMAX key [key ...] timeout"""
    return _bzpop(ctx, argv, True)


@command("bzmpop", -5, "write blocking movablekeys", keys=(0, 0, 0), group="sorted-set", since="7.0.0")
def bzmpop(ctx: Client, argv: list[bytes]) -> object:
    """BZMPOP timeout numkeys key [key ...] <MIN | MAX> [COUNT count]"""
    keys, maximum, count = parse_mpop(argv, 2, _minmax)
    timeout_ms = parse_timeout(ctx, argv[1])  # after numkeys, the side and COUNT, as Redis
    found = _zmpop(ctx, keys, maximum, count)
    if found is not None:
        return found
    if ctx.blocked_retry:
        return KEEP_WAITING
    return Block(list(keys), timeout_ms, list(argv), NULL_ARRAY)


# --- random, scan -------------------------------------------------------------------------------

@command("zrandmember", -2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="6.2.0")
def zrandmember(ctx: Client, argv: list[bytes]) -> object:
    """ZRANDMEMBER key [count [WITHSCORES]]"""
    if len(argv) == 2:
        z = get_zset(ctx, argv[1])
        return None if z is None else pick(list(z.scores), 1, False)[0]
    count, repeats = random_count(argv[2])  # the count, then the syntax, as Redis
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHSCORES"):
        raise ReplyError(errors.SYNTAX)
    withscores = len(argv) == 4
    if withscores and count > INT64_MAX // 2:  # either sign, as Redis (the reply doubles)
        raise ReplyError(errors.VALUE_OUT_OF_RANGE)
    z = get_zset(ctx, argv[1])
    if z is None or count == 0:
        return []
    chosen = pick(list(z.scores), count, repeats)
    return _pairs_reply(ctx, [(m, z.scores[m]) for m in chosen], withscores)


@command("zscan", -3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="sorted-set", since="2.8.0")
def zscan(ctx: Client, argv: list[bytes]) -> object:
    """ZSCAN key cursor [MATCH pattern] [COUNT count]"""
    parse_cursor(argv[2])  # the cursor, then the key, then the options, as Redis
    z = get_zset(ctx, argv[1])
    if z is None:
        return [b"0", []]
    cursor, pattern, count, _ = parse_scan(argv)
    members = [m for _, m in z.order] if not z.big else list(z.scores)
    next_cursor, found = scan_members(members, cursor, count, not z.big, pattern)
    return [b"%d" % next_cursor, [x for m in found for x in (m, format_double(z.scores[m]))]]


# --- algebra ------------------------------------------------------------------------------------

def _source(ctx: Client, key: bytes) -> dict[bytes, float] | None:
    value = ctx.db.get(key)
    if value is None:
        return None
    if value.__class__ is ZSet:
        return value.scores
    if value.__class__ is Set:
        return dict.fromkeys(value.members, 1.0)
    raise ReplyError(errors.WRONGTYPE)


def _nan_zero(x: float) -> float:
    return 0.0 if x != x else x


def _aggregate(kind: bytes, a: float, b: float) -> float:
    if kind == b"SUM":
        return _nan_zero(a + b)
    return min(a, b) if kind == b"MIN" else max(a, b)


def _algebra(ctx: Client, argv: list[bytes], at: int, op: str, name: str, store: bool) -> tuple[dict[bytes, float], bool]:
    """numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX|COUNT] [WITHSCORES] from `at`."""
    n = parse_int(argv[at])
    if n < 1:
        raise ReplyError(errors.ZSET_NEED_KEY.format(name))
    if n > len(argv) - at - 1:
        raise ReplyError(errors.SYNTAX)
    keys = argv[at + 1:at + 1 + n]
    sources = [_source(ctx, k) for k in keys]  # types are checked before the options
    weights = [1.0] * n
    aggregate = b"SUM"
    withscores = False
    i = at + 1 + n
    while i < len(argv):
        word = argv[i].upper()
        left = len(argv) - i - 1
        if op != "diff" and word == b"WEIGHTS" and left >= n:
            for j in range(n):
                w = parse_score(argv[i + 1 + j])
                if w is None:
                    raise ReplyError(errors.ZSET_WEIGHT_FLOAT)
                weights[j] = w
            i += n + 1
        elif op != "diff" and word == b"AGGREGATE" and left >= 1:
            kind = argv[i + 1].upper()
            if kind not in (b"SUM", b"MIN", b"MAX", b"COUNT"):
                raise ReplyError(errors.SYNTAX)
            aggregate = kind
            i += 2
        elif not store and word == b"WITHSCORES":
            withscores = True
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
    if aggregate == b"COUNT":
        # Redis 8.8: the scores are ignored, each input adds its weight for each member.
        sources = [None if s is None else dict.fromkeys(s, 1.0) for s in sources]
        aggregate = b"SUM"
    result: dict[bytes, float] = {}
    if op == "union":
        # Redis sorts the inputs by size first (a stable sort in glibc's qsort), which
        # sets the order a member's scores are summed in: floats round per order.
        for j in sorted(range(n), key=lambda j: len(sources[j] or ())):
            src, w = sources[j], weights[j]
            if src is None:
                continue
            for m, s in src.items():
                v = _nan_zero(s * w)
                result[m] = _aggregate(aggregate, result[m], v) if m in result else v
    elif op == "inter":
        if any(s is None for s in sources):
            return {}, withscores
        inputs = cast(list[dict[bytes, float]], sources)  # (none is None)
        order = sorted(range(n), key=lambda j: len(inputs[j]))
        first = order[0]
        for m, s in inputs[first].items():
            v = _nan_zero(s * weights[first])
            ok = True
            for j in order[1:]:
                other = inputs[j].get(m)
                if other is None:
                    ok = False
                    break
                # The product is not zeroed when NaN (only the first input's is, and a
                # SUM's NaN result): with MIN/MAX a NaN loses, with SUM it makes a 0.
                v = _aggregate(aggregate, v, other * weights[j])
            if ok:
                result[m] = v
    else:
        base = sources[0]
        if base is not None:
            others = [s for s in sources[1:] if s is not None]
            result = {m: s for m, s in base.items() if not any(m in o for o in others)}
    return result, withscores


def _algebra_reply(ctx: Client, result: dict[bytes, float], withscores: bool) -> object:
    pairs = sorted(((s, m) for m, s in result.items()))
    return _pairs_reply(ctx, [(m, s) for s, m in pairs], withscores)


@command("zunion", -3, "readonly movablekeys", keys=(0, 0, 0), group="sorted-set", since="6.2.0")
def zunion(ctx: Client, argv: list[bytes]) -> object:
    """ZUNION numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX | COUNT>] [WITHSCORES]"""
    return _algebra_reply(ctx, *_algebra(ctx, argv, 1, "union", "zunion", False))


@command("zinter", -3, "readonly movablekeys", keys=(0, 0, 0), group="sorted-set", since="6.2.0")
def zinter(ctx: Client, argv: list[bytes]) -> object:
    """ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX | COUNT>] [WITHSCORES]"""
    return _algebra_reply(ctx, *_algebra(ctx, argv, 1, "inter", "zinter", False))


@command("zdiff", -3, "readonly movablekeys", keys=(0, 0, 0), group="sorted-set", since="6.2.0")
def zdiff(ctx: Client, argv: list[bytes]) -> object:
    """ZDIFF numkeys key [key ...] [WITHSCORES]"""
    return _algebra_reply(ctx, *_algebra(ctx, argv, 1, "diff", "zdiff", False))


@command("zunionstore", -4, "write denyoom movablekeys", keys=(1, 1, 1), key_flags="OW update|RO access", group="sorted-set", since="2.0.0")
def zunionstore(ctx: Client, argv: list[bytes]) -> object:
    """ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX | COUNT>]"""
    return _store_zset(ctx, argv[1], _algebra(ctx, argv, 2, "union", "zunionstore", True)[0],
                       b"zunionstore")


@command("zinterstore", -4, "write denyoom movablekeys", keys=(1, 1, 1), key_flags="OW update|RO access", group="sorted-set", since="2.0.0")
def zinterstore(ctx: Client, argv: list[bytes]) -> object:
    """ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX | COUNT>]"""
    return _store_zset(ctx, argv[1], _algebra(ctx, argv, 2, "inter", "zinterstore", True)[0],
                       b"zinterstore")


@command("zdiffstore", -4, "write denyoom movablekeys", keys=(1, 1, 1), key_flags="OW update|RO access", group="sorted-set", since="6.2.0")
def zdiffstore(ctx: Client, argv: list[bytes]) -> object:
    """ZDIFFSTORE destination numkeys key [key ...]"""
    return _store_zset(ctx, argv[1], _algebra(ctx, argv, 2, "diff", "zdiffstore", True)[0],
                       b"zdiffstore")


@command("zintercard", -3, "readonly movablekeys", keys=(0, 0, 0), group="sorted-set", since="7.0.0")
def zintercard(ctx: Client, argv: list[bytes]) -> object:
    """ZINTERCARD numkeys key [key ...] [LIMIT limit]"""
    n = parse_int(argv[1])
    if n < 1:
        raise ReplyError(errors.ZSET_NEED_KEY.format("zintercard"))
    if n > len(argv) - 2:
        raise ReplyError(errors.SYNTAX)
    keys = argv[2:2 + n]
    sources = [_source(ctx, k) for k in keys]  # types before the options, as ZINTER
    limit = 0
    i = 2 + len(keys)
    while i < len(argv):
        if argv[i].upper() == b"LIMIT" and i + 1 < len(argv):
            limit = parse_int(argv[i + 1], errors.LIMIT_NEGATIVE)
            if limit < 0:
                raise ReplyError(errors.LIMIT_NEGATIVE)
            i += 2
        else:
            raise ReplyError(errors.SYNTAX)
    if any(s is None for s in sources):
        return 0
    inputs = cast(list[dict[bytes, float]], sources)  # (none is None)
    inputs.sort(key=len)
    count = 0
    for m in inputs[0]:
        if all(m in s for s in inputs[1:]):
            count += 1
            if limit and count >= limit:
                break
    return count
