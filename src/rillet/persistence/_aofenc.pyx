# cython: language_level=3, boundscheck=False, wraparound=False
"""The effect sinks' encoding compiled: effects -> RESP commands (EffectStream).

Every write command's effect is encoded once on its way to the AOF and to
replicas. In Python that cost ~0.5 us per XADD (hiredis.pack_command, plus
the loop around it), a tenth of the whole command at 64 pipelined XADDs per
read. A command whose arguments are all exact `bytes` (in a list) is an array
of bulk strings,
written here, and one already encoded (state.Effect's `bytes` form, from a
compiled body) is copied; anything else (a bytearray, memoryview or int
argument) goes to `encode_command`, the Python reference, so the bytes are the
same either way (tests/persistence/test_formats.py).
"""

from cpython.bytes cimport (PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize,
                            PyBytes_GET_SIZE)
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.object cimport PyObject
from libc.string cimport memcpy

from rillet.resp._command cimport bulk_size, digits, put_bulk, put_len

from rillet.persistence.aoflog import encode_command, encode_select


cdef inline char* _copy(char* p, object piece) noexcept:
    cdef Py_ssize_t size = PyBytes_GET_SIZE(piece)
    memcpy(p, PyBytes_AS_STRING(piece), size)
    return p + size


cdef Py_ssize_t _command_size(object argv) noexcept:
    """The RESP size of a list of exact `bytes`, or of a command already encoded
    (state.Effect's `bytes` form); -1 for anything else."""
    if PyBytes_CheckExact(argv):
        return PyBytes_GET_SIZE(argv)
    if not PyList_CheckExact(argv):
        return -1
    cdef Py_ssize_t n = PyList_GET_SIZE(argv), i, total
    cdef PyObject* arg
    total = 3 + digits(n)
    for i in range(n):
        arg = PyList_GET_ITEM(argv, i)
        if not PyBytes_CheckExact(<object>arg):
            return -1
        total += bulk_size(<object>arg)
    return total


cdef char* _write_command(char* p, object argv) noexcept:
    """`argv` (sized by _command_size) as a RESP array of bulk strings at p; the end."""
    if PyBytes_CheckExact(argv):
        return _copy(p, argv)
    cdef Py_ssize_t n = PyList_GET_SIZE(argv), i
    p = put_len(p, 42, n)  # '*'
    for i in range(n):
        p = put_bulk(p, <object>PyList_GET_ITEM(argv, i))
    return p


cdef Py_ssize_t _size_effects(list effects, long db, list extras, list rare,
                              encode_select, encode_command) except -1:
    """First pass over `effects` (db selected before them: `db`): the bytes they
    encode to. Each SELECT, and each command that is not all `bytes` (its
    encoding by `encode_command`, the reference; its index goes to `rare`), is
    appended to `extras` in order, for _write_effects to copy."""
    cdef Py_ssize_t total = 0, size, index = 0
    cdef long db_index
    for effect in effects:
        db_index = (<tuple>effect)[0]
        argv = (<tuple>effect)[1]
        if db_index != db and db_index >= 0:  # (state.ANY_DB, a MULTI's, selects nothing)
            piece = encode_select(db_index)
            extras.append(piece)
            total += len(<bytes>piece)
            db = db_index
        size = _command_size(argv)
        if size < 0:
            piece = encode_command(argv)
            extras.append(piece)
            rare.append(index)
            size = len(<bytes>piece)
        total += size
        index += 1
    return total


cdef long _write_effects(char* p, list effects, long db, list extras, list rare) except? -2:
    """Second pass: the effects at p, as _size_effects sized them; the db selected after."""
    cdef Py_ssize_t extra = 0, index = 0, next_rare = -1, rare_seen = 0
    cdef long db_index
    if rare:
        next_rare = rare[0]
    for effect in effects:
        db_index = (<tuple>effect)[0]
        if db_index != db and db_index >= 0:
            p = _copy(p, extras[extra])
            extra += 1
            db = db_index
        if index == next_rare:
            p = _copy(p, extras[extra])
            extra += 1
            rare_seen += 1
            next_rare = rare[rare_seen] if rare_seen < len(rare) else -1
        else:
            p = _write_command(p, (<tuple>effect)[1])
        index += 1
    return db


# A buffer that grew past this in one turn (a burst, a big MULTI) is freed when
# taken rather than kept for the next.
cdef Py_ssize_t _KEEP_CAPACITY = 1 << 20


cdef class EffectStream:
    """aoflog.EffectStream compiled (the reference; keep in step): effects encoded as
    they are published, one RESP stream until `take()`.

    As a sink it is called with each published batch. A compiled body may also
    write its one effect straight in (`reserve`, after `selected_db` is checked):
    XADD's, which as a (db, bytes) pair in a one-item list cost the master
    ~1,100 instructions per write more, to build, hand over, encode and free.
    """

    def __cinit__(self):
        self.data = NULL
        self.size = 0
        self.capacity = 0
        self.selected_db = -1
        self.on_buffered = None

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef char* reserve(self, Py_ssize_t n) except NULL:
        """The next n bytes of the stream, counted now: the caller fills them all.
        The first bytes since a `take` call `on_buffered` first (as aoflog's)."""
        cdef Py_ssize_t need = self.size + n, capacity
        cdef char* grown
        if self.size == 0 and n > 0 and self.on_buffered is not None:
            self.on_buffered()
            need = self.size + n  # (a hook that takes what is there leaves it empty)
        if need > self.capacity or self.data == NULL:
            capacity = max(need, 2 * self.capacity, 4096)
            grown = <char*>PyMem_Realloc(self.data, capacity)
            if grown == NULL:
                raise MemoryError()
            self.data = grown
            self.capacity = capacity
        grown = self.data + self.size
        self.size = need
        return grown

    cdef int select(self, long db) except -1:
        """A SELECT first if the stream is in another db (before a `reserve`d effect)."""
        cdef bytes piece
        if db != self.selected_db:
            piece = encode_select(db)
            memcpy(self.reserve(PyBytes_GET_SIZE(piece)), PyBytes_AS_STRING(piece),
                   PyBytes_GET_SIZE(piece))
            self.selected_db = db
        return 0

    def __call__(self, list effects):
        """The effect sink: `effects` appended, a SELECT before each change of db."""
        cdef list extras = [], rare = []
        cdef Py_ssize_t total = _size_effects(effects, self.selected_db, extras, rare,
                                              encode_select, encode_command)
        cdef char* p = self.reserve(total)
        self.selected_db = _write_effects(p, effects, self.selected_db, extras, rare)

    def __len__(self):
        return self.size

    def take(self):
        """The bytes so far, as one `bytes`; the stream is empty after."""
        out = PyBytes_FromStringAndSize(self.data, self.size)
        self.size = 0
        if self.capacity > _KEEP_CAPACITY:
            PyMem_Free(self.data)
            self.data = NULL
            self.capacity = 0
        return out
