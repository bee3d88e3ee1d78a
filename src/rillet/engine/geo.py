"""Geo on sorted sets: Redis's 52-bit geohash scores and its search areas.

A position is stored as a sorted-set score: longitude and latitude scaled to
26 bits each over [-180, 180] x [-85.05112878, 85.05112878] and interleaved
(latitude on the even bits). Searches walk the center geohash box and its
eight neighbours at a step chosen from the radius, as Redis's geohash.c and
geohash_helper.c do, and keep the points within the circle (haversine on
Redis's earth radius) or the box. The double arithmetic is Redis's, operation
by operation, so distances print the same digits.
"""

from __future__ import annotations

import math

from rillet.compiled import compiled
from rillet.engine.pqsort import pqsort

LONG_MIN, LONG_MAX = -180.0, 180.0
LAT_MIN, LAT_MAX = -85.05112878, 85.05112878
STEP_MAX = 26
EARTH_RADIUS = 6372797.560856
MERCATOR_MAX = 20037726.37
_D_R = math.pi / 180.0
_M64 = (1 << 64) - 1
_TWO63 = 9223372036854775808.0
_ALPHABET = b"0123456789bcdefghjkmnpqrstuvwxyz"
UNITS = {b"m": 1.0, b"km": 1000.0, b"ft": 0.3048, b"mi": 1609.34}


def _interleave(x: int, y: int) -> int:
    """interleave64: x's bits on the even positions, y's on the odd (32-bit inputs)."""
    x &= 0xFFFFFFFF
    y &= 0xFFFFFFFF
    for shift, mask in ((16, 0x0000FFFF0000FFFF), (8, 0x00FF00FF00FF00FF),
                        (4, 0x0F0F0F0F0F0F0F0F), (2, 0x3333333333333333), (1, 0x5555555555555555)):
        x = (x | (x << shift)) & mask
        y = (y | (y << shift)) & mask
    return x | (y << 1)


def _deinterleave(bits: int) -> tuple[int, int]:
    """deinterleave64: (even bits, odd bits)."""
    x = bits
    y = bits >> 1
    for shift, mask in ((0, 0x5555555555555555), (1, 0x3333333333333333), (2, 0x0F0F0F0F0F0F0F0F),
                        (4, 0x00FF00FF00FF00FF), (8, 0x0000FFFF0000FFFF), (16, 0x00000000FFFFFFFF)):
        x = (x | (x >> shift)) & mask
        y = (y | (y >> shift)) & mask
    return x, y


def encode(longitude: float, latitude: float, step: int = STEP_MAX,
           lat_min: float = LAT_MIN, lat_max: float = LAT_MAX) -> int | None:
    """geohashEncode: the step*2-bit hash, or None outside the supported area."""
    if longitude > 180 or longitude < -180 or latitude > 85.05112878 or latitude < -85.05112878:
        return None
    if latitude < lat_min or latitude > lat_max or longitude < LONG_MIN or longitude > LONG_MAX:
        return None
    lat_offset = (latitude - lat_min) / (lat_max - lat_min)
    long_offset = (longitude - LONG_MIN) / (LONG_MAX - LONG_MIN)
    lat_offset *= 1 << step
    long_offset *= 1 << step
    return _interleave(int(lat_offset), int(long_offset))


def score_of(longitude: float, latitude: float) -> int:
    """GEOADD's score: the 26-step hash aligned to 52 bits."""
    return encode(longitude, latitude) or 0


def _area(bits: int, step: int, lat_min: float = LAT_MIN,
          lat_max: float = LAT_MAX) -> tuple[float, float, float, float]:
    """geohashDecode: (long min, long max, lat min, lat max) of a hash box."""
    lat_bits, long_bits = _deinterleave(bits)
    lat_bits &= 0xFFFFFFFF
    long_bits &= 0xFFFFFFFF
    lat_scale = lat_max - lat_min
    long_scale = LONG_MAX - LONG_MIN
    div = float(1 << step)
    # (ilono + 1) is uint32_t arithmetic in Redis: it wraps for a score of all ones.
    return (LONG_MIN + (long_bits * 1.0 / div) * long_scale,
            LONG_MIN + (((long_bits + 1) & 0xFFFFFFFF) * 1.0 / div) * long_scale,
            lat_min + (lat_bits * 1.0 / div) * lat_scale,
            lat_min + (((lat_bits + 1) & 0xFFFFFFFF) * 1.0 / div) * lat_scale)


