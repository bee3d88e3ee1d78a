"""Pieces shared by the stream and consumer-group commands.

Key lookup with WRONGTYPE, stream creation with the server's node limits,
entry replies, the option list of XADD/XTRIM (trimming with Redis 8.2's
KEEPREF | DELREF | ACKED policies, NOMKSTREAM, 8.6's IDMP/IDMPAUTO) and its
exact propagated form, BLOCK timeouts, the `STREAMS key... id...` tail of
XREAD, and the per-stream IDMP state (idempotent producers, Redis 8.6).
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import blake2b

from rillet import errors
from rillet.commands.args import INT64_MAX, parse_int
from rillet.compiled import compiled
from rillet.engine import groups as group_engine
from rillet.engine.idmp import Idmp
from rillet.engine.ids import StreamID, format_id, parse_strict_id, parse_xadd_id
from rillet.engine.listpack_size import jemalloc_size
from rillet.engine.stream import NodeLimits, Stream, default_trim_limit
from rillet.errors import ReplyError
from rillet.resp.types import Raw
from rillet.state import Client, ServerState

# The compiled entry encoder (resp/_stream_entries.pyx, see rillet/compiled.py);
# without it python_range_reply below answers.
_stream_entries = compiled("rillet.resp._stream_entries")
_encode_range = _stream_entries.encode_range if _stream_entries is not None else None
# True when range_reply answers pre-encoded (Raw) replies.
ENCODES_FROM_NODES = _encode_range is not None


def node_limits(server: ServerState) -> NodeLimits:
    """The NodeLimits every stream of this server shares: the keyspace's (CONFIG SET updates it)."""
    return server.keyspace.stream_limits


def get_stream(ctx: Client, key: bytes) -> Stream | None:
    """The stream at `key`, None if missing; WRONGTYPE if the key holds something else."""
    value = ctx.db.get(key)
    if value is None or value.__class__ is Stream:
        return value
    raise ReplyError(errors.WRONGTYPE)


def existing_stream(ctx: Client, key: bytes) -> Stream:
    """The stream at `key`; `no such key` if missing, WRONGTYPE if not a stream."""
    stream = get_stream(ctx, key)
    if stream is None:
        raise ReplyError(errors.NO_SUCH_KEY)
    return stream


def new_stream(ctx: Client, key: bytes) -> Stream:
    stream = Stream(limits=node_limits(ctx.server))
    ctx.db.set(key, stream)
    return stream


def entry_reply(sid: StreamID, fields: list[bytes] | None) -> list:
    """[id, [f1, v1, ...]] — or [id, nil] for a deleted entry still in a PEL."""
    return [format_id(sid), fields]


def entries_reply(entries: list) -> list:
    return [[b"%d-%d" % sid, fields] for sid, fields in entries]


def python_range_reply(stream: Stream, start: tuple[int, int], end: tuple[int, int],
                       count: int | None = None, reverse: bool = False) -> list:
    """The reference for range_reply: Stream.range's entries as reply values."""
    return entries_reply(stream.range(start, end, count, reverse))


def range_reply(stream: Stream, start: tuple[int, int], end: tuple[int, int],
                count: int | None = None, reverse: bool = False) -> list | Raw:
    """The entries of stream.range(start, end, count, reverse) as a reply.

    Compiled, a Raw reply encoded straight from the stream's nodes (the same
    bytes in RESP2 and RESP3), else python_range_reply's lists; [] (false)
    either way when nothing matched. tests/resp/test_stream_entries.py holds
    the two byte-equal.
    """
    if _encode_range is not None:
        return _encode_range(stream, start, end, count or 0, reverse)
    return entries_reply(stream.range(start, end, count, reverse))


# --- trimming -----------------------------------------------------------------------

KEEPREF = b"KEEPREF"
DELREF = b"DELREF"
ACKED = b"ACKED"
POLICIES = (KEEPREF, DELREF, ACKED)


@dataclass
class Trim:
    """A parsed `MAXLEN|MINID [=|~] threshold [LIMIT count]` clause."""

    by_minid: bool
    approx: bool
    maxlen: int = 0
    minid: StreamID | None = None
    limit: int | None = None  # None: not given


