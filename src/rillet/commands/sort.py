"""SORT and SORT_RO on lists, sets and sorted sets (Redis's sort.c).

The rules kept from Redis, since clients see them:
- numeric order compares doubles read as Redis's fast_float reads them, ties
  broken by the bytes of the elements; ALPHA compares bytes (C strcoll in the C
  locale: up to the first NUL byte), except with STORE, which compares whole
  values; a missing BY value sorts as 0 (numeric) or first (ALPHA);
- glibc's qsort is a stable merge sort, so equal ALPHA BY values keep the
  order the elements were loaded in; with BY and a LIMIT that cuts the range
  Redis runs its own partial quicksort (pqsort.c, engine/pqsort.py), whose order of
  equal values is its own;
- `BY` without `*` does not sort: lists and sorted sets keep their order
  (DESC reverses it), a set keeps its iteration order, except with STORE or
  inside a script, where it is sorted ALPHA so that the result is deterministic;
- a sorted set is converted to `skiplist`, even by SORT_RO (zsetConvert);
- BY and GET patterns other than `#` need read access to every key.

SORT ... STORE leaves as its result, not as itself: DEL of the destination and
RPUSH of the stored elements, deterministic whatever the patterns read.
"""

from __future__ import annotations

import re
from typing import Any

from rillet import acl, errors
from rillet.cluster.keyslot import key_slot, pattern_slot
from rillet.commands import table
from rillet.commands.args import parse_int
from rillet.commands.hashes import get_hash
from rillet.commands.sets import ordered
from rillet.commands.table import command
from rillet.commands.typed import config_int
from rillet.engine.hashes import Hash
from rillet.engine.lists import List
from rillet.engine.pqsort import pqsort
from rillet.engine.sets import Set
from rillet.engine.zsets import ZSet
from rillet.errors import ReplyError
from rillet.notify import GENERIC, LIST
from rillet.state import Client

# What fast_float_strtod consumes whole (a leading '+' included); "nan" is refused.
_DOUBLE = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity)\Z", re.IGNORECASE)


def _c_string(value: bytes) -> bytes:
    """What a C string function sees of `value`: up to its first NUL byte."""
    cut = value.find(b"\0")
    return value if cut < 0 else value[:cut]


def sort_score(value: bytes) -> float | None:
    """The double SORT sorts `value` by, None when Redis says it can't be converted."""
    text = _c_string(value)
    if not text:
        return 0.0  # strtod consumed nothing, and the end pointer is at the terminator
    if _DOUBLE.match(text) is None:
        return None
    return float(text)


def lookup_by_pattern(ctx: Client, pattern: bytes, element: bytes) -> bytes | None:
    """lookupKeyByPattern: `#` is the element; the first `*` takes the element; `->field`
    after it reads a hash field; a missing key, a wrong type or no `*` give None."""
    if pattern[:1] == b"#" and (len(pattern) == 1 or pattern[1] == 0):
        return element
    text = _c_string(pattern)
    star = text.find(b"*")
    if star < 0:
        return None
    arrow = text.find(b"->", star + 1)
    field = None
    if arrow >= 0 and arrow + 2 < len(text):
        field = pattern[arrow + 2:]
        key = pattern[:star] + element + pattern[star + 1:arrow]
    else:
        key = pattern[:star] + element + pattern[star + 1:]
    value = ctx.db.get(key)
    if value is None:
        return None
    if field is None:
        return value if value.__class__ is bytes else None
    if value.__class__ is not Hash:
        return None
    h = get_hash(ctx, key)  # due fields expire first, as HFE_LAZY_EXPIRE
    return None if h is None else h.fields.get(field)


def _full_key_access(ctx: Client, argv: list[bytes], name: str) -> bool:
    """ACLUserCheckCmdWithUnrestrictedKeyAccess: a selector that allows this command also
    reads every key (allkeys, or a `*` pattern with read permission)."""
    if not ctx.restricted:
        return True
    spec = table.COMMANDS[name]
    keys = [(i, acl.key_need(flags)) for i, flags in spec.keys_with_flags(argv)]
    for selector in ctx.user.all_selectors():
        outcome, _ = selector.check(spec, argv, keys, ())
        if outcome == acl.OK and (selector.allkeys or any(
                pattern == b"*" and need & acl.READ for pattern, need in selector.keys)):
            return True
    return False


# --- the sort itself ----------------------------------------------------------------------------

