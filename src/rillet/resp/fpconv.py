"""Redis's fpconv_dtoa (deps/fpconv, Grisu2), digit for digit.

Grisu2 finds digits that round-trip but not always the shortest ones (it gives
17 digits for some doubles whose repr has 16); Redis prints doubles this way
(d2string, addReplyDouble), so replies that must match Redis's bytes use it.
`digits(value)` is grisu2's (digits, K): the value is digits * 10**K.
"""

from __future__ import annotations

import struct

from rillet.compiled import compiled

_D = struct.Struct("<d")
_Q = struct.Struct("<Q")
_FRACMASK = 0x000FFFFFFFFFFFFF
_EXPMASK = 0x7FF0000000000000
_HIDDEN = 0x0010000000000000
_EXPBIAS = 1023 + 52
_M64 = (1 << 64) - 1
_NPOWERS, _STEP, _FIRST = 87, 8, -348
_EXPMAX, _EXPMIN = -32, -60


def _cached_powers() -> list[tuple[int, int]]:
    """fpconv_powers.h's table: 10**k as a 64-bit normalised (frac, exp), k = -348 + 8i,
    the fraction rounded to nearest."""
    table = []
    for i in range(_NPOWERS):
        k = _FIRST + _STEP * i
        num, den = (10 ** k, 1) if k >= 0 else (1, 10 ** -k)
        exp = num.bit_length() - den.bit_length() - 64
        while True:
            n, d = (num, den << exp) if exp >= 0 else (num << -exp, den)
            frac, rem = divmod(n, d)
            if frac >= 1 << 64:
                exp += 1
                continue
            if frac < 1 << 63:
                exp -= 1
                continue
            if 2 * rem >= d:
                frac += 1
            break
        table.append((frac, exp))
    return table


_POWERS = _cached_powers()
assert _POWERS[0] == (18054884314459144840, -1220) and _POWERS[46] == (12500000000000000000, 3)
_TENS = [10 ** (19 - i) for i in range(20)]


def _multiply(af: int, ae: int, bf: int, be: int) -> tuple[int, int]:
    lomask = 0xFFFFFFFF
    ah_bl = (af >> 32) * (bf & lomask)
    al_bh = (af & lomask) * (bf >> 32)
    al_bl = (af & lomask) * (bf & lomask)
    ah_bh = (af >> 32) * (bf >> 32)
    tmp = (ah_bl & lomask) + (al_bh & lomask) + (al_bl >> 32)
    tmp += 1 << 31
    return (ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (tmp >> 32)) & _M64, ae + be + 64


