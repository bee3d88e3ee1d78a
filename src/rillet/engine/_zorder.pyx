# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A compiled chunked sorted list for a sorted set's (score, member) pairs, with
the API and answers of `sortedcontainers.SortedList`.

That class stays the reference (the pure path or a missing build selects
it; rillet/compiled.py); tests/engine/test_zorder.py runs generated operation sequences against
both. Why a compiled one: at redis-benchmark's ZADD (-r 100000, one key) the
Python list of (float, bytes) tuples spent its time on tuple comparisons
during the two bisects (each one a rich compare of the floats, then of the
tuples), on chasing the scattered tuples and floats, and on the frames of
add/remove. Here a chunk keeps its pairs packed as (double, bytes pointer) in
one C array: a comparison is a double compare (memcmp only between equal
scores) on contiguous memory, and a pair costs 16 bytes instead of a 56-byte
tuple. Members must be bytes (they are: argv, RDB and DUMP payloads); bytes
cannot form reference cycles, so the class stays outside the cyclic collector.

Items go in and come out as (score, member) tuples, so the callers
(engine/zsets.py, the ZRANGE family, RDB save, GEOSEARCH...) see the
Python class's behaviour. Search keys are (score,) (before every member of
that score), (score, member), or (score, x) with x not bytes (after every
member of that score: zsets.py's _TOP).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AsDouble, PyFloat_FromDouble
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from libc.string cimport memcmp, memcpy, memmove

LOAD = 256


cdef inline int _cmp(const Pair* p, const Key* k) noexcept:
    """<0, 0, >0 as the pair sorts before, equal to, after the key."""
    cdef Py_ssize_t la, lb
    cdef int c
    if p.score < k.score:
        return -1
    if p.score > k.score:
        return 1
    if k.side:
        return -k.side
    la = PyBytes_GET_SIZE(<object>p.member)
    lb = PyBytes_GET_SIZE(<object>k.member)
    c = memcmp(PyBytes_AS_STRING(<object>p.member), PyBytes_AS_STRING(<object>k.member),
               la if la < lb else lb)
    if c:
        return c
    return (la > lb) - (la < lb)


cdef inline Py_ssize_t _in_left(const Chunk* c, const Key* k) noexcept:
    cdef Py_ssize_t lo = 0, hi = c.n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if _cmp(&c.items[mid], k) < 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _in_right(const Chunk* c, const Key* k) noexcept:
    cdef Py_ssize_t lo = 0, hi = c.n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if _cmp(&c.items[mid], k) <= 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef int _key(object item, Key* k) except -1:
    """Reads a search key or an item (the object must outlive the key's use)."""
    if not PyTuple_Check(item) or not 1 <= PyTuple_GET_SIZE(item) <= 2:
        raise TypeError("sorted set order keys are (score,) or (score, member) tuples")
    k.score = PyFloat_AsDouble(<object>PyTuple_GET_ITEM(item, 0))
    if PyTuple_GET_SIZE(item) == 1:
        k.side = -1
        k.member = NULL
        return 0
    member = <object>PyTuple_GET_ITEM(item, 1)
    if PyBytes_Check(member):
        k.side = 0
        k.member = <PyObject*>member
    else:
        k.side = 1
        k.member = NULL
    return 0


cdef inline object _pair(const Pair* p):
    t = PyTuple_New(2)
    s = PyFloat_FromDouble(p.score)
    Py_INCREF(s)
    PyTuple_SET_ITEM(t, 0, s)
    Py_INCREF(<object>p.member)
    PyTuple_SET_ITEM(t, 1, <object>p.member)
    return t


cdef class ZOrder:
    """The pairs in chunks of at most 2 * load (split in halves beyond), as SortedList."""

    def __cinit__(self, items=None, Py_ssize_t load=LOAD):
        if load < 1:
            raise ValueError("load must be positive")
        self.load = load
        self._chunks = NULL
        self._maxes = NULL
        self._cum = NULL
        self._nchunks = self._room = self._len = 0
        self._cum_ok = False

    def __init__(self, items=None, Py_ssize_t load=LOAD):
        cdef Key k
        cdef Py_ssize_t i, j, n
        cdef Chunk* c
        if not items:
            return
        data = sorted(items)
        n = len(data)
        for item in data:
            _key(item, &k)
            if k.side:
                raise TypeError("sorted set members are bytes")
        i = 0
        while i < n:
            c = self._insert_chunk(self._nchunks, min(self.load, n - i))
            j = 0
            while j < self.load and i < n:
                item = data[i]
                c.items[j].score = PyFloat_AsDouble(<object>PyTuple_GET_ITEM(item, 0))
                member = <object>PyTuple_GET_ITEM(item, 1)
                Py_INCREF(member)
                c.items[j].member = <PyObject*>member
                j += 1
                i += 1
            c.n = j
            self._maxes[self._nchunks - 1] = c.items[j - 1]
        self._len = n

    def __dealloc__(self):
        cdef Py_ssize_t k, i
        for k in range(self._nchunks):
            for i in range(self._chunks[k].n):
                Py_DECREF(<object>self._chunks[k].items[i].member)
            PyMem_Free(self._chunks[k].items)
        PyMem_Free(self._chunks)
        PyMem_Free(self._maxes)
        PyMem_Free(self._cum)

    # --- chunk bookkeeping ---------------------------------------------------------------
    cdef Chunk* _insert_chunk(self, Py_ssize_t at, Py_ssize_t cap) except NULL:
        """A new empty chunk at position `at`, with room for `cap` pairs."""
        cdef Py_ssize_t room
        cdef void* grown
        if self._nchunks == self._room:
            room = self._room * 2 if self._room else 4
            grown = PyMem_Realloc(self._chunks, room * sizeof(Chunk))
            if grown == NULL:
                raise MemoryError()
            self._chunks = <Chunk*>grown
            grown = PyMem_Realloc(self._maxes, room * sizeof(Pair))
            if grown == NULL:
                raise MemoryError()
            self._maxes = <Pair*>grown
            grown = PyMem_Realloc(self._cum, (room + 1) * sizeof(Py_ssize_t))
            if grown == NULL:
                raise MemoryError()
            self._cum = <Py_ssize_t*>grown
            self._room = room
        if cap < 1:
            cap = 1
        cdef Pair* items = <Pair*>PyMem_Malloc(cap * sizeof(Pair))
        if items == NULL:
            raise MemoryError()
        memmove(&self._chunks[at + 1], &self._chunks[at], (self._nchunks - at) * sizeof(Chunk))
        memmove(&self._maxes[at + 1], &self._maxes[at], (self._nchunks - at) * sizeof(Pair))
        self._chunks[at].n = 0
        self._chunks[at].cap = cap
        self._chunks[at].items = items
        self._nchunks += 1
        self._cum_ok = False
        return &self._chunks[at]

    cdef void _drop_chunk(self, Py_ssize_t at) noexcept:
        """Frees chunk `at` (its pairs already released)."""
        PyMem_Free(self._chunks[at].items)
        memmove(&self._chunks[at], &self._chunks[at + 1], (self._nchunks - at - 1) * sizeof(Chunk))
        memmove(&self._maxes[at], &self._maxes[at + 1], (self._nchunks - at - 1) * sizeof(Pair))
        self._nchunks -= 1
        self._cum_ok = False

    cdef Py_ssize_t* _offsets(self) noexcept:
        cdef Py_ssize_t k, total = 0
        if not self._cum_ok:
            for k in range(self._nchunks):
                self._cum[k] = total
                total += self._chunks[k].n
            if self._cum != NULL:
                self._cum[self._nchunks] = total
            self._cum_ok = True
        return self._cum

    cdef Py_ssize_t _locate(self, Py_ssize_t index, Py_ssize_t* at) noexcept:
        """The chunk holding position `index` (0 <= index < len); its offset in `at`."""
        cdef Py_ssize_t* cum = self._offsets()
        cdef Py_ssize_t lo = 0, hi = self._nchunks, mid
        while hi - lo > 1:  # the last k with cum[k] <= index
            mid = (lo + hi) >> 1
            if cum[mid] <= index:
                lo = mid
            else:
                hi = mid
        at[0] = index - cum[lo]
        return lo

    # --- search ---------------------------------------------------------------------------
    cdef Py_ssize_t _chunk_left(self, const Key* k) noexcept:
        """First chunk whose last pair is >= k (bisect_left over the maxes)."""
        cdef Py_ssize_t lo = 0, hi = self._nchunks, mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if _cmp(&self._maxes[mid], k) < 0:
                lo = mid + 1
            else:
                hi = mid
        return lo

    cdef Py_ssize_t _chunk_right(self, const Key* k) noexcept:
        cdef Py_ssize_t lo = 0, hi = self._nchunks, mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if _cmp(&self._maxes[mid], k) <= 0:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def bisect_left(self, item):
        cdef Key k
        _key(item, &k)
        cdef Py_ssize_t c = self._chunk_left(&k)
        if c == self._nchunks:
            return self._len
        return self._offsets()[c] + _in_left(&self._chunks[c], &k)

    def bisect_right(self, item):
        cdef Key k
        _key(item, &k)
        cdef Py_ssize_t c = self._chunk_right(&k)
        if c == self._nchunks:
            return self._len
        return self._offsets()[c] + _in_right(&self._chunks[c], &k)

    # --- update -----------------------------------------------------------------------------
    def add(self, item):
        cdef Key k
        _key(item, &k)
        if k.side:
            raise TypeError("sorted set members are bytes")
        self._add(k.score, <object>k.member)

    cdef int _add(self, double score, object member) except -1:
        cdef Key k
        cdef Chunk* c
        cdef Py_ssize_t at, i, half, room
        cdef void* grown
        k.score = score
        k.member = <PyObject*>member
        k.side = 0
        if self._nchunks == 0:
            c = self._insert_chunk(0, 4)
            at = 0
            i = 0
        else:
            at = self._chunk_left(&k)  # as SortedList.add: bisect_left over the maxes, then insort
            if at == self._nchunks:
                at -= 1
                c = &self._chunks[at]
                i = c.n
            else:
                c = &self._chunks[at]
                i = _in_right(c, &k)
        if c.n == c.cap:
            # Small sets stay small: a chunk grows by doubling, to 2 * load + 1 at most.
            room = 2 * c.cap if 2 * c.cap < 2 * self.load + 1 else 2 * self.load + 1
            grown = PyMem_Realloc(c.items, room * sizeof(Pair))
            if grown == NULL:
                raise MemoryError()
            c.items = <Pair*>grown
            c.cap = room
        memmove(&c.items[i + 1], &c.items[i], (c.n - i) * sizeof(Pair))
        Py_INCREF(member)
        c.items[i].score = score
        c.items[i].member = <PyObject*>member
        c.n += 1
        self._maxes[at] = c.items[c.n - 1]
        self._len += 1
        self._cum_ok = False
        if c.n > 2 * self.load:
            half = c.n >> 1
            self._insert_chunk(at + 1, c.cap)
            c = &self._chunks[at]  # the array may have moved
            memcpy(self._chunks[at + 1].items, &c.items[half], (c.n - half) * sizeof(Pair))
            self._chunks[at + 1].n = c.n - half
            c.n = half
            self._maxes[at] = c.items[half - 1]
            self._maxes[at + 1] = self._chunks[at + 1].items[self._chunks[at + 1].n - 1]
        return 0

    def remove(self, item):
        cdef Key k
        _key(item, &k)
        if k.side or not self._remove(&k):
            raise ValueError(item)

    cdef bint _remove(self, const Key* k) except -1:
        """Removes the pair equal to `k`; False if there is none."""
        cdef Py_ssize_t at = self._chunk_left(k), i
        cdef Chunk* c
        if at == self._nchunks:
            return False
        c = &self._chunks[at]
        i = _in_left(c, k)
        if i == c.n or _cmp(&c.items[i], k) != 0:
            return False
        member = <object>c.items[i].member
        memmove(&c.items[i], &c.items[i + 1], (c.n - i - 1) * sizeof(Pair))
        c.n -= 1
        self._len -= 1
        self._cum_ok = False
        if c.n:
            self._maxes[at] = c.items[c.n - 1]
        else:
            self._drop_chunk(at)
        Py_DECREF(member)  # the chunk's reference (`member` holds one of its own until here)
        return True

    # --- positions ---------------------------------------------------------------------------
    def __len__(self):
        return self._len

    cdef list _chunk_list(self, Py_ssize_t k, Py_ssize_t start, Py_ssize_t stop):
        cdef Py_ssize_t i
        cdef Chunk* c = &self._chunks[k]
        if stop > c.n:
            stop = c.n
        if start >= stop:
            return []
        out = PyList_New(stop - start)
        for i in range(start, stop):
            t = _pair(&c.items[i])
            Py_INCREF(t)
            PyList_SET_ITEM(out, i - start, t)
        return out

    def __iter__(self):
        # A chunk at a time (bounded memory, as the reference's chain over its chunks);
        # the chunk count is re-read each time, so a change while iterating cannot crash.
        cdef Py_ssize_t k = 0
        while k < self._nchunks:
            part = self._chunk_list(k, 0, self._chunks[k].n)
            k += 1
            yield from part

    def __reversed__(self):
        cdef Py_ssize_t k = self._nchunks
        while k > 0:
            k -= 1
            if k >= self._nchunks:
                continue
            part = self._chunk_list(k, 0, self._chunks[k].n)
            part.reverse()
            yield from part

    cdef list _slice(self, Py_ssize_t start, Py_ssize_t stop):
        cdef Py_ssize_t k, i, need
        if start >= stop:
            return []
        out = []
        k = self._locate(start, &i)
        need = stop - start
        while need > 0 and k < self._nchunks:
            part = self._chunk_list(k, i, i + need)
            out += part
            need -= len(part)
            k += 1
            i = 0
        return out

    def __getitem__(self, index):
        cdef Py_ssize_t start, stop, step, i, k
        if isinstance(index, slice):
            start, stop, step = index.indices(self._len)
            if step != 1:
                return list(self)[index]
            return self._slice(start, stop)
        i = index
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("sorted list index out of range")
        k = self._locate(i, &i)
        return _pair(&self._chunks[k].items[i])

    def __delitem__(self, index):
        cdef Py_ssize_t start, stop, step, i, k, take, remaining, j
        cdef Chunk* c
        if not isinstance(index, slice):
            i = index
            if i < 0:
                i += self._len
            index = slice(i, i + 1)
        start, stop, step = index.indices(self._len)
        if start >= stop:
            return
        released = []  # members are released at the end, once the order is consistent
        k = self._locate(start, &i)
        remaining = stop - start
        while remaining > 0:
            c = &self._chunks[k]
            take = remaining if remaining < c.n - i else c.n - i
            for j in range(i, i + take):
                released.append(<object>c.items[j].member)
                Py_DECREF(<object>c.items[j].member)
            memmove(&c.items[i], &c.items[i + take], (c.n - i - take) * sizeof(Pair))
            c.n -= take
            remaining -= take
            if c.n:
                self._maxes[k] = c.items[c.n - 1]
                k += 1
            else:
                self._drop_chunk(k)
            i = 0
        self._len -= stop - start
        self._cum_ok = False

    def copy(self):
        cdef ZOrder other = ZOrder(load=self.load)
        cdef Py_ssize_t k, i
        cdef Chunk* c
        for k in range(self._nchunks):
            c = other._insert_chunk(k, self._chunks[k].n)
            memcpy(c.items, self._chunks[k].items, self._chunks[k].n * sizeof(Pair))
            c.n = self._chunks[k].n
            for i in range(c.n):
                Py_INCREF(<object>c.items[i].member)
            other._maxes[k] = c.items[c.n - 1]
        other._len = self._len
        return other