def _cmp(x: Any, y: Any) -> int:  # (two numbers or two strings)
    return (x > y) - (x < y)


def _sort_vector(elements: list[bytes], keys: list, alpha: bool, by: bool, store: bool,
                 desc: bool, start: int, end: int) -> list[bytes]:
    """Order `elements` as sortCompare does; `keys` are the scores (numeric) or the BY values
    (ALPHA with BY, None for a missing one)."""
    n = len(elements)
    if not alpha:
        def compare(i: int, j: int) -> int:
            c = _cmp(keys[i], keys[j]) or _cmp(elements[i], elements[j])
            return -c if desc else c
    elif by:
        collate = (lambda v: v) if store else _c_string

        def compare(i: int, j: int) -> int:
            a, b = keys[i], keys[j]
            if a is None or b is None:
                c = 0 if a is b else (-1 if a is None else 1)
            else:
                c = _cmp(collate(a), collate(b))
            return -c if desc else c
    else:
        text = elements if store else [_c_string(e) for e in elements]

        def compare(i: int, j: int) -> int:
            c = _cmp(text[i], text[j])
            return -c if desc else c
    order = list(range(n))
    if by and (start != 0 or end != n - 1):
        pqsort(order, compare, start, end)
        return [elements[i] for i in order]
    # A full sort: glibc's qsort is a stable merge sort, and so is list.sort, whose
    # reverse=True keeps equal items in order as a merge sort with -cmp does. Keys
    # give the comparator's order without calling it.
    key: list[Any]
    if not alpha:
        key = list(zip(keys, elements, strict=True))
    elif by:
        key = [(0, b"") if v is None else (1, v if store else _c_string(v)) for v in keys]
    else:
        key = elements if store else [_c_string(e) for e in elements]
    order.sort(key=key.__getitem__, reverse=desc)
    return [elements[i] for i in order]


def _sort(ctx: Client, argv: list[bytes], readonly: bool) -> object:
    desc = alpha = dontsort = False
    limit_start, limit_count = 0, -1
    sortby: bytes | None = None
    store: bytes | None = None
    gets: list[bytes] = []
    full_access: bool | None = None
    name = "sort_ro" if readonly else "sort"
    argc = len(argv)
    j = 2
    while j < argc:
        left = argc - j - 1
        word = argv[j].upper()
        if word == b"ASC":
            desc = False
        elif word == b"DESC":
            desc = True
        elif word == b"ALPHA":
            alpha = True
        elif word == b"LIMIT" and left >= 2:
            limit_start, limit_count = parse_int(argv[j + 1]), parse_int(argv[j + 2])
            j += 2
        elif word == b"STORE" and not readonly and left >= 1:
            store = argv[j + 1]
            j += 1
        elif word == b"BY" and left >= 1:
            sortby = argv[j + 1]
            if b"*" not in _c_string(sortby):
                dontsort = True  # a constant: nothing to sort by
            else:
                if ctx.server.cluster is not None and pattern_slot(sortby) != key_slot(argv[1]):
                    raise ReplyError(errors.SORT_BY_CLUSTER)
                full_access = _full_key_access(ctx, argv, name) if full_access is None else full_access
                if not full_access:
                    raise ReplyError(errors.SORT_BY_ACL)
            j += 1
        elif word == b"GET" and left >= 1:
            if ctx.server.cluster is not None and _c_string(argv[j + 1]) != b"#" \
                    and pattern_slot(argv[j + 1]) != key_slot(argv[1]):
                raise ReplyError(errors.SORT_GET_CLUSTER)
            full_access = _full_key_access(ctx, argv, name) if full_access is None else full_access
            if not full_access:
                raise ReplyError(errors.SORT_GET_ACL)
            gets.append(argv[j + 1])
            j += 1
        else:
            raise ReplyError(errors.SYNTAX)
        j += 1

    value = ctx.db.get(argv[1])
    if value is not None and value.__class__ not in (List, Set, ZSet):
        raise ReplyError(errors.WRONGTYPE)
    in_script = ctx.server.scripting is not None and ctx.server.scripting.current is not None
    if dontsort and value.__class__ is Set and (store is not None or in_script):
        dontsort, alpha, sortby = False, True, None  # a set's order is not deterministic
    if value.__class__ is ZSet:
        value.big = True  # zsetConvert(OBJ_ENCODING_SKIPLIST)

    vectorlen = 0 if value is None else len(value)
    start = min(max(limit_start, 0), vectorlen)
    limit_count = min(max(limit_count, -1), vectorlen)
    end = vectorlen - 1 if limit_count < 0 else start + limit_count - 1
    if start >= vectorlen:
        start, end = vectorlen - 1, vectorlen - 2
    end = min(end, vectorlen - 1)

    elements: list[bytes]
    if value is None:
        elements = []
    elif dontsort and value.__class__ in (List, ZSet):
        # Native order, only the LIMIT range, DESC from the other end.
        count = max(end - start + 1, 0)
        lo = vectorlen - start - count if desc else start
        if value.__class__ is List:
            elements = value.range(lo, lo + count)
        else:
            elements = [m for _, m in value.order[lo:lo + count]]  # type: ignore[union-attr]
        if desc:
            elements.reverse()
        if value.__class__ is ZSet or end >= start:
            end -= start
            start = 0
    elif value.__class__ is List:
        elements = value.to_list()
    elif value.__class__ is Set:
        elements = ordered(value)
    else:
        elements = list(value.scores)  # type: ignore[union-attr]

    if not dontsort and elements:
        keys: list = [0.0] * len(elements) if not alpha else [None] * len(elements)
        bad = False
        for i, element in enumerate(elements):
            byval = lookup_by_pattern(ctx, sortby, element) if sortby is not None else element
            if byval is None:
                continue
            if alpha:
                if sortby is not None:
                    keys[i] = byval
            else:
                score = sort_score(byval)
                if score is None or score != score:
                    bad = True
                else:
                    keys[i] = score
        elements = _sort_vector(elements, keys, alpha, sortby is not None, store is not None,
                                desc, start, end)
        if bad:
            raise ReplyError(errors.SORT_NOT_DOUBLE)

    chosen = elements[start:end + 1] if end >= start else []
    if store is None:
        if not gets:
            return chosen
        return [lookup_by_pattern(ctx, pattern, e) for e in chosen for pattern in gets]
    if gets:
        items_out = [lookup_by_pattern(ctx, pattern, e) or b"" for e in chosen for pattern in gets]
    else:
        items_out = chosen
    db = ctx.db
    if items_out:
        db.set(store, List.from_list(items_out, config_int(ctx, "list-max-listpack-size")))
        ctx.modified(store, len(items_out))
        ctx.notify(LIST, b"sortstore", store)
        ctx.propagate([b"DEL", store])
        ctx.propagate([b"RPUSH", store, *items_out])
    elif db.delete(store):
        ctx.modified(store)
        ctx.notify(GENERIC, b"del", store)
        ctx.propagate([b"DEL", store])
    return len(items_out)


