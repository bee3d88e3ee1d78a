"""The whole command table as clients read it (COMMAND, COMMAND INFO/COUNT/LIST,
GETKEYSANDFLAGS) against Redis 8.2.3.

Cluster clients (redis-py's, Jedis, node-redis), iredis and RedisInsight route and
display commands by COMMAND INFO: all ten fields of every entry, subcommands
included, must be Redis's, in RESP2 and RESP3. The differences allowed are listed
below, each with its reason (docs/compat.md, "COMMAND").
"""

from __future__ import annotations

import hiredis
import pytest

# Commands of Redis 8.4-8.8 that rillet has and Redis 8.2.3 has not: their entries are
# checked against their src/commands/*.json in test_newer_commands_carry_their_json.
NEWER = {
    b"delex", b"digest", b"msetex",  # 8.4 (strings)
    b"vrange",  # 8.4 (the vectorset module)
    b"xcfgset", b"xidmprecord",  # 8.6 (stream IDMP)
    b"hotkeys",  # 8.6
    b"xnack", b"increx",  # 8.8
    *(b"ar" + n for n in (  # 8.8: the array type
        b"count", b"del", b"delrange", b"get", b"getrange", b"grep", b"info", b"insert",
        b"lastitems", b"len", b"mget", b"mset", b"next", b"op", b"ring", b"scan", b"seek",
        b"set")),
    b"rillet.xretention", b"rillet.xdeadletter",  # rillet's own (docs/streams-policies.md)
}
# Their subcommands, which COMMAND LIST shows too.
NEWER_LISTED = NEWER | {b"hotkeys|" + n for n in (b"start", b"stop", b"get", b"reset")}
# COMMAND INFO fields: name, arity, flags, first key, last key, step, ACL categories,
# tips, key specs, subcommands.
SUBCOMMANDS = 9


def parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    return reader.gets()


def by_name(entries) -> dict:
    """Entries by lower-case name (Redis shows module commands upper-case), each
    entry's subcommands by name too: Redis lists both in its command dict's order,
    which depends on the dict's random hash seed, so only the sets compare."""
    out = {}
    for entry in entries:
        entry = list(entry)
        entry[SUBCOMMANDS] = by_name(entry[SUBCOMMANDS])
        out[entry[0].lower()] = entry
    return out


@pytest.fixture(scope="module")
def tables(rillet_server, redis8_server):
    """COMMAND of both servers, raw, in RESP2 and RESP3."""
    from tests.helpers.diff import Pair

    pair = Pair(rillet_server.port, redis8_server.port)
    out = {}
    for resp in ("2", "3"):
        pair.both("HELLO", resp)
        out[resp] = pair.both("COMMAND")
    pair.close()
    return out


@pytest.mark.parametrize("resp", ["2", "3"])
def test_every_command_info_entry_is_redis(tables, resp):
    ours, ref = (by_name(parse(raw)) for raw in tables[resp])
    assert set(ref) - set(ours) == set()
    assert set(ours) - set(ref) == NEWER
    differ = {}
    for name in ref:
        o, r = ours[name], ref[name]
        # Flags, categories and tips keep Redis's order: compared as lists.
        fields = [i for i in range(10) if o[i] != r[i]]
        if fields:
            differ[name] = {i: (o[i], r[i]) for i in fields}
    assert differ == {}


def test_command_info_and_count_agree_with_command(pair8):
    for wire in (pair8.ours, pair8.ref):
        every = wire.call("COMMAND")
        assert wire.call("COMMAND", "INFO") == every
        assert parse(wire.call("COMMAND", "COUNT")) == len(parse(every))
    count_ours, count_ref = (parse(raw) for raw in pair8.both("COMMAND", "COUNT"))
    assert count_ours == count_ref + len(NEWER)
    # One entry per name asked, in the order asked, nil for an unknown one (a
    # subcommand asked as "container|sub"; DEBUG's are not commands in Redis).
    names = ["get", "CONFIG|get", "nosuch", "config|nosuch", "debug|sleep", "xinfo|stream",
             "VADD", "vadd", "Debug"]
    pair8.check("COMMAND", "INFO", *names)


def listed(raw: bytes) -> set:
    return {name.lower() for name in parse(raw)}


