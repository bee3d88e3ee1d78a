"""Helpers shared by the collection commands (hashes, lists, sets, sorted sets).

Typed lookups with WRONGTYPE, the encoding limits read from the config, the
*SCAN argument parser and cursor, and random picks as Redis makes them.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable, Sized
from typing import TypeVar

from rillet import errors
from rillet.commands.args import parse_int
from rillet.engine.ids import string2ull
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.state import Client

T = TypeVar("T")


def lookup(ctx: Client, key: bytes, cls: type[T]) -> T | None:
    """The value at `key` if it is a `cls`, None if missing, WRONGTYPE otherwise."""
    value = ctx.db.get(key)
    if value is None or value.__class__ is cls:
        return value  # (its class is cls: mypy cannot see it)
    raise ReplyError(errors.WRONGTYPE)


def store(ctx: Client, key: bytes, value: object, keep_ttl: bool = False) -> None:
    ctx.db.set(key, value, keep_ttl=keep_ttl)


def drop_if_empty(ctx: Client, key: bytes, value: Sized) -> None:
    if not len(value):
        ctx.db.delete(key)


def config_int(ctx: Client, name: str) -> int:
    """An int parameter by its canonical name. Read straight from `Config.values` (which
    holds ints for int parameters): a write command reads two or three of these per call,
    and the alias resolution of `Config[name]` was a tenth of an HSET's time."""
    value: int = ctx.server.config.values[name]
    return value


def server_del(ctx: Client, key: bytes) -> list[bytes]:
    """The effect of a delete the server decides on (SPOP of a whole set, RESTORE of a
    key already expired): UNLINK under `lazyfree-lazy-server-del`, else DEL, as Redis
    propagates it (shared.unlink / shared.del)."""
    return [b"UNLINK" if ctx.server.config.values["lazyfree-lazy-server-del"] else b"DEL", key]


# --- *SCAN -------------------------------------------------------------------------

def parse_cursor(raw: bytes) -> int:
    """Redis's parseScanCursorOrReply: string2ull of the C string (up to a NUL byte),
    which takes what C's strtoull takes where string2ll fails (leading spaces, '+',
    leading zeros, "-0", a '-' that wraps around 2**64). SCAN's and the typed SCANs'."""
    cursor = string2ull(raw.split(b"\0", 1)[0])
    if cursor is None:
        raise ReplyError(errors.INVALID_CURSOR)
    return cursor


_ONLY_IN = {b"NOVALUES": errors.NOVALUES_ONLY_HSCAN}


def parse_scan(argv: list[bytes], flags: tuple[bytes, ...] = ()) -> tuple[int, bytes | None, int, set[bytes]]:
    """KEY cursor [MATCH pattern] [COUNT count] [flag...]: (cursor, pattern, count, flags)."""
    cursor = parse_cursor(argv[2])
    pattern = None
    count = 10
    seen: set[bytes] = set()
    i = 3
    while i < len(argv):
        word = argv[i].upper()
        if word in flags:
            seen.add(word)
            i += 1
            continue
        if word in _ONLY_IN:
            raise ReplyError(_ONLY_IN[word])
        if i + 1 >= len(argv):
            raise ReplyError(errors.SYNTAX)
        if word == b"MATCH":
            pattern = argv[i + 1]
        elif word == b"COUNT":
            count = parse_int(argv[i + 1])
            if count < 1:
                raise ReplyError(errors.SYNTAX)
        else:
            raise ReplyError(errors.SYNTAX)
        i += 2
    return cursor, pattern, count, seen


def _slot(member: bytes) -> int:
    return hash(member) & 0xFFFFFFFFFFFF


def scan_members(members: Iterable[bytes], cursor: int, count: int, compact: bool,
                 pattern: bytes | None) -> tuple[int, list[bytes]]:
    """One *SCAN step: a compact value answers whole (cursor 0), as Redis's listpacks do.

    A large one is walked in order of a per-process hash of each member; the
    cursor is the next hash, so a member present throughout is returned once.
    """
    if compact:
        found = list(members)
        next_cursor = 0
    else:
        candidates = [(h, m) for m in members if (h := _slot(m)) >= cursor]
        chosen = heapq.nsmallest(count, candidates)
        if len(chosen) < len(candidates) and chosen:
            last = chosen[-1][0]
            chosen += [c for c in candidates if c[0] == last and c not in chosen]
            next_cursor = last + 1
        else:
            next_cursor = 0
        found = [m for _, m in chosen]
    if pattern is not None and pattern != b"*":
        found = [m for m in found if glob_match(pattern, m)]
    return next_cursor, found


# --- random picks --------------------------------------------------------------------

def random_count(raw: bytes) -> tuple[int, bool]:
    """*RANDMEMBER/HRANDFIELD's count: (abs count, repeats allowed), Redis's range error."""
    count = parse_int(raw)
    if count == -(2**63):
        raise ReplyError(errors.RANDOM_COUNT_RANGE)
    return abs(count), count < 0


def pick(items: list[T], count: int, repeats: bool) -> list[T]:
    if repeats:
        return [random.choice(items) for _ in range(count)] if items else []
    if count >= len(items):
        return list(items)
    return random.sample(items, count)
