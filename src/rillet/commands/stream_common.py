"""Pieces shared by the stream and consumer-group commands.

Key lookup with WRONGTYPE, stream creation with the server's node limits,
entry replies, the trimming clause of XADD/XTRIM with Redis 8.2's deletion
policies (KEEPREF | DELREF | ACKED), its exact propagated form, and the
`STREAMS key... id...` tail of XREAD/XREADGROUP.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet import errors
from rillet.commands.args import parse_int
from rillet.engine import groups as group_engine
from rillet.engine.ids import StreamID, format_id, parse_strict_id
from rillet.engine.stream import NodeLimits, Stream, default_trim_limit
from rillet.errors import ReplyError
from rillet.state import Client, ServerState

Stream.TYPE_NAME = b"stream"  # type: ignore[attr-defined]
Stream.ENCODING = b"stream"  # type: ignore[attr-defined]


def node_limits(server: ServerState) -> NodeLimits:
    """The one NodeLimits every stream of this server shares; CONFIG SET updates it."""
    limits = server.extensions.get("stream_node_limits")
    if limits is None:
        config = server.config
        limits = NodeLimits(config["stream-node-max-entries"], config["stream-node-max-bytes"])  # type: ignore[arg-type]
        config.watch("stream-node-max-entries", lambda v: setattr(limits, "node_max_entries", v))
        config.watch("stream-node-max-bytes", lambda v: setattr(limits, "node_max_bytes", v))
        server.extensions["stream_node_limits"] = limits
    return limits  # type: ignore[return-value]


def get_stream(ctx: Client, key: bytes) -> Stream | None:
    """The stream at `key`, None if missing; WRONGTYPE if the key holds something else."""
    value = ctx.db.get(key)
    if value is None or value.__class__ is Stream:
        return value  # type: ignore[return-value]
    raise ReplyError(errors.WRONGTYPE)


def new_stream(ctx: Client, key: bytes) -> Stream:
    stream = Stream(limits=node_limits(ctx.server))
    ctx.db.set(key, stream)
    return stream


def entry_reply(sid: StreamID, fields: list[bytes] | None) -> list:
    """[id, [f1, v1, ...]] — or [id, nil] for a deleted entry still in a PEL."""
    return [format_id(sid), fields]


def entries_reply(entries: list) -> list:
    return [[format_id(sid), fields] for sid, fields in entries]


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

    Errors are Redis's (streamParseAddOrTrimArgsOrReply); LIMIT is parsed by
    `parse_limit_option` since it may come anywhere in the option list.
    """
    word = argv[i].upper()
    by_minid = word == b"MINID"
    if trim is not None and trim.by_minid != by_minid:
        raise ReplyError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    if i + 1 >= len(argv):
        raise ReplyError(errors.SYNTAX)
    i += 1
    approx = False
    if argv[i] in (b"~", b"="):
        approx = argv[i] == b"~"
        i += 1
        if i >= len(argv):
            raise ReplyError(errors.SYNTAX)
    limit = trim.limit if trim is not None else None
    if by_minid:
        clause = Trim(True, approx, minid=parse_strict_id(argv[i]), limit=limit)
    else:
        maxlen = parse_int(argv[i])
        if maxlen < 0:
            raise ReplyError("ERR The MAXLEN argument must be >= 0.")
        clause = Trim(False, approx, maxlen=maxlen, limit=limit)
    return clause, i + 1


def parse_limit_option(argv: list[bytes], i: int) -> tuple[int, int]:
    if i + 1 >= len(argv):
        raise ReplyError(errors.SYNTAX)
    limit = parse_int(argv[i + 1])
    if limit < 0:
        raise ReplyError("ERR The LIMIT argument must be >= 0.")
    return limit, i + 2


def check_trim(trim: Trim | None, limit_given: bool) -> None:
    if limit_given and (trim is None or not trim.approx):
        raise ReplyError("ERR syntax error, LIMIT cannot be used without the special ~ option")


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
        return stream.trim_minid(trim.minid, trim.approx, limit, can_delete, on_deleted)  # type: ignore[arg-type]
    return stream.trim_maxlen(trim.maxlen, trim.approx, limit, can_delete, on_deleted)


def exact_trim_args(stream: Stream, trim: Trim) -> list[bytes]:
    """The deterministic form Redis propagates: `~`/LIMIT become `=` with the result.

    MAXLEN ~ n becomes MAXLEN = <length after trimming>; MINID ~ id becomes
    MINID = <ID of the first node's first entry, tombstones included> — Redis's
    streamGetEdgeID without skipping tombstones (MAX_ID for an empty stream).
    """
    if not trim.approx:
        if trim.by_minid:
            return [b"MINID", b"=", format_id(trim.minid)]  # type: ignore[arg-type]
        return [b"MAXLEN", b"=", b"%d" % trim.maxlen]
    if trim.by_minid:
        return [b"MINID", b"=", format_id(stream.head_id())]
    return [b"MAXLEN", b"=", b"%d" % stream.length]


# --- STREAMS key [key ...] id [id ...] -------------------------------------------------

def split_streams(argv: list[bytes], streams_at: int, command_name: str) -> tuple[list[bytes], list[bytes]]:
    """Split the tail after STREAMS into keys and IDs, with Redis's unbalanced error."""
    tail = argv[streams_at + 1 :]
    if not tail or len(tail) % 2:
        raise ReplyError(errors.STREAM_UNBALANCED_XREAD.format(command_name))
    half = len(tail) // 2
    return tail[:half], tail[half:]