def parse_trim_option(argv: list[bytes], i: int, trim: Trim | None) -> tuple[Trim, int]:
    """Parse MAXLEN/MINID at argv[i]; returns the clause and the index after it.

    Redis's rules (streamParseAddOrTrimArgsOrReply): `~`/`=` is only taken as
    the operator when a threshold follows it, so `MAXLEN ~` parses `~` as the
    number. XADD/XTRIM only take MAXLEN/MINID as an option when an argument
    follows (else it is XADD's ID or XTRIM's syntax error); here it is an error.
    """
    more = len(argv) - 1 - i
    if not more:
        raise ReplyError(errors.SYNTAX)
    by_minid = argv[i].upper() == b"MINID"
    if trim is not None:
        raise ReplyError(errors.TRIM_MAXLEN_AND_MINID)
    approx = False
    nxt = argv[i + 1]
    if more >= 2 and nxt in (b"~", b"="):
        approx = nxt == b"~"
        i += 1
    if by_minid:
        return Trim(True, approx, minid=parse_strict_id(argv[i + 1])), i + 2
    maxlen = parse_int(argv[i + 1])
    if maxlen < 0:
        raise ReplyError(errors.XADD_MAXLEN_NEGATIVE)
    return Trim(False, approx, maxlen=maxlen), i + 2


def parse_limit_option(argv: list[bytes], i: int) -> tuple[int, int]:
    """LIMIT at argv[i] (with a value after it): (limit, index after it)."""
    if i + 1 >= len(argv):
        raise ReplyError(errors.SYNTAX)
    limit = parse_int(argv[i + 1])
    if limit < 0:
        raise ReplyError(errors.XADD_LIMIT_NEGATIVE)
    return limit, i + 2


def check_trim(trim: Trim | None, limit_given: bool) -> None:
    if limit_given:
        if trim is None:
            raise ReplyError(errors.TRIM_LIMIT_WITHOUT_STRATEGY)
        if not trim.approx:
            raise ReplyError(errors.TRIM_LIMIT_WITHOUT_APPROX)


def policy_hooks(stream: Stream, policy: bytes):
    """(can_delete, on_deleted) engine hooks for a deletion policy."""
    if policy == ACKED:
        return (lambda sid: not group_engine.is_referenced(stream, sid)), None
    if policy == DELREF:
        return None, (lambda ids: group_engine.remove_refs(stream, ids))
    return None, None


def apply_trim(stream: Stream, trim: Trim, policy: bytes = KEEPREF) -> int:
    """Trim `stream` as the clause says; returns the number of entries removed."""
    limit = trim.limit
    if trim.approx:
        if limit is None:
            limit = default_trim_limit(stream.limits.node_max_entries)
    else:
        limit = 0
    can_delete, on_deleted = policy_hooks(stream, policy) if stream.groups else (None, None)
    if trim.by_minid:
        return stream.trim_minid(trim.minid, trim.approx, limit, can_delete, on_deleted)  # type: ignore[arg-type]  # by_minid
    return stream.trim_maxlen(trim.maxlen, trim.approx, limit, can_delete, on_deleted)


def exact_trim_args(stream: Stream, trim: Trim) -> list[bytes]:
    """The deterministic form Redis propagates: `~`/LIMIT become `=` with the result.

    MAXLEN ~ n becomes MAXLEN = <length after trimming>; MINID ~ id becomes
    MINID = <ID of the first node's first entry, tombstones included> — Redis's
    streamGetEdgeID without skipping tombstones (MAX_ID for an empty stream).
    LIMIT is dropped: it only bounds `~` work, which `=` does not need (Redis
    keeps it and has replicas ignore it; dropping it keeps the effect valid
    for any client).
    """
    if not trim.approx:
        if trim.by_minid:
            return [b"MINID", b"=", format_id(trim.minid)]  # type: ignore[arg-type]  # by_minid
        return [b"MAXLEN", b"=", b"%d" % trim.maxlen]
    if trim.by_minid:
        return [b"MINID", b"=", format_id(stream.head_id())]
    return [b"MAXLEN", b"=", b"%d" % stream.length]


