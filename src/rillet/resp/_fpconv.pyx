# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""fpconv.py compiled: Redis's fpconv_dtoa (Grisu2) and d2string on C doubles.

Every score, RESP3 double and Lua number argument goes through one of these,
so ZRANGE WITHSCORES formats 100 doubles per call. fpconv.py stays the
reference, step for step (the pure path runs it; tests/resp/test_fpconv.py
holds the two equal on generated doubles). The C entry points (_fpconv.pxd)
let the compiled reply encoder write a double without a Python object.
"""

from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_FromStringAndSize

cdef uint64_t FRACMASK = 0x000FFFFFFFFFFFFFULL
cdef uint64_t EXPMASK = 0x7FF0000000000000ULL
cdef uint64_t HIDDEN = 0x0010000000000000ULL
cdef uint64_t SIGNMASK = 0x8000000000000000ULL
cdef int EXPBIAS = 1023 + 52
cdef int NPOWERS = 87
cdef int STEPPOWERS = 8
cdef int FIRSTPOWER = -348
cdef int EXPMAX = -32
cdef int EXPMIN = -60

ctypedef struct Fp:
    uint64_t frac
    int exp

# The cached powers of ten, filled from the reference at the end of this module.
cdef Fp POWERS[87]
cdef uint64_t TENS[20]


cdef inline uint64_t _bits(double d) noexcept nogil:
    cdef uint64_t bits
    memcpy(&bits, &d, 8)
    return bits


cdef inline Fp _multiply(Fp a, Fp b) noexcept nogil:
    """The high 64 bits of the 128-bit product, rounded (fpconv's multiply)."""
    cdef uint64_t lomask = 0xFFFFFFFFULL
    cdef uint64_t ah_bl = (a.frac >> 32) * (b.frac & lomask)
    cdef uint64_t al_bh = (a.frac & lomask) * (b.frac >> 32)
    cdef uint64_t al_bl = (a.frac & lomask) * (b.frac & lomask)
    cdef uint64_t ah_bh = (a.frac >> 32) * (b.frac >> 32)
    cdef uint64_t tmp = (ah_bl & lomask) + (al_bh & lomask) + (al_bl >> 32)
    tmp += 1ULL << 31
    cdef Fp out
    out.frac = ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (tmp >> 32)
    out.exp = a.exp + b.exp + 64
    return out


cdef inline void _round_digit(char* digits, int ndigits, uint64_t delta, uint64_t rem,
                              uint64_t kappa, uint64_t frac) noexcept nogil:
    while rem < frac and delta - rem >= kappa and (
            rem + kappa < frac or frac - rem > rem + kappa - frac):
        digits[ndigits - 1] -= 1
        rem += kappa


cdef int _grisu2(double d, char* digits, int* K) noexcept nogil:
    """digits (at most 18) and K of a finite non-zero |d|: |d| = digits * 10**K."""
    cdef uint64_t bits = _bits(d)
    cdef Fp w, upper, lower, cp
    w.frac = bits & FRACMASK
    w.exp = <int>((bits & EXPMASK) >> 52)
    if w.exp:
        w.frac += HIDDEN
        w.exp -= EXPBIAS
    else:
        w.exp = -EXPBIAS + 1
    # get_normalized_boundaries
    upper.frac = (w.frac << 1) + 1
    upper.exp = w.exp - 1
    while not (upper.frac & (HIDDEN << 1)):
        upper.frac <<= 1
        upper.exp -= 1
    upper.frac <<= 10
    upper.exp -= 10
    cdef int l_shift = 2 if w.frac == HIDDEN else 1
    lower.frac = (w.frac << l_shift) - 1
    lower.exp = w.exp - l_shift
    lower.frac <<= lower.exp - upper.exp
    lower.exp = upper.exp
    # normalize(w)
    while not (w.frac & HIDDEN):
        w.frac <<= 1
        w.exp -= 1
    w.frac <<= 11
    w.exp -= 11
    # find_cachedpow10
    cdef int approx = <int>(-(upper.exp + NPOWERS) * 0.30102999566398114)
    cdef int idx = (approx - FIRSTPOWER) / STEPPOWERS
    cdef int current
    while True:
        current = upper.exp + POWERS[idx].exp + 64
        if current < EXPMIN:
            idx += 1
        elif current > EXPMAX:
            idx -= 1
        else:
            break
    cp = POWERS[idx]
    w = _multiply(w, cp)
    upper = _multiply(upper, cp)
    lower = _multiply(lower, cp)
    lower.frac += 1
    upper.frac -= 1
    K[0] = -(FIRSTPOWER + idx * STEPPOWERS)
    # generate_digits
    cdef uint64_t wfrac = upper.frac - w.frac
    cdef uint64_t delta = upper.frac - lower.frac
    cdef int shift = -upper.exp
    cdef uint64_t one = 1ULL << shift
    cdef uint64_t part1 = upper.frac >> shift
    cdef uint64_t part2 = upper.frac & (one - 1)
    cdef uint64_t div, digit, tmp
    cdef int n = 0, kappa = 10, unit = 18, i
    for i in range(10, 20):
        div = TENS[i]
        digit = part1 / div
        if digit or n:
            digits[n] = <char>(digit + 48)
            n += 1
        part1 -= digit * div
        kappa -= 1
        tmp = (part1 << shift) + part2
        if tmp <= delta:
            K[0] += kappa
            _round_digit(digits, n, delta, tmp, div << shift, wfrac)
            return n
    while True:
        part2 *= 10
        delta *= 10
        kappa -= 1
        digit = part2 >> shift
        if digit or n:
            digits[n] = <char>(digit + 48)
            n += 1
        part2 &= one - 1
        if part2 < delta:
            K[0] += kappa
            _round_digit(digits, n, delta, part2, one, wfrac * TENS[unit])
            return n
        unit -= 1


cdef int _emit_digits(char* digits, int ndigits, char* dest, int K, bint neg) noexcept nogil:
    """Plain, decimal or scientific, by fpconv's thresholds."""
    cdef int exp = K + ndigits - 1
    if exp < 0:
        exp = -exp
    cdef int offset, idx = 0, cent = 0, dec
    if K >= 0 and exp < ndigits + 7:
        memcpy(dest, digits, ndigits)
        memset(dest + ndigits, 48, K)
        return ndigits + K
    if K < 0 and (K > -7 or exp < 4):
        offset = ndigits + K
        if offset <= 0:
            offset = -offset
            dest[0] = 48
            dest[1] = 46
            memset(dest + 2, 48, offset)
            memcpy(dest + offset + 2, digits, ndigits)
            return ndigits + 2 + offset
        memcpy(dest, digits, offset)
        dest[offset] = 46
        memcpy(dest + offset + 1, digits + offset, ndigits - offset)
        return ndigits + 1
    if ndigits > 18 - neg:
        ndigits = 18 - neg
    dest[idx] = digits[0]
    idx += 1
    if ndigits > 1:
        dest[idx] = 46
        idx += 1
        memcpy(dest + idx, digits + 1, ndigits - 1)
        idx += ndigits - 1
    dest[idx] = 101
    dest[idx + 1] = 45 if K + ndigits - 1 < 0 else 43
    idx += 2
    if exp > 99:
        cent = exp / 100
        dest[idx] = <char>(cent + 48)
        idx += 1
        exp -= cent * 100
    if exp > 9:
        dec = exp / 10
        dest[idx] = <char>(dec + 48)
        idx += 1
        exp -= dec * 10
    elif cent:
        dest[idx] = 48
        idx += 1
    dest[idx] = <char>(exp % 10 + 48)
    return idx + 1


cdef int fpconv_dtoa(double value, char* dest) noexcept nogil:
    cdef uint64_t bits = _bits(value)
    cdef int n = 0, K = 0, ndigits
    cdef bint neg = (bits & SIGNMASK) != 0
    cdef char digits[18]
    if neg:
        dest[0] = 45
        n = 1
    if value == 0:
        dest[n] = 48
        return n + 1
    if (bits & EXPMASK) == EXPMASK:
        if bits & FRACMASK:
            memcpy(dest + n, b"nan", 3)
        else:
            memcpy(dest + n, b"inf", 3)
        return n + 3
    ndigits = _grisu2(value, digits, &K)
    return n + _emit_digits(digits, ndigits, dest + n, K, neg)


cdef inline int _ll2string(long long value, char* dest) noexcept nogil:
    cdef char buf[24]
    cdef int width = 0, n = 0, i
    cdef unsigned long long v
    if value < 0:
        dest[0] = 45
        n = 1
        v = 0ULL - <unsigned long long>value
    else:
        v = <unsigned long long>value
    while True:
        buf[width] = <char>(48 + v % 10)
        width += 1
        v //= 10
        if v == 0:
            break
    for i in range(width):
        dest[n + i] = buf[width - 1 - i]
    return n + width


cdef inline bint _double2ll(double d, long long* out) noexcept nogil:
    """util.h double2ll: integral and within [-(LLONG_MAX/2), LLONG_MAX/2] (as doubles, 2**62)."""
    if not (-4611686018427387904.0 <= d <= 4611686018427387904.0):  # NaN fails too
        return False
    cdef long long ll = <long long>d
    if <double>ll != d:
        return False
    out[0] = ll
    return True


cdef int d2string(double value, char* dest) noexcept nogil:
    cdef long long ll
    if value != value:
        memcpy(dest, b"nan", 3)
        return 3
    if value == 0:
        if _bits(value) & SIGNMASK:
            dest[0] = 45
            dest[1] = 48
            return 2
        dest[0] = 48
        return 1
    if _double2ll(value, &ll):
        return _ll2string(ll, dest)
    return fpconv_dtoa(value, dest)  # inf and -inf included


def dtoa(double value):
    """fpconv_dtoa: Redis's text for a double."""
    cdef char buf[FPCONV_MAX]
    return PyBytes_FromStringAndSize(buf, fpconv_dtoa(value, buf))


def redis_double(double value):
    """d2string as addReplyDouble uses it: integral values as integers, else fpconv_dtoa."""
    cdef char buf[FPCONV_MAX]
    return PyBytes_FromStringAndSize(buf, d2string(value, buf))


# Last, once dtoa and redis_double exist: fpconv.py, imported here, binds them when
# this module is imported first.
from rillet.resp import fpconv as _python

for _i, (_frac, _exp) in enumerate(_python._POWERS):
    POWERS[_i].frac = _frac
    POWERS[_i].exp = _exp
for _i, _ten in enumerate(_python._TENS):
    TENS[_i] = _ten
