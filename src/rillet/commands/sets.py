"""Set commands: SADD ... SSCAN, the algebra (SINTER/SUNION/SDIFF, *STORE, SINTERCARD).

Replies list members in Redis's order where it is defined by the encoding:
an intset ascending by value, a listpack in insertion order. SPOP's effect
is SREM of the members it chose (the choice is random).
"""

from __future__ import annotations

import random
from typing import cast

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import COMMANDS, command
from rillet.commands.typed import (
    config_int,
    lookup,
    parse_cursor,
    parse_scan,
    pick,
    random_count,
    scan_members,
    server_del,
)
from rillet.compiled import compiled
from rillet.engine.sets import HASHTABLE, INTSET, LISTPACK, Set, is_int64
from rillet.errors import ReplyError
from rillet.notify import GENERIC, SET
from rillet.resp.types import SetReply
from rillet.state import Client


def limits(ctx: Client) -> tuple[int, int, int]:
    return (config_int(ctx, "set-max-intset-entries"), config_int(ctx, "set-max-listpack-entries"),
            config_int(ctx, "set-max-listpack-value"))


def get_set(ctx: Client, key: bytes) -> Set | None:
    return lookup(ctx, key, Set)


def ordered(s: Set) -> list[bytes]:
    """Members in the order Redis's encoding yields them."""
    if s.kind == INTSET:
        return sorted(s.members, key=int)
    return list(s.members)


def _reply(ctx: Client, members: list[bytes]) -> object:
    return SetReply(members) if ctx.resp3 else members


def new_set(ctx: Client, members: list[bytes]) -> Set:
    """A set built by adding `members` one by one to an empty intset (Redis's *STORE)."""
    s = Set()
    for m in members:
        s.add(m)
    s.note_added(members, limits(ctx))
    return s


