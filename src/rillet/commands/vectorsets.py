"""Vector sets: VADD VREM VSIM VDIM VCARD VEMB VLINKS VINFO VSETATTR VGETATTR
VRANDMEMBER VISMEMBER VRANGE (Redis 8's built-in `vectorset` module, vset.c).

Redis registers these as module commands: arity -1 (each command checks its
own arguments and answers "wrong number of arguments" with the name as the
client typed it), flags "module", no ACL categories, key specs "RW access
update". The order of the checks and the error texts are vset.c's. Replies
that are booleans in vset.c (VADD, VREM, VSETATTR, VISMEMBER) are RESP3
booleans. The value type is engine/vectorset.py, the FILTER language
engine/vexpr.py.

Effects: VADD that adds, VREM that removes and VSETATTR propagate as sent,
as Redis's RedisModule_ReplicateVerbatim does; a VADD that updates an element
propagates too when it changed the stored vector or attributes (Redis 8.2.3
does not replicate updates: docs/compat.md).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import CommandOptions, command
from rillet.commands.typed import lookup
from rillet.engine import vexpr
from rillet.engine.doubles import parse_score
from rillet.engine.vectorset import (
    DEFAULT_EF_CONSTRUCTION,
    DEFAULT_M,
    DEFAULT_SEARCH_EF,
    MAX_DIM,
    MAX_M,
    MIN_M,
    QUANT_BIN,
    QUANT_NAMES,
    QUANT_NONE,
    QUANT_Q8,
    VectorSet,
    f32,
    f32_list,
    next_uid,
    projection_matrix,
)
from rillet.errors import ReplyError
from rillet.resp.types import NULL_ARRAY, Map, SimpleString
from rillet.state import Client

_KEYS: CommandOptions = {"keys": (1, 1, 1), "key_flags": "RW access update", "group": "module",
                         "module": "vectorset", "since": "8.0.0"}
_KEYS_82: CommandOptions = {**_KEYS, "since": "8.2.0"}
_KEYS_84: CommandOptions = {**_KEYS, "since": "8.4.0"}


def _arity(argv: list[bytes]) -> ReplyError:
    """RedisModule_WrongArity: the command name as the client sent it."""
    return ReplyError(errors.wrong_arity(errors.c_text(argv[0])))


def _double(ctx: Client, value: float) -> object:
    """A double reply (RedisModule_ReplyWithDouble): the encoder writes it as d2string
    does, a bulk string in RESP2, `,` in RESP3."""
    return float(value)


def _open_for_write(ctx: Client, key: bytes) -> VectorSet | None:
    """RedisModule_OpenKey for writing: the key counts as modified for WATCH and client
    tracking whatever the command then does (Redis signals it when the module closes
    the key, errors included); nothing is published unless something changed."""
    ctx.modified(key, 0)
    return _get(ctx, key)


def _get(ctx: Client, key: bytes) -> VectorSet | None:
    return lookup(ctx, key, VectorSet)


def _ll(raw: bytes) -> int | None:
    """RedisModule_StringToLongLong (string2ll), None where it fails."""
    try:
        return parse_int(raw)
    except ReplyError:
        return None


def parse_vector(argv: list[bytes], start: int, with_reduce: bool
                 ) -> tuple[list[float], int, int] | None:
    """parseVector: (float32 vector, reduce dim or 0, arguments consumed), None if invalid."""
    argc = len(argv)
    consumed = 0
    reduce_dim = 0
    if with_reduce and argc > start + 2 and argv[start].upper() == b"REDUCE":
        rdim = _ll(argv[start + 1])
        if rdim is None or rdim <= 0:
            return None
        reduce_dim = rdim
        start += 2
        consumed += 2
    kind = argv[start].upper() if start < argc else b""
    if kind == b"FP32":
        if argc < start + 2:
            return None
        blob = argv[start + 1]
        if len(blob) % 4 or len(blob) < 4 or len(blob) // 4 > MAX_DIM:
            return None
        vec = array("f", blob).tolist()
        consumed += 2
    elif kind == b"VALUES":
        if argc < start + 2:
            return None
        vdim = _ll(argv[start + 1])
        if vdim is None or vdim < 1 or vdim > MAX_DIM or argc < start + 2 + vdim:
            return None
        values = []
        for raw in argv[start + 2:start + 2 + vdim]:
            value = parse_score(raw)
            if value is None:
                return None
            values.append(value)
        vec = f32_list(values)
        consumed += vdim + 2
    else:
        return None
    return vec, reduce_dim, consumed


# --- writes ------------------------------------------------------------------------------------

@command("vadd", -1, "write denyoom module", **_KEYS)
def vadd(ctx: Client, argv: list[bytes]) -> object:
    """VADD key [REDUCE dim] FP32|VALUES vector element [CAS] [NOQUANT | BIN | Q8] [EF build-exploration-factor] [SETATTR attributes] [M numlinks]"""
    argc = len(argv)
    if argc < 5:
        raise _arity(argv)
    parsed = parse_vector(argv, 2, True)
    if parsed is None:
        raise ReplyError(errors.VSET_BAD_VECTOR)
    vec, reduce_dim, consumed = parsed
    dim = len(vec)
    if argc - 2 - consumed < 1:
        raise _arity(argv)
    ef: int | None  # (None: not an integer, refused where it is parsed)
    m: int | None
    ef, m, quant = DEFAULT_EF_CONSTRUCTION, DEFAULT_M, QUANT_Q8
    attrib: bytes | None = None
    j = 3 + consumed
    while j < argc:
        opt = argv[j].upper()
        has_value = j + 1 < argc
        if opt == b"CAS":
            pass  # Redis's threaded candidate search: the same result, run inline here
        elif opt == b"EF" and has_value:
            ef = _ll(argv[j + 1])
            if ef is None or ef <= 0 or ef > 1_000_000:
                raise ReplyError(errors.VSET_BAD_EF)
            j += 1
        elif opt == b"M" and has_value:
            m = _ll(argv[j + 1])
            if m is None or m < MIN_M or m > MAX_M:
                raise ReplyError(errors.VSET_BAD_M)
            j += 1
        elif opt == b"SETATTR" and has_value:
            attrib = argv[j + 1]
            j += 1
        elif opt == b"NOQUANT":
            quant = QUANT_NONE
        elif opt == b"BIN":
            quant = QUANT_BIN
        elif opt == b"Q8":
            quant = QUANT_Q8
        else:
            raise ReplyError(errors.VSET_BAD_OPTION_AFTER_ELEMENT)
        j += 1
    key = argv[1]
    vset = _open_for_write(ctx, key)
    element = argv[2 + consumed]
    if vset is None:
        vset = VectorSet(reduce_dim or dim, quant, m, next_uid())
        if reduce_dim:
            vset.proj = projection_matrix(dim, reduce_dim)
            vset.proj_input = dim
            vec = vset.project(vec)
        ctx.db.set(key, vset)
    else:
        if vset.quant != quant:
            raise ReplyError(errors.VSET_QUANT_MISMATCH)
        if vset.m != m:
            raise ReplyError(errors.VSET_M_MISMATCH)
        if (vset.proj is None and vset.dim != dim) or (vset.proj is not None and vset.dim != reduce_dim):
            raise ReplyError(errors.VSET_DIM_MISMATCH.format(dim, vset.dim))
        if reduce_dim:
            if vset.proj is None:
                raise ReplyError(errors.VSET_NO_PROJECTION)
            if reduce_dim != vset.dim:
                raise ReplyError(errors.VSET_PROJECTION_MISMATCH)
        if vset.proj is not None:
            if dim != vset.proj_input:
                raise ReplyError(errors.VSET_INPUT_DIM_MISMATCH.format(dim, vset.proj_input))
            vec = vset.project(vec)
    old = vset.nodes.get(element)
    before = None if old is None else (old.q, old.l2, old.qrange, old.attrib)
    added = vset.insert(element, vec, attrib, ef)
    if added:
        ctx.modified(key)
    else:
        new = vset.nodes[element]
        if before != (new.q, new.l2, new.qrange, new.attrib):
            ctx.modified(key)
    return added


@command("vrem", -1, "write module", **_KEYS)
def vrem(ctx: Client, argv: list[bytes]) -> object:
    """VREM key element"""
    if len(argv) != 3:
        raise _arity(argv)
    key = argv[1]
    vset = _open_for_write(ctx, key)
    if vset is None or not vset.remove(argv[2]):
        return False
    if not vset.nodes:
        ctx.db.delete(key)
    ctx.modified(key)
    return True


@command("vsetattr", -1, "write module fast", **_KEYS)
def vsetattr(ctx: Client, argv: list[bytes]) -> object:
    """VSETATTR key element json"""
    if len(argv) != 4:
        raise _arity(argv)
    vset = _open_for_write(ctx, argv[1])
    if vset is None or not vset.set_attrib(argv[2], argv[3]):
        return False
    ctx.modified(argv[1])
    return True


# --- VSIM ---------------------------------------------------------------------------------------

def _filter_accept(program: list) -> Callable[[Any], bool]:
    def accept(node: Any) -> bool:
        return node.attrib is not None and vexpr.run(program, node.attrib)
    return accept


@command("vsim", -1, "readonly module", **_KEYS)
def vsim(ctx: Client, argv: list[bytes]) -> object:
    """VSIM key ELE|FP32|VALUES vector_or_element [WITHSCORES] [WITHATTRIBS] [COUNT num] [EPSILON max_distance] [EF search-exploration-factor] [FILTER expression] [FILTER-EF max-filtering-effort] [TRUTH] [NOTHREAD]"""
    argc = len(argv)
    if argc < 4:
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    if vset is None:
        return []
    if argv[2].upper() == b"ELE":
        node = vset.nodes.get(argv[3])
        if node is None:
            raise ReplyError(errors.VSET_NO_ELEMENT)
        vec = vset.vector_of(node)
        vector_args = 2
    else:
        parsed = parse_vector(argv, 2, False)
        if parsed is None:
            raise ReplyError(errors.VSET_BAD_VECTOR)
        vec, _, vector_args = parsed
        if vset.proj is not None and len(vec) != vset.dim:
            if len(vec) != vset.proj_input:
                raise ReplyError(errors.VSET_INPUT_DIM_MISMATCH.format(len(vec), vset.proj_input))
            vec = vset.project(vec)
    if len(vec) != vset.dim:
        raise ReplyError(errors.VSET_DIM_MISMATCH.format(len(vec), vset.dim))
    withscores = withattribs = truth = False
    count: int | None  # (None: not a number, refused where it is parsed)
    ef: int | None
    epsilon: float | None
    count, ef, epsilon = 10, 0, 2.0
    filter_ef: int | None = 0
    program = None
    j = 2 + vector_args
    while j < argc:
        opt = argv[j].upper()
        has_value = j + 1 < argc
        if opt == b"WITHSCORES":
            withscores = True
        elif opt == b"WITHATTRIBS":
            withattribs = True
        elif opt == b"TRUTH":
            truth = True
        elif opt == b"NOTHREAD":
            pass  # the search runs inline already
        elif opt == b"COUNT" and has_value:
            count = _ll(argv[j + 1])
            if count is None or count <= 0:
                raise ReplyError(errors.VSET_BAD_COUNT)
            j += 1
        elif opt == b"EPSILON" and has_value:
            epsilon = parse_score(argv[j + 1])
            if epsilon is None or epsilon <= 0:
                raise ReplyError(errors.VSET_BAD_EPSILON)
            j += 1
        elif opt == b"EF" and has_value:
            ef = _ll(argv[j + 1])
            if ef is None or ef <= 0 or ef > 1_000_000:
                raise ReplyError(errors.VSET_BAD_EF)
            j += 1
        elif opt == b"FILTER-EF" and has_value:
            filter_ef = _ll(argv[j + 1])
            if filter_ef is None or filter_ef <= 0:
                raise ReplyError(errors.VSET_BAD_FILTER_EF)
            j += 1
        elif opt == b"FILTER" and has_value:
            text = argv[j + 1]
            try:
                program = vexpr.compile_expr(text)
            except vexpr.ExprError as error:
                shown = text.split(b"\x00", 1)[0]
                pos = error.pos if error.pos < len(text) else 0
                raise ReplyError(errors.VSET_FILTER_SYNTAX.format(errors.c_text(shown[pos:]))) from None
            j += 1
        else:
            raise ReplyError(errors.VSET_VSIM_SYNTAX)
        j += 1
    ef = max(ef or DEFAULT_SEARCH_EF, count)
    q, qrange = vset.query(vec)
    most = min(ef, len(vset.nodes))
    if program is None or truth:
        ranked = vset.ranked(q, qrange, None if program is None else _filter_accept(program),
                             oldest_first=truth, limit=most)
    else:
        # FILTER-EF bounds the effort of a filtered walk (COUNT*100 by default): Redis
        # filter-tests the candidates it meets nearest-first and stops after that many;
        # here they are the nearest FILTER-EF elements (FILTER-EF 1: only the nearest).
        accept = _filter_accept(program)
        nearest = vset.ranked(q, qrange, limit=filter_ef or count * 100)
        ranked = [pair for pair in nearest if accept(pair[1])][:most]
    limit = f32(epsilon)
    resp3 = ctx.resp3
    items: list = []
    for distance, node in ranked[:count]:
        if f32(distance / 2) > limit:
            break
        extras: list = []
        if withscores:
            extras.append(_double(ctx, 1.0 - distance / 2.0))
        if withattribs:
            extras.append(node.attrib)
        if resp3 and extras:
            items.append((node.item, extras if len(extras) == 2 else extras[0]))
        else:
            items.append(node.item)
            items.extend(extras)
    return Map(items) if resp3 and (withscores or withattribs) else items


# --- reads --------------------------------------------------------------------------------------

@command("vdim", -1, "readonly module fast", **_KEYS)
def vdim(ctx: Client, argv: list[bytes]) -> object:
    """VDIM key"""
    if len(argv) != 2:
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    if vset is None:
        raise ReplyError(errors.VSET_NO_KEY)
    return vset.dim


@command("vcard", -1, "readonly module fast", **_KEYS)
def vcard(ctx: Client, argv: list[bytes]) -> object:
    """VCARD key"""
    if len(argv) != 2:
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    return 0 if vset is None else len(vset.nodes)


@command("vemb", -1, "readonly module fast", **_KEYS)
def vemb(ctx: Client, argv: list[bytes]) -> object:
    """VEMB key element [RAW]"""
    if len(argv) < 3:
        raise _arity(argv)
    raw = False
    for opt in argv[3:]:
        if opt.lower() != b"raw":
            raise ReplyError(errors.VSET_BAD_VEMB_OPTION)
        raw = True
    vset = _get(ctx, argv[1])
    node = None if vset is None else vset.nodes.get(argv[2])
    if node is None:
        return None
    assert vset is not None
    if not raw:
        return [_double(ctx, x) for x in vset.vector_of(node)]
    out: list = [SimpleString(QUANT_NAMES[vset.quant]), vset.raw_bytes(node), _double(ctx, node.l2)]
    if vset.quant == QUANT_Q8:
        out.append(_double(ctx, node.qrange))
    return out


@command("vlinks", -1, "readonly module fast", **_KEYS)
def vlinks(ctx: Client, argv: list[bytes]) -> object:
    """VLINKS key element [WITHSCORES]"""
    if not 3 <= len(argv) <= 4:
        raise _arity(argv)
    withscores = len(argv) == 4
    if withscores and argv[3].upper() != b"WITHSCORES":
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    node = None if vset is None else vset.nodes.get(argv[2])
    if node is None:
        return None
    assert vset is not None
    levels: list = []
    for layer in range(node.level, -1, -1):
        links = node.links[layer]
        if withscores:
            levels.append(Map([
                (other.item, _double(ctx, f32(1.0 - vset.node_distance(node, other) / 2.0)))
                for other in links]))
        else:
            levels.append([other.item for other in links])
    return levels


@command("vinfo", -1, "readonly module fast", **_KEYS)
def vinfo(ctx: Client, argv: list[bytes]) -> object:
    """VINFO key"""
    if len(argv) != 2:
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    if vset is None:
        return NULL_ARRAY
    return Map([
        (SimpleString(b"quant-type"), SimpleString(QUANT_NAMES[vset.quant])),
        (SimpleString(b"hnsw-m"), vset.m),
        (SimpleString(b"vector-dim"), vset.dim),
        (SimpleString(b"projection-input-dim"), vset.proj_input),
        (SimpleString(b"size"), len(vset.nodes)),
        (SimpleString(b"max-level"), vset.max_level),
        (SimpleString(b"attributes-count"), vset.numattribs),
        (SimpleString(b"vset-uid"), vset.uid),
        (SimpleString(b"hnsw-max-node-uid"), vset.last_id),
    ])


@command("vgetattr", -1, "readonly module fast", **_KEYS)
def vgetattr(ctx: Client, argv: list[bytes]) -> object:
    """VGETATTR key element"""
    if len(argv) != 3:
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    node = None if vset is None else vset.nodes.get(argv[2])
    return None if node is None else node.attrib


@command("vismember", -1, "readonly module", **_KEYS_82)
def vismember(ctx: Client, argv: list[bytes]) -> object:
    """VISMEMBER key element"""
    if len(argv) != 3:
        raise _arity(argv)
    vset = _get(ctx, argv[1])
    return vset is not None and argv[2] in vset.nodes


@command("vrandmember", -1, "readonly module", **_KEYS)
def vrandmember(ctx: Client, argv: list[bytes]) -> object:
    """VRANDMEMBER key [count]"""
    if len(argv) not in (2, 3):
        raise _arity(argv)
    with_count = len(argv) == 3
    count: int | None  # (None: not an integer, refused below)
    count = 1
    if with_count:
        count = _ll(argv[2])
        if count is None:
            raise ReplyError(errors.VSET_COUNT_NOT_INTEGER)
        if count == 0:
            return []
    vset = _get(ctx, argv[1])
    if vset is None or not vset.nodes:
        return [] if with_count else None
    rng = vset.rng
    nodes = list(vset.head_first())
    if not with_count:
        return rng.choice(nodes).item
    if count < 0:
        return [rng.choice(nodes).item for _ in range(-count)]
    count = min(count, len(nodes))
    if count <= len(nodes) * 0.2:
        return [n.item for n in rng.sample(nodes, count)]
    # Redis walks the node list from a random node (a linear run, wrapping at the end).
    start = rng.randrange(len(nodes))
    return [nodes[(start + i) % len(nodes)].item for i in range(count)]


def _range_bound(raw: bytes) -> tuple[str, bytes] | None:
    """vsetParseRangeOp: ("min"|"max", b"") for - and +, ("incl"|"excl", element), or None."""
    if raw == b"-":
        return "min", b""
    if raw == b"+":
        return "max", b""
    if len(raw) > 1 and raw[:1] in (b"[", b"("):
        return ("incl" if raw[:1] == b"[" else "excl"), raw[1:]
    return None


@command("vrange", -1, "readonly module", **_KEYS_84)
def vrange(ctx: Client, argv: list[bytes]) -> object:
    """VRANGE key start end [count]"""
    if not 4 <= len(argv) <= 5:
        raise _arity(argv)
    count: int | None  # (None: not an integer, refused below)
    count = -1
    if len(argv) == 5:
        count = _ll(argv[4])
        if count is None:
            raise ReplyError(errors.VSET_BAD_RANGE_COUNT)
    start, end = _range_bound(argv[2]), _range_bound(argv[3])
    if start is None:
        raise ReplyError(errors.VSET_BAD_RANGE_START)
    if end is None:
        raise ReplyError(errors.VSET_BAD_RANGE_END)
    if start[0] == "max" or end[0] == "min":
        raise ReplyError(errors.VSET_RANGE_MIN_MAX)
    vset = _get(ctx, argv[1])
    if vset is None:
        return []
    out: list[bytes] = []
    for item in sorted(vset.nodes):  # the element dict is a rax: byte order
        if start[0] == "incl" and item < start[1] or start[0] == "excl" and item <= start[1]:
            continue
        if 0 <= count <= len(out):
            break
        if end[0] == "incl" and item > end[1] or end[0] == "excl" and item >= end[1]:
            break
        out.append(item)
    return out
