# cython: boundscheck=False, wraparound=False, cdivision=True
"""Compiled forms of engine/geo.py's per-point work (the Python originals are the
reference; tests/engine/test_hll_geo.py holds these to them on random inputs).

A search decodes and measures every point of its nine boxes: the score's
deinterleave, the box center, the haversine. The arithmetic is the same
operations in the same order on C doubles, and the math functions are the
same libm's as Python's `math`, so the digits are the same.
"""

from libc.math cimport asin, cos, fabs, sin, sqrt
from libc.stdint cimport int64_t, uint32_t, uint64_t

DEF STEP_MAX = 26

cdef double LONG_MIN = -180.0
cdef double LONG_MAX = 180.0
cdef double LAT_MIN = -85.05112878
cdef double LAT_MAX = 85.05112878
cdef double EARTH_RADIUS = 6372797.560856
cdef double D_R = 3.141592653589793 / 180.0
cdef double TWO63 = 9223372036854775808.0


cdef inline uint64_t _to_uint64(double score):
    # (uint64_t) of a double as gcc compiles it on x86-64 (see geo._to_uint64).
    cdef double shifted
    if score < TWO63:
        if score < -TWO63:
            return (<uint64_t>1) << 63
        return <uint64_t>(<int64_t>score)
    shifted = score - TWO63
    if shifted != shifted or shifted >= TWO63:
        return 0
    return (<uint64_t>(<int64_t>shifted)) ^ ((<uint64_t>1) << 63)


cdef inline void _decode(double score, double *x, double *y):
    cdef uint64_t bits = _to_uint64(score)
    cdef uint64_t a = bits
    cdef uint64_t b = bits >> 1
    a = (a | (a >> 0)) & 0x5555555555555555ULL
    b = (b | (b >> 0)) & 0x5555555555555555ULL
    a = (a | (a >> 1)) & 0x3333333333333333ULL
    b = (b | (b >> 1)) & 0x3333333333333333ULL
    a = (a | (a >> 2)) & 0x0F0F0F0F0F0F0F0FULL
    b = (b | (b >> 2)) & 0x0F0F0F0F0F0F0F0FULL
    a = (a | (a >> 4)) & 0x00FF00FF00FF00FFULL
    b = (b | (b >> 4)) & 0x00FF00FF00FF00FFULL
    a = (a | (a >> 8)) & 0x0000FFFF0000FFFFULL
    b = (b | (b >> 8)) & 0x0000FFFF0000FFFFULL
    a = (a | (a >> 16)) & 0x00000000FFFFFFFFULL
    b = (b | (b >> 16)) & 0x00000000FFFFFFFFULL
    cdef uint32_t lat_bits = <uint32_t>a
    cdef uint32_t long_bits = <uint32_t>b
    cdef double lat_scale = LAT_MAX - LAT_MIN
    cdef double long_scale = LONG_MAX - LONG_MIN
    cdef double div = <double>((<uint64_t>1) << STEP_MAX)
    cdef double lo_min = LONG_MIN + (long_bits * 1.0 / div) * long_scale
    cdef double lo_max = LONG_MIN + ((<uint32_t>(long_bits + 1)) * 1.0 / div) * long_scale
    cdef double la_min = LAT_MIN + (lat_bits * 1.0 / div) * lat_scale
    cdef double la_max = LAT_MIN + ((<uint32_t>(lat_bits + 1)) * 1.0 / div) * lat_scale
    cdef double cx = (lo_min + lo_max) / 2
    cdef double cy = (la_min + la_max) / 2
    if cx > LONG_MAX:
        cx = LONG_MAX
    if cx < LONG_MIN:
        cx = LONG_MIN
    if cy > LAT_MAX:
        cy = LAT_MAX
    if cy < LAT_MIN:
        cy = LAT_MIN
    x[0] = cx
    y[0] = cy


cdef inline double _lat_distance(double lat1, double lat2):
    return EARTH_RADIUS * fabs(lat2 * D_R - lat1 * D_R)


cdef inline double _distance(double lon1, double lat1, double lon2, double lat2):
    cdef double lon1r = lon1 * D_R
    cdef double lon2r = lon2 * D_R
    cdef double v = sin((lon2r - lon1r) / 2)
    if v == 0.0:
        return _lat_distance(lat1, lat2)
    cdef double lat1r = lat1 * D_R
    cdef double lat2r = lat2 * D_R
    cdef double u = sin((lat2r - lat1r) / 2)
    cdef double a = u * u + cos(lat1r) * cos(lat2r) * v * v
    return 2.0 * EARTH_RADIUS * asin(sqrt(a))


def decode(double score):
    cdef double x = 0, y = 0
    _decode(score, &x, &y)
    return x, y


def distance(double lon1, double lat1, double lon2, double lat2):
    return _distance(lon1, lat1, lon2, lat2)


