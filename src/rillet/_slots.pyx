# cython: language_level=3
"""Member descriptors for the object fields of the classes compiled in pure mode.

Cython exposes an extension type's `cdef public object` field to Python through a
getset descriptor. CPython 3.11 specialises an attribute read or write through a
member descriptor (a `__slots__` entry: LOAD_ATTR_SLOT, STORE_ATTR_SLOT, ~10
instructions) but not through a getset one (the generic path, ~150 more per read:
type lookup, descriptor call, Cython's getter). The interpreted code reads these
fields everywhere (`ctx.db`, `db.index`, `ctx.server`), so `as_slots` gives each
object field the member descriptor a `__slots__` class would have had, at the field's
place in the object, which it finds by setting the field through Cython's own
setter and looking for the value. Compiled code keeps reading the typed fields.
Fields declared with a C or builtin type (`dict`, `list`) keep their getset
descriptor, whose setter checks the type.
"""

from cpython.mem cimport PyMem_Malloc
from cpython.object cimport PyObject, PyTypeObject
from cpython.type cimport PyType_Modified

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        const char* name
        int type
        Py_ssize_t offset
        int flags
        const char* doc
    object PyDescr_NewMember(type cls, PyMemberDef* member)
    int T_OBJECT_EX
    int Py_TPFLAGS_HEAPTYPE
    int PyDict_SetItem(object d, object k, object v) except -1


cdef list _names = []  # the names the PyMemberDefs point into, kept alive


cdef Py_ssize_t _field_place(type cls, object probe, object marker) noexcept:
    """Where `marker` sits in `probe` (an instance of cls), or -1 if not exactly once."""
    cdef PyObject** words = <PyObject**><PyObject*>probe
    cdef Py_ssize_t n = (<PyTypeObject*>cls).tp_basicsize // sizeof(PyObject*)
    cdef Py_ssize_t i, found = -1
    for i in range(sizeof(PyObject) // sizeof(PyObject*), n):
        if words[i] == <PyObject*>marker:
            if found >= 0:
                return -1
            found = i
    return found * <Py_ssize_t>sizeof(PyObject*) if found >= 0 else -1


def as_slots(type cls):
    """Replaces the getset descriptors of cls's object fields (the names in its
    `__slots__`) with member descriptors; returns the names replaced. A no-op for a
    class defined in Python (RILLET_PURE: its slots are member descriptors already)."""
    cdef PyMemberDef* member
    cdef Py_ssize_t offset
    if (<PyTypeObject*>cls).tp_flags & Py_TPFLAGS_HEAPTYPE:
        return []
    getset = type(type.__dict__["__dict__"])
    probe = cls.__new__(cls)
    done = []
    for name in cls.__dict__.get("__slots__", ()):
        descriptor = cls.__dict__.get(name)
        if name.startswith("__") or type(descriptor) is not getset:
            continue
        marker = object()
        try:
            descriptor.__set__(probe, marker)
        except TypeError:
            continue  # a typed field (dict, list): its setter checks the type
        offset = _field_place(cls, probe, marker)
        descriptor.__set__(probe, None)
        if offset < 0:
            continue
        encoded = name.encode()
        _names.append(encoded)
        member = <PyMemberDef*>PyMem_Malloc(sizeof(PyMemberDef))
        if member is NULL:
            raise MemoryError()
        member.name = encoded
        member.type = T_OBJECT_EX
        member.offset = offset
        member.flags = 0
        member.doc = NULL
        PyDict_SetItem(<object>(<PyTypeObject*>cls).tp_dict, name, PyDescr_NewMember(cls, member))
        done.append(name)
    PyType_Modified(cls)
    return done
