"""Redis's pqsort: Bentley & McIlroy's quicksort (NetBSD's qsort) that only sorts the
partitions overlapping a range of positions.

GEORADIUS/GEOSEARCH with COUNT sort partially with it, so which of several
equally distant points come first is whatever this algorithm leaves there;
a port keeping every comparison and swap in Redis's order gives the same
answer. Indexes replace its byte pointers. Redis's version has no switch to
insertion sort after a partition without swaps (as FreeBSD dropped it): ties
differ with it, against Redis 8.2.3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Compare = Callable[[Any, Any], int]  # (items of any one type)


def _med3(a: list, i: int, j: int, k: int, cmp: Compare) -> int:
    if cmp(a[i], a[j]) < 0:
        return j if cmp(a[j], a[k]) < 0 else (k if cmp(a[i], a[k]) < 0 else i)
    return j if cmp(a[j], a[k]) > 0 else (i if cmp(a[i], a[k]) < 0 else k)


def _vecswap(a: list, i: int, j: int, n: int) -> None:
    for t in range(n):
        a[i + t], a[j + t] = a[j + t], a[i + t]


def _insertion(a: list, base: int, n: int, cmp: Compare) -> None:
    for m in range(base + 1, base + n):
        k = m
        while k > base and cmp(a[k - 1], a[k]) > 0:
            a[k], a[k - 1] = a[k - 1], a[k]
            k -= 1


def pqsort(a: list, cmp: Compare, lrange: int, rrange: int) -> None:
    """Sort `a` in place enough that positions lrange..rrange hold what a full sort would."""
    _pqsort(a, 0, len(a), cmp, lrange, rrange)


def _pqsort(a: list, base: int, n: int, cmp: Compare, lo: int, hi: int) -> None:
    while True:
        if n < 7:
            _insertion(a, base, n, cmp)
            return
        pm = base + n // 2
        if n > 7:
            pl = base
            pn = base + n - 1
            if n > 40:
                d = n // 8
                pl = _med3(a, pl, pl + d, pl + 2 * d, cmp)
                pm = _med3(a, pm - d, pm, pm + d, cmp)
                pn = _med3(a, pn - 2 * d, pn - d, pn, cmp)
            pm = _med3(a, pl, pm, pn, cmp)
        a[base], a[pm] = a[pm], a[base]
        pa = pb = base + 1
        pc = pd = base + n - 1
        while True:
            while pb <= pc:
                r = cmp(a[pb], a[base])
                if r > 0:
                    break
                if r == 0:
                    a[pa], a[pb] = a[pb], a[pa]
                    pa += 1
                pb += 1
            while pb <= pc:
                r = cmp(a[pc], a[base])
                if r < 0:
                    break
                if r == 0:
                    a[pc], a[pd] = a[pd], a[pc]
                    pd -= 1
                pc -= 1
            if pb > pc:
                break
            a[pb], a[pc] = a[pc], a[pb]
            pb += 1
            pc -= 1
        pn = base + n
        r = min(pa - base, pb - pa)
        _vecswap(a, base, pb - r, r)
        r = min(pd - pc, pn - pd - 1)
        _vecswap(a, pb, pn - r, r)
        r = pb - pa
        if r > 1 and not ((lo < base and hi < base) or (lo >= base + r and hi >= base + r)):
            _pqsort(a, base, r, cmp, lo, hi)
        r = pd - pc
        if r <= 1:
            return
        base = pn - r
        n = r
        if (lo < base and hi < base) or (lo >= base + n and hi >= base + n):
            return