@command("sadd", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW insert", group="set", since="1.0.0")
def sadd(ctx: Client, argv: list[bytes]) -> object:
    """SADD key member [member ...]"""
    key = argv[1]
    s = get_set(ctx, key)
    members = argv[2:]
    if s is None:
        s = Set()
        # setTypeCreate: sized by the number of arguments.
        lim = limits(ctx)
        if is_int64(members[0]) and len(members) <= lim[0]:
            s.kind = INTSET
        elif len(members) <= lim[1]:
            s.kind = LISTPACK
        else:
            s.kind = HASHTABLE
        ctx.db.set(key, s)
    added = [m for m in members if s.add(m)]
    s.note_added(added, limits(ctx))
    if added:
        ctx.modified(key)
        ctx.notify(SET, b"sadd", key)
    return len(added)


@command("srem", -3, "write fast", keys=(1, 1, 1), key_flags="RW delete", group="set", since="1.0.0")
def srem(ctx: Client, argv: list[bytes]) -> object:
    """SREM key member [member ...]"""
    s = get_set(ctx, argv[1])
    if s is None:
        return 0
    removed = sum(s.remove(m) for m in argv[2:])
    if removed:
        ctx.notify(SET, b"srem", argv[1])
        if not s.members:
            ctx.db.delete(argv[1])
            ctx.notify(GENERIC, b"del", argv[1])
        ctx.modified(argv[1])
    return removed


@command("scard", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="set", since="1.0.0")
def scard(ctx: Client, argv: list[bytes]) -> object:
    """SCARD key"""
    s = get_set(ctx, argv[1])
    return 0 if s is None else len(s)


@command("sismember", 3, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="set", since="1.0.0")
def sismember(ctx: Client, argv: list[bytes]) -> object:
    """SISMEMBER key member"""
    s = get_set(ctx, argv[1])
    return int(s is not None and argv[2] in s.members)


@command("smismember", -3, "readonly fast", keys=(1, 1, 1), key_flags="RO access", group="set", since="6.2.0")
def smismember(ctx: Client, argv: list[bytes]) -> object:
    """SMISMEMBER key member [member ...]"""
    s = get_set(ctx, argv[1])
    members = {} if s is None else s.members
    return [int(m in members) for m in argv[2:]]


@command("smembers", 2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="set", since="1.0.0")
def smembers(ctx: Client, argv: list[bytes]) -> object:
    """SMEMBERS key"""
    s = get_set(ctx, argv[1])
    return _reply(ctx, [] if s is None else ordered(s))


@command("srandmember", -2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="set", since="1.0.0")
def srandmember(ctx: Client, argv: list[bytes]) -> object:
    """SRANDMEMBER key [count]"""
    if len(argv) > 3:
        raise ReplyError(errors.SYNTAX)
    if len(argv) == 2:
        s = get_set(ctx, argv[1])
        return None if s is None else random.choice(list(s.members))
    count, repeats = random_count(argv[2])
    s = get_set(ctx, argv[1])
    if s is None or count == 0:
        return []
    chosen = pick(list(s.members), count, repeats)
    if not repeats and s.kind == INTSET:
        chosen.sort(key=int)
    return chosen


@command("spop", -2, "write fast", keys=(1, 1, 1), key_flags="RW access delete", group="set", since="1.0.0")
def spop(ctx: Client, argv: list[bytes]) -> object:
    """SPOP key [count]"""
    if len(argv) > 3:
        raise ReplyError(errors.SYNTAX)
    count = None
    if len(argv) == 3:
        count = parse_int(argv[2], errors.COUNT_MUST_BE_POSITIVE)
        if count < 0:
            raise ReplyError(errors.COUNT_MUST_BE_POSITIVE)
    s = get_set(ctx, argv[1])
    if s is None:
        return None if count is None else _reply(ctx, [])
    if count == 0:
        return _reply(ctx, [])
    whole = count is not None and count >= len(s.members)
    chosen = pick(list(s.members), 1 if count is None else count, False)
    for m in chosen:
        s.remove(m)
    ctx.notify(SET, b"spop", argv[1])
    if not s.members:
        ctx.db.delete(argv[1])
        ctx.notify(GENERIC, b"del", argv[1])
    ctx.modified(argv[1], len(chosen))
    # spopWithCountCommand: the whole set goes as one DEL (or UNLINK), not its members.
    ctx.propagate(server_del(ctx, argv[1]) if whole else [b"SREM", argv[1], *chosen])
    return chosen[0] if count is None else _reply(ctx, chosen)


@command("smove", 4, "write fast", keys=(1, 2, 1), key_flags="RW access delete|RW insert", group="set", since="1.0.0")
def smove(ctx: Client, argv: list[bytes]) -> object:
    """SMOVE source destination member"""
    src_key, dst_key, member = argv[1], argv[2], argv[3]
    if ctx.db.get(src_key) is None:
        return 0
    src = get_set(ctx, src_key)
    dst = get_set(ctx, dst_key)
    if src is None or member not in src.members:
        return 0
    if src_key == dst_key:
        return 1
    src.remove(member)
    ctx.notify(SET, b"srem", src_key)
    if not src.members:
        ctx.db.delete(src_key)
        ctx.notify(GENERIC, b"del", src_key)
    ctx.modified(src_key)
    if dst is None:
        dst = new_set(ctx, [])
        ctx.db.set(dst_key, dst)
    if dst.add(member):
        dst.note_added([member], limits(ctx))
        ctx.notify(SET, b"sadd", dst_key)
    ctx.modified(dst_key)
    return 1


@command("sscan", -3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="set", since="2.8.0")
def sscan(ctx: Client, argv: list[bytes]) -> object:
    """SSCAN key cursor [MATCH pattern] [COUNT count]"""
    parse_cursor(argv[2])  # the cursor, then the key, then the options, as Redis
    s = get_set(ctx, argv[1])
    if s is None:
        return [b"0", []]
    cursor, pattern, count, _ = parse_scan(argv)
    next_cursor, found = scan_members(ordered(s), cursor, count, s.kind != HASHTABLE, pattern)
    return [b"%d" % next_cursor, found]


# --- algebra -------------------------------------------------------------------------------

def _sets(ctx: Client, keys: list[bytes]) -> list[Set | None]:
    return [get_set(ctx, k) for k in keys]


def _inter(sets: list[Set | None], limit: int = 0) -> list[bytes]:
    if any(s is None for s in sets):
        return []
    ordered_sets = sorted(cast(list[Set], sets), key=len)  # (none is None)
    first, rest = ordered_sets[0], ordered_sets[1:]
    out = []
    for m in ordered(first):
        if all(m in s.members for s in rest):
            out.append(m)
            if limit and len(out) >= limit:
                break
    return out


def _union(sets: list[Set | None]) -> list[bytes]:
    out: dict[bytes, None] = {}
    for s in sets:
        if s is not None:
            out.update(dict.fromkeys(ordered(s)))  # an intset's members sorted, as Redis walks it
    return list(out)


def _diff(sets: list[Set | None]) -> list[bytes]:
    first = sets[0]
    if first is None:
        return []
    others = [s for s in sets[1:] if s is not None]
    return [m for m in ordered(first) if not any(m in s.members for s in others)]


def _algebra_reply(ctx: Client, members: list[bytes]) -> object:
    return _reply(ctx, ordered(new_set(ctx, members)))


def _store(ctx: Client, dst: bytes, members: list[bytes], event: bytes) -> int:
    existed = ctx.db.get(dst) is not None
    if members:
        ctx.db.set(dst, new_set(ctx, members))
        ctx.modified(dst)
        ctx.notify(SET, event, dst)
    elif existed:
        ctx.db.delete(dst)
        ctx.modified(dst)
        ctx.notify(GENERIC, b"del", dst)
    return len(members)


@command("sinter", -2, "readonly", keys=(1, -1, 1), key_flags="RO access", group="set", since="1.0.0")
def sinter(ctx: Client, argv: list[bytes]) -> object:
    """SINTER key [key ...]"""
    return _reply(ctx, _inter(_sets(ctx, argv[1:])))


@command("sunion", -2, "readonly", keys=(1, -1, 1), key_flags="RO access", group="set", since="1.0.0")
def sunion(ctx: Client, argv: list[bytes]) -> object:
    """SUNION key [key ...]"""
    return _algebra_reply(ctx, _union(_sets(ctx, argv[1:])))


@command("sdiff", -2, "readonly", keys=(1, -1, 1), key_flags="RO access", group="set", since="1.0.0")
def sdiff(ctx: Client, argv: list[bytes]) -> object:
    """SDIFF key [key ...]"""
    return _algebra_reply(ctx, _diff(_sets(ctx, argv[1:])))


@command("sinterstore", -3, "write denyoom", keys=(1, -1, 1), key_flags="OW update|RO access", group="set", since="1.0.0")
def sinterstore(ctx: Client, argv: list[bytes]) -> object:
    """SINTERSTORE destination key [key ...]"""
    return _store(ctx, argv[1], _inter(_sets(ctx, argv[2:])), b"sinterstore")


@command("sunionstore", -3, "write denyoom", keys=(1, -1, 1), key_flags="OW update|RO access", group="set", since="1.0.0")
def sunionstore(ctx: Client, argv: list[bytes]) -> object:
    """SUNIONSTORE destination key [key ...]"""
    return _store(ctx, argv[1], _union(_sets(ctx, argv[2:])), b"sunionstore")


@command("sdiffstore", -3, "write denyoom", keys=(1, -1, 1), key_flags="OW update|RO access", group="set", since="1.0.0")
def sdiffstore(ctx: Client, argv: list[bytes]) -> object:
    """SDIFFSTORE destination key [key ...]"""
    return _store(ctx, argv[1], _diff(_sets(ctx, argv[2:])), b"sdiffstore")


def parse_numkeys(argv: list[bytes], at: int) -> list[bytes]:
    """numkeys key [key ...] at `at`: the keys, with Redis's errors."""
    n = parse_int(argv[at], errors.NUMKEYS_POSITIVE)
    if n <= 0:
        raise ReplyError(errors.NUMKEYS_POSITIVE)
    if n > len(argv) - at - 1:
        raise ReplyError(errors.NUMKEYS_TOO_MANY)
    return argv[at + 1:at + 1 + n]


@command("sintercard", -3, "readonly movablekeys", keys=(0, 0, 0), group="set", since="7.0.0")
def sintercard(ctx: Client, argv: list[bytes]) -> object:
    """SINTERCARD numkeys key [key ...] [LIMIT limit]"""
    keys = parse_numkeys(argv, 1)
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
    return len(_inter(_sets(ctx, keys), limit))


# SADD onto a big set compiled (commands/_sets.pyx, see rillet/compiled.py);
# `sadd` above (the reference) answers the other forms, or every form without it.
_compiled_sadd = compiled("rillet.commands._sets")  # (sets.py has a function `_sets`)
if _compiled_sadd is not None:
    _compiled_sadd.bind(sadd)
    COMMANDS["sadd"].handler = _compiled_sadd.sadd