class AddTrimArgs:
    """The options of XADD / XTRIM before the ID (streamAddTrimArgs, plus IDMP)."""

    __slots__ = ("trim", "limit_given", "policy", "nomkstream", "id_pos", "id_ms", "id_seq",
                 "idmp_pid", "idmp_iid", "idmp_auto")

    def __init__(self) -> None:
        self.trim: Trim | None = None
        self.limit_given = False
        self.policy: bytes | None = None  # None: not given (KEEPREF)
        self.nomkstream = False
        self.id_pos = 0  # XADD: index of the ID argument (len(argv) if none was found)
        self.id_ms: int | None = None  # None with id_seq None: `*`
        self.id_seq: int | None = None  # None: `*` or `ms-*`
        self.idmp_pid: bytes | None = None
        self.idmp_iid: bytes | None = None  # None with a pid: IDMPAUTO
        self.idmp_auto = False


def parse_add_trim_args(argv: list[bytes], xadd: bool) -> AddTrimArgs:
    """Redis 8.2's streamParseAddOrTrimArgsOrReply, extended with 8.6's IDMP options.

    Options come in any order before XADD's ID. A word that is no option is
    XADD's ID (so a misspelled option reads as an invalid ID, as in Redis) or,
    for XTRIM, a syntax error. An option missing its value is not recognised
    as an option at all (Redis's `moreargs` checks). Only one deletion policy
    may be given: a second one is taken for the ID. LIMIT's constraints are
    checked after the whole list, then IDMP's need of an auto-generated ID.
    """
    args = AddTrimArgs()
    argc = len(argv)
    i = 2
    trim: Trim | None = None
    limit: int | None = None
    while i < argc:
        more = argc - 1 - i
        opt = argv[i]
        if xadd and opt == b"*":
            break
        word = opt.upper()
        if (word == b"MAXLEN" or word == b"MINID") and more:
            trim, i = parse_trim_option(argv, i, trim)
            continue
        if word == b"LIMIT" and more:
            limit, i = parse_limit_option(argv, i)
            args.limit_given = True
            continue
        if xadd and word == b"NOMKSTREAM":
            args.nomkstream = True
        elif args.policy is None and word in POLICIES:
            args.policy = word
        elif xadd and word == b"IDMP" and more >= 2:
            _parse_idmp(args, argv[i + 1], argv[i + 2])
            i += 2
        elif xadd and word == b"IDMPAUTO" and more:
            if args.idmp_pid is not None:
                raise ReplyError(errors.IDMP_TWICE)
            if not argv[i + 1]:
                raise ReplyError(errors.IDMPAUTO_EMPTY_PID)
            args.idmp_pid = argv[i + 1]
            args.idmp_auto = True
            i += 1
        elif xadd:
            args.id_ms, args.id_seq = parse_xadd_id(opt)
            break
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    args.id_pos = i
    if trim is not None:
        trim.limit = limit
    check_trim(trim, args.limit_given)
    if not xadd and trim is None:
        raise ReplyError(errors.XTRIM_NO_STRATEGY)
    if args.idmp_pid is not None and args.id_ms is not None:
        raise ReplyError(errors.IDMP_EXPLICIT_ID)
    args.trim = trim
    return args


def _parse_idmp(args: AddTrimArgs, pid: bytes, iid: bytes) -> None:
    if args.idmp_pid is not None:
        raise ReplyError(errors.IDMP_TWICE)
    if not pid:
        raise ReplyError(errors.IDMP_EMPTY_PID)
    if not iid:
        raise ReplyError(errors.IDMP_EMPTY_IID)
    args.idmp_pid = pid
    args.idmp_iid = iid


def effect_options(args: AddTrimArgs, stream: Stream) -> list[bytes]:
    """The options of an XADD/XTRIM effect: NOMKSTREAM, the policy, the exact trim clause."""
    words: list[bytes] = []
    if args.nomkstream:
        words.append(b"NOMKSTREAM")
    if args.policy is not None and args.policy != KEEPREF:
        words.append(args.policy)
    if args.trim is not None:
        words += exact_trim_args(stream, args.trim)
    return words


# --- BLOCK ------------------------------------------------------------------------------

def parse_block_timeout(raw: bytes, now_ms: int) -> int:
    """BLOCK milliseconds -> relative ms (0 = forever), getTimeoutFromObjectOrReply's errors."""
    value = parse_int(raw, errors.TIMEOUT_NOT_INTEGER)
    if value < 0:
        raise ReplyError(errors.TIMEOUT_NEGATIVE)
    if value > 0 and value > INT64_MAX - now_ms:
        raise ReplyError(errors.TIMEOUT_OUT_OF_RANGE)
    return value