def _to_uint64(score: float) -> int:
    """(uint64_t) of a double as gcc compiles it on x86-64 (out of range: cvttsd2si's 2**63)."""
    if score < _TWO63:
        if score < -_TWO63:
            return 1 << 63
        return int(score) & _M64
    shifted = score - _TWO63
    if shifted != shifted or shifted >= _TWO63:
        return 0  # the indefinite 2**63 with the top bit flipped back
    return int(shifted) ^ (1 << 63)


def decode(score: float) -> tuple[float, float]:
    """decodeGeohash: a score's (longitude, latitude), the box center clamped to the area."""
    lo_min, lo_max, la_min, la_max = _area(_to_uint64(score), STEP_MAX)
    x = (lo_min + lo_max) / 2
    x = min(max(x, LONG_MIN), LONG_MAX)
    y = (la_min + la_max) / 2
    y = min(max(y, LAT_MIN), LAT_MAX)
    return x, y


def geohash_string(score: float) -> bytes:
    """GEOHASH's 11 characters: the position re-encoded over the standard [-90, 90]."""
    x, y = decode(score)
    bits = encode(x, y, STEP_MAX, -90.0, 90.0)
    if bits is None:
        bits = 0  # unreachable: decode clamps into the area (Redis would print stack garbage)
    out = bytearray(11)
    for i in range(11):
        idx = 0 if i == 10 else (bits >> (52 - (i + 1) * 5)) & 0x1F
        out[i] = _ALPHABET[idx]
    return bytes(out)


# --- distances ---------------------------------------------------------------------------------

def _rad(deg: float) -> float:
    return deg * _D_R


def _sin(x: float) -> float:
    return math.sin(x) if math.isfinite(x) else math.nan  # C's sin(inf) is NaN


def _cos(x: float) -> float:
    return math.cos(x) if math.isfinite(x) else math.nan


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 or x != x else math.nan


def lat_distance(lat1: float, lat2: float) -> float:
    return EARTH_RADIUS * abs(_rad(lat2) - _rad(lat1))


