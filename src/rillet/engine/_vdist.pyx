# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled forms of engine/vectorset.py's distance and ranking (the Python originals
are the reference; tests/engine/test_vdist.py holds these to them bit for bit).

Every VSIM and every VADD ranks all nodes by hnsw.c's distance. The Python emulates
single precision by rounding each step (`f32`); here the same operations run in the
same order on C floats, which IEEE rounds the same way (a float +, -, *, / or sqrt
done in double and rounded once to float is the correctly rounded float result).
setup.py builds this module with -ffp-contract=off so that no a*b+c becomes an FMA
(one rounding instead of two), and without -ffast-math (no reassociation).

The vectors are the nodes' own arrays (array('b') for Q8, array('Q') for BIN,
array('f') for NOQUANT), read in place.
"""

from cpython cimport array
from libc.math cimport floor, isinf, sqrtf
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, qsort

import array as _array

cdef array.array _INT8 = _array.array("b")

cdef int QUANT_NONE = 0
cdef int QUANT_Q8 = 1
cdef int QUANT_BIN = 2


cdef inline float _q8(const signed char* a, float ra, const signed char* b, float rb,
                      Py_ssize_t n) noexcept nogil:
    # int32 holds it (|q| <= 128, dim <= 65536: at most 2**30) and vectorises.
    cdef int32_t dot = 0
    cdef Py_ssize_t i
    cdef float scale, d
    if ra == 0 or rb == 0:
        return 1.0
    for i in range(n):
        dot += a[i] * b[i]
    scale = (ra / <float>127) * (rb / <float>127)
    d = <float>1.0 - (<float>dot) * scale
    if d < 0:
        return 0.0
    if d > 2:
        return 2.0
    return d


cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil


cdef inline float _bin(const uint64_t* a, const uint64_t* b, Py_ssize_t words,
                       float dim) noexcept nogil:
    cdef int64_t opposite = 0
    cdef Py_ssize_t i
    for i in range(words):
        opposite += __builtin_popcountll(a[i] ^ b[i])
    return (<float>(opposite * 2)) / dim


cdef inline float _float(const float* x, const float* y, Py_ssize_t dim) noexcept nogil:
    cdef float dot0 = 0, dot1 = 0, s
    cdef Py_ssize_t i = 0
    while i + 7 < dim:
        s = x[i] * y[i]
        s = s + x[i + 1] * y[i + 1]
        s = s + x[i + 2] * y[i + 2]
        s = s + x[i + 3] * y[i + 3]
        dot0 = dot0 + s
        s = x[i + 4] * y[i + 4]
        s = s + x[i + 5] * y[i + 5]
        s = s + x[i + 6] * y[i + 6]
        s = s + x[i + 7] * y[i + 7]
        dot1 = dot1 + s
        i += 8
    while i < dim:
        dot0 = dot0 + x[i] * y[i]
        i += 1
    return <float>1.0 - (dot0 + dot1)


cdef inline float _kernel(int quant, float fdim, array.array qa, float ra, array.array qb,
                          float rb) except? -1:
    cdef Py_ssize_t na = len(qa), nb = len(qb)
    if quant == QUANT_Q8:
        return _q8(qa.data.as_schars, ra, qb.data.as_schars, rb, na if na < nb else nb)
    if quant == QUANT_BIN:
        if na != nb:  # zip(strict=True) in the Python
            raise ValueError("zip() arguments differ in length")
        return _bin(<uint64_t*>qa.data.as_ulonglongs, <uint64_t*>qb.data.as_ulonglongs, na, fdim)
    if nb < na:  # the Python indexes y up to len(x)
        raise IndexError("array index out of range")
    return _float(qa.data.as_floats, qb.data.as_floats, na)


def distance(int quant, int dim, array.array qa, float ra, array.array qb, float rb):
    """vectorset.distance: hnsw_distance between two stored vectors."""
    return _kernel(quant, <float>dim, qa, ra, qb, rb)


ctypedef struct Scored:
    float d
    Py_ssize_t i


cdef int _cmp(const void* x, const void* y) noexcept nogil:
    # (distance, position): the stable sort's order, there being no NaN here.
    cdef const Scored* a = <const Scored*>x
    cdef const Scored* b = <const Scored*>y
    if a.d < b.d:
        return -1
    if a.d > b.d:
        return 1
    return -1 if a.i < b.i else (1 if a.i > b.i else 0)


cdef inline bint _less(Scored a, Scored b) noexcept nogil:
    return a.d < b.d or (a.d == b.d and a.i < b.i)


cdef void _sift_down(Scored* heap, Py_ssize_t size, Py_ssize_t at) noexcept nogil:
    # A max-heap on (distance, position): its top is the worst of the best so far.
    cdef Py_ssize_t child
    cdef Scored item = heap[at]
    while True:
        child = 2 * at + 1
        if child >= size:
            break
        if child + 1 < size and _less(heap[child], heap[child + 1]):
            child += 1
        if not _less(item, heap[child]):
            break
        heap[at] = heap[child]
        at = child
    heap[at] = item


cdef void _sift_up(Scored* heap, Py_ssize_t at) noexcept nogil:
    cdef Py_ssize_t parent
    cdef Scored item = heap[at]
    while at > 0:
        parent = (at - 1) // 2
        if not _less(heap[parent], item):
            break
        heap[at] = heap[parent]
        at = parent
    heap[at] = item


def rank(nodes, int quant, int dim, array.array q, float qrange, accept, int min_level,
         limit):
    """vectorset.rank: (distance, node) for every node of `nodes` (in order) on a level
    >= min_level that `accept` takes, nearest first (ties in `nodes` order), the first
    `limit` of them (all if None, limit >= 0). Keeps the best `limit` in a heap on
    (distance, position) rather than sorting them all."""
    cdef list order = nodes if type(nodes) is list else list(nodes)
    cdef Py_ssize_t n = len(order), cap, size = 0, j
    cdef float fdim = <float>dim, d
    cdef bint has_nan = False
    cdef Scored item
    cdef Scored* heap
    cdef unsigned char* taken
    cdef list out
    cdef object node
    cap = n if limit is None or limit > n else limit
    if cap < 0:
        cap = 0
    heap = <Scored*>malloc((cap + 1) * sizeof(Scored))
    taken = <unsigned char*>malloc(n + 1)
    if heap == NULL or taken == NULL:
        free(heap)
        free(taken)
        raise MemoryError()
    try:
        for j in range(n):
            taken[j] = 0
            node = order[j]
            if min_level > 0 and node.level < min_level:
                continue
            if accept is not None and not accept(node):
                continue
            taken[j] = 1
            d = _kernel(quant, fdim, q, qrange, node.q, node.qrange)
            if d != d:
                has_nan = True
            if has_nan or cap == 0:
                continue
            item.d = d
            item.i = j
            if size < cap:
                heap[size] = item
                _sift_up(heap, size)
                size += 1
            elif _less(item, heap[0]):
                heap[0] = item
                _sift_down(heap, size, 0)
        if has_nan:
            # NaN compares false both ways: leave the order to the Python sort.
            out = [(float(_kernel(quant, fdim, q, qrange, order[j].q, order[j].qrange)), order[j])
                   for j in range(n) if taken[j]]
            out.sort(key=_first)
            return out if limit is None else out[:limit]
        qsort(heap, size, sizeof(Scored), _cmp)
        out = [None] * size
        for j in range(size):
            out[j] = (heap[j].d, order[heap[j].i])
        return out
    finally:
        free(heap)
        free(taken)


def _first(pair):
    return pair[0]


def nearer_link(int quant, int dim, node, list links, double dist):
    """vectorset.nearer_link: is any of `links` nearer to `node` than `dist`?"""
    cdef array.array q = node.q
    cdef float r = node.qrange, fdim = <float>dim
    for x in links:
        if _kernel(quant, fdim, q, r, x.q, x.qrange) < dist:
            return True
    return False


def worst_link(int quant, int dim, node, list links):
    """vectorset.worst_link: (distance, index) of the farthest of `links` from `node`."""
    cdef array.array q = node.q
    cdef float r = node.qrange, fdim = <float>dim, d
    cdef double worst_d = 0.0
    cdef Py_ssize_t i = 0, worst_i = 0
    for x in links:
        d = _kernel(quant, fdim, q, r, x.q, x.qrange)
        if d > worst_d:
            worst_d, worst_i = d, i
        i += 1
    return worst_d, worst_i


# Encoding: the input components are Python floats (doubles); the Python rounds each
# product of two of them to float32 after the double product, so these do too.

def normalize(vec):
    """vectorset.normalize: (normalised copy, l2) with float32 steps; (vec, None) if all zero."""
    cdef Py_ssize_t dim = len(vec), i = 0
    cdef double a, b, c, d
    cdef float s, l2 = 0
    cdef list values = list(vec), out
    while i + 3 < dim:
        a, b, c, d = values[i], values[i + 1], values[i + 2], values[i + 3]
        s = <float>(a * a) + <float>(b * b)
        s = s + <float>(c * c)
        s = s + <float>(d * d)
        l2 = l2 + s
        i += 4
    while i < dim:
        a = values[i]
        l2 = l2 + <float>(a * a)
        i += 1
    if l2 == 0:
        return values, None
    l2 = sqrtf(l2)
    out = [None] * dim
    for i in range(dim):
        a = values[i]
        out[i] = <double><float>(a / l2)
    return out, <double>l2


def quantize_q8(vec):
    """vectorset.quantize_q8: int8 quants and the max-abs range."""
    cdef Py_ssize_t dim = len(vec), i
    cdef list values = list(vec)
    cdef double max_abs = 0.0, x, v
    cdef float scale
    cdef array.array out = array.clone(_INT8, dim, zero=True)
    cdef signed char* q = out.data.as_schars
    cdef long long n
    for i in range(dim):
        x = values[i]
        if x > max_abs:
            max_abs = x
        if -x > max_abs:
            max_abs = -x
    if max_abs == 0:
        return out, 0.0
    scale = <float>(127.0 / max_abs)
    for i in range(dim):
        x = values[i]
        v = <float>(x * scale)
        if v != v or isinf(v):
            continue  # 0, as in the Python (x86's conversion of inf/NaN, then (int8_t))
        # _roundf in double, as the Python does it.
        v = floor(v + 0.5) if v >= 0 else -floor(-v + 0.5)
        n = <long long>v
        q[i] = <signed char>(((n + 128) & 0xFF) - 128)  # the (int8_t) cast
    return out, max_abs
