"""One node of the stream log: up to `stream-node-max-entries` entries, packed.

A node mirrors one of Redis's listpacks: a master ID (its first entry's ID, the
radix-tree key), master field names shared by entries with the same fields
(Redis's SAMEFIELDS flag), tombstones, and the exact byte size the listpack
would have. Two shapes: the open tail keeps Python lists so XADD is a few
appends; `pack()` turns it into arrays plus one bytes blob when it closes, so
a closed node costs a handful of objects and no Python object per entry.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Any

from rillet.engine.ids import StreamID
from rillet.engine.listpack_size import (
    ELEMENT_SIZES,
    LISTPACK_EMPTY_SIZE,
    diff_size,
    int_size,
)

_tuple_new = tuple.__new__
_size_of = ELEMENT_SIZES.__getitem__


def compact_array(values: list[int] | array) -> array:
    """The narrowest unsigned array holding `values` (8-byte for IDs near 2**64)."""
    top = max(values) if values else 0
    if top < 256:
        code = "B"
    elif top < 65536:
        code = "H"
    elif top < 4294967296:
        code = "I"
    else:
        code = "Q"
    return array(code, values)


class StreamNode:
    """Entries of one node. Attribute names follow t_stream.c's listpack layout."""

    # Compiled, the fields are an extension type's (stream_node.pxd): the compiled
    # bodies read them as C struct fields (commands/_writes.pyx, ...).
    __slots__ = (
        "ms0",  # master ID: first entry's ID when the node was created (never changes)
        "seq0",
        "mf",  # master field names (list[bytes]), shared between nodes when equal
        "k",  # len(mf)
        "k2",  # 2 * k: len(fields) of a SAMEFIELDS entry
        "k18",  # 18 * k: bound on text minus encoded size for k values
        "fixed_text",  # master field names' total length + the 4 header bytes while n < 127
        "n",  # entries in the node, live and deleted (Redis: count + deleted)
        "live",  # entries not deleted (Redis's master entry 'count')
        "_dead",  # None, or set of deleted entry indexes (Redis's DELETED flag)
        "_head",  # index of the first live entry (n if none): trimming starts there
        "body",  # listpack bytes except the count/deleted integers of the master entry
        "same_fixed",  # bytes of flags + lp-count of a SAMEFIELDS entry
        "_ms",  # per entry: ms - ms0 (list while open, array once packed)
        "_seq",  # per entry: seq (absolute)
        "elems",  # open only: flat list of stored elements (values, or fields+values)
        "_data",  # packed only: the stored elements concatenated
        "_offs",  # packed only: element boundaries in data (len = elements + 1)
        "_estart",  # None if every entry is SAMEFIELDS, else first element index per entry (+ end)
        "_same",  # None if every entry is SAMEFIELDS, else per-entry flag (1 = SAMEFIELDS)
        "is_open",
        "fast",  # is_open and every entry SAMEFIELDS: Stream.append's fast path applies
        "fresh",  # never packed: Redis's listpack still has its 4 KiB pre-allocation
        # None, or the RDB listpack of a node loaded and not read since
        # (persistence/rdb_stream.LoadedNode): the entry fields (the underscored
        # ones) are then None, and the first read of one through its property
        # (ms, seq, data, offs, estart, same, dead, head) decodes `lp` into them.
        "lp",
    )

    def __init__(self, ms0: int, seq0: int, master_fields: list[bytes]) -> None:
        self.ms0 = ms0
        self.seq0 = seq0
        self.mf = master_fields
        k = len(master_fields)
        self.k = k
        self.k2 = 2 * k
        self.k18 = 18 * k
        self.fixed_text = sum(map(len, master_fields)) + 4
        self.n = 0
        self.live = 0
        self._dead: set[int] | None = None
        self._head = 0
        # empty listpack + num-fields + master field names + the master entry's 0 terminator
        self.body = LISTPACK_EMPTY_SIZE + int_size(k) + sum(map(_size_of, master_fields)) + 2
        self.same_fixed = 2 + int_size(k + 3)
        # The entry fields are None in a loaded node until it is decoded (`lp`).
        self._ms: Any = []  # list[int] | array
        self._seq: Any = []  # list[int] | array
        # The shape fields are Any: which are set, and as what (lists while the node
        # is open, arrays and one blob once packed, estart/same only when mixed),
        # follows is_open and the entries, which the type checker cannot see.
        self.elems: Any = []  # list[bytes] | None
        self._data: Any = b""  # bytes
        self._offs: Any = None  # array | None
        self._estart: Any = None  # list[int] | array | None
        self._same: Any = None  # bytearray | bytes | None
        self.is_open = True
        self.fast = True
        self.fresh = True
        self.lp: bytes | None = None  # a loaded node's listpack, until it is decoded

    @classmethod
    def from_packed(
        cls,
        ms0: int,
        seq0: int,
        master_fields: list[bytes],
        ms: array,
        seq: array,
        data: bytes,
        offs: array,
        *,
        dead: set[int] | None = None,
        estart: array | None = None,
        same: bytes | None = None,
        body: int | None = None,
        open_tail: bool = False,
    ) -> StreamNode:
        """A closed node from its packed parts (persistence); `open_tail` reopens it.

        `ms` holds ms - ms0 per entry, `seq` absolute seqs; `data`/`offs` the
        stored elements (values of SAMEFIELDS entries, fields and values of the
        others); `estart`/`same` as the slots say (None: every entry SAMEFIELDS).
        `body` is the listpack size without the master count/deleted integers;
        None recomputes it from the entries. Raises ValueError on inconsistency.
        """
        n = len(ms)
        if len(seq) != n or (estart is not None and (len(estart) != n + 1 or same is None
                                                     or len(same) != n)):
            raise ValueError("stream node arrays disagree")
        elements = len(offs) - 1
        if elements < 0 or offs[-1] != len(data):
            raise ValueError("stream node element offsets disagree with its data")
        if (estart[-1] if estart is not None else n * len(master_fields)) != elements:
            raise ValueError("stream node element count disagrees with its entries")
        if dead and (min(dead) < 0 or max(dead) >= n):
            raise ValueError("stream node tombstone out of range")
        node = cls.closed_shell(ms0, seq0, master_fields, n, n - (len(dead) if dead else 0), 0)
        node.set_entries(ms, seq, data, offs, estart, same, dead)
        if body is None:
            body = node.entry_sizes_total()
        node.body = body
        if open_tail:
            node.unpack()
        return node

    @classmethod
    def closed_shell(cls, ms0: int, seq0: int, master_fields: list[bytes], n: int, live: int,
                     body: int) -> StreamNode:
        """A closed node without its entries (the underscored fields are None, `lp`
        too): from_packed's start, and a loaded node's whole state until it is
        read (rdb_stream.LoadedNode).
        """
        # Built slot by slot rather than through __init__: a loader makes one
        # per 100 entries, and __init__'s sums are only needed without `body`.
        node = cls.__new__(cls)
        node.ms0 = ms0
        node.seq0 = seq0
        node.mf = master_fields
        k = node.k = len(master_fields)
        node.k2 = 2 * k
        node.k18 = 18 * k
        node.fixed_text = sum(map(len, master_fields)) + 4
        node.same_fixed = 2 + int_size(k + 3)
        node.n = n
        node.live = live
        node.body = body
        node.elems = None
        node.set_entries(None, None, None, None, None, None, None)  # (and lp None)
        node.is_open = False
        node.fast = False
        # Like a listpack read back from an RDB: no pre-allocation (MEMORY USAGE).
        node.fresh = False
        return node

    def set_entries(self, ms: array | None, seq: array | None, data: bytes | None,
                    offs: array | None, estart: array | None, same: bytes | None,
                    dead: set[int] | None) -> None:
        """A closed node's entries, packed (from_packed's, a loaded node's decode)."""
        self._ms = ms
        self._seq = seq
        self._data = data
        self._offs = offs
        self._estart = estart
        self._same = same
        head = 0
        if dead:
            n = self.n
            while head < n and head in dead:
                head += 1
        self._dead = dead or None
        self._head = head
        self.lp = None

    def materialize(self) -> None:
        """Decode `lp` into the entry fields: only a loaded node has one to decode."""
        raise TypeError("not a loaded stream node")

    # --- entry fields: a loaded node decodes its listpack on the first read of one ----
    # (`lp is not None` is the "not decoded yet" state; compiled readers test it
    # themselves and read the underscored fields.)

    @property
    def ms(self) -> Any:  # list[int] | array
        if self.lp is not None:
            self.materialize()
        return self._ms

    @property
    def seq(self) -> Any:  # list[int] | array
        if self.lp is not None:
            self.materialize()
        return self._seq

    @property
    def data(self) -> bytes:
        if self.lp is not None:
            self.materialize()
        return self._data

    @property
    def offs(self) -> Any:  # array | None
        if self.lp is not None:
            self.materialize()
        return self._offs

    @property
    def estart(self) -> Any:  # list[int] | array | None
        if self.lp is not None:
            self.materialize()
        return self._estart

    @property
    def same(self) -> Any:  # bytearray | bytes | None
        if self.lp is not None:
            self.materialize()
        return self._same

    @property
    def dead(self) -> set[int] | None:
        if self.lp is not None:
            self.materialize()
        return self._dead

    @property
    def head(self) -> int:
        if self.lp is not None:
            self.materialize()
        return self._head

    # --- sizes -------------------------------------------------------------------

    @property
    def ndead(self) -> int:
        return self.n - self.live

    def lp_bytes(self) -> int:
        """Exact lpBytes() of the equivalent Redis listpack."""
        live, ndead = self.live, self.n - self.live
        return (
            self.body
            + (2 if live < 128 else int_size(live))
            + (2 if ndead < 128 else int_size(ndead))
        )

    # --- shape changes ---------------------------------------------------------------

    def add_mixed(self, dms: int, seq: int, fields: list[bytes], same: bool, size: int) -> None:
        """Append an entry in the general form (the first non-SAMEFIELDS entry, or after)."""
        elems = self.elems  # (an open node: never a loaded one, so the fields are set)
        assert elems is not None
        self.fast = False
        if self._estart is None:
            self._estart = (
                list(range(0, self.n * self.k + 1, self.k)) if self.k else [0] * (self.n + 1)
            )
            self._same = bytearray(b"\x01" * self.n)
        assert self._same is not None
        if same:
            elems.extend(fields[1::2])
        else:
            elems.extend(fields)
        self._estart.append(len(elems))
        self._same.append(1 if same else 0)
        self._ms.append(dms)
        self._seq.append(seq)
        self.n += 1
        self.live += 1
        self.body += size

    def pack(self) -> None:
        """Close the node: lists become arrays and one bytes blob."""
        if not self.is_open:
            return
        elems = self.elems
        assert elems is not None
        self._ms = compact_array(self._ms)
        self._seq = compact_array(self._seq)
        self._data = b"".join(elems)
        self._offs = compact_array(list(accumulate(map(len, elems), initial=0)))
        if self._estart is not None:
            self._estart = compact_array(self._estart)
            self._same = bytes(self._same)
        self.elems = None
        self.is_open = False
        self.fast = False
        self.fresh = False

    def unpack(self) -> None:
        """Reopen a packed node as the tail (its successors were all deleted)."""
        if self.is_open:
            return
        offs, data = self.offs, self.data  # (decodes a loaded node)
        assert offs is not None
        self.elems = list(map(data.__getitem__, map(slice, offs, offs[1:])))
        self._ms = list(self._ms)
        self._seq = list(self._seq)
        if self._estart is not None:
            self._estart = list(self._estart)
            self._same = bytearray(self._same)
        self._data = b""
        self._offs = None
        self.is_open = True
        self.fast = self._estart is None

    # --- reading ---------------------------------------------------------------------

    def read_view(self) -> tuple:
        """What a reply encoder reads, in one call (see resp/_stream_entries.pyx):
        (ms0, ms, seq, n, dead, mf, elems, data, offs, estart, same).

        `elems` is the open tail's element list (None once packed), `data`/`offs`
        the packed elements; the rest as the slots say. Read-only: never mutate.
        """
        # The readers below test `lp` once and read the entry fields directly:
        # compiled, each property read would be a generic attribute lookup.
        if self.lp is not None:
            self.materialize()
        return (self.ms0, self._ms, self._seq, self.n, self._dead, self.mf, self.elems,
                self._data, self._offs, self._estart, self._same)

    def id_at(self, i: int) -> StreamID:
        if self.lp is not None:
            self.materialize()
        return _tuple_new(StreamID, (self.ms0 + self._ms[i], self._seq[i]))

    def last_id_any(self) -> StreamID:
        """ID of the last entry, tombstone or not (lpGetEdgeStreamID(lp, 0, ...))."""
        if self.lp is not None:
            self.materialize()
        return _tuple_new(StreamID, (self.ms0 + self._ms[-1], self._seq[-1]))

    def is_dead(self, i: int) -> bool:
        if self.lp is not None:
            self.materialize()
        dead = self._dead
        return dead is not None and i in dead

    def fields_at(self, i: int) -> list[bytes]:
        """The flat [field, value, ...] list of entry i."""
        if self.lp is not None:
            self.materialize()
        if self._estart is None and not self.is_open:
            # Closed node, every entry SAMEFIELDS: the common read path.
            k = self.k
            offs, data, mf = self._offs, self._data, self.mf
            a = i * k
            if k == 1:
                return [mf[0], data[offs[a] : offs[a + 1]]]
            if k == 2:
                o1 = offs[a + 1]
                return [mf[0], data[offs[a] : o1], mf[1], data[o1 : offs[a + 2]]]
        return self._fields_general(i)

    def _fields_general(self, i: int) -> list[bytes]:
        # (fields_at's: the node is decoded.)
        estart = self._estart
        if estart is None:
            a = i * self.k
            b = a + self.k
            same = True
        else:
            a = estart[i]
            b = estart[i + 1]
            same = self._same[i]
        if self.is_open:
            stored = self.elems[a:b]
        else:
            offs = self._offs[a : b + 1]
            stored = list(map(self._data.__getitem__, map(slice, offs, offs[1:])))
        if not same:
            return stored
        out: list[bytes] = [b""] * (2 * len(stored))
        out[0::2] = self.mf
        out[1::2] = stored
        return out

    def first_index_ge(self, ms: int, seq: int) -> int:
        """Index of the first entry with ID >= (ms, seq), or n."""
        dms = ms - self.ms0
        if dms < 0:
            return 0
        if self.lp is not None:
            self.materialize()
        ms_arr, n = self._ms, self.n
        lo = bisect_left(ms_arr, dms, 0, n)
        hi = bisect_right(ms_arr, dms, lo, n)
        return bisect_left(self._seq, seq, lo, hi)

    def last_index_le(self, ms: int, seq: int) -> int:
        """Index of the last entry with ID <= (ms, seq), or -1."""
        dms = ms - self.ms0
        if dms < 0:
            return -1
        if self.lp is not None:
            self.materialize()
        ms_arr = self._ms
        hi = bisect_right(ms_arr, dms, 0, self.n)
        lo = bisect_left(ms_arr, dms, 0, hi)
        return bisect_right(self._seq, seq, lo, hi) - 1

    def find(self, ms: int, seq: int) -> int:
        """Index of the entry with exactly this ID (live or dead), or -1."""
        i = self.first_index_ge(ms, seq)
        if i < self.n and self.ms0 + self.ms[i] == ms and self.seq[i] == seq:
            return i
        return -1

    def mark_deleted(self, i: int) -> None:
        dead = self.dead  # (decodes a loaded node)
        if dead is None:
            dead = self._dead = {i}
        else:
            dead.add(i)
        self.live -= 1
        if i == self.head:
            # Keeps `XADD ... MAXLEN = n` O(1): each trim starts past the tombstones.
            head, n = i + 1, self.n
            while head < n and head in dead:
                head += 1
            self._head = head

    def entry_sizes_total(self) -> int:
        """Recompute the listpack body from the entries (check_invariants only)."""
        total = LISTPACK_EMPTY_SIZE + int_size(self.k) + sum(map(_size_of, self.mf)) + 2
        for i in range(self.n):
            ms = self.ms0 + self.ms[i]
            seq = self.seq[i]
            fields = self.fields_at(i)
            nf = len(fields) // 2
            same = self.estart is None or bool(self.same[i])
            size = 2 + diff_size(ms, self.ms0) + diff_size(seq, self.seq0)
            if same:
                size += int_size(nf + 3) + sum(map(_size_of, fields[1::2]))
            else:
                size += int_size(nf) + int_size(2 * nf + 4) + sum(map(_size_of, fields))
            total += size
        return total