def sort_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    """sortGetKeys: the key, and the last STORE's destination (LIMIT skips two words,
    GET and BY one; the word after STORE is still read as an option)."""
    keys = [(1, "RO access")]
    store = None
    skips = {b"LIMIT": 2, b"GET": 1, b"BY": 1}
    i = 2
    while i < len(argv):
        word = argv[i].upper()
        if word in skips:
            i += skips[word]
        elif word == b"STORE" and i + 1 < len(argv):
            store = i + 1
        i += 1
    if store is not None:
        keys.append((store, "OW update"))
    return keys


_PATTERN_KEYS = ("RO access", "For the optional BY/GET keyword. It is marked 'unknown' because the key "
                 "names derive from the content of the key we sort")
_STORE_KEY = ("OW update", "For the optional STORE keyword. It is marked 'unknown' because the keyword "
              "can appear anywhere in the argument array")


@command("sort", -2, "write denyoom movablekeys", keys=(1, 1, 1), key_flags="RO access",
         group="generic", since="1.0.0", acl="write set sortedset list slow dangerous",
         find_keys=sort_keys, unknown_keys=(_PATTERN_KEYS, _STORE_KEY))
def sort(ctx: Client, argv: list[bytes]) -> object:
    """SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA] [STORE destination]

    Sorts the elements in a list, a set, or a sorted set, optionally storing the result.
    """
    return _sort(ctx, argv, False)


@command("sort_ro", -2, "readonly movablekeys", keys=(1, 1, 1), key_flags="RO access",
         group="generic", since="7.0.0", acl="read set sortedset list slow dangerous",
         unknown_keys=(_PATTERN_KEYS,))
def sort_ro(ctx: Client, argv: list[bytes]) -> object:
    """SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA]

    Returns the sorted elements of a list, a set, or a sorted set.
    """
    return _sort(ctx, argv, True)
