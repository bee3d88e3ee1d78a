"""A command generator for differential fuzzing, driven by rillet's command table.

Each command's arguments come from its handler's syntax line, parsed with the
same parser that builds COMMAND DOCS (commands/syntax.py): optional parts are
sometimes present, sometimes repeated, choices pick one branch, `x [x ...]`
repeats. Every argument's value is drawn by its name from a small, deliberately
hostile vocabulary: counts at and beyond the int64 limits, stream IDs at the
64-bit limits and the special IDs (`-`, `+`, `$`, `>`, `*`), long and binary
keys, glob patterns. Now and then a generated command is mangled further:
options out of order, a word dropped or added (wrong arity), a word replaced.

The keyspace is small (`seed_commands` builds it: a few strings, streams with
groups, consumers and pending entries, an empty stream, and hashes, lists, sets
and sorted sets each in its compact and its large encoding), so most commands hit
existing data. The container and string-family commands draw their arguments by
what they mean for their type (`Generator.typed_value`): fields, elements and
members from small pools, scores with the float edge cases, score and lex
ranges, indices past either end, bounded random counts and bit offsets,
numkeys/numfields that match the keys or fields drawn after them (now and then
not), short timeouts for the blocking commands. Everything is driven by one
`random.Random`: the same seed gives the same commands.

Some commands have generators of their own (Generator.custom): the scripting
commands (tests/helpers/script_fuzz.py writes scripts and libraries that call the
other generated commands), SORT/SORT_RO (BY/GET patterns made of the keyspace's
own names) and LCS (over keys of its own, kept short).

Which commands are drawn is chosen by COMMAND DOCS group and name (FUZZED_GROUPS,
NOT_FUZZED_GROUPS, NOT_FUZZED), never by where a handler lives.

`differential=True` leaves out what Redis 8.2.3 lacks (8.4-8.8 additions:
XREADGROUP CLAIM, XADD IDMP/IDMPAUTO, XCFGSET, XNACK) and what cannot be
compared between two servers (see `choose_value`'s notes on times).
"""

from __future__ import annotations

import random

import rillet.commands  # noqa: F401  (registers every command)
from rillet.commands import syntax, table
from tests.helpers.script_fuzz import ScriptGenerator

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

# --- the keyspace --------------------------------------------------------------------

STRING_KEYS = [b"s1", b"s2", b"s3", b"b\x00\r\nk"]
STREAM_KEYS = [b"x1", b"x2", b"x3", b"xe"]
MISSING_KEYS = [b"nokey"]
LONG_KEY = b"L" * 3000
GROUPS = [b"g1", b"g2", b"gx"]
CONSUMERS = [b"c1", b"c2", b"c3"]
FUTURE_MS = 9000000000000  # x2's IDs: `*` after them is deterministic (the last ms, seq + 1)


def _xadds(key: bytes, ids: list[str], value: bytes = b"v") -> list[list[bytes]]:
    return [[b"XADD", key, i.encode(), b"f", value, b"n", i.encode()] for i in ids]


def seed_commands() -> list[list[bytes]]:
    """Build the keyspace: the same commands on both servers, replies must match too."""
    cmds: list[list[bytes]] = [
        [b"SET", b"s1", b"10"],
        [b"SET", b"s2", b"hello"],
        [b"SET", b"s3", b"9223372036854775806"],
        [b"SET", b"b\x00\r\nk", b"\x00\xff"],
        [b"SET", LONG_KEY, b"long"],
    ]
    cmds += _xadds(b"x1", ["1-1", "1-2", "1-3", "1-4", "2-0", "2-1", "2-2", "3-0", "3-1", "4-0"])
    cmds += [
        [b"XGROUP", b"CREATE", b"x1", b"g1", b"0"],
        [b"XGROUP", b"CREATE", b"x1", b"g2", b"$"],
        [b"XREADGROUP", b"GROUP", b"g1", b"c1", b"COUNT", b"4", b"STREAMS", b"x1", b">"],
        [b"XREADGROUP", b"GROUP", b"g1", b"c2", b"COUNT", b"2", b"STREAMS", b"x1", b">"],
        [b"XDEL", b"x1", b"1-2"],
    ]
    cmds += _xadds(b"x2", [f"{FUTURE_MS}-{n}" for n in range(6)])
    cmds += [
        [b"XGROUP", b"CREATE", b"x2", b"g1", b"0-0", b"ENTRIESREAD", b"0"],
        [b"XREADGROUP", b"GROUP", b"g1", b"c1", b"COUNT", b"3", b"STREAMS", b"x2", b">"],
        [b"XGROUP", b"CREATE", b"x2", b"g2", b"$"],
    ]
    # x3 spans two stream nodes (stream-node-max-entries is 100).
    cmds += _xadds(b"x3", [f"5-{n}" for n in range(130)])
    cmds += [
        [b"XGROUP", b"CREATE", b"x3", b"g1", b"0"],
        [b"XREADGROUP", b"GROUP", b"g1", b"c1", b"COUNT", b"110", b"STREAMS", b"x3", b">"],
        [b"XGROUP", b"CREATE", b"x3", b"g2", b"5-120", b"ENTRIESREAD", b"3"],
        [b"XREADGROUP", b"GROUP", b"g2", b"c2", b"STREAMS", b"x3", b">"],
        [b"XDEL", b"x3", b"5-3", b"5-50", b"5-101"],
        [b"XGROUP", b"CREATE", b"xe", b"g1", b"$", b"MKSTREAM"],
    ]
    cmds += container_seed_commands()
    cmds += [[b"SET", key, value] for key, value in LCS_STRINGS.items()]
    return cmds


# LCS's own strings: no other command draws these keys, so they stay short (LCS keeps
# Redis's full DP table: two 70 kB strings would cost gigabytes on both servers).
LCS_STRINGS = {b"c1": b"ohmytext", b"c2": b"mynewtext", b"c3": b"", b"c4": b"aaaaabbbbbaaaaa"}
LCS_VALUES = [b"ohmytext", b"mynewtext", b"", b"a", b"abcabcabc", b"text", b"\x00\xff\x00",
              b"xyzzy" * 20, b"aaaaabbbbbaaaaa", b"bbbbb"]