def digits(value: float) -> tuple[str, int]:
    """grisu2 for a finite, non-zero value: (digits, K)."""
    bits = _Q.unpack(_D.pack(value))[0]
    frac = bits & _FRACMASK
    exp = (bits & _EXPMASK) >> 52
    if exp:
        frac += _HIDDEN
        exp -= _EXPBIAS
    else:
        exp = -_EXPBIAS + 1
    # get_normalized_boundaries
    uf, ue = (frac << 1) + 1, exp - 1
    while not uf & (_HIDDEN << 1):
        uf <<= 1
        ue -= 1
    uf = (uf << 10) & _M64
    ue -= 10
    l_shift = 2 if frac == _HIDDEN else 1
    lf, le = (frac << l_shift) - 1, exp - l_shift
    lf = (lf << (le - ue)) & _M64
    # normalize(w)
    wf, we = frac, exp
    while not wf & _HIDDEN:
        wf <<= 1
        we -= 1
    wf = (wf << 11) & _M64
    we -= 11
    # find_cachedpow10
    approx = int(-(ue + _NPOWERS) * 0.30102999566398114)
    idx = int((approx - _FIRST) / _STEP)
    while True:
        current = ue + _POWERS[idx][1] + 64
        if current < _EXPMIN:
            idx += 1
        elif current > _EXPMAX:
            idx -= 1
        else:
            break
    k = _FIRST + idx * _STEP
    cf, ce = _POWERS[idx]
    wf, we = _multiply(wf, we, cf, ce)
    uf, ue = _multiply(uf, ue, cf, ce)
    lf, le = _multiply(lf, le, cf, ce)
    lf += 1
    uf -= 1
    K = -k
    # generate_digits
    wfrac = (uf - wf) & _M64
    delta = (uf - lf) & _M64
    shift = -ue
    one = 1 << shift
    part1 = uf >> shift
    part2 = uf & (one - 1)
    out: list[int] = []
    kappa = 10
    for div in _TENS[10:]:
        digit = part1 // div
        if digit or out:
            out.append(digit)
        part1 -= digit * div
        kappa -= 1
        tmp = (part1 << shift) + part2
        if tmp <= delta:
            K += kappa
            _round(out, delta, tmp, div << shift, wfrac)
            return "".join(map(str, out)), K
    unit = 18
    while True:
        part2 = (part2 * 10) & _M64
        delta = (delta * 10) & _M64
        kappa -= 1
        digit = part2 >> shift
        if digit or out:
            out.append(digit)
        part2 &= one - 1
        if part2 < delta:
            K += kappa
            _round(out, delta, part2, one, (wfrac * _TENS[unit]) & _M64)
            return "".join(map(str, out)), K
        unit -= 1


def _round(out: list[int], delta: int, rem: int, kappa: int, frac: int) -> None:
    while rem < frac and delta - rem >= kappa and (
            rem + kappa < frac or frac - rem > rem + kappa - frac):
        out[-1] -= 1
        rem += kappa


def dtoa(value: float) -> bytes:
    """fpconv_dtoa: Redis's text for a double."""
    neg = _Q.unpack(_D.pack(value))[0] >> 63 == 1
    sign = "-" if neg else ""
    if value == 0:
        return (sign + "0").encode()
    if value != value:
        return (sign + "nan").encode()
    if value in (float("inf"), float("-inf")):
        return (sign + "inf").encode()
    ds, K = digits(abs(value))
    n = len(ds)
    exp = abs(K + n - 1)
    if K >= 0 and exp < n + 7:
        return (sign + ds + "0" * K).encode()
    if K < 0 and (K > -7 or exp < 4):
        offset = n - abs(K)
        if offset <= 0:
            return (sign + "0." + "0" * -offset + ds).encode()
        return (sign + ds[:offset] + "." + ds[offset:]).encode()
    n = min(n, 18 - neg)
    text = ds[0] + ("." + ds[1:n] if n > 1 else "")
    e = K + n - 1  # fpconv takes the sign from the truncated count, the exponent from all
    return (sign + text + "e" + ("-" if e < 0 else "+") + str(exp)).encode()


_python_dtoa = dtoa  # redis_double's, whichever dtoa the module ends up exporting
_HALF_LLONG_MAX = float((2**63 - 1) // 2)


def redis_double(value: float) -> bytes:
    """d2string as addReplyDouble uses it: zero and integral values below LLONG_MAX/2 as
    integers, everything else fpconv_dtoa's text (NaN unsigned: d2string writes it itself)."""
    if value != value:
        return b"nan"
    if value == 0:
        return b"-0" if _Q.unpack(_D.pack(value))[0] >> 63 else b"0"
    if -_HALF_LLONG_MAX <= value <= _HALF_LLONG_MAX and value == int(value):
        return b"%d" % int(value)
    return _python_dtoa(value)


# The references, for the tests that hold the compiled forms to them.
python_dtoa, python_redis_double = _python_dtoa, redis_double

# Compiled (see _fpconv.pyx and rillet/compiled.py); without it the Python above runs.
_fpconv = compiled("rillet.resp._fpconv")
if _fpconv is not None:
    dtoa = _fpconv.dtoa  # noqa: F811
    redis_double = _fpconv.redis_double  # noqa: F811