def test_command_list_is_the_table(pair8):
    ours, ref = (listed(raw) for raw in pair8.both("COMMAND", "LIST"))
    assert ours - ref == NEWER_LISTED and ref <= ours
    assert b"config|get" in ours and b"debug|sleep" not in ours


@pytest.mark.parametrize("pattern", [
    "*", "x*", "CONFIG|*", "client|*et*", "?et", "*|help", "[a-c]*", "debug*", "v*", "nosuch",
])
def test_command_list_filterby_pattern(pair8, pattern):
    ours, ref = (listed(raw) for raw in pair8.both("COMMAND", "LIST", "FILTERBY", "PATTERN",
                                                   pattern))
    assert ours - NEWER_LISTED == ref


def test_command_list_filterby_aclcat(pair8):
    categories = parse(pair8.ref.call("ACL", "CAT"))
    assert len(categories) > 20
    for category in [*categories, b"nosuch", b"WRITE"]:
        ours, ref = (listed(raw) for raw in pair8.both("COMMAND", "LIST", "FILTERBY", "ACLCAT",
                                                       category))
        assert ours - NEWER_LISTED == ref, category


@pytest.mark.parametrize("module", ["vectorset", "VectorSet", "nosuch"])
def test_command_list_filterby_module(pair8, module):
    ours, ref = (listed(raw) for raw in pair8.both("COMMAND", "LIST", "FILTERBY", "MODULE",
                                                   module))
    assert ours - NEWER == ref
    assert bool(ref) == (module.lower() == "vectorset")


@pytest.mark.parametrize("line", [
    "get k", "set k v", "set k v GET", "del a b", "exists a a", "mset a 1 b 2", "rename a b",
    "lmove a b LEFT RIGHT", "smove a b m", "copy a b", "pfmerge d a b", "lcs a b",
    "sort k", "sort k BY x GET y STORE d", "sort_ro k BY x",
    "georadius k 0 0 1 m STORE d", "georadius k 0 0 1 m STOREDIST d", "geosearchstore d s FROMLONLAT 0 0 BYRADIUS 1 m",
    "xread COUNT 1 STREAMS a b 0 0", "xreadgroup GROUP g c STREAMS s >", "xadd s * f v",
    "zunionstore d 2 a b", "zrangestore d s 0 1", "blmpop 0 2 a b LEFT", "lmpop 1 a RIGHT",
    "eval s 2 a b c", "fcall_ro f 1 k", "bitfield k GET u8 0", "bitfield k SET u8 0 1",
    "bitfield_ro k GET u8 0", "bitop AND d a b", "getex k EX 1", "getdel k",
    "hgetex k FIELDS 1 f", "hsetex k FIELDS 1 f v", "object encoding k", "memory usage k",
    "xinfo stream k", "restore k 0 x", "migrate h 1 k 0 5", "touch a b", "watch a b",
    "spublish c m", "ssubscribe a b", "sunsubscribe a", "pfcount a b", "sintercard 2 a b",
    "zdiff 2 a b", "bitfield k", "bitfield k GET u8 0 OVERFLOW SAT GET i4 1",
    "bitfield k GET u8", "bitfield k INCRBY u8 0 1", "bitfield k OVERFLOW", "debug sleep 0",
    "debug", "debug object k", "pfmerge d", "xinfo groups k", "lpos k e", "object",
    "substr k 0 1",
])
def test_getkeysandflags_is_redis(pair8, line):
    pair8.check("COMMAND", "GETKEYSANDFLAGS", *line.split())


