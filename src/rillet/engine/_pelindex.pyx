# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled form of `rillet.engine.pel.SortedIndex` (same API, same answers).

The Python class in pel.py stays the reference (the pure path or a missing
build selects it; rillet/compiled.py); tests/engine/test_pelindex.py runs generated operation
sequences against both. Why a compiled one: at a million pending entries the
Python index spends its time chasing scattered int objects during bisects.
Here each block keeps its keys packed as unsigned 128-bit integers in one C
array (ID keys are ms << 64 | seq, idle keys time << 40 | seq, both below
2**128), so a lookup touches a few contiguous cache lines. Values stay in one
Python list per block: the lists keep them alive (and the index takes part in
the garbage collector's traversal, though a pending entry names its owner
instead of pointing at it, so consumer groups make no cycles).
"""

from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_Insert
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.string cimport memmove, memcpy

cdef extern from *:
    """
    /* rillet_u128 is typedef'd by _pelindex.pxd's block, which comes first. */

    /* 0: *out holds the key; 1: not an int in [0, 2**128); -1: error set. */
    static int rillet_u128_from_long(PyObject *o, rillet_u128 *out) {
        if (!PyLong_Check(o)) {
            PyErr_Format(PyExc_TypeError, "index keys are ints, not %.100s", Py_TYPE(o)->tp_name);
            return -1;
        }
    #if PY_VERSION_HEX < 0x030C0000
        Py_ssize_t size = Py_SIZE(o);
        if (size < 0) return 1;
        const digit *d = ((PyLongObject *)o)->ob_digit;
        rillet_u128 v = 0;
        for (Py_ssize_t i = size - 1; i >= 0; i--) {
            if (v >> (128 - PyLong_SHIFT)) return 1;
            v = (v << PyLong_SHIFT) | d[i];
        }
        *out = v;
        return 0;
    #else
        unsigned char buf[16];
    #if PY_VERSION_HEX < 0x030D0000
        int r = _PyLong_AsByteArray((PyLongObject *)o, buf, 16, 1, 0);
    #else
        int r = _PyLong_AsByteArray((PyLongObject *)o, buf, 16, 1, 0, 1);
    #endif
        if (r < 0) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) { PyErr_Clear(); return 1; }
            return -1;
        }
        rillet_u128 v = 0;
        for (int i = 15; i >= 0; i--) v = (v << 8) | buf[i];
        *out = v;
        return 0;
    #endif
    }

    static PyObject *rillet_u128_to_long(rillet_u128 v) {
        if ((v >> 64) == 0) return PyLong_FromUnsignedLongLong((unsigned long long)v);
    #if PY_VERSION_HEX < 0x030C0000
        {
            /* Fill the digits directly: several times faster than the byte-array path. */
            Py_ssize_t n = 0;
            rillet_u128 t = v;
            while (t) { n++; t >>= PyLong_SHIFT; }
            PyLongObject *r = _PyLong_New(n);
            if (r == NULL) return NULL;
            for (Py_ssize_t i = 0; i < n; i++) {
                r->ob_digit[i] = (digit)(v & PyLong_MASK);
                v >>= PyLong_SHIFT;
            }
            return (PyObject *)r;
        }
    #endif
        unsigned char buf[16];
        for (int i = 0; i < 16; i++) { buf[i] = (unsigned char)v; v >>= 8; }
        return _PyLong_FromByteArray(buf, 16, 1, 0);
    }
    """
    int u128_from_long "rillet_u128_from_long"(object o, u128 *out) except -1
    object u128_to_long "rillet_u128_to_long"(u128 v)


# Blocks of 128..256 keys: a mid-block insert or pop moves at most 6 KiB,
# and the bisect over the blocks' last keys stays within a few cache lines.
cdef Py_ssize_t DEFAULT_LOAD = 128
MAX_ID_KEY = (1 << 128) - 1


cdef inline Py_ssize_t bisect_right_u128(const u128 *a, Py_ssize_t n, u128 k) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if k < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef class SortedIndex:
    """An ordered map from int keys in [0, 2**128) to values, in key-sorted blocks.

    Block p holds its keys in `_kb[p]` (capacity `_kcap[p]`), its values in the
    list `_vals[p]` (whose length is the block's size) and its largest key in
    `_maxes[p]`. Iterators must not outlive a mutation of the same index (they
    stay memory-safe if one does, but may skip or repeat entries). Its fields
    and C methods are declared in _pelindex.pxd.
    """

    def __cinit__(self, load=None):
        self._vals = []
        self._load = DEFAULT_LOAD if load is None else load
        if self._load < 2:
            raise ValueError("load must be at least 2")

    def __dealloc__(self):
        self._free_blocks()

    cdef void _free_blocks(self) noexcept:
        cdef Py_ssize_t p
        if self._kb != NULL:
            for p in range(self._nb):
                PyMem_Free(self._kb[p])
        PyMem_Free(self._kb)
        PyMem_Free(self._maxes)
        PyMem_Free(self._kcap)
        self._kb = NULL
        self._maxes = NULL
        self._kcap = NULL
        self._nb = self._bcap = 0

    @property
    def LOAD(self):
        return self._load

    def __len__(self):
        return self._len

    def __bool__(self):
        return self._len > 0

    def __contains__(self, key):
        return self.get(key) is not None

    # --- block bookkeeping -------------------------------------------------
    cdef int _reserve_blocks(self, Py_ssize_t need) except -1:
        cdef Py_ssize_t cap
        cdef void *m
        if need <= self._bcap:
            return 0
        cap = need + (need >> 2) + 8
        m = PyMem_Realloc(self._maxes, cap * sizeof(u128))
        if m == NULL:
            raise MemoryError()
        self._maxes = <u128 *>m
        m = PyMem_Realloc(self._kb, cap * sizeof(u128 *))
        if m == NULL:
            raise MemoryError()
        self._kb = <u128 **>m
        m = PyMem_Realloc(self._kcap, cap * sizeof(Py_ssize_t))
        if m == NULL:
            raise MemoryError()
        self._kcap = <Py_ssize_t *>m
        self._bcap = cap
        return 0

    cdef int _new_block(self, Py_ssize_t pos, u128 *keys, Py_ssize_t n, Py_ssize_t cap,
                        list vals) except -1:
        """File a block at `pos` owning `keys` (freed here on failure)."""
        cdef Py_ssize_t tail
        try:
            self._reserve_blocks(self._nb + 1)
            self._vals.insert(pos, vals)
        except BaseException:
            PyMem_Free(keys)
            raise
        tail = self._nb - pos
        memmove(&self._maxes[pos + 1], &self._maxes[pos], tail * sizeof(u128))
        memmove(&self._kb[pos + 1], &self._kb[pos], tail * sizeof(u128 *))
        memmove(&self._kcap[pos + 1], &self._kcap[pos], tail * sizeof(Py_ssize_t))
        self._kb[pos] = keys
        self._kcap[pos] = cap
        self._maxes[pos] = keys[n - 1]
        self._nb += 1
        return 0

    cdef void _drop_block(self, Py_ssize_t pos) noexcept:
        """Forget block `pos`'s key array and slot (its value list is removed by the caller)."""
        cdef Py_ssize_t tail = self._nb - pos - 1
        PyMem_Free(self._kb[pos])
        memmove(&self._maxes[pos], &self._maxes[pos + 1], tail * sizeof(u128))
        memmove(&self._kb[pos], &self._kb[pos + 1], tail * sizeof(u128 *))
        memmove(&self._kcap[pos], &self._kcap[pos + 1], tail * sizeof(Py_ssize_t))
        self._nb -= 1

    cdef int _resize_keys(self, Py_ssize_t pos, Py_ssize_t cap) except -1:
        cdef void *m = PyMem_Realloc(self._kb[pos], cap * sizeof(u128))
        if m == NULL:
            raise MemoryError()
        self._kb[pos] = <u128 *>m
        self._kcap[pos] = cap
        return 0

    # --- the map -------------------------------------------------------------
    def fill_sorted(self, keys, values):
        """Fill an empty index from keys already in ascending order, a block at a time."""
        cdef Py_ssize_t n, start, stop, j, step = self._load
        cdef u128 *block
        cdef u128 k
        if self._len:
            raise ValueError("fill_sorted needs an empty index")
        keys = list(keys)
        values = list(values)
        n = len(keys)
        if len(values) < n:
            raise ValueError("fill_sorted needs a value per key")
        for start in range(0, n, step):
            stop = min(start + step, n)
            block = <u128 *>PyMem_Malloc((stop - start) * sizeof(u128))
            if block == NULL:
                raise MemoryError()
            for j in range(start, stop):
                if u128_from_long(keys[j], &k) != 0:
                    PyMem_Free(block)
                    raise OverflowError("index keys must be in [0, 2**128)")
                block[j - start] = k
            self._new_block(self._nb, block, stop - start, stop - start, values[start:stop])
            self._len += stop - start

    def get(self, key):
        cdef u128 k
        if u128_from_long(key, &k) != 0:
            return None
        return self.get_key(k)

    cdef object get_key(self, u128 k):
        cdef Py_ssize_t pos, i
        pos = bisect_left_u128(self._maxes, self._nb, k)
        if pos == self._nb:
            return None
        i = bisect_left_u128(self._kb[pos], PyList_GET_SIZE(self._vals[pos]), k)
        if self._kb[pos][i] == k:
            return <object>PyList_GET_ITEM(self._vals[pos], i)
        return None

    def insert(self, key, value):
        """Add `key` (which must not be present) with `value`."""
        cdef u128 k
        if u128_from_long(key, &k) != 0:
            raise OverflowError("index keys must be in [0, 2**128)")
        self.insert_key(k, value)

    cdef int insert_key(self, u128 k, object value) except -1:
        cdef u128 *block
        cdef Py_ssize_t pos, i, n, cap
        cdef list vals
        if self._nb == 0:
            block = <u128 *>PyMem_Malloc(8 * sizeof(u128))
            if block == NULL:
                raise MemoryError()
            block[0] = k
            self._new_block(0, block, 1, 8, [value])
            self._len += 1
            return 0
        if k > self._maxes[self._nb - 1]:
            pos = self._nb - 1
            vals = <list>self._vals[pos]
            i = PyList_GET_SIZE(vals)
        else:
            pos = bisect_left_u128(self._maxes, self._nb, k)
            vals = <list>self._vals[pos]
            i = bisect_left_u128(self._kb[pos], PyList_GET_SIZE(vals), k)
        n = PyList_GET_SIZE(vals)
        if n == self._kcap[pos]:
            cap = n + (n >> 3) + 8
            self._resize_keys(pos, cap)
        PyList_Insert(vals, i, value)
        block = self._kb[pos]
        memmove(&block[i + 1], &block[i], (n - i) * sizeof(u128))
        block[i] = k
        if i == n:
            self._maxes[pos] = k
        self._len += 1
        if n + 1 > 2 * self._load:
            self._split(pos)
        return 0

    def pop(self, key):
        """Remove `key` and return its value, or None if absent."""
        cdef u128 k
        if u128_from_long(key, &k) != 0:
            return None
        return self.pop_key(k)

    cdef object pop_key(self, u128 k):
        cdef u128 *block
        cdef Py_ssize_t pos, i, n
        cdef list vals
        pos = bisect_left_u128(self._maxes, self._nb, k)
        if pos == self._nb:
            return None
        vals = <list>self._vals[pos]
        n = PyList_GET_SIZE(vals)
        block = self._kb[pos]
        i = bisect_left_u128(block, n, k)
        if block[i] != k:
            return None
        value = <object>PyList_GET_ITEM(vals, i)
        del vals[i]
        self._len -= 1
        n -= 1
        if n == 0:
            self._drop_block(pos)
            del self._vals[pos]
            return value
        memmove(&block[i], &block[i + 1], (n - i) * sizeof(u128))
        if i == n:
            self._maxes[pos] = block[n - 1]
        if self._kcap[pos] > 2 * n + 16:
            self._resize_keys(pos, n + (n >> 3) + 8)
        if n < self._load // 4:
            self._maybe_merge(pos)
        return value

    def first(self):
        """The value with the smallest key, or None when empty."""
        if self._nb == 0:
            return None
        return <object>PyList_GET_ITEM(self._vals[0], 0)

    def first_key(self):
        if self._nb == 0:
            return None
        return u128_to_long(self._kb[0][0])

    def last_key(self):
        if self._nb == 0:
            return None
        return u128_to_long(self._maxes[self._nb - 1])

    cdef int _bounds(self, lo, hi, u128 *klo, u128 *khi) except -1:
        """Clip [lo, hi] to the key space: 0 when empty, else 1."""
        cdef int r
        if not isinstance(lo, int) or not isinstance(hi, int):
            u128_from_long(lo, klo)  # raises the TypeError
            u128_from_long(hi, khi)
        if lo < 0:
            klo[0] = 0
        elif u128_from_long(lo, klo) != 0:
            return 0
        if hi < 0:
            return 0
        r = u128_from_long(hi, khi)
        if r != 0:
            khi[0] = <u128>0 - 1
        return 0 if klo[0] > khi[0] else 1

    def range_values(self, lo, hi=MAX_ID_KEY, limit=None):
        """Values with lo <= key <= hi in key order, at most `limit` of them."""
        cdef u128 klo, khi
        cdef Py_ssize_t pos, i, j, n, room
        cdef list out = []
        cdef list vals
        cdef u128 *block
        if limit is None:
            room = 0x7FFFFFFFFFFFFFFF
        elif limit <= 0:
            return out
        else:
            room = limit if limit < 0x7FFFFFFFFFFFFFFF else 0x7FFFFFFFFFFFFFFF
        if not self._bounds(lo, hi, &klo, &khi):
            return out
        pos = bisect_left_u128(self._maxes, self._nb, klo)
        if pos == self._nb:
            return out
        block = self._kb[pos]
        i = bisect_left_u128(block, PyList_GET_SIZE(self._vals[pos]), klo)
        while pos < self._nb:
            vals = <list>self._vals[pos]
            n = PyList_GET_SIZE(vals)
            block = self._kb[pos]
            j = n if self._maxes[pos] <= khi else bisect_right_u128(block, n, khi)
            if j - i > room:
                j = i + room
            while i < j:
                out.append(<object>PyList_GET_ITEM(vals, i))
                i += 1
                room -= 1
            if j < n or room == 0:
                break
            pos += 1
            i = 0
        return out

    def iter_values(self, lo=0, hi=MAX_ID_KEY):
        """Lazily yield values with lo <= key <= hi; do not mutate meanwhile."""
        cdef _ValueIter it = _ValueIter.__new__(_ValueIter)
        cdef u128 klo, khi
        it.index = self
        if not self._bounds(lo, hi, &klo, &khi):
            it.pos = 0x7FFFFFFFFFFFFFFF
            return it
        it.hi = khi
        it.pos = bisect_left_u128(self._maxes, self._nb, klo)
        if it.pos < self._nb:
            it.i = bisect_left_u128(self._kb[it.pos], PyList_GET_SIZE(self._vals[it.pos]), klo)
        return it

    def __iter__(self):
        cdef _ValueIter it = _ValueIter.__new__(_ValueIter)
        it.index = self
        it.hi = <u128>0 - 1
        return it

    def keys(self):
        cdef Py_ssize_t p, i
        cdef list out = []
        for p in range(self._nb):
            for i in range(PyList_GET_SIZE(self._vals[p])):
                out.append(u128_to_long(self._kb[p][i]))
        return iter(out)

    def clear(self):
        self._free_blocks()
        self._vals = []
        self._len = 0

    cdef int _split(self, Py_ssize_t pos) except -1:
        cdef Py_ssize_t half = self._load
        cdef list vals = <list>self._vals[pos]
        cdef Py_ssize_t n = PyList_GET_SIZE(vals)
        cdef Py_ssize_t rest = n - half
        cdef Py_ssize_t cap = rest + (rest >> 3) + 8
        cdef u128 *right = <u128 *>PyMem_Malloc(cap * sizeof(u128))
        cdef list right_vals
        if right == NULL:
            raise MemoryError()
        memcpy(right, &self._kb[pos][half], rest * sizeof(u128))
        try:
            right_vals = vals[half:]
        except BaseException:
            PyMem_Free(right)
            raise
        self._new_block(pos + 1, right, rest, cap, right_vals)
        del vals[half:]
        self._maxes[pos] = self._kb[pos][half - 1]
        self._resize_keys(pos, half + (half >> 3) + 8)
        return 0

    cdef int _maybe_merge(self, Py_ssize_t pos) except -1:
        # Joining a small block into its right neighbour keeps the block count
        # proportional to the size after mass deletions (XACK of a backlog).
        cdef Py_ssize_t nxt, n1, n2
        cdef list left
        if pos + 1 == self._nb:
            pos -= 1  # the last block joins its left neighbour instead
            if pos < 0:
                return 0
        nxt = pos + 1
        left = <list>self._vals[pos]
        n1 = PyList_GET_SIZE(left)
        n2 = PyList_GET_SIZE(self._vals[nxt])
        if n1 + n2 > self._load:
            return 0
        if self._kcap[pos] < n1 + n2:
            self._resize_keys(pos, n1 + n2 + ((n1 + n2) >> 3) + 8)
        left.extend(<list>self._vals[nxt])
        memcpy(&self._kb[pos][n1], self._kb[nxt], n2 * sizeof(u128))
        self._maxes[pos] = self._maxes[nxt]
        self._drop_block(nxt)
        del self._vals[nxt]
        return 0

    def check(self):
        """Assert the structural invariants (for tests)."""
        cdef Py_ssize_t p, i, n, total = 0
        cdef u128 prev = 0
        cdef bint started = False
        assert len(self._vals) == self._nb <= self._bcap
        for p in range(self._nb):
            n = PyList_GET_SIZE(self._vals[p])
            assert 0 < n <= self._kcap[p] and n <= 2 * self._load
            assert self._kb[p][n - 1] == self._maxes[p]
            for i in range(n):
                assert not started or self._kb[p][i] > prev
                prev = self._kb[p][i]
                started = True
            total += n
        assert total == self._len

    # --- copying (COPY deep-copies a stream with its groups) ------------------
    def __reduce__(self):
        return (SortedIndex, (self._load,), (list(self.keys()), list(self)))

    def __setstate__(self, state):
        keys, values = state
        self.clear()
        self.fill_sorted(keys, values)


cdef class _ValueIter:
    """Values from (pos, i) on while keys stay <= hi; bounds-checked at every step."""

    cdef SortedIndex index
    cdef Py_ssize_t pos, i
    cdef u128 hi

    def __iter__(self):
        return self

    def __next__(self):
        cdef SortedIndex index = self.index
        cdef list vals
        while self.pos < index._nb:
            vals = <list>index._vals[self.pos]
            if self.i < PyList_GET_SIZE(vals):
                if index._kb[self.pos][self.i] > self.hi:
                    break
                self.i += 1
                return <object>PyList_GET_ITEM(vals, self.i - 1)
            self.pos += 1
            self.i = 0
        self.pos = 0x7FFFFFFFFFFFFFFF
        raise StopIteration


# --- PendingEntry ---------------------------------------------------------------

from rillet.engine.ids import StreamID

cdef object _tuple_new = tuple.__new__
cdef int TOUCH_BITS = 40  # pel.TOUCH_BITS (pel.py imports this module, not the reverse)
cdef u128 SEQ_MASK = (<u128>1 << 64) - 1


cdef class PendingEntry:
    """Compiled form of `pel.PendingEntry`: the two keys live inside the object.

    The Python class holds `key` and `tkey` as two int objects of 40 bytes
    each beside a 64-byte object; here they are two packed 128-bit fields of
    one 80-byte object, which pays for the index's 16-byte keys. Reading
    `key` or `tkey` builds the int on demand.
    """

    # Fields in _pelindex.pxd: _key, _tkey (packed), owner (the owning
    # consumer's name, or None: see pel.PendingEntry), delivery_count.

    def __init__(self, key, tkey, owner, delivery_count):
        if u128_from_long(key, &self._key) != 0 or u128_from_long(tkey, &self._tkey) != 0:
            raise OverflowError("pending entry keys must be in [0, 2**128)")
        self.owner = owner
        self.delivery_count = delivery_count

    @property
    def key(self):
        return u128_to_long(self._key)

    @property
    def tkey(self):
        return u128_to_long(self._tkey)

    @tkey.setter
    def tkey(self, value):
        cdef u128 k
        if u128_from_long(value, &k) != 0:
            raise OverflowError("pending entry keys must be in [0, 2**128)")
        self._tkey = k

    @property
    def id(self):
        return _tuple_new(StreamID, (u128_to_long(self._key >> 64), u128_to_long(self._key & SEQ_MASK)))

    @property
    def id_pair(self):
        return u128_to_long(self._key >> 64), u128_to_long(self._key & SEQ_MASK)

    @property
    def delivery_time_ms(self):
        return u128_to_long(self._tkey >> TOUCH_BITS)

    def idle_ms(self, now_ms):
        """Milliseconds since the last delivery, as XPENDING reports it.

        Never negative, except -1 for an entry released by XNACK (no owner).
        """
        if self.owner is None:
            return -1
        idle = now_ms - u128_to_long(self._tkey >> TOUCH_BITS)
        return idle if idle > 0 else 0

    def __repr__(self):
        ms, seq = self.id_pair
        owner = self.owner
        return (
            f"PendingEntry({ms}-{seq}, owner={owner!r}, "
            f"time={self.delivery_time_ms}, count={self.delivery_count})"
        )

    # Created blank, then filled: a deep copy (COPY) memoizes the new entry
    # before copying its state.
    def __reduce__(self):
        return (_blank_entry, (), (self.key, self.tkey, self.owner, self.delivery_count))

    def __setstate__(self, state):
        key, tkey, owner, delivery_count = state
        self.__init__(key, tkey, owner, delivery_count)


def _blank_entry():
    return PendingEntry.__new__(PendingEntry)