def distance(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """geohashGetDistance: haversine on Redis's earth radius, meters."""
    lon1r = _rad(lon1)
    lon2r = _rad(lon2)
    v = _sin((lon2r - lon1r) / 2)
    if v == 0.0:
        return lat_distance(lat1, lat2)
    lat1r = _rad(lat1)
    lat2r = _rad(lat2)
    u = _sin((lat2r - lat1r) / 2)
    a = u * u + _cos(lat1r) * _cos(lat2r) * v * v
    return 2.0 * EARTH_RADIUS * _asin(_sqrt(a))


def _asin(x: float) -> float:
    if x > 1.0 or x < -1.0 or x != x:
        return math.nan  # C's asin outside its domain
    return math.asin(x)


def format_distance(d: float) -> bytes:
    """fixedpoint_d2string(d, 4): llrint(d * 10000) with the point put back."""
    if d == 0:
        return b"0.0000"
    scaled = d * 10000.0
    if scaled != scaled or abs(scaled) >= _TWO63:
        value = -(1 << 63)  # llrint's out-of-range result
    else:
        value = round(scaled)  # llrint rounds half to even, as round() does
    sign = b"-" if value < 0 else b""
    digits = b"%05d" % abs(value)
    return sign + digits[:-4] + b"." + digits[-4:]


# --- search areas -------------------------------------------------------------------------------

def scan_points(pairs: list[tuple[float, bytes]], circle: bool, cx: float, cy: float,
                radius_m: float, width_m: float, height_m: float, limit: int,
                found: list[tuple[bytes, float, float, float, float]]) -> None:
    """Shape.scan's loop (geoWithinShape per point); engine/_geo.pyx compiles it."""
    for score, member in pairs:
        x, y = decode(score)
        # "not d > limit" as Redis tests it: a NaN distance (antipodes) is inside.
        if circle:
            d = distance(cx, cy, x, y)
            if not d > radius_m:
                found.append((member, score, x, y, d))
        elif not lat_distance(y, cy) > height_m / 2 and not distance(x, y, cx, y) > width_m / 2:
            found.append((member, score, x, y, distance(cx, cy, x, y)))
        if found and limit and len(found) >= limit:
            return


class Shape:
    """A search: center, a radius or a width/height, and the unit's meters."""

    __slots__ = ("x", "y", "radius", "width", "height", "conversion", "circle")

    def __init__(self, x: float, y: float, conversion: float, *, radius: float = 0.0,
                 width: float = 0.0, height: float = 0.0, circle: bool = True) -> None:
        self.x = x
        self.y = y
        self.conversion = conversion
        self.radius = radius
        self.width = width
        self.height = height
        self.circle = circle

    def scan(self, pairs: list[tuple[float, bytes]], limit: int,
             found: list[tuple[bytes, float, float, float, float]]) -> None:
        """geoGetPointsInRange's loop over one box's (score, member) pairs: append each
        point within the shape as (member, score, longitude, latitude, distance),
        stopping once `limit` (0: none) points are found."""
        scan_points(pairs, self.circle, self.x, self.y, self.radius * self.conversion,
                    self.width * self.conversion, self.height * self.conversion, limit, found)

    def bounds(self) -> tuple[float, float, float, float]:
        """geohashBoundingBox: (min long, min lat, max long, max lat)."""
        if self.circle:
            height = self.conversion * self.radius
            width = self.conversion * self.radius
        else:
            height = self.conversion * self.height / 2
            width = self.conversion * self.width / 2
        lat_delta = height / EARTH_RADIUS / _D_R
        long_delta_top = width / EARTH_RADIUS / _cos(_rad(self.y + lat_delta)) / _D_R
        long_delta_bottom = width / EARTH_RADIUS / _cos(_rad(self.y - lat_delta)) / _D_R
        southern = self.y < 0
        delta = long_delta_bottom if southern else long_delta_top
        return self.x - delta, self.y - lat_delta, self.x + delta, self.y + lat_delta


def _steps_for(range_meters: float, lat: float) -> int:
    """geohashEstimateStepsByRadius."""
    if range_meters == 0:
        return 26
    step = 1
    while range_meters < MERCATOR_MAX:
        range_meters *= 2
        step += 1
    step -= 2
    if lat > 66 or lat < -66:
        step -= 1
        if lat > 80 or lat < -80:
            step -= 1
    return min(max(step, 1), 26)


def _move_x(bits: int, step: int, d: int) -> int:
    x = bits & 0xAAAAAAAAAAAAAAAA
    y = bits & 0x5555555555555555
    zz = 0x5555555555555555 >> (64 - step * 2)
    if d > 0:
        x = x + (zz + 1)
    else:
        x = x | zz
        x = x - (zz + 1)
    x &= _M64
    x &= 0xAAAAAAAAAAAAAAAA >> (64 - step * 2)
    return x | y


def _move_y(bits: int, step: int, d: int) -> int:
    x = bits & 0xAAAAAAAAAAAAAAAA
    y = bits & 0x5555555555555555
    zz = 0xAAAAAAAAAAAAAAAA >> (64 - step * 2)
    if d > 0:
        y = y + (zz + 1)
    else:
        y = y | zz
        y = y - (zz + 1)
    y &= _M64
    y &= 0x5555555555555555 >> (64 - step * 2)
    return x | y


def _neighbors(bits: int, step: int) -> dict[str, int]:
    return {
        "north": _move_y(bits, step, 1),
        "south": _move_y(bits, step, -1),
        "east": _move_x(bits, step, 1),
        "west": _move_x(bits, step, -1),
        "north_east": _move_y(_move_x(bits, step, 1), step, 1),
        "north_west": _move_y(_move_x(bits, step, -1), step, 1),
        "south_east": _move_y(_move_x(bits, step, 1), step, -1),
        "south_west": _move_y(_move_x(bits, step, -1), step, -1),
    }


_ORDER = ("north", "south", "east", "west", "north_east", "north_west", "south_east", "south_west")


def search_boxes(shape: Shape) -> list[tuple[int, int] | None]:
    """geohashCalculateAreasByShapeWGS84: the nine (bits, step) boxes to scan, in Redis's
    order (center, N, S, E, W, NE, NW, SE, SW), None for the ones it leaves out."""
    min_lon, min_lat, max_lon, max_lat = shape.bounds()
    longitude, latitude = shape.x, shape.y
    if shape.circle:
        radius_meters = shape.radius
    else:
        radius_meters = _sqrt((shape.width / 2) * (shape.width / 2)
                                  + (shape.height / 2) * (shape.height / 2))
    radius_meters *= shape.conversion
    steps = _steps_for(radius_meters, latitude)
    bits = encode(longitude, latitude, steps)
    if bits is None:
        bits = 0  # the center was validated by the caller; never reached
    neighbors = _neighbors(bits, steps)
    north = _area(neighbors["north"], steps)
    south = _area(neighbors["south"], steps)
    east = _area(neighbors["east"], steps)
    west = _area(neighbors["west"], steps)
    decrease = (north[3] < max_lat or south[2] > min_lat
                or east[1] < max_lon or west[0] > min_lon)
    if steps > 1 and decrease:
        steps -= 1
        bits = encode(longitude, latitude, steps) or 0
        neighbors = _neighbors(bits, steps)
    area = _area(bits, steps)
    kept: dict[str, int | None] = dict(neighbors)
    if steps >= 2:
        if area[2] < min_lat:
            kept["south"] = kept["south_west"] = kept["south_east"] = None
        if area[3] > max_lat:
            kept["north"] = kept["north_east"] = kept["north_west"] = None
        if area[0] < min_lon:
            kept["west"] = kept["south_west"] = kept["north_west"] = None
        if area[1] > max_lon:
            kept["east"] = kept["south_east"] = kept["north_east"] = None
    boxes: list[tuple[int, int] | None] = [(bits, steps)]
    for name in _ORDER:
        value = kept[name]
        boxes.append(None if value is None else (value, steps))
    return boxes


def box_scores(bits: int, step: int) -> tuple[int, int]:
    """scoresOfGeoHashBox: the score range [min, max) of a hash box."""
    shift = 52 - step * 2
    return (bits << shift) & _M64, ((bits + 1) << shift) & _M64


# The Python originals stay reachable: tests/engine/test_hll_geo.py holds the compiled
# forms (engine/_geo.pyx) to them.
def pqsort_distance(items: list, lrange: int, rrange: int, descending: bool) -> list:
    """`items` ((member, score, x, y, distance) tuples) after Redis's pqsort by distance
    over positions lrange..rrange (ascending, or descending as sort_gp_desc compares)."""
    sign = -1 if descending else 1

    def cmp(a: tuple, b: tuple) -> int:  # sort_gp_asc / sort_gp_desc (NaN compares below)
        if a[4] > b[4]:
            return sign
        return 0 if a[4] == b[4] else -sign

    out = list(items)
    pqsort(out, cmp, lrange, rrange)
    return out


# The Python originals stay reachable: tests/engine/test_hll_geo.py holds the compiled
# forms (engine/_geo.pyx) to them.
py_decode, py_distance, py_scan_points, py_pqsort_distance = decode, distance, scan_points, pqsort_distance
_geo = compiled("rillet.engine._geo")
if _geo is not None:
    decode, distance, scan_points, pqsort_distance = (
        _geo.decode, _geo.distance, _geo.scan_points, _geo.pqsort_distance)