# --- STREAMS key [key ...] id [id ...] -------------------------------------------------

def split_streams(argv: list[bytes], streams_at: int, command_name: str) -> tuple[list[bytes], list[bytes]]:
    """Split the tail after STREAMS into keys and IDs, with Redis's unbalanced error."""
    tail = argv[streams_at + 1 :]
    if not tail or len(tail) % 2:
        if command_name == "xread":
            raise ReplyError(errors.XREAD_UNBALANCED)
        raise ReplyError(errors.STREAM_UNBALANCED_XREAD.format(command_name))
    half = len(tail) // 2
    return tail[:half], tail[half:]


# --- IDMP: idempotent producers (Redis 8.6); the state is engine.idmp.Idmp --------------

def idmp_settings(server: ServerState, idmp: Idmp) -> tuple[int, int]:
    """(duration s, maxsize) in force for `idmp`: XCFGSET's, else the stream-idmp-* config."""
    config = server.config
    return idmp.settings(config["stream-idmp-duration"], config["stream-idmp-maxsize"])


def idmp_auto_iid(fields: list[bytes]) -> bytes:
    """IDMPAUTO's iid: a digest of the field/value pairs that ignores their order.

    Redis does not expose the iid it derives (only XIDMPRECORD effects carry
    it), so any collision-resistant digest does; pairs are sorted and
    length-prefixed so `a b` + `c d` cannot collide with `a bc` + `d`.
    """
    digest = blake2b(digest_size=16)
    for name, value in sorted(zip(fields[0::2], fields[1::2], strict=True)):
        digest.update(b"%d:%s%d:%s" % (len(name), name, len(value), value))
    return digest.digest()


def idmp_of(server: ServerState, stream: Stream) -> Idmp | None:
    """The stream's IDMP state, None if it never used IDMP or XCFGSET."""
    return stream.idmp


def idmp_for(server: ServerState, stream: Stream) -> Idmp:
    """The stream's IDMP state, created on first use."""
    return stream.ensure_idmp()


# --- MEMORY USAGE -----------------------------------------------------------------------

def _sds_header(length: int) -> int:
    if length < 1 << 5:
        return 1
    if length < 1 << 8:
        return 3
    if length < 1 << 16:
        return 5
    return 9 if length < 1 << 32 else 17


def stream_memory_usage(db, key: bytes, stream: Stream, samples: int) -> int:
    """MEMORY USAGE of a stream key as Redis 8 reports it (consumer groups not counted).

    Redis 8 embeds the key in the value's object header (kvobj: 16-byte robj,
    a header-size byte, the key as an sds, 8 more bytes with a TTL) and adds
    a dict slot; measured against 8.2.3 for key lengths 1-128 and with a TTL.
    7.0 counted the key differently (a separate sds and dictEntry: 8 to 16
    bytes less for short keys); 8 wins.
    """
    n = len(key)
    alloc = 16 + 1 + _sds_header(n) + n + 1 + (8 if key in db.expires else 0)
    return stream.memory_usage(samples) + 8 + jemalloc_size(alloc)


def streams_keys(start: int):
    """XREAD/XREADGROUP's keys, as Redis finds them for COMMAND GETKEYS and ACL checks.

    First the keyword key spec: STREAMS searched from `start` (never in the last
    argument), the keys the first half of what follows. If that finds STREAMS
    but no key, xreadGetKeys is the fallback: it skips the options to find
    STREAMS and needs an even, non-zero number of arguments after it.
    """

    def find(argv: list[bytes]) -> list[tuple[int, str]]:
        argc = len(argv)
        for i in range(start, argc - 1):
            if argv[i].upper() == b"STREAMS":
                first = i + 1
                count = (argc - first) // 2
                if count:
                    return [(first + n, "RO access") for n in range(count)]
                break
        else:
            return []  # no keyword: no keys, and no fallback
        i, streams_at = 1, -1
        while i < argc:
            word = argv[i].upper()
            if word in (b"BLOCK", b"COUNT"):
                i += 2
            elif word == b"GROUP":
                i += 3
            elif word == b"NOACK":
                i += 1
            else:
                streams_at = i if word == b"STREAMS" else -1
                break
        rest = argc - streams_at - 1
        if streams_at < 0 or rest == 0 or rest % 2:
            return []
        return [(streams_at + 1 + n, "RO access") for n in range(rest // 2)]

    return find