def scan_points(list pairs, bint circle, double cx, double cy, double radius_m, double width_m,
                double height_m, Py_ssize_t limit, list found):
    cdef double x = 0, y = 0, d, score
    cdef tuple pair
    for pair in pairs:
        score = pair[0]
        _decode(score, &x, &y)
        if circle:
            d = _distance(cx, cy, x, y)
            if not d > radius_m:
                found.append((pair[1], pair[0], x, y, d))
        elif not _lat_distance(y, cy) > height_m / 2 and not _distance(x, y, cx, y) > width_m / 2:
            found.append((pair[1], pair[0], x, y, _distance(cx, cy, x, y)))
        if limit and len(found) >= limit:
            return


# --- pqsort on distances (engine/pqsort.py, specialised: item[4] is the key) ---------------------

from libc.stdlib cimport free, malloc


cdef inline int _cmp(double *k, Py_ssize_t i, Py_ssize_t j, int sign) noexcept nogil:
    cdef double a = k[i], b = k[j]
    if a > b:
        return sign
    if a == b:
        return 0
    return -sign


cdef inline void _swap(double *k, Py_ssize_t *perm, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef double t = k[i]
    k[i] = k[j]
    k[j] = t
    cdef Py_ssize_t u = perm[i]
    perm[i] = perm[j]
    perm[j] = u


cdef inline Py_ssize_t _med3(double *k, Py_ssize_t i, Py_ssize_t j, Py_ssize_t m, int s) noexcept nogil:
    if _cmp(k, i, j, s) < 0:
        if _cmp(k, j, m, s) < 0:
            return j
        return m if _cmp(k, i, m, s) < 0 else i
    if _cmp(k, j, m, s) > 0:
        return j
    return i if _cmp(k, i, m, s) < 0 else m


cdef void _insertion(double *k, Py_ssize_t *perm, Py_ssize_t base, Py_ssize_t n, int s) noexcept nogil:
    cdef Py_ssize_t m, q
    for m in range(base + 1, base + n):
        q = m
        while q > base and _cmp(k, q - 1, q, s) > 0:
            _swap(k, perm, q, q - 1)
            q -= 1


cdef void _pq(double *k, Py_ssize_t *perm, Py_ssize_t base, Py_ssize_t n, int s,
              Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t pm, pl, pn, d, pa, pb, pc, pd, r, t
    cdef int res
    while True:
        if n < 7:
            _insertion(k, perm, base, n, s)
            return
        pm = base + n // 2
        if n > 7:
            pl = base
            pn = base + n - 1
            if n > 40:
                d = n // 8
                pl = _med3(k, pl, pl + d, pl + 2 * d, s)
                pm = _med3(k, pm - d, pm, pm + d, s)
                pn = _med3(k, pn - 2 * d, pn - d, pn, s)
            pm = _med3(k, pl, pm, pn, s)
        _swap(k, perm, base, pm)
        pa = base + 1
        pb = pa
        pc = base + n - 1
        pd = pc
        while True:
            while pb <= pc:
                res = _cmp(k, pb, base, s)
                if res > 0:
                    break
                if res == 0:
                    _swap(k, perm, pa, pb)
                    pa += 1
                pb += 1
            while pb <= pc:
                res = _cmp(k, pc, base, s)
                if res < 0:
                    break
                if res == 0:
                    _swap(k, perm, pc, pd)
                    pd -= 1
                pc -= 1
            if pb > pc:
                break
            _swap(k, perm, pb, pc)
            pb += 1
            pc -= 1
        pn = base + n
        r = pa - base if pa - base < pb - pa else pb - pa
        for t in range(r):
            _swap(k, perm, base + t, pb - r + t)
        r = pd - pc if pd - pc < pn - pd - 1 else pn - pd - 1
        for t in range(r):
            _swap(k, perm, pb + t, pn - r + t)
        r = pb - pa
        if r > 1 and not ((lo < base and hi < base) or (lo >= base + r and hi >= base + r)):
            _pq(k, perm, base, r, s, lo, hi)
        r = pd - pc
        if r <= 1:
            return
        base = pn - r
        n = r
        if (lo < base and hi < base) or (lo >= base + n and hi >= base + n):
            return


def pqsort_distance(list items, Py_ssize_t lrange, Py_ssize_t rrange, bint descending):
    """The items (tuples whose [4] is the distance) after Redis's pqsort over lrange..rrange."""
    cdef Py_ssize_t n = len(items), i
    if n == 0:
        return []
    cdef double *k = <double *>malloc(n * sizeof(double))
    cdef Py_ssize_t *perm = <Py_ssize_t *>malloc(n * sizeof(Py_ssize_t))
    if k == NULL or perm == NULL:
        free(k)
        free(perm)
        raise MemoryError()
    try:
        for i in range(n):
            k[i] = items[i][4]
            perm[i] = i
        _pq(k, perm, 0, n, -1 if descending else 1, lrange, rrange)
        return [items[perm[i]] for i in range(n)]
    finally:
        free(k)
        free(perm)
