"""Geo commands on sorted sets: GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH,
GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and the _RO forms.

A member's score is its 52-bit geohash (engine/geo.py). GEOADD runs as the
ZADD it builds and propagates that ZADD, as Redis does. Searches follow
georadiusGeneric: the options in Redis's order and error texts, the nine
geohash boxes scanned in Redis's order, a stable sort by distance (glibc's
qsort) and Redis's partial sort when COUNT cuts the result. Distances print
with four decimals (fixedpoint_d2string), coordinates as doubles.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import command
from rillet.commands.typed import config_int
from rillet.commands.zsets import get_zset, zadd
from rillet.engine import geo
from rillet.engine.doubles import parse_score
from rillet.engine.zsets import ZSet
from rillet.errors import ReplyError
from rillet.notify import GENERIC, ZSET
from rillet.resp.types import NULL_ARRAY
from rillet.state import Client

_RO = "RO access"


def _double(raw: bytes, message: str = errors.NOT_FLOAT) -> float:
    value = parse_score(raw)
    if value is None:
        raise ReplyError(message)
    return value


def _lonlat(argv: list[bytes], at: int) -> tuple[float, float]:
    """extractLongLatOrReply: two doubles within the geohash area."""
    x = _double(argv[at])
    y = _double(argv[at + 1])
    if x < geo.LONG_MIN or x > geo.LONG_MAX or y < geo.LAT_MIN or y > geo.LAT_MAX:
        raise ReplyError(errors.GEO_BAD_PAIR.format(x, y))
    return x, y


def _unit(raw: bytes) -> float:
    factor = geo.UNITS.get(raw.lower())
    if factor is None:
        raise ReplyError(errors.GEO_UNIT)
    return factor


# --- GEOADD -------------------------------------------------------------------------------

@command("geoadd", -5, "write denyoom", keys=(1, 1, 1), key_flags="RW update", group="geo",
         since="3.2.0", acl="write geo slow")
def geoadd(ctx: Client, argv: list[bytes]) -> object:
    """GEOADD key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]"""
    at = 2
    nx = xx = False
    while at < len(argv):
        word = argv[at].lower()
        if word == b"nx":
            nx = True
        elif word == b"xx":
            xx = True
        elif word != b"ch":
            break
        at += 1
    if (len(argv) - at) % 3 or (xx and nx):
        raise ReplyError(errors.SYNTAX)
    zargv = [b"ZADD", *argv[1:at]]
    for i in range(at, len(argv), 3):
        x, y = _lonlat(argv, i)
        zargv += [b"%d" % geo.score_of(x, y), argv[i + 2]]
    dirty = ctx.server.dirty
    reply = zadd(ctx, zargv)
    if ctx.server.dirty != dirty:
        ctx.propagate(zargv)  # Redis rewrites the command into this ZADD
    return reply


# --- GEOPOS, GEODIST, GEOHASH -----------------------------------------------------------------

def _scores(ctx: Client, key: bytes) -> dict[bytes, float]:
    z = get_zset(ctx, key)
    return {} if z is None else z.scores


@command("geopos", -2, "readonly", keys=(1, 1, 1), key_flags=_RO, group="geo", since="3.2.0",
         acl="read geo slow")
def geopos(ctx: Client, argv: list[bytes]) -> object:
    """GEOPOS key [member [member ...]]"""
    scores = _scores(ctx, argv[1])
    out: list[object] = []
    for member in argv[2:]:
        score = scores.get(member)
        out.append(None if score is None else list(geo.decode(score)))
    return [NULL_ARRAY if item is None else item for item in out]


@command("geodist", -4, "readonly", keys=(1, 1, 1), key_flags=_RO, group="geo", since="3.2.0",
         acl="read geo slow")
def geodist(ctx: Client, argv: list[bytes]) -> object:
    """GEODIST key member1 member2 [M | KM | FT | MI]"""
    to_meters = 1.0
    if len(argv) == 5:
        to_meters = _unit(argv[4])
    elif len(argv) > 5:
        raise ReplyError(errors.SYNTAX)
    z = get_zset(ctx, argv[1])
    if z is None:
        return None
    s1 = z.scores.get(argv[2])
    s2 = z.scores.get(argv[3])
    if s1 is None or s2 is None:
        return None
    x1, y1 = geo.decode(s1)
    x2, y2 = geo.decode(s2)
    return geo.format_distance(geo.distance(x1, y1, x2, y2) / to_meters)


@command("geohash", -2, "readonly", keys=(1, 1, 1), key_flags=_RO, group="geo", since="3.2.0",
         acl="read geo slow")
def geohash(ctx: Client, argv: list[bytes]) -> object:
    """GEOHASH key [member [member ...]]"""
    scores = _scores(ctx, argv[1])
    out: list[bytes | None] = []
    for member in argv[2:]:
        score = scores.get(member)
        out.append(None if score is None else geo.geohash_string(score))
    return out


# --- the searches --------------------------------------------------------------------------------

_COORDS, _MEMBER, _NOSTORE, _SEARCH, _SEARCHSTORE = 1, 2, 4, 8, 16


class _Search:
    __slots__ = ("withdist", "withhash", "withcoord", "sort", "any", "count", "store", "storedist",
                 "frommember", "fromloc", "byradius", "bybox")

    def __init__(self) -> None:
        self.withdist = self.withhash = self.withcoord = False
        self.sort = 0  # 0 none, 1 ascending, 2 descending
        self.any = False
        self.count = 0
        self.store: bytes | None = None
        self.storedist = False
        self.frommember = self.fromloc = self.byradius = self.bybox = False


def _distance_args(argv: list[bytes], at: int) -> tuple[float, float]:
    """extractDistanceOrReply: (radius, unit's meters)."""
    radius = _double(argv[at], errors.GEO_NEED_RADIUS)
    if radius < 0:
        raise ReplyError(errors.GEO_NEGATIVE_RADIUS)
    return radius, _unit(argv[at + 1])


def _box_args(argv: list[bytes], at: int) -> tuple[float, float, float]:
    """extractBoxOrReply: (width, height, unit's meters)."""
    width = _double(argv[at], errors.GEO_NEED_WIDTH)
    height = _double(argv[at + 1], errors.GEO_NEED_HEIGHT)
    if height < 0 or width < 0:
        raise ReplyError(errors.GEO_NEGATIVE_BOX)
    return width, height, _unit(argv[at + 2])


def _member_position(z: ZSet, member: bytes) -> tuple[float, float]:
    score = z.scores.get(member)
    if score is None:
        raise ReplyError(errors.GEO_NO_MEMBER)
    return geo.decode(score)


def _search(ctx: Client, argv: list[bytes], src_index: int, flags: int) -> object:
    """georadiusGeneric."""
    z = get_zset(ctx, argv[src_index])
    opts = _Search()
    shape: geo.Shape | None = None
    if flags & _COORDS:
        base = 6
        x, y = _lonlat(argv, 2)
        radius, conversion = _distance_args(argv, 4)
        shape = geo.Shape(x, y, conversion, radius=radius)
    elif flags & _MEMBER and z is None:
        base = 5  # no key: the options are still read, for the reply's shape
    elif flags & _MEMBER and z is not None:
        base = 5
        x, y = _member_position(z, argv[2])
        radius, conversion = _distance_args(argv, 3)
        shape = geo.Shape(x, y, conversion, radius=radius)
    else:
        base = 3 if flags & _SEARCHSTORE else 2
        if flags & _SEARCHSTORE:
            opts.store = argv[1]
    center: tuple[float, float] | None = None
    area: tuple | None = None
    remaining = len(argv) - base
    i = 0
    while i < remaining:
        at = base + i
        word = argv[at].lower()
        if word == b"withdist":
            opts.withdist = True
        elif word == b"withhash":
            opts.withhash = True
        elif word == b"withcoord":
            opts.withcoord = True
        elif word == b"any":
            opts.any = True
        elif word == b"asc":
            opts.sort = 1
        elif word == b"desc":
            opts.sort = 2
        elif word == b"count" and i + 1 < remaining:
            opts.count = parse_int(argv[at + 1])
            if opts.count <= 0:
                raise ReplyError(errors.GEO_COUNT)
            i += 1
        elif word in (b"store", b"storedist") and i + 1 < remaining and not flags & (_NOSTORE | _SEARCH):
            opts.store = argv[at + 1]
            opts.storedist = word == b"storedist"
            i += 1
        elif word == b"storedist" and flags & _SEARCH and flags & _SEARCHSTORE:
            opts.storedist = True
        elif word == b"frommember" and i + 1 < remaining and flags & _SEARCH and not opts.fromloc:
            if z is not None:
                center = _member_position(z, argv[at + 1])
            opts.frommember = True
            i += 1
        elif word == b"fromlonlat" and i + 2 < remaining and flags & _SEARCH and not opts.frommember:
            center = _lonlat(argv, at + 1)
            opts.fromloc = True
            i += 2
        elif word == b"byradius" and i + 2 < remaining and flags & _SEARCH and not opts.bybox:
            area = ("radius", *_distance_args(argv, at + 1))
            opts.byradius = True
            i += 2
        elif word == b"bybox" and i + 3 < remaining and flags & _SEARCH and not opts.byradius:
            area = ("box", *_box_args(argv, at + 1))
            opts.bybox = True
            i += 3
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    if opts.store is not None and (opts.withdist or opts.withhash or opts.withcoord):
        raise ReplyError(errors.GEO_STORE_WITH.format(
            "GEOSEARCHSTORE" if flags & _SEARCHSTORE else "STORE option in GEORADIUS"))
    if flags & _SEARCH and not (opts.frommember or opts.fromloc):
        raise ReplyError(errors.GEO_NEED_FROM.format(errors.c_text(argv[0])))
    if flags & _SEARCH and not (opts.byradius or opts.bybox):
        raise ReplyError(errors.GEO_NEED_BY.format(errors.c_text(argv[0])))
    if opts.any and not opts.count:
        raise ReplyError(errors.GEO_ANY_COUNT)
    if z is None:
        if opts.store is not None:
            if ctx.db.delete(opts.store):
                ctx.modified(opts.store)
                ctx.notify(GENERIC, b"del", opts.store)
            return 0
        return []
    if flags & _SEARCH:
        assert center is not None and area is not None
        if area[0] == "radius":
            shape = geo.Shape(center[0], center[1], area[2], radius=area[1])
        else:
            shape = geo.Shape(center[0], center[1], area[3], width=area[1], height=area[2], circle=False)
    assert shape is not None
    if opts.count and not opts.sort and not opts.any:
        opts.sort = 1
    points = _points(z, shape, opts.count if opts.any else 0)
    if not points and opts.store is None:
        return []
    returned = len(points) if not opts.count or len(points) < opts.count else opts.count
    if opts.sort:
        points = _sorted(points, returned, opts.sort == 2)
    conversion = shape.conversion
    if opts.store is None:
        out: list[object] = []
        for member, score, x, y, dist in points[:returned]:
            dist /= conversion
            if not (opts.withdist or opts.withhash or opts.withcoord):
                out.append(member)
                continue
            item: list[object] = [member]
            if opts.withdist:
                item.append(geo.format_distance(dist))
            if opts.withhash:
                item.append(_long_long(score))
            if opts.withcoord:
                item.append([x, y])
            out.append(item)
        return out
    dest = opts.store
    if returned:
        scores = {}
        for member, score, _x, _y, dist in points[:returned]:
            scores[member] = dist / conversion if opts.storedist else score
        z_out = ZSet.from_dict(scores)
        z_out.big = z_out.fresh_big(config_int(ctx, "zset-max-listpack-entries"),
                                    config_int(ctx, "zset-max-listpack-value"))
        ctx.db.set(dest, z_out)
        ctx.modified(dest)
        ctx.notify(ZSET, b"geosearchstore" if flags & _SEARCH else b"georadiusstore", dest)
    elif ctx.db.delete(dest):
        ctx.modified(dest)
        ctx.notify(GENERIC, b"del", dest)
    return returned


def _long_long(score: float) -> int:
    return int(score)


def _points(z: ZSet, shape: geo.Shape, limit: int) -> list[tuple[bytes, float, float, float, float]]:
    """membersOfAllNeighbors: (member, score, longitude, latitude, distance) in scan order."""
    found: list[tuple[bytes, float, float, float, float]] = []
    boxes = geo.search_boxes(shape)
    last = 0
    for i, box in enumerate(boxes):
        if box is None:
            continue
        if last and box == boxes[last]:
            continue  # a huge radius makes neighbours repeat: each range once
        if found and limit and len(found) >= limit:
            break
        low, high = geo.box_scores(*box)
        lo, hi = z.score_bounds(float(low), False, float(high), True)
        if hi > lo:
            shape.scan(z.order[lo:hi], limit, found)
        last = i
    return found


def _sorted(points: list, returned: int, descending: bool) -> list:
    if returned == len(points):
        # glibc's qsort is a stable merge sort here: equal distances keep their order.
        return sorted(points, key=lambda p: p[4], reverse=descending)
    return geo.pqsort_distance(points, 0, returned - 1, descending)


def _radius_keys(start: int):  # noqa: ANN202
    """The key specs' search (getKeysUsingKeySpecs): the source, then for each of STORE and
    STOREDIST the argument after its first occurrence from `start` (the last is never
    a keyword, its key would be missing)."""
    def find(argv: list[bytes]) -> list[tuple[int, str]]:
        keys = [(1, _RO)]
        for keyword in (b"store", b"storedist"):
            for i in range(start, len(argv) - 1):
                if argv[i].lower() == keyword:
                    keys.append((i + 1, "OW update"))
                    break
        return keys
    return find


@command("georadius", -6, "write denyoom movablekeys", keys=(1, 1, 1), key_flags=_RO, group="geo",
         since="3.2.0", acl="write geo slow", find_keys=_radius_keys(6),
         keyword_keys=(("OW update", "STORE", 6), ("OW update", "STOREDIST", 6)))
def georadius(ctx: Client, argv: list[bytes]) -> object:
    """GEORADIUS key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]"""
    return _search(ctx, argv, 1, _COORDS)


@command("georadiusbymember", -5, "write denyoom movablekeys", keys=(1, 1, 1), key_flags=_RO,
         group="geo", since="3.2.0", acl="write geo slow", find_keys=_radius_keys(5),
         keyword_keys=(("OW update", "STORE", 5), ("OW update", "STOREDIST", 5)))
def georadiusbymember(ctx: Client, argv: list[bytes]) -> object:
    """GEORADIUSBYMEMBER key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]"""
    return _search(ctx, argv, 1, _MEMBER)


@command("georadius_ro", -6, "readonly", keys=(1, 1, 1), key_flags=_RO, group="geo", since="3.2.10",
         acl="read geo slow")
def georadius_ro(ctx: Client, argv: list[bytes]) -> object:
    """GEORADIUS_RO key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]"""
    return _search(ctx, argv, 1, _COORDS | _NOSTORE)


@command("georadiusbymember_ro", -5, "readonly", keys=(1, 1, 1), key_flags=_RO, group="geo",
         since="3.2.10", acl="read geo slow")
def georadiusbymember_ro(ctx: Client, argv: list[bytes]) -> object:
    """GEORADIUSBYMEMBER_RO key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]"""
    return _search(ctx, argv, 1, _MEMBER | _NOSTORE)


@command("geosearch", -7, "readonly", keys=(1, 1, 1), key_flags=_RO, group="geo", since="6.2.0",
         acl="read geo slow")
def geosearch(ctx: Client, argv: list[bytes]) -> object:
    """GEOSEARCH key <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]"""
    return _search(ctx, argv, 1, _SEARCH)


@command("geosearchstore", -8, "write denyoom", keys=(1, 2, 1), key_flags="OW update|RO access",
         group="geo", since="6.2.0", acl="write geo slow")
def geosearchstore(ctx: Client, argv: list[bytes]) -> object:
    """GEOSEARCHSTORE destination source <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] [STOREDIST]"""
    return _search(ctx, argv, 2, _SEARCH | _SEARCHSTORE)
