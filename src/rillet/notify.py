"""Keyspace notification classes: `notify-keyspace-events` as Redis parses and shows it.

The flags are an int (Config keeps the parsed value); ServerState.notify
publishes an event when its class is enabled (keyspace.c, notify.c in Redis).
"""

from __future__ import annotations

from typing import Protocol

KEYSPACE = 1 << 0  # K
KEYEVENT = 1 << 1  # E
GENERIC = 1 << 2  # g
STRING = 1 << 3  # $
LIST = 1 << 4  # l
SET = 1 << 5  # s
HASH = 1 << 6  # h
ZSET = 1 << 7  # z
EXPIRED = 1 << 8  # x
EVICTED = 1 << 9  # e
STREAM = 1 << 10  # t
KEY_MISS = 1 << 11  # m
MODULE = 1 << 12  # d
NEW = 1 << 13  # n
OVERWRITTEN = 1 << 14  # o
TYPE_CHANGED = 1 << 15  # c
# Redis 8.8's subkey channels (the field names of a hash event), on top of the classes.
SUBKEYSPACE = 1 << 16  # S: __subkeyspace@<db>__:<key>
SUBKEYEVENT = 1 << 17  # T: __subkeyevent@<db>__:<event>
SUBKEYSPACEITEM = 1 << 18  # I: __subkeyspaceitem@<db>__:<key>\n<subkey>
SUBKEYSPACEEVENT = 1 << 19  # V: __subkeyspaceevent@<db>__:<event>|<key>
SUBKEY_CHANNELS = SUBKEYSPACE | SUBKEYEVENT | SUBKEYSPACEITEM | SUBKEYSPACEEVENT
ALL = GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE  # A

_CLASSES = {
    "g": GENERIC, "$": STRING, "l": LIST, "s": SET, "h": HASH, "z": ZSET, "x": EXPIRED,
    "e": EVICTED, "t": STREAM, "d": MODULE, "n": NEW, "o": OVERWRITTEN, "c": TYPE_CHANGED,
    "A": ALL, "K": KEYSPACE, "E": KEYEVENT, "m": KEY_MISS,
    "S": SUBKEYSPACE, "T": SUBKEYEVENT, "I": SUBKEYSPACEITEM, "V": SUBKEYSPACEEVENT,
}
# The order Redis's keyspaceEventsFlagsToString writes them (after A, if all of A is set).
_SHOWN = "g$lshzxetdnoc"

BAD_CLASS = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."


def parse_flags(text: str) -> int | None:
    """The flags of a `notify-keyspace-events` value, None for a character Redis refuses."""
    flags = 0
    for char in text:
        bit = _CLASSES.get(char)
        if bit is None:
            return None
        flags |= bit
    return flags


def render_flags(flags: int) -> str:
    """keyspaceEventsFlagsToString: "A" hides the classes outside it (n, o, c), as Redis."""
    if flags & ALL == ALL:
        out = "A"
    else:
        out = "".join(char for char in _SHOWN if flags & _CLASSES[char])
    if flags & KEYSPACE:
        out += "K"
    if flags & KEYEVENT:
        out += "E"
    if flags & KEY_MISS:
        out += "m"
    return out + "".join(char for char in "STIV" if flags & _CLASSES[char])


def subkey_messages(flags: int, event: bytes, key: bytes, db_index: int,
                    subkeys: list[bytes]) -> list[tuple[bytes, bytes]]:
    """The (channel, message) pairs of Redis 8.8's subkey channels enabled in `flags`
    (notify.c notifyKeyspaceEventImpl): subkeys as `<len>:<subkey>` joined by ",";
    no `|` event on the S and V channels, no newline key on the I channel."""
    listed = b",".join(b"%d:%s" % (len(subkey), subkey) for subkey in subkeys)
    out = []
    piped = b"|" in event
    if flags & SUBKEYSPACE and not piped:
        out.append((b"__subkeyspace@%d__:%s" % (db_index, key), event + b"|" + listed))
    if flags & SUBKEYEVENT:
        out.append((b"__subkeyevent@%d__:%s" % (db_index, event),
                    b"%d:%s|%s" % (len(key), key, listed)))
    if flags & SUBKEYSPACEITEM and b"\n" not in key:
        out.extend((b"__subkeyspaceitem@%d__:%s\n%s" % (db_index, key, subkey), event)
                   for subkey in subkeys)
    if flags & SUBKEYSPACEEVENT and not piped:
        out.append((b"__subkeyspaceevent@%d__:%s|%s" % (db_index, event, key), listed))
    return out