# Keys of the container types, each in its compact and its large encoding (replies of
# the large ones in hash-table order are compared sorted by the test, see its normalise).
HASH_KEYS = [b"h1", b"h2", b"h3", b"h4"]  # listpack, listpackex (field TTLs), hashtable, 1 field
LIST_KEYS = [b"l1", b"l2", b"l3", b"l4"]  # listpack, numbers, quicklist, 1 element
SET_KEYS = [b"t1", b"t2", b"t3", b"t4"]  # intset, listpack, hashtable, small listpack
ZSET_KEYS = [b"z1", b"z2", b"z3", b"z4"]  # listpack with edge scores, lex (all 0), skiplist, 1
FAR_MS = b"4102444800000"  # 2100-01-01: a field TTL that neither server reaches


def container_seed_commands() -> list[list[bytes]]:
    return [
        [b"HSET", b"h1", b"f1", b"v", b"f2", b"10", b"f3", b"1.5", b"f4", b"", b"n", b"-3"],
        [b"HSET", b"h2", b"f1", b"a", b"f2", b"5", b"f3", b"c"],
        [b"HPEXPIREAT", b"h2", FAR_MS, b"FIELDS", b"2", b"f1", b"f2"],
        [b"HSET", b"h3", *[w for i in range(130) for w in (b"k%d" % i, b"%d" % i)], b"k130", b"q" * 65],
        [b"HSET", b"h4", b"f1", b"1"],
        [b"RPUSH", b"l1", b"a", b"b", b"c", b"a", b"1", b"", b"b", b"x y", b"a"],
        [b"RPUSH", b"l2", b"1", b"2", b"3", b"10", b"-1", b"2", b"100"],
        [b"RPUSH", b"l3", *[b"%03d" % i + b"e" * 150 for i in range(60)], b"a", b"b"],
        [b"RPUSH", b"l4", b"a"],
        [b"SADD", b"t1", b"1", b"2", b"3", b"10", b"-5", b"100"],
        [b"SADD", b"t2", b"a", b"b", b"c", b"1", b"v", b""],
        [b"SADD", b"t3", *[b"m%d" % i for i in range(130)], b"a", b"1"],
        [b"SADD", b"t4", b"a", b"c", b"3"],
        [b"ZADD", b"z1", b"-inf", b"a", b"0", b"b", b"1.5", b"c", b"1.5", b"d", b"2", b"e",
         b"inf", b"f", b"10", b"g", b"-1", b"1", b"0.1", b"m1"],
        [b"ZADD", b"z2", *[w for m in (b"a", b"aa", b"b", b"c", b"d", b"e", b"", b"\xff")
                          for w in (b"0", m)]],
        [b"ZADD", b"z3", *[w for i in range(130) for w in (b"%d" % (i % 40), b"m%d" % i)]],
        [b"ZADD", b"z4", b"3", b"a"],
    ]


# --- values ----------------------------------------------------------------------------

HOSTILE_INTS = [
    b"0", b"1", b"2", b"3", b"5", b"10", b"100", b"1000", b"-1", b"-2", b"-100",
    str(INT64_MAX).encode(), str(-INT64_MAX - 1).encode(), str(INT64_MAX + 1).encode(),
    str(-INT64_MAX - 2).encode(), str(UINT64_MAX).encode(), str(2**31).encode(), str(2**32).encode(),
    b"x", b"", b"1.5", b" 1", b"+1", b"01", b"-0", b"1e3", b"0x10",
]
SMALL_INTS = [b"0", b"1", b"2", b"3", b"5", b"10", b"100"]
EXISTING_IDS = [b"1-1", b"1-2", b"1-3", b"2-0", b"2-2", b"4-0", b"5-0", b"5-3", b"5-99", b"5-100",
                b"5-129", b"%d-0" % FUTURE_MS, b"%d-5" % FUTURE_MS, b"1", b"2", b"5"]
HOSTILE_IDS = [
    b"0-0", b"0", b"0-1", b"-", b"+", b"$", b">", b"*",
    b"18446744073709551615-18446744073709551615", b"18446744073709551615",
    b"18446744073709551615-0", b"0-18446744073709551615", b"18446744073709551616",
    b"18446744073709551615-18446744073709551616", b"-1", b"1-", b"-0", b"1--1", b"1-2-3",
    b"x", b"", b"(1-1", b"(0-0", b"(18446744073709551615-18446744073709551615", b"(", b"(-",
    b"1-*", b"*-1", b"9223372036854775807-9223372036854775807", b"1.5", b" 1-1", b"\x001",
]
STRINGS = [b"v", b"", b"x y", b"10", b"-1", b"\x00\r\n\xff", b"9223372036854775807", b"1.5"]
MILD_PATTERNS = [b"*", b"x*", b"s?", b"?1", b"[xs]*", b"[^x]*", b"*\\*", b"[a-", b"x[1-2]",
                 b"\\x1", b"*1", b"*e*", b"nokey", b"b*k", b"", b"[", b"\\", b"L*", b"*L"]


# --- values of the container and string-family commands ----------------------------
# Drawn mostly from small pools, so that commands meet the seeded fields, elements and
# members; the long ones now and then convert a value to its large encoding.

FIELDS = [b"f1", b"f2", b"f3", b"f4", b"n", b"k1", b"k129", b"", b"nofield"]
HASH_VALUES = [b"v", b"10", b"-3", b"1.5", b"", b"9223372036854775807", b"1e3", b"x y",
               b"\x00\xff", b"inf", b"5.0e-1"]
ELEMENTS = [b"a", b"b", b"c", b"1", b"2", b"10", b"", b"x y", b"\x00\xff", b"-1", b"1.5"]
MEMBERS = [b"1", b"2", b"3", b"10", b"-5", b"100", b"a", b"b", b"c", b"m1", b"m100", b"",
           b"9223372036854775807", b"-9223372036854775808", b"01"]
SCORES = [b"0", b"1", b"-1", b"1.5", b"2", b"10", b"inf", b"-inf", b"+inf", b"-0", b"0.1",
          b"1e308", b"-1e308", b"4.9e-324", b"3.0000000000000004", b"9007199254740993",
          b"1e16", b"123456789.123456789", b"0.30000000000000004", b"-2.5e-5"]
HOSTILE_SCORES = [b"nan", b"NaN", b"x", b"", b"1e400", b"(1", b"1 ", b" 1", b"0x10", b"inF",
                  b"Infinity", b"-infinity", b"1e", b".5", b"5.", b"1e-400", b"+.5e-3"]
