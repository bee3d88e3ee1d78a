# cython: language_level=3, boundscheck=False, wraparound=False
"""`AofWriter.feed`'s encoding loop compiled: effects -> RESP commands in the AOF buffer.

Every write command's effect is encoded once on its way to the AOF. In Python
that costs ~0.5 us per XADD (hiredis.pack_command, plus the loop around it),
a tenth of the whole command at 64 pipelined XADDs per read. A command whose
arguments are all exact `bytes` is an array of bulk strings, which the
compiled reply encoder writes; anything else (a bytearray, memoryview or int
argument) goes to `encode_command`, the Python reference, so the bytes are the
same either way (tests/persistence/test_formats.py).
"""

from cpython.bytes cimport PyBytes_CheckExact

from rillet.resp._encoder cimport put


cdef bint _all_bytes(object argv) except -1:
    for arg in argv:
        if not PyBytes_CheckExact(arg):
            return False
    return True


def encode_effects(bytearray buf, list effects, object selected_db, encode_select,
                   encode_command):
    """Append each (db, argv) of `effects` to `buf`, a SELECT first whenever the db
    changes; returns the db selected at the end (AofWriter.feed, keep in step)."""
    for db_index, argv in effects:
        if db_index != selected_db:
            buf += encode_select(db_index)
            selected_db = db_index
        if _all_bytes(argv):
            put(buf, argv, False)  # "*n" and n "$len" bulk strings: a RESP2 array
        else:
            buf += encode_command(argv)
    return selected_db