# --- keymiss (`m`): which keys a command reads ----------------------------------------
# Read-only commands that look their keys up without a keymiss (Redis's LOOKUP_NONOTIFY:
# counted in keyspace_hits/misses all the same).
_UNNOTIFIED_READS = frozenset({
    "object|encoding", "object|freq", "object|idletime", "object|refcount", "memory|usage",
})
# Read-only commands that look no key up.
_UNREAD = frozenset({
    "scan", "keys", "randomkey", "dbsize",
    # A read-only script's declared keys are not looked up (its commands' keys are).
    "eval_ro", "evalsha_ro", "fcall_ro",
})
_SILENT_READS = _UNNOTIFIED_READS | _UNREAD
# Read-only commands that look each key up twice (XREAD: once for the IDs, once to read).
_TWICE = frozenset({"xread"})


def _first(argv: list[bytes], keys: list[int]) -> list[int]:
    return keys[:1]


def _sources(argv: list[bytes], keys: list[int]) -> list[int]:
    return keys[1:]


def _all(argv: list[bytes], keys: list[int]) -> list[int]:
    return keys


def _set_get(argv: list[bytes], keys: list[int]) -> list[int]:
    return keys[:1] if any(arg.upper() == b"GET" for arg in argv[3:]) else []


# Write commands that read a key first (lookupKeyRead): the keys they read.
_WRITE_READS = {
    "getset": _first, "getdel": _first, "getex": _first, "copy": _first, "set": _set_get,
    "xack": _first, "xclaim": _first, "xautoclaim": _first, "xreadgroup": _all,
    "sinterstore": _sources, "sunionstore": _sources, "sdiffstore": _sources,
    "zrangestore": _sources, "zunionstore": _sources, "zinterstore": _sources,
    "zdiffstore": _sources,
}


class SpecKeys(Protocol):
    """What read_key_indexes reads of a command (commands/table.py's CommandSpec)."""

    name: str
    flags: frozenset[str]

    def keys_with_flags(self, argv: list[bytes]) -> list[tuple[int, str]]: ...


def read_key_indexes(spec: SpecKeys, argv: list[bytes], counted: bool = False) -> list[int]:
    """The argv positions of the keys a command looks up for reading, in Redis's order
    (a key twice when Redis looks it up twice): where a `keymiss` event can come from,
    or with `counted`, the lookups keyspace_hits/misses count (Redis's lookupKeyRead)."""
    name = spec.name
    reads = _WRITE_READS.get(name)
    if reads is None and ("readonly" not in spec.flags
                          or name in (_UNREAD if counted else _SILENT_READS)):
        return []
    try:
        keys = [index for index, _ in spec.keys_with_flags(argv)]
    except Exception:  # a malformed command: its handler answers
        return []
    if reads is not None:
        return reads(argv, keys)
    if name in _TWICE:
        return keys + keys
    return keys


# How the dispatcher counts a command's keyspace_hits/misses (CommandSpec.read_stats).
READS_NONE = 0  # it looks no key up for reading
READS_AFTER = 1  # a read-only command with its keys at fixed steps: whether each exists
#                  once it ran (its own lookup expired a due key, a miss), cheapest
READS_BEFORE = 2  # any other: read_key_indexes(counted=True) before it runs
READS_SET_GET = 3  # SET: READS_BEFORE when it has options (GET), else none


def read_stats_kind(spec: SpecKeys, first_key: int, has_find_keys: bool) -> int:
    name = spec.name
    if name == "set":
        return READS_SET_GET
    if name in _WRITE_READS or name in _TWICE:
        return READS_BEFORE
    if "readonly" not in spec.flags or name in _UNREAD:
        return READS_NONE
    if has_find_keys:
        return READS_BEFORE
    return READS_AFTER if first_key > 0 else READS_NONE