SCORE_RANGES = [b"-inf", b"+inf", b"inf", b"0", b"1", b"(1", b"1.5", b"(1.5", b"2", b"(2",
                b"10", b"-1", b"(-inf", b"(+inf", b"-0", b"(0"]
HOSTILE_SCORE_RANGES = [b"x", b"(", b"", b"nan", b"((1", b"[1", b"1e400", b"(nan", b"-", b"+"]
LEX_RANGES = [b"-", b"+", b"[a", b"(a", b"[b", b"(b", b"[c", b"(aa", b"[aa", b"[", b"(",
              b"[\xff", b"(e", b"[m1"]
HOSTILE_LEX = [b"a", b"", b"--", b"++", b"0", b"-inf", b"(1"]
INDICES = [b"0", b"1", b"2", b"3", b"-1", b"-2", b"-3", b"5", b"100", b"-100", b"8", b"-9"]
# SRANDMEMBER/HRANDFIELD/ZRANDMEMBER with a large negative count reply that many
# elements (Redis would too): bounded, the extremes are the out-of-range errors.
RAND_COUNTS = [b"0", b"1", b"2", b"3", b"5", b"-1", b"-2", b"-5", b"100", b"-20", b"x", b"1.5",
               str(UINT64_MAX).encode(), str(-INT64_MAX - 1).encode(), b""]
WEIGHT_VALUES = [b"1", b"2", b"0", b"-1", b"1.5", b"inf", b"-inf", b"0.5", b"x", b"nan"]
FLOAT_INCRS = [b"1", b"-1", b"0.1", b"1.5", b"-0.25", b"1e3", b"3.0e-5", b"1e308", b"-1e308",
               b"5.0e17", b"10.5", b"0.30000000000000004", b"1e-300", b"7"]
HOSTILE_FLOATS = [b"inf", b"-inf", b"x", b"", b"nan", b"0x10", b"1e400", b" 1", b"1e", b"+inf"]
# Bit offsets stay small: a valid offset up to 2^32 - 1 would make both servers allocate
# up to 512 MB. The out-of-range ones (2^32, negative) are errors.
BIT_OFFSETS = [b"0", b"1", b"7", b"8", b"9", b"15", b"16", b"63", b"64", b"100", b"1000", b"4096"]
HOSTILE_BIT_OFFSETS = [b"-1", b"4294967296", str(UINT64_MAX).encode(), b"x", b"1.5", b"", b"#1"]
BITFIELD_OFFSETS = BIT_OFFSETS + [b"#0", b"#1", b"#3", b"#100"]
HOSTILE_BITFIELD_OFFSETS = HOSTILE_BIT_OFFSETS + [b"#-1", b"#x", b"#", b"##1", b"#4294967296"]
ENCODINGS = [b"i8", b"u8", b"i1", b"u1", b"i16", b"u7", b"i64", b"u63", b"i32", b"u32"]
HOSTILE_ENCODINGS = [b"u64", b"i65", b"i0", b"u0", b"x", b"I8", b"", b"i", b"i-1"]
# Blocking timeouts: short, never 0 (or below a millisecond, which one server may round
# to 0): a key without data blocks both servers for 10 or 20 ms, then both answer nil.
TIMEOUTS = [b"0.01", b"0.02", b"0.01"]
HOSTILE_TIMEOUTS = [b"-1", b"x", b"", b"inf", b"1e100", b"-0.5", b"nan", str(INT64_MAX).encode()]
# SETRANGE offsets: 512 MB and beyond are refused; between, both servers would allocate.
RANGE_OFFSETS = [b"0", b"1", b"2", b"5", b"10", b"100"]
HOSTILE_RANGE_OFFSETS = [b"-1", b"536870912", str(INT64_MAX).encode(), b"x", b"1.5"]
RANKS = [b"1", b"2", b"-1", b"-2", b"0", b"3", b"100", str(-INT64_MAX - 1).encode(), b"x"]
LIMITS = [b"0", b"1", b"2", b"3", b"-1", b"5", b"x"]


def hostile_patterns(rng: random.Random) -> bytes:
    """Patterns that cost a backtracking matcher exponential time (issue 19)."""
    n = rng.choice([10, 20, 40])
    return rng.choice([
        b"a*" * n + b"b",
        b"L*" * n + b"x",
        b"*?" * rng.choice([50, 1000, 20000]),
        b"*" * 5000 + b"x",
        b"[a-z]*" * n + b"!",
        b"*[" * n,
        b"?*" * n + b"\\",
        b"L" * 2999 + b"*?*?*?*?*?*?*?*x",
    ])


# Commands with times among their arguments (TTLs, idle times, BLOCK): their words are
# not shuffled or replaced, which could turn them into a TTL that expires on one
# server only, an idle time near the run's, or BLOCK 0.
TIMED = {"set", "expire", "pexpire", "expireat", "pexpireat", "xread", "xreadgroup", "xclaim",
         "xautoclaim", "xpending", "hexpire", "hpexpire", "hexpireat", "hpexpireat", "hgetex",
         "hsetex", "getex", "setex", "psetex"}