def test_newer_commands_carry_their_json(pair8):
    """Flags, tips and key specs of the 8.4-8.8 commands, as their src/commands/*.json
    give them (COMMAND INFO's wire shape; RESP3 maps)."""
    pair8.ours.call("HELLO", "3")
    info = by_name(parse(pair8.ours.call("COMMAND", "INFO", "msetex", "delex", "digest",
                                         "xcfgset", "xidmprecord", "xnack", "arring",
                                         "increx")))

    def range_spec(flags: list[bytes]) -> dict:
        return {b"flags": flags, b"begin_search": {b"type": b"index", b"spec": {b"index": 1}},
                b"find_keys": {b"type": b"range",
                               b"spec": {b"lastkey": 0, b"keystep": 1, b"limit": 0}}}

    assert info[b"msetex"][2:] == [
        [b"write", b"denyoom", b"movablekeys"], 0, 0, 0, [b"@write", b"@string", b"@slow"],
        [b"request_policy:multi_shard", b"response_policy:all_succeeded"],
        [{b"flags": [b"OW", b"update"],
          b"begin_search": {b"type": b"index", b"spec": {b"index": 1}},
          b"find_keys": {b"type": b"keynum",
                         b"spec": {b"keynumidx": 0, b"firstkey": 1, b"keystep": 2}}}], {}]
    assert info[b"delex"][1:3] == [-2, [b"write", b"fast"]]
    assert info[b"delex"][7:9] == [[], [range_spec([b"RW", b"delete", b"variable_flags"])]]
    assert info[b"digest"][2] == [b"readonly", b"fast"]
    [hotkeys] = parse(pair8.ours.call("COMMAND", "INFO", "hotkeys"))
    assert hotkeys[1:9] == [-2, [], 0, 0, 0, [b"@slow"], [], []]
    for sub in hotkeys[9]:
        assert sub[2:9] == [[b"admin", b"noscript"], 0, 0, 0,
                            [b"@admin", b"@slow", b"@dangerous"], [], []], sub[0]
    assert info[b"increx"][1:] == [-2, [b"write", b"denyoom", b"fast"], 1, 1, 1,
                                   [b"@write", b"@string", b"@fast"], [],
                                   [range_spec([b"RW", b"access", b"update"])], {}]
    for name, flags in ((b"xcfgset", [b"write", b"fast"]),
                        (b"xidmprecord", [b"write", b"denyoom", b"fast"]),
                        (b"xnack", [b"write", b"fast"]), (b"arring", [b"write", b"denyoom"])):
        assert info[name][2] == flags, name
        assert info[name][7:9] == [[], [range_spec([b"RW", b"update"])]], name
    flags = {line: parse(pair8.ours.call("COMMAND", "GETKEYSANDFLAGS", *line.split()))
             for line in ("delex k", "delex k IFEQ v", "msetex 2 a 1 b 2 EX 5")}
    assert flags == {"delex k": [[b"k", [b"RM", b"delete"]]],
                     "delex k IFEQ v": [[b"k", [b"RW", b"delete"]]],
                     "msetex 2 a 1 b 2 EX 5": [[b"a", [b"OW", b"update"]],
                                               [b"b", [b"OW", b"update"]]]}


@pytest.mark.parametrize("resp", ["2", "3"])
def test_command_info_bytes_of_every_plain_command(pair8, tables, resp):
    """Byte for byte, so RESP3's set and map types count too: every command and
    subcommand both have, but the containers themselves (their subcommands come in
    each server's own order)."""
    ref = by_name(parse(tables[resp][1]))
    names = sorted(name for name, entry in ref.items() if not entry[SUBCOMMANDS])
    names += sorted(sub for entry in ref.values() for sub in entry[SUBCOMMANDS])
    assert len(names) > 300
    pair8.both("HELLO", resp)
    pair8.check("COMMAND", "INFO", *names)


# Redis's MIGRATE finds no KEYS keyword when it is the last argument (its keyword spec
# searches from the second-to-last one) and so reports the key at 3; rillet follows
# migrateGetKeys, which refuses KEYS after a non-empty key.
GETKEYS_DIFFER = {("migrate", "1", "a", "b", "STORE", "d", "KEYS")}


def test_getkeysandflags_of_every_command_shape(pair8, tables):
    """Every command and subcommand, with each argument count its arity allows up to 8,
    of three kinds of filler (numbers, words, words with keywords)."""
    ref = by_name(parse(tables["2"][1]))
    entries = [*ref.values(), *(sub for e in ref.values() for sub in e[SUBCOMMANDS].values())]
    fillers = (["2"] * 8, [f"a{i}" for i in range(8)], ["1", "a", "b", "STORE", "d", "KEYS", "x", "y"])
    differ = []
    for entry in entries:
        words, arity = entry[0].decode().lower().split("|"), entry[1]
        for argc in range(max(abs(arity), 2), 9):
            if arity > 0 and argc != arity:
                continue
            for filler in fillers:
                argv = (*words, *filler[:argc - len(words)])
                ours, ref_reply = pair8.both("COMMAND", "GETKEYSANDFLAGS", *argv)
                if ours != ref_reply and argv not in GETKEYS_DIFFER:
                    differ.append((argv, ours, ref_reply))
    assert differ == []