# Blocking commands are never mangled at all: a word added after the timeout, or the
# timeout dropped, could leave `0` (block for ever) in its place.
BLOCKING = {"blpop", "brpop", "blmove", "brpoplpush", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"}
# Commands whose argument names mean their type's values: SCORE/LEX ranges.
SCORE_RANGE_CMDS = {"zcount", "zrangebyscore", "zrevrangebyscore", "zremrangebyscore"}
LEX_RANGE_CMDS = {"zlexcount", "zrangebylex", "zrevrangebylex", "zremrangebylex"}
RAND_CMDS = {"srandmember", "hrandfield", "zrandmember"}
# SORT's BY/GET patterns: the keyspace's own names, so that elements ("1", "2", "a"...)
# reach s1, h1, h2, x1...; without `*` BY does not sort.
SORT_PATTERNS = [b"s*", b"h*->f1", b"h*->f2", b"h*->n", b"h*->nofield", b"*", b"x*", b"z*",
                 b"*->f1", b"nosort", b"l*", b"s*->f1", b"h*->", b"h*->*", b"k*"]
COUNTED = b"\x00<count>"  # numkeys/numfields, filled in once the keys/fields are drawn


class Spec:
    """One command (or subcommand) and its parsed syntax line."""

    def __init__(self, spec: table.CommandSpec) -> None:
        self.spec = spec
        self.words = [w.encode() for w in spec.name.upper().split("|")]
        words = syntax._SPLIT.findall(spec.syntax)
        self.items, _ = syntax._Parser(words[len(self.words):]).sequence(())
        self.name = spec.name

    def __repr__(self) -> str:
        return f"Spec({self.name})"


def all_specs() -> dict[str, Spec]:
    specs: dict[str, Spec] = {}
    for name, spec in table.COMMANDS.items():
        if spec.handler is not None:
            specs[name] = Spec(spec)
        for sub in table.unique_subcommands(spec):
            specs[sub.name] = Spec(sub)
    return specs


# --- what is fuzzed ---------------------------------------------------------------------
# Chosen by the command table's own grouping (COMMAND DOCS `group`) and by name, never
# by where a handler lives: moving a handler into a compiled module (as GET, HSET and
# EVALSHA were) changes nothing here. Every group of the table is in FUZZED_GROUPS or
# NOT_FUZZED_GROUPS, and every command left out of a fuzzed group is in NOT_FUZZED with
# its reason (tests/compat/test_command_fuzz.py checks both).

# Fuzzed groups, each with the family whose values Generator.typed_value draws (None:
# the generic vocabulary).
FUZZED_GROUPS: dict[str, str | None] = {
    "stream": None, "string": "string", "bitmap": "bitmap", "hash": "hash", "list": "list",
    "set": "set", "sorted-set": "zset", "generic": None, "geo": None, "hyperloglog": None,
    "connection": None, "server": None, "transactions": None,
    # PUBLISH and PUBSUB (the fuzz connections never subscribe: nobody receives).
    "pubsub": None,
    # Scripts and libraries that call the other fuzzed commands (tests/helpers/script_fuzz.py).
    "scripting": "script",
    # Every CLUSTER subcommand answers "cluster support disabled" on both (after arity).
    "cluster": None,
}
NOT_FUZZED_GROUPS: dict[str, str] = {
    "array": "Redis 8.8: no reference server has them (tests/server/test_arrays.py)",
    # Vector sets (the vectorset module's commands are in Redis's `module` group).
    "module": "the generator cannot build vectors (VALUES n x1..xn), and VLINKS, VINFO "
              "max-level and VRANDMEMBER depend on random levels (tests/compat/test_vectorsets.py)",
}


def _each(reason: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, reason)


# Commands of the fuzzed groups that are never generated, with why.
NOT_FUZZED: dict[str, str] = {
    **_each("reconfigures, stops, puts to sleep or disconnects the server or the fuzzer",
            "shutdown", "save", "bgsave", "bgrewriteaof", "config|set", "config|rewrite",
            "config|resetstat", "client|kill", "client|unblock", "client|no-evict", "quit",
            "debug|sleep", "debug|reload", "debug|loadaof", "debug|persistence-fault",
            "debug|help", "debug|digest", "debug|digest-value", "debug|populate",
            "debug|object", "debug|set-active-expire", "debug|change-repl-id",
            "debug|aof-flush-sleep", "debug|log", "debug|error",
            "debug|quicklist-packed-threshold", "debug|set-skip-checksum-validation",
            "debug|dict-resizing", "debug|pause-cron", "debug|replybuffer", "select"),
    **_each("the connection would stop being a plain client: a replica link, MONITOR, no "
            "replies, every client paused, or waiting on replicas",
            "sync", "psync", "replconf", "replicaof", "slaveof", "failover", "wait", "waitaof",
            "monitor", "client|pause", "client|reply", "subscribe", "unsubscribe",
            "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe"),
    **_each("would lock the fuzzer out (a user switched off) or touch files",
            "acl|setuser", "acl|deluser", "acl|load", "acl|save"),
    **_each("REDIRECT and the replies name client ids, which differ between servers",
            "client|tracking", "client|caching", "client|getredir", "client|trackinginfo"),
    **_each("the replies differ between any two servers (figures of the run; "
            "docs/compat.md); tests/compat/test_surface.py compares them",
            "latency|graph", "latency|histogram", "lolwut", "memory|doctor", "memory|help",
            "memory|malloc-stats", "memory|purge", "memory|stats"),
    **_each("connects out to another server", "migrate", "restore-asking"),
    **_each("rillet has no Lua debugger (docs/compat.md)", "script|debug"),
    **_each("Redis 8.6, and HOTKEYS GET's figures are the run's times; "
            "tests/compat/test_r88.py tests it",
            "hotkeys|start", "hotkeys|stop", "hotkeys|get", "hotkeys|reset"),
}
# Newer than Redis 8.2.3 (8.4-8.8), and rillet's own: only in the rillet-only run.
RILLET_ONLY = {"xnack", "xcfgset", "xidmprecord", "digest", "delex", "msetex", "increx",
               "rillet.xretention", "rillet.xdeadletter"}


def fuzzed_commands(specs: dict[str, Spec], *, differential: bool) -> dict[str, str | None]:
    """The commands a run draws from, each with its family (see FUZZED_GROUPS)."""
    chosen = {}
    for name, spec in specs.items():
        group = spec.spec.group
        if group in FUZZED_GROUPS and name not in NOT_FUZZED and not (
                differential and name in RILLET_ONLY):
            chosen[name] = FUZZED_GROUPS[group]
    return chosen


# SET's conditions from Redis 8.4: Redis 8.2.3 answers them with a syntax error.
SET_84_OPTIONS = {b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE"}
# The commands with Redis 8.8's AGGREGATE COUNT.
ZSET_88_COUNT = {"zunion", "zinter", "zunionstore", "zinterstore"}
# How often each command is drawn: streams and groups most.
WEIGHTS = {
    "xadd": 8, "xrange": 4, "xrevrange": 4, "xread": 4, "xtrim": 4, "xdel": 3, "xdelex": 4,
    "xlen": 1, "xreadgroup": 8, "xack": 4, "xackdel": 4, "xclaim": 6, "xautoclaim": 6,
    "xpending": 6, "xsetid": 4, "xnack": 5, "xcfgset": 3, "xidmprecord": 2,
    "xgroup|create": 4, "xgroup|setid": 4, "xgroup|destroy": 2, "xgroup|createconsumer": 3,
    "xgroup|delconsumer": 3, "xinfo|stream": 4, "xinfo|groups": 3, "xinfo|consumers": 3,
    "set": 3, "get": 2, "incr": 2, "incrby": 2, "decrby": 2, "append": 2, "keys": 3, "scan": 2,
    "del": 2, "rename": 2, "renamenx": 2, "expire": 2, "pexpire": 2, "expireat": 1, "exists": 2,
    "type": 2, "getdel": 1, "mset": 2, "mget": 2,
}
LOW_WEIGHT = {"flushall": 0.1, "flushdb": 0.1, "reset": 0.3, "multi": 0.5, "exec": 0.5,
              "discard": 0.3, "hello": 0.5, "auth": 0.3, "function|flush": 0.2,
              "script|flush": 0.2, "function|restore": 0.2, "function|delete": 0.3,
              "function|dump": 0.2}
# The scripting commands: EVAL and FCALL carry most of the run's scripts.
WEIGHTS.update({"eval": 4, "evalsha": 2, "eval_ro": 1.5, "evalsha_ro": 1, "fcall": 2,
                "fcall_ro": 1, "function|load": 1.5, "script|load": 1, "script|exists": 1})


class Generator:
    """Random commands from the table, with hostile values.

    `differential`: only what Redis 8.2.3 can run and two servers answer alike.
    `hostile_globs`: patterns that a backtracking glob matcher never finishes.
    """

    def __init__(self, rng: random.Random, *, differential: bool = True,
                 hostile_globs: bool = False, script_filter=None) -> None:
        self.rng = rng
        # (name, argv) -> whether a script may call it: the test leaves out the commands
        # whose replies it normalises (inside a script the reply is the script's).
        self.script_filter = script_filter or (lambda name, argv: True)
        self.scripts = ScriptGenerator(rng, self.inner_command)
        self.custom = {
            "eval": lambda: self.scripts.eval(b"EVAL"),
            "eval_ro": lambda: self.scripts.eval(b"EVAL_RO"),
            "evalsha": lambda: self.scripts.evalsha(b"EVALSHA"),
            "evalsha_ro": lambda: self.scripts.evalsha(b"EVALSHA_RO"),
            "script|load": self.scripts.script_load,
            "script|exists": self.scripts.script_exists,
            "fcall": lambda: self.scripts.fcall(b"FCALL"),
            "fcall_ro": lambda: self.scripts.fcall(b"FCALL_RO"),
            "function|load": self.scripts.function_load,
            "sort": lambda: self.sort(b"SORT"),
            "sort_ro": lambda: self.sort(b"SORT_RO"),
            "lcs": self.lcs,
        }
        self.differential = differential
        self.hostile_globs = hostile_globs
        self.sane = False
        specs = all_specs()
        self.families = fuzzed_commands(specs, differential=differential)
        names = sorted(self.families)
        self.specs = [specs[n] for n in names]
        # Each container/string-family command is drawn less often than a stream one:
        # there are many of them, and the stream commands stay the core of the run.
        self.weights = [WEIGHTS.get(n, LOW_WEIGHT.get(n, 0.5 if self.families[n] else 1.0))
                        for n in names]
        self.counted: int | None = None  # keys/fields drawn after a numkeys/numfields
        self.counting = ""

    # -- values -------------------------------------------------------------------------

    def key(self, cmd: str = "") -> bytes:
        r = self.rng.random()
        own = {"hash": HASH_KEYS, "list": LIST_KEYS, "set": SET_KEYS,
               "zset": ZSET_KEYS}.get(self.families.get(cmd) or "")
        if self.counting == "numkeys" and self.counted is not None:
            self.counted += 1
        if own is not None:
            if self.sane or r < 0.75:
                return self.rng.choice(own)
            if r < 0.85:
                return self.rng.choice(STRING_KEYS + HASH_KEYS[:1] + SET_KEYS[:1] + ZSET_KEYS[:1]
                                       + LIST_KEYS[:1] + STREAM_KEYS[:1])
            if r < 0.95:
                return self.rng.choice(MISSING_KEYS)
            return self.rng.choice([LONG_KEY, b"\x00", b""])
        if self.sane:
            if cmd.startswith("x"):
                return self.rng.choice(STREAM_KEYS[:3])
            return self.rng.choice(STRING_KEYS[:3] + [b"h1", b"l1", b"t1", b"z1", b"x1"])
        if r < (0.75 if cmd.startswith("x") else 0.15):
            return self.rng.choice(STREAM_KEYS)
        if r < 0.7:
            return self.rng.choice(STRING_KEYS)
        if r < 0.85:
            return self.rng.choice(HASH_KEYS + LIST_KEYS + SET_KEYS + ZSET_KEYS)
        if r < 0.95:
            return self.rng.choice(MISSING_KEYS)
        return self.rng.choice([LONG_KEY, b"\x00", b"", b"k" * 70000])

    def stream_id(self, name: str, cmd: str = "") -> bytes:
        r = self.rng.random()
        if self.sane:
            if cmd == "xadd":
                return self.rng.choice([b"*", b"6-*", b"7-1", b"100-*", b"%d-*" % FUTURE_MS,
                                        b"%d-9" % FUTURE_MS, b"5-200"])
            pool = EXISTING_IDS + ([b"-", b"+"] if name in ("start", "end") else [b"0", b"$"])
            return self.rng.choice(pool)
        if r < 0.5:
            value = self.rng.choice(EXISTING_IDS)
        elif r < 0.9:
            value = self.rng.choice(HOSTILE_IDS)
        else:
            value = b"%d-%d" % (self.rng.choice([0, 1, 5, FUTURE_MS, UINT64_MAX]),
                                self.rng.choice([0, 1, 129, UINT64_MAX]))
        if name in ("start", "end") and self.rng.random() < 0.15:
            value = b"(" + value
        return value

    def integer(self) -> bytes:
        if self.sane or self.rng.random() < 0.6:
            return self.rng.choice(SMALL_INTS)
        return self.rng.choice(HOSTILE_INTS)

    def expire_value(self, unit: str) -> bytes:
        """Times far from now, or in the past: a short TTL would expire on one server only."""
        far = {"s": [b"100", b"1000000", b"100000000"], "ms": [b"100000", b"1000000000000"],
               "unix-s": [b"1", b"4102444800", b"253402300799"],
               "unix-ms": [b"1", b"4102444800000", b"253402300799000"]}[unit]
        return self.rng.choice(far + [b"0", b"-1", b"-100", str(INT64_MAX).encode(),
                                      str(INT64_MAX // 1000 + 1).encode(),
                                      str(INT64_MAX + 1).encode(), b"x", b"1.5"])

    def min_idle(self) -> bytes:
        """0 (everything) or far beyond any idle time the run makes: never in between."""
        if self.sane:
            return self.rng.choice([b"0", b"0", b"3600000000"])
        return self.rng.choice([b"0", b"0", b"3600000000", b"-1", str(INT64_MAX).encode(),
                                str(INT64_MAX + 1).encode(), b"x"])

    def pattern(self) -> bytes:
        if self.hostile_globs and self.rng.random() < 0.3:
            return hostile_patterns(self.rng)
        return self.rng.choice(MILD_PATTERNS)

    def string(self) -> bytes:
        r = self.rng.random()
        if r < 0.9:
            return self.rng.choice(STRINGS)
        return self.rng.choice([b"z" * 5000, bytes(range(256)) * 20, b"w" * 70000])

    def pick(self, good: list[bytes], bad: list[bytes], p_bad: float = 0.15) -> bytes:
        """From `good`; in a hostile command, sometimes from `bad`."""
        if not self.sane and self.rng.random() < p_bad:
            return self.rng.choice(bad)
        return self.rng.choice(good)

    def short_or_long(self, pool: list[bytes]) -> bytes:
        """Mostly the pool; now and then over the compact encodings' 64 bytes, rarely huge."""
        r = self.rng.random()
        if r < 0.97:
            return self.rng.choice(pool)
        if r < 0.995:
            return b"q" * 65
        return b"Q" * 5000

    def typed_value(self, name: str, kind: str, token: str | None, cmd: str,
                    family: str) -> bytes | None:
        """A value for an argument of a hash/list/set/zset/string/bitmap command, or None."""
        rng = self.rng
        if name in ("destination", "source", "dst", "src", "destkey", "key1", "key2"):
            return self.key(cmd)  # keys the syntax line does not call `key`
        if name in ("numkeys", "numfields"):
            # The count of the keys/fields drawn after it (for_spec fills it in).
            self.counting, self.counted = name, 0
            return COUNTED
        if name == "timeout" and cmd in BLOCKING:
            return self.pick(TIMEOUTS, HOSTILE_TIMEOUTS, 0.1)
        if cmd in ("getex", "setex", "psetex") or family == "hash":
            unit = {"seconds": "s", "milliseconds": "ms", "unix-time-seconds": "unix-s",
                    "unix-time-milliseconds": "unix-ms"}.get(name)
            if unit:
                return self.expire_value(unit)
        if family == "hash":
            if name == "field":
                if self.counting == "numfields" and self.counted is not None:
                    self.counted += 1
                return self.short_or_long(FIELDS)
            if name == "value":
                return self.short_or_long(HASH_VALUES)
            if name == "increment":
                if cmd == "hincrbyfloat":
                    return self.pick(FLOAT_INCRS, HOSTILE_FLOATS)
                return self.integer()
        if family == "list":
            if name in ("element", "pivot"):
                return self.short_or_long(ELEMENTS)
            if name in ("index", "start", "stop"):
                return self.pick(INDICES, HOSTILE_INTS)
            if name == "rank":
                return rng.choice(RANKS)
            if name in ("num-matches", "len"):
                return self.pick(LIMITS, HOSTILE_INTS)
        if family in ("set", "zset") and name == "member":
            return self.short_or_long(MEMBERS)
        if cmd in RAND_CMDS and name == "count":
            return rng.choice(RAND_COUNTS)
        if family == "set" and name == "limit":
            return self.pick(LIMITS, HOSTILE_INTS)
        if family == "zset":
            if name in ("score", "increment"):
                return self.pick(SCORES, HOSTILE_SCORES, 0.2)
            if name == "weight":
                return rng.choice(WEIGHT_VALUES)
            if cmd in SCORE_RANGE_CMDS and name in ("min", "max"):
                return self.pick(SCORE_RANGES, HOSTILE_SCORE_RANGES)
            if cmd in LEX_RANGE_CMDS and name in ("min", "max"):
                return self.pick(LEX_RANGES, HOSTILE_LEX)
            if name in ("start", "stop", "min", "max"):
                return self.pick(INDICES, HOSTILE_INTS)  # ZRANGE's BYSCORE/BYLEX: see _fix
            if name in ("offset", "count", "limit"):
                return self.pick(LIMITS, HOSTILE_INTS)
        if family == "bitmap":
            if name == "offset":
                if cmd.startswith("bitfield"):
                    return self.pick(BITFIELD_OFFSETS, HOSTILE_BITFIELD_OFFSETS)
                return self.pick(BIT_OFFSETS, HOSTILE_BIT_OFFSETS)
            if name == "encoding":
                return self.pick(ENCODINGS, HOSTILE_ENCODINGS)
            if name == "bit" or (cmd == "setbit" and name == "value"):
                return self.pick([b"0", b"1"], [b"2", b"-1", b"x", b""], 0.2)
            if name in ("start", "end"):
                return self.pick(INDICES, HOSTILE_INTS)
            if name in ("value", "increment"):
                return self.integer()
        if family == "script":
            if name in ("library-name", "library-name-pattern"):
                return self.scripts.library_name()
        if family == "string":
            if cmd == "setrange" and name == "offset":
                return self.pick(RANGE_OFFSETS, HOSTILE_RANGE_OFFSETS)
            if name in ("start", "end"):
                return self.pick(INDICES, HOSTILE_INTS)
            if name == "increment" and cmd == "incrbyfloat":
                return self.pick(FLOAT_INCRS, HOSTILE_FLOATS)
        return None

    def choose_value(self, name: str, kind: str, token: str | None, cmd: str) -> bytes:
        rng = self.rng
        if kind == "key":
            return self.key(cmd)
        family = self.families.get(cmd)
        if family:
            value = self.typed_value(name, kind, token, cmd, family)
            if value is not None:
                return value
        if kind == "pattern":
            return self.pattern()
        if token == "BLOCK":
            # Never 0 or long: a blocked read would stall the run.
            if self.sane:
                return rng.choice([b"1", b"5"])
            return rng.choice([b"1", b"5", b"10", b"-1", b"x", str(INT64_MAX + 1).encode()])
        if name in ("id", "start", "end", "lastid", "last-id", "max-deleted-id", "stream-id"):
            return self.stream_id(name, cmd)
        if name == "threshold":
            return self.stream_id(name) if rng.random() < 0.5 else self.integer()
        if name == "group":
            if self.sane:
                return rng.choice(GROUPS[:2])
            return rng.choice(GROUPS) if rng.random() < 0.95 else rng.choice([b"", b"G" * 1000])
        if name == "consumer":
            return rng.choice(CONSUMERS) if rng.random() < 0.95 else rng.choice([b"", b"C" * 1000])
        if name == "min-idle-time":
            return self.min_idle()
        if name == "ms" and token == "IDLE":
            return rng.choice([b"0", b"1000000000000", b"-1", str(INT64_MAX).encode(), b"x"])
        if name == "unix-time-milliseconds" and cmd == "xclaim":
            return rng.choice([b"0", b"1", b"4102444800000", b"-1", str(INT64_MAX).encode()])
        if cmd in ("expire", "expireat", "pexpire", "pexpireat", "set"):
            unit = {"seconds": "s", "milliseconds": "ms", "unix-time-seconds": "unix-s",
                    "unix-time-milliseconds": "unix-ms"}.get(name)
            if unit:
                return self.expire_value(unit)
        if name == "protover":
            return rng.choice([b"2", b"3", b"2", b"1", b"4", b"x", b"-1"])
        if name == "type":
            return rng.choice([b"string", b"stream", b"list", b"none", b"STREAM", b"x"])
        if name == "cursor":
            return rng.choice([b"0", b"0", b"1", b"-1", str(UINT64_MAX).encode(), b"x"])
        if name in ("command-name", "command"):
            return rng.choice([b"xadd", b"GET", b"xreadgroup", b"xinfo", b"xinfo|stream",
                               b"nosuch", b"set", b"xread", b"mset", b"del"])
        if name == "parameter":
            if rng.random() < 0.3:
                return self.pattern()
            return rng.choice([b"maxmemory", b"*max*", b"stream-node-*", b"port", b"nosuch"])
        if kind == "integer":
            return self.integer()
        if name in ("field", "value", "message", "arg", "connection-name", "password",
                    "username", "clientname", "libname", "libver"):
            return self.string()
        if name in ("producer-id", "idempotent-id", "pid", "iid"):
            return rng.choice([b"p1", b"p2", b"i1", b"i2", b"", b"\x00"])
        if name == "entries-read":
            return self.integer()
        if name == "rule":
            # Never about the default user (the fuzz connections run as it): usernames
            # come from STRINGS. No nopass, and no password in STRINGS: AUTH never
            # switches a fuzz connection to a user that ACL DELUSER would disconnect.
            return rng.choice([b"on", b"off", b"+get", b"-get", b"+@all", b"-@all", b"+@stream",
                               b"~x*", b"%R~s*", b"&ch", b">pw", b"<pw", b"reset",
                               b"allkeys", b"(~a +get)", b"(", b")", b"+xinfo|stream",
                               b"+select|0", b"resetkeys", b"clearselectors", b"#" + b"a" * 64,
                               b"", b"bogus", b"+nosuch"])
        if name == "section":
            return rng.choice([b"server", b"stats", b"keyspace", b"everything", b"x"])
        if name in ("newkey",):
            return self.key()
        return rng.choice(STRINGS + SMALL_INTS)

    def sort(self, name: bytes) -> list[bytes]:
        """SORT/SORT_RO over the keyspace, BY/GET patterns made of its own key names."""
        rng = self.rng
        key = rng.choice(LIST_KEYS + SET_KEYS + ZSET_KEYS + [b"s1", b"x1", b"h1", b"nokey"])
        opts: list[list[bytes]] = []
        if rng.random() < 0.5:
            opts.append([b"BY", rng.choice(SORT_PATTERNS)])
        if rng.random() < 0.3:
            opts.append([b"LIMIT", self.pick(LIMITS, HOSTILE_INTS), self.pick(LIMITS, HOSTILE_INTS)])
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            opts.append([b"GET", rng.choice(SORT_PATTERNS + [b"#"])])
        if rng.random() < 0.4:
            opts.append([rng.choice([b"ASC", b"DESC"])])
        if rng.random() < 0.5:
            opts.append([b"ALPHA"])
        if name == b"SORT" and rng.random() < 0.2:
            opts.append([b"STORE", rng.choice(LIST_KEYS + [b"nokey", b"s1", b"t1"])])
        if rng.random() < 0.3:
            rng.shuffle(opts)
        return [name, key, *[w for opt in opts for w in opt]]

    def lcs(self) -> list[bytes]:
        """LCS over LCS_STRINGS' keys (and, now and then, a SET of one of them)."""
        rng = self.rng
        keys = list(LCS_STRINGS)
        if rng.random() < 0.25:
            return [b"SET", rng.choice(keys), rng.choice(LCS_VALUES)]
        pool = keys * 4 + [b"nokey", b"h1", b"l1"]
        argv = [b"LCS", rng.choice(pool), rng.choice(pool)]
        options = [[b"LEN"], [b"IDX"], [b"IDX"], [b"MINMATCHLEN", self.pick(SMALL_INTS, HOSTILE_INTS)],
                   [b"WITHMATCHLEN"]]
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            argv += rng.choice(options)
        return argv

    # -- structure ----------------------------------------------------------------------

    def emit(self, arg: syntax._Arg, cmd: str, out: list[list[bytes]]) -> None:
        """Append `arg`'s words to `out` as groups (a group is moved as a unit when shuffling)."""
        rng = self.rng
        if arg.optional and rng.random() < 0.45:
            return
        times = 1
        if arg.multiple:
            times = rng.choice([1, 1, 1, 2, 2, 3, 4, 8])
        elif arg.optional and not self.sane and rng.random() < 0.06:
            times = 2  # an option given twice
        for n in range(times):
            if arg.type == "oneof":
                self.emit(rng.choice(arg.children), cmd, out)
            elif arg.type == "block":
                group: list[list[bytes]] = []
                if arg.token and (n == 0 or not arg.multiple):
                    group.append([arg.token.encode()])
                for child in arg.children:
                    self.emit(child, cmd, group)
                out.append([w for g in group for w in g])
            elif arg.type == "pure-token":
                out.append([arg.token.encode()])
            else:
                value = self.choose_value(arg.name, arg.type, arg.token, cmd)
                if arg.token and (n == 0 or not arg.multiple):
                    out.append([arg.token.encode(), value])
                else:
                    out.append([value])

    def command(self) -> list[bytes]:
        spec = self.rng.choices(self.specs, self.weights)[0]
        return self.for_spec(spec)

    def inner_command(self) -> list[bytes]:
        """A command for a script to call: any fuzzed one but the scripting commands."""
        for _ in range(100):
            spec = self.rng.choices(self.specs, self.weights)[0]
            if self.families[spec.name] == "script":
                continue
            argv = self.for_spec(spec)
            if self.script_filter(spec.name, argv):
                return argv
        return [b"PING"]

    def for_spec(self, spec: Spec) -> list[bytes]:
        custom = self.custom.get(spec.name)
        if custom is not None:
            argv = custom()
            self.sane = self.rng.random() < 0.8
            if self.sane or argv[:len(spec.words)] != spec.words:  # (LCS draws SETs too)
                return argv
            return self._mangle(spec, argv[len(spec.words):], spec.words)
        # Half the commands are well-formed with values that exist (they reach the
        # commands' effects), half are hostile (they reach the error paths).
        self.sane = self.rng.random() < 0.5
        for _ in range(20):
            self.counting, self.counted = "", None
            groups: list[list[bytes]] = []
            for item in spec.items:
                self.emit(item, spec.name, groups)
            groups = self._fix(spec.name, groups)
            if groups is not None:
                break
        argv = [w for g in (groups or []) for w in g]
        if COUNTED in argv:
            count = b"%d" % (self.counted or 0)
            if not self.sane and self.rng.random() < 0.15:
                count = self.rng.choice([b"%d" % ((self.counted or 0) + 1), b"0", b"-1", b"x",
                                         b"%d" % ((self.counted or 0) - 1), b"2147483648"])
            argv = [count if w == COUNTED else w for w in argv]
        if not self.sane and spec.name not in BLOCKING:
            return self._mangle(spec, argv, spec.words)
        return spec.words + argv

    def _fix(self, cmd: str, groups: list[list[bytes]]) -> list[list[bytes]] | None:
        """Mostly-valid shapes where the syntax line cannot say it; None: draw again."""
        rng = self.rng
        flat = [w for g in groups for w in g]
        if self.differential:
            if cmd == "xadd" and (b"IDMP" in flat or b"IDMPAUTO" in flat):
                return None
            if cmd == "xreadgroup" and b"CLAIM" in flat:
                return None
            if cmd == "set" and SET_84_OPTIONS & {w.upper() for w in flat}:
                return None
            # AGGREGATE COUNT is Redis 8.8's: Redis 8.2.3 answers a syntax error.
            if cmd in ZSET_88_COUNT and b"COUNT" in {w.upper() for w in flat}:
                return None
            # Redis 8.2.3 trims nothing for `~` with DELREF/ACKED (redis#14623); rillet
            # has the fix (docs/compat.md, "Known differences").
            if cmd in ("xadd", "xtrim") and b"~" in flat and (b"DELREF" in flat or b"ACKED" in flat):
                return None
        if cmd in ("xread", "xreadgroup") and rng.random() < 0.9:
            # STREAMS k1 .. kn id1 .. idn: as many IDs as keys.
            keys = [g for g in groups if g and g[0] == b"STREAMS"]
            if keys:
                head = groups[:groups.index(keys[0])]
                stream_keys = [self.key(cmd) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
                ids = [rng.choice([b">", b"0", b"$", b"+", b"1-1", b"5-100"])
                       if self.sane or rng.random() < 0.7 else self.stream_id("id")
                       for _ in stream_keys]
                if self.sane and cmd == "xreadgroup":
                    ids = [rng.choice([b">", b">", b"0", b"1-1", b"5-100"]) for _ in stream_keys]
                groups = head + [[b"STREAMS"], stream_keys, ids]
        if cmd in ("zrange", "zrangestore") and (self.sane or rng.random() < 0.9):
            # start/stop are ranks, scores or lex bounds after BYSCORE/BYLEX.
            flat = [w.upper() for w in flat]
            at = 1 if cmd == "zrange" else 2
            for i in (at, at + 1):
                if b"BYSCORE" in flat:
                    groups[i] = [self.pick(SCORE_RANGES, HOSTILE_SCORE_RANGES)]
                elif b"BYLEX" in flat:
                    groups[i] = [self.pick(LEX_RANGES, HOSTILE_LEX)]
        for i, g in enumerate(groups):
            if g and g[0] == b"WEIGHTS" and self.counted is not None and (
                    self.sane or rng.random() < 0.85):
                groups[i] = [b"WEIGHTS"] + [rng.choice(WEIGHT_VALUES)
                                            for _ in range(self.counted)]
        if cmd in ("xackdel", "xdelex", "xnack") and rng.random() < 0.85:
            # IDS numids id...: numids says how many follow.
            for i, g in enumerate(groups):
                if g and g[0] == b"IDS":
                    ids = [self.stream_id("id") for _ in range(rng.choice([1, 1, 2, 3, 5]))]
                    groups[i] = [b"IDS", b"%d" % len(ids)]
                    groups[i + 1:i + 1] = [ids]
                    # the generated ids after it are dropped
                    j = i + 2
                    while j < len(groups) and len(groups[j]) == 1 and not groups[j][0].isupper():
                        del groups[j]
                    break
        return groups

    def _mangle(self, spec: Spec, argv: list[bytes], words: list[bytes]) -> list[bytes]:
        return words + self._mangled(spec, argv)

    def _mangled(self, spec: Spec, argv: list[bytes]) -> list[bytes]:
        rng = self.rng
        r = rng.random()
        if r < 0.03 and argv:
            return argv[:-1]  # one short
        if r < 0.05:
            return argv + [rng.choice(STRINGS + SMALL_INTS + [b"COUNT", b"NOACK", b"JUSTID"])]
        if spec.name in TIMED:
            return argv  # a moved or replaced word could make a short TTL, idle time or BLOCK
        if r < 0.09 and len(argv) > 3:
            argv = list(argv)
            head = 1 if spec.spec.first_key == 1 else 0
            tail = argv[head:]
            rng.shuffle(tail)
            return argv[:head] + tail
        if r < 0.12 and argv:
            argv = list(argv)
            argv[rng.randrange(len(argv))] = rng.choice(HOSTILE_INTS + HOSTILE_IDS)
            return argv
        return argv
