"""The stream data type: an ordered log of entries in packed nodes, plus its metadata.

Owns entry order, node boundaries, tombstones, trimming and the metadata XINFO
reports (last-generated-id, entries-added, max-deleted-entry-id,
recorded-first-entry-id). It never reads the clock (XADD passes `now_ms`),
never formats replies and validates only what needs the stream's state.

Layout (t_stream.c's "radix tree of listpacks"): `_nodes` is a list of
`StreamNode` in ID order and `_keys` the parallel list of their master IDs, so
a lookup is a bisect over `_keys`, then a bisect inside one node. Nodes close
exactly where Redis closes its listpacks (stream-node-max-entries, counting
tombstones, or stream-node-max-bytes against the emulated listpack size), so
`~` trimming removes the same whole nodes and XINFO's radix-tree figures match.

API (IDs are `StreamID`; fields are flat [f1, v1, f2, v2, ...] lists of bytes):
    s = Stream(node_max_entries=100, node_max_bytes=4096)   # or Stream(limits=shared)
    sid = s.next_id(ms, seq, now_ms)      # XADD's `*` (None, None) / `ms-*` (ms, None) / explicit
    s.append(sid, fields)                 # caller got sid from next_id
    s.range(start, end, count=None, reverse=False) -> [(StreamID, fields)], inclusive bounds
    s.range_ids(start, end, count=None) -> [StreamID];  s.read_cursor(start, end, reverse)
    s.get(sid) -> fields | None;  s.delete(sid) -> bool (XDEL of one ID)
    s.trim_maxlen(maxlen, approx, limit, can_delete=None, on_deleted=None) -> removed
    s.trim_minid(minid, approx, limit, can_delete=None, on_deleted=None) -> removed
    s.first_entry() / s.last_entry() -> (StreamID, fields) | None;  s.first_id (recorded)
    s.set_id(last_id, entries_added=None, max_deleted_id=None)   # XSETID, validated by caller
    s.length, s.last_id, s.entries_added, s.max_deleted_id, s.groups
    s.radix_tree_keys, s.radix_tree_nodes, s.memory_usage(samples), s.check_invariants()
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from rillet.engine.idmp import Idmp
from rillet.engine.ids import MAX_ID, MIN_ID, U64_MAX, StreamID
from rillet.engine.listpack_size import (
    ELEMENT_SIZES,
    diff_size,
    int_size,
    jemalloc_size,
)
from rillet.engine.stream_node import StreamNode
from rillet.errors import STREAM_EXHAUSTED, STREAM_ID_TOO_SMALL, ReplyError

_tuple_new = tuple.__new__
_size_of = ELEMENT_SIZES.__getitem__

# listpack.c refuses to grow past 1 GiB whatever stream-node-max-bytes says.
LISTPACK_MAX_SIZE = 1 << 30
# t_stream.c pre-allocates a new tail listpack up to this many bytes.
_LISTPACK_PREALLOC = 4096

Fields = list[bytes]
Entry = tuple[StreamID, Fields]


def default_trim_limit(node_max_entries: int) -> int:
    """LIMIT used by `~` trimming when the client gave none (100 nodes' worth, capped)."""
    limit = 100 * node_max_entries
    if limit <= 0:
        return 10_000
    return min(limit, 1_000_000)


class NodeLimits:
    """stream-node-max-entries / stream-node-max-bytes, shareable by every stream.

    The server keeps one instance and CONFIG SET mutates it; appends read it
    each time, as Redis reads `server.stream_node_max_*` on every XADD.
    """

    __slots__ = ("_node_max_entries", "_node_max_bytes", "effective_max_bytes", "fast_entries")

    def __init__(self, node_max_entries: int = 100, node_max_bytes: int = 4096) -> None:
        self.node_max_entries = node_max_entries
        self.node_max_bytes = node_max_bytes

    @property
    def node_max_entries(self) -> int:
        return self._node_max_entries

    @node_max_entries.setter
    def node_max_entries(self, value: int) -> None:
        self._node_max_entries = value
        # Below this many entries a node is surely not full by count, and its
        # count/deleted header integers still take one byte each (< 128).
        self.fast_entries = min(value, 127) if value > 0 else 127

    @property
    def node_max_bytes(self) -> int:
        return self._node_max_bytes

    @node_max_bytes.setter
    def node_max_bytes(self, value: int) -> None:
        self._node_max_bytes = value
        self.effective_max_bytes = value if 0 < value <= LISTPACK_MAX_SIZE else LISTPACK_MAX_SIZE


class Stream:
    # Compiled, Stream and NodeLimits are extension types (stream.pxd): the compiled
    # bodies read their fields as C struct fields (commands/_writes.pyx, ...).
    TYPE_NAME = b"stream"  # TYPE's reply
    ENCODING = b"stream"  # OBJECT ENCODING's reply

    __slots__ = (
        "_nodes",
        "_keys",
        "_tail",  # _nodes[-1] or None
        "limits",
        "length",  # live entries (XLEN)
        "last_id",  # last-generated-id: the top ID ever added, or set by XSETID
        "entries_added",  # entries ever added (XSETID may set it)
        "max_deleted_id",  # max-deleted-entry-id: highest ID removed by XDEL
        # The highest ID ever deleted or given as MAXDELETEDID: XSETID may lower
        # max_deleted_id, and entries above it may still be gone; this never goes
        # down (XAUTOCLAIM's scan trusts entries above it to be alive). In memory
        # only: a loaded stream has MIN_ID here and readers take the max of both.
        "deleted_mark",
        "groups",  # consumer groups by name (bytes), insertion-ordered
        "idmp",  # XADD IDMP state (engine.idmp.Idmp) or None
        "retention_ms",  # RILLET.XRETENTION's age limit in ms, 0 = none (engine/stream_policy.py)
        "_tree_version",
        "_tree_nodes_cache",
    )

    def __init__(
        self,
        node_max_entries: int = 100,
        node_max_bytes: int = 4096,
        *,
        limits: NodeLimits | None = None,
    ) -> None:
        self._nodes: list[StreamNode] = []
        self._keys: list[StreamID] = []
        self._tail: StreamNode | None = None
        self.limits = limits if limits is not None else NodeLimits(node_max_entries, node_max_bytes)
        self.length = 0
        self.last_id: StreamID = MIN_ID
        self.entries_added = 0
        self.max_deleted_id: StreamID = MIN_ID
        self.deleted_mark: StreamID = MIN_ID
        self.groups: dict[bytes, Any] = {}
        self.idmp: Idmp | None = None
        self.retention_ms = 0
        self._tree_version = 0
        self._tree_nodes_cache: tuple[int, int] = (-1, 0)

    # --- persistence: public construction and node access ------------------------------

    @classmethod
    def restore(
        cls,
        nodes: list[StreamNode],
        *,
        length: int,
        last_id: StreamID,
        entries_added: int,
        max_deleted_id: StreamID,
        limits: NodeLimits | None = None,
    ) -> Stream:
        """A stream rebuilt from saved nodes (in ID order) and metadata.

        Raises ValueError when the nodes disagree with `length` or are out of
        order, so a damaged file is refused rather than loaded half-right.
        """
        stream = cls(limits=limits)
        keys = [_tuple_new(StreamID, (node.ms0, node.seq0)) for node in nodes]
        for before, after in zip(keys, keys[1:], strict=False):
            if after <= before:
                raise ValueError("stream nodes out of order")
        if sum(node.live for node in nodes) != length:
            raise ValueError(f"stream length {length} does not match its nodes")
        stream._set_nodes(nodes, keys)
        stream.length = length
        stream.last_id = last_id
        stream.entries_added = entries_added
        stream.max_deleted_id = max_deleted_id
        return stream

    def _set_nodes(self, nodes: list[StreamNode], keys: list[StreamID]) -> None:
        # (A method: compiled, the underscored fields are the extension type's own.)
        self._nodes = nodes
        self._keys = keys
        self._tail = nodes[-1] if nodes else None
        self._tree_version += 1

    @property
    def nodes(self) -> list[StreamNode]:
        """The nodes in ID order (read-only: serialisers walk them; never mutate)."""
        return self._nodes

    def ensure_idmp(self) -> Idmp:
        """The stream's IDMP state, created on first use."""
        idmp = self.idmp
        if idmp is None:
            idmp = self.idmp = Idmp()
        return idmp

    # --- configuration -------------------------------------------------------------

    @property
    def node_max_entries(self) -> int:
        return self.limits.node_max_entries

    @node_max_entries.setter
    def node_max_entries(self, value: int) -> None:
        self.limits.node_max_entries = value

    @property
    def node_max_bytes(self) -> int:
        return self.limits.node_max_bytes

    @node_max_bytes.setter
    def node_max_bytes(self, value: int) -> None:
        self.limits.node_max_bytes = value

    # --- adding ----------------------------------------------------------------------

    def next_id(self, ms: int | None, seq: int | None, now_ms: int) -> StreamID:
        """The ID XADD will use, or Redis's error (exhausted / equal or smaller).

        `ms` None is `*`: now_ms, or the last ms with seq+1 if the clock did
        not move forward (so IDs stay monotonic when the clock goes back).
        `seq` None is `ms-*`. The explicit `0-0` error is `check_xadd_id_not_zero`'s.
        commands/_writes.pyx repeats the `*` case for XADD (keep in step).
        """
        last = self.last_id
        last_ms, last_seq = last
        if last_ms == U64_MAX and last_seq == U64_MAX:
            raise ReplyError(STREAM_EXHAUSTED)
        if ms is None:
            if now_ms > last_ms:
                return _tuple_new(StreamID, (now_ms, 0))
            if last_seq < U64_MAX:
                return _tuple_new(StreamID, (last_ms, last_seq + 1))
            return _tuple_new(StreamID, (last_ms + 1, 0))
        if seq is None:
            if ms == last_ms:
                if last_seq == U64_MAX:
                    raise ReplyError(STREAM_ID_TOO_SMALL)
                return _tuple_new(StreamID, (ms, last_seq + 1))
            seq = 0
        if ms < last_ms or (ms == last_ms and seq <= last_seq):
            raise ReplyError(STREAM_ID_TOO_SMALL)
        return _tuple_new(StreamID, (ms, seq))

    def append(self, sid: StreamID, fields: Fields) -> None:
        """Add an entry; `sid` must be greater than `last_id` (use `next_id`).

        commands/_writes.pyx repeats the fast path below for XADD (keep in step;
        tests/server/test_fast_bodies.py compares the node layouts).
        """
        # Fast path: the open tail takes one more entry with its master fields,
        # and its listpack is surely below stream-node-max-bytes. Everything
        # else (new node, reopened node, other fields, near the byte limit)
        # goes through _append_general, which is the reference behaviour.
        node = self._tail
        if node is not None and node.fast:
            n = node.n
            limits = self.limits
            k2 = node.k2
            if n < limits.fast_entries and len(fields) == k2 and fields[0::2] == node.mf:
                values = fields[1::2]
                if k2 == 2:
                    values_size = _size_of(fields[1])
                elif k2 == 4:
                    values_size = _size_of(fields[1]) + _size_of(fields[3])
                else:
                    values_size = sum(map(_size_of, values))
                # lp_bytes + totelelen >= max_bytes closes the node. An element's
                # text is at most 18 bytes longer than its encoding (an integer),
                # so this bound lets us skip measuring the text in most appends.
                room = limits.effective_max_bytes - node.body - node.fixed_text
                if values_size + node.k18 < room or sum(map(len, values)) < room:
                    ms, seq = sid
                    dms = ms - node.ms0
                    dseq = seq - node.seq0
                    node.body += (
                        node.same_fixed
                        + values_size
                        + (2 if dms < 128 else diff_size(ms, node.ms0))
                        + (2 if 0 <= dseq < 128 else diff_size(seq, node.seq0))
                    )
                    node.elems.extend(values)
                    node.ms.append(dms)
                    node.seq.append(seq)
                    node.n = n + 1
                    node.live += 1
                    self.length += 1
                    self.entries_added += 1
                    self.last_id = sid
                    return
        self._append_general(sid, fields)

    def _append_general(self, sid: StreamID, fields: Fields) -> None:
        ms, seq = sid
        node = self._tail
        if node is not None:
            limits = self.limits
            max_entries = limits.node_max_entries
            if (max_entries and node.n >= max_entries) or (
                node.lp_bytes() + sum(map(len, fields)) >= limits.effective_max_bytes
            ):
                node = self._open_node(ms, seq, fields)
            elif not node.is_open:
                node.unpack()
        else:
            node = self._open_node(ms, seq, fields)

        dms = ms - node.ms0
        if len(fields) == node.k2 and fields[0::2] == node.mf:
            values = fields[1::2]
            dseq = seq - node.seq0
            size = (
                node.same_fixed
                + (2 if dms < 128 else diff_size(ms, node.ms0))
                + (2 if 0 <= dseq < 128 else diff_size(seq, node.seq0))
                + sum(map(_size_of, values))
            )
            if node.estart is None:
                node.elems.extend(values)
                node.ms.append(dms)
                node.seq.append(seq)
                node.n += 1
                node.live += 1
                node.body += size
            else:
                node.add_mixed(dms, seq, fields, True, size)
        else:
            nf = len(fields) >> 1
            size = (
                2
                + diff_size(ms, node.ms0)
                + diff_size(seq, node.seq0)
                + int_size(nf)
                + int_size(2 * nf + 4)
                + sum(map(_size_of, fields))
            )
            node.add_mixed(dms, seq, fields, False, size)
        self.length += 1
        self.entries_added += 1
        self.last_id = sid

    def _open_node(self, ms: int, seq: int, fields: Fields) -> StreamNode:
        nodes = self._nodes
        master_fields = fields[0::2]
        if nodes:
            prev = nodes[-1]
            prev.pack()
            if prev.mf == master_fields:
                master_fields = prev.mf  # one list for a run of nodes with the same fields
        node = StreamNode(ms, seq, master_fields)
        nodes.append(node)
        self._tail = node
        self._keys.append(_tuple_new(StreamID, (ms, seq)))
        self._tree_version += 1
        return node

    # --- reading ---------------------------------------------------------------------

    def range(
        self,
        start: tuple[int, int],
        end: tuple[int, int],
        count: int | None = None,
        reverse: bool = False,
    ) -> list[Entry]:
        """Live entries with start <= ID <= end, ascending (or descending), at most count."""
        out: list[Entry] = []
        if count is not None and count <= 0:
            return out
        cursor = self.read_cursor(start, end, reverse)
        if cursor is None:
            return out
        nodes, ni, i = cursor
        limit = count if count is not None else -1
        if not reverse:
            nnodes = len(nodes)
            while ni < nnodes:
                if _collect_forward(nodes[ni], i, end, out, limit):
                    return out
                ni += 1
                i = 0
        else:
            while ni >= 0:
                if _collect_backward(nodes[ni], i, start, out, limit):
                    return out
                ni -= 1
                if ni >= 0:
                    i = nodes[ni].n - 1
        return out

    def read_cursor(
        self, start: tuple[int, int], end: tuple[int, int], reverse: bool = False
    ) -> tuple[list[StreamNode], int, int] | None:
        """Where a range read begins: (nodes, node index, entry index), None if empty.

        Forward, the first entry with ID >= start (the index may be the node's
        n: go on to the next node); reverse, the last with ID <= end (may be -1:
        go on to the previous node). `range()` and the compiled reply encoder
        (resp/_stream_entries.pyx) both walk from here, ending at `end`
        (`start` in reverse), tombstones skipped. Never mutate the nodes.
        """
        nodes = self._nodes
        if not nodes or start > end:
            return None
        if not reverse:
            ni = bisect_right(self._keys, start) - 1
            if ni < 0:
                return nodes, 0, 0
            return nodes, ni, nodes[ni].first_index_ge(start[0], start[1])
        ni = bisect_right(self._keys, end) - 1
        if ni < 0:
            return None
        return nodes, ni, nodes[ni].last_index_le(end[0], end[1])

    def range_ids(self, start: tuple[int, int], end: tuple[int, int],
                  count: int | None = None) -> list[StreamID]:
        """IDs of what range(start, end, count) returns, without the fields."""
        out: list[StreamID] = []
        if count is not None and count <= 0:
            return out
        cursor = self.read_cursor(start, end)
        if cursor is None:
            return out
        nodes, ni, i = cursor
        limit = count if count is not None else -1
        append = out.append
        nnodes = len(nodes)
        while ni < nnodes:
            node = nodes[ni]
            ms0, ms_arr, seq_arr, n, dead = node.ms0, node.ms, node.seq, node.n, node.dead
            while i < n:
                sid = _tuple_new(StreamID, (ms0 + ms_arr[i], seq_arr[i]))
                if sid > end:
                    return out
                if dead is None or i not in dead:
                    append(sid)
                    if len(out) == limit:
                        return out
                i += 1
            ni += 1
            i = 0
        return out

    def get(self, sid: tuple[int, int]) -> Fields | None:
        """Fields of the live entry with this ID, or None."""
        found = self._locate(sid)
        if found is None:
            return None
        node, i = found
        return node.fields_at(i)

    def _locate(self, sid: tuple[int, int]) -> tuple[StreamNode, int] | None:
        ni = bisect_right(self._keys, sid) - 1
        if ni < 0:
            return None
        node = self._nodes[ni]
        i = node.find(sid[0], sid[1])
        if i < 0 or node.is_dead(i):
            return None
        return node, i

    def first_entry(self) -> Entry | None:
        for node in self._nodes:
            if node.live:
                return node.id_at(node.head), node.fields_at(node.head)
        return None

    def last_entry(self) -> Entry | None:
        for node in reversed(self._nodes):
            if node.live:
                dead = node.dead
                for i in range(node.n - 1, -1, -1):
                    if dead is None or i not in dead:
                        return node.id_at(i), node.fields_at(i)
        return None

    @property
    def first_id(self) -> StreamID:
        """recorded-first-entry-id: the first live ID, 0-0 when empty (Redis keeps it so)."""
        for node in self._nodes:
            if node.live:
                return node.id_at(node.head)
        return MIN_ID

    def last_valid_id(self) -> StreamID:
        """The last live ID, 0-0 when empty (streamLastValidID; XSETID and XREAD `+`)."""
        for node in reversed(self._nodes):
            if node.live:
                i = node.n - 1
                while node.is_dead(i):
                    i -= 1
                return node.id_at(i)
        return MIN_ID

    def head_id(self) -> StreamID:
        """First ID tombstones included, MAX_ID without nodes (MINID `~` propagation)."""
        if not self._nodes:
            return MAX_ID
        node = self._nodes[0]
        return _tuple_new(StreamID, (node.ms0, node.seq0))

    # --- deleting --------------------------------------------------------------------

    def delete(self, sid: tuple[int, int]) -> bool:
        """XDEL one ID: tombstone it, free its node if that empties it."""
        ni = bisect_right(self._keys, sid) - 1
        if ni < 0:
            return False
        node = self._nodes[ni]
        i = node.find(sid[0], sid[1])
        if i < 0 or node.is_dead(i):
            return False
        if node.live == 1:
            self._remove_node(ni)
        else:
            node.mark_deleted(i)
        self.length -= 1
        if sid > self.max_deleted_id:
            self.max_deleted_id = _tuple_new(StreamID, (sid[0], sid[1]))
            if sid > self.deleted_mark:
                self.deleted_mark = self.max_deleted_id
        return True

    def _remove_node(self, ni: int) -> None:
        del self._nodes[ni]
        del self._keys[ni]
        self._tail = self._nodes[-1] if self._nodes else None
        self._tree_version += 1

    def trim_maxlen(
        self,
        maxlen: int,
        approx: bool = False,
        limit: int = 0,
        can_delete: Callable[[StreamID], bool] | None = None,
        on_deleted: Callable[[list[StreamID]], None] | None = None,
    ) -> int:
        """Trim to at most `maxlen` live entries (XTRIM MAXLEN); returns entries removed.

        `approx` removes whole nodes only; `limit` (0 = none) caps the entries
        removed, checked a node at a time. `can_delete` (ACKED) vetoes single
        entries; `on_deleted` (DELREF) receives every removed ID. See `_trim`.
        """
        if self.length <= maxlen:
            return 0
        return self._trim(maxlen, None, approx, limit, can_delete, on_deleted)

    def trim_minid(
        self,
        minid: tuple[int, int],
        approx: bool = False,
        limit: int = 0,
        can_delete: Callable[[StreamID], bool] | None = None,
        on_deleted: Callable[[list[StreamID]], None] | None = None,
    ) -> int:
        """Remove live entries with ID < `minid` (XTRIM MINID); same options as trim_maxlen."""
        return self._trim(0, minid, approx, limit, can_delete, on_deleted)

    def _trim(
        self,
        maxlen: int,
        minid: tuple[int, int] | None,
        approx: bool,
        limit: int,
        can_delete: Callable[[StreamID], bool] | None,
        on_deleted: Callable[[list[StreamID]], None] | None,
    ) -> int:
        # streamTrim. With KEEPREF (no hooks) a node that may go entirely is
        # freed unseen. With DELREF/ACKED it is walked entry by entry (refs to
        # drop, vetoes to honour) and freed if that empties it, and trimming
        # goes on to the next node even under `~`: this is Redis's fix #14623
        # (8.2.3 itself trims nothing with `~` DELREF/ACKED). A node that may
        # not go entirely stops `~` trimming; exact trimming tombstones inside
        # it and stops there, leaving the node even if no live entry remains.
        keepref = can_delete is None and on_deleted is None
        by_maxlen = minid is None
        nodes = self._nodes
        removed_ids: list[StreamID] | None = [] if on_deleted is not None else None
        deleted = 0
        ni = 0
        while ni < len(nodes):
            if by_maxlen and self.length <= maxlen:
                break
            node = nodes[ni]
            entries = node.live
            if limit and deleted + entries > limit:
                break
            if minid is None:  # (by_maxlen)
                remove_node = self.length - entries >= maxlen
            else:
                remove_node = node.last_id_any() < minid
            if remove_node and keepref:
                self._remove_node(ni)
                self.length -= entries
                deleted += entries
                continue
            if approx and not remove_node:
                break
            deleted += self._trim_entries(node, maxlen, minid, can_delete, removed_ids)
            if not remove_node:
                break
            if node.live == 0:
                self._remove_node(ni)
            else:
                ni += 1
        if removed_ids and on_deleted is not None:  # (removed_ids is set only with on_deleted)
            on_deleted(removed_ids)
        return deleted

    def _trim_entries(
        self,
        node: StreamNode,
        maxlen: int,
        minid: tuple[int, int] | None,
        can_delete: Callable[[StreamID], bool] | None,
        removed_ids: list[StreamID] | None,
    ) -> int:
        ms0, ms_arr, seq_arr = node.ms0, node.ms, node.seq
        removed = 0
        for i in range(node.head, node.n):
            if minid is None:  # by MAXLEN
                if self.length <= maxlen:
                    break
                sid = None
            else:
                sid = _tuple_new(StreamID, (ms0 + ms_arr[i], seq_arr[i]))
                if sid >= minid:
                    break
            if node.is_dead(i):
                continue
            if can_delete is not None or removed_ids is not None:
                if sid is None:
                    sid = _tuple_new(StreamID, (ms0 + ms_arr[i], seq_arr[i]))
                if can_delete is not None and not can_delete(sid):
                    continue
                if removed_ids is not None:
                    removed_ids.append(sid)
            node.mark_deleted(i)
            self.length -= 1
            removed += 1
        return removed

    # --- XSETID and consumer-group helpers ---------------------------------------------

    def set_id(
        self,
        last_id: StreamID,
        entries_added: int | None = None,
        max_deleted_id: StreamID | None = None,
    ) -> None:
        """XSETID's effect; the caller has checked it against length and last_valid_id()."""
        self.last_id = last_id
        if entries_added is not None:
            self.entries_added = entries_added
        if max_deleted_id is not None and max_deleted_id != MIN_ID:
            if self.max_deleted_id > self.deleted_mark:
                self.deleted_mark = self.max_deleted_id
            self.max_deleted_id = max_deleted_id

    def range_has_tombstones(
        self, start: tuple[int, int] | None = None, end: tuple[int, int] | None = None
    ) -> bool:
        """streamRangeHasTombstones: could [start, end] hold an XDEL'd entry?"""
        if not self.length or self.max_deleted_id == MIN_ID:
            return False
        lo = start if start is not None else MIN_ID
        hi = end if end is not None else MAX_ID
        return lo <= self.max_deleted_id <= hi

    def estimate_distance_from_first_ever_entry(self, sid: tuple[int, int]) -> int | None:
        """streamEstimateDistanceFromFirstEverEntry: the entries_read counter of `sid`,
        or None where Redis returns SCG_INVALID_ENTRIES_READ."""
        if not self.entries_added:
            return 0
        if not self.length and sid <= self.last_id:
            return self.entries_added
        if sid != MIN_ID and sid < self.max_deleted_id:
            return None
        if sid == self.last_id:
            return self.entries_added
        if sid > self.last_id:
            return None
        first_id = self.first_id
        if self.max_deleted_id == MIN_ID or self.max_deleted_id < first_id:
            if sid < first_id:
                return self.entries_added - self.length
            if sid == first_id:
                return self.entries_added - self.length + 1
        return None

    # --- XINFO / MEMORY USAGE --------------------------------------------------------------

    @property
    def radix_tree_keys(self) -> int:
        return len(self._nodes)

    @property
    def radix_tree_nodes(self) -> int:
        """Node count of Redis's rax holding these master IDs as 16-byte big-endian keys."""
        version, value = self._tree_nodes_cache
        if version != self._tree_version:
            keys = [ms.to_bytes(8, "big") + seq.to_bytes(8, "big") for ms, seq in self._keys]
            value = _rax_node_count(keys)
            self._tree_nodes_cache = (self._tree_version, value)
        return value

    def memory_usage(self, samples: int = 5) -> int:
        """Bytes Redis's objectComputeSize reports for this stream (without groups).

        Listpack allocations are jemalloc size classes of the emulated listpack
        sizes; like Redis, only the first `samples` nodes are measured (0 = all).
        """
        nodes = self._nodes
        size = 16 + 88  # robj + stream struct
        nkeys = len(nodes)
        tree_nodes = self.radix_tree_nodes
        size += nkeys * 16 + tree_nodes * 4 + tree_nodes * 8 * 30  # streamRadixTreeMemoryUsage
        if not nodes:
            return size
        sample = nkeys if samples <= 0 else min(samples, nkeys)
        lp_total = sum(self._lp_alloc(nodes[j], j == nkeys - 1) for j in range(sample))
        if nkeys <= sample:
            return size + lp_total
        return size + (lp_total // sample) * (nkeys - 1) + self._lp_alloc(nodes[-1], True)

    def _lp_alloc(self, node: StreamNode, is_tail: bool) -> int:
        lp_bytes = node.lp_bytes()
        if is_tail and node.fresh:
            cap = self.limits.node_max_bytes
            prealloc = cap if 0 < cap < _LISTPACK_PREALLOC else _LISTPACK_PREALLOC
            return jemalloc_size(max(prealloc, lp_bytes))
        return jemalloc_size(lp_bytes)

    # --- tests -------------------------------------------------------------------------------

    def check_invariants(self) -> None:
        nodes = self._nodes
        assert len(nodes) == len(self._keys)
        total_live = 0
        prev_last: StreamID | None = None
        for j, node in enumerate(nodes):
            assert self._keys[j] == (node.ms0, node.seq0)
            assert node.n >= 1, "empty node kept"
            assert node.is_open == (j == len(nodes) - 1 and node.is_open), "open node not at tail"
            assert len(node.ms) == len(node.seq) == node.n
            dead = node.dead or set()
            assert all(0 <= i < node.n for i in dead)
            assert node.live == node.n - len(dead) >= 0
            assert all(i in dead for i in range(node.head))
            assert node.head == node.n or node.head not in dead
            assert node.ms[0] == 0 and node.seq[0] == node.seq0
            ids = [node.id_at(i) for i in range(node.n)]
            assert all(a < b for a, b in zip(ids, ids[1:], strict=False)), (
                "IDs not increasing in node"
            )
            if prev_last is not None:
                assert prev_last < ids[0], "nodes overlap"
            prev_last = ids[-1]
            if node.is_open:
                assert node.elems is not None
            else:
                assert node.offs is not None and node.offs[-1] == len(node.data)
            if node.estart is not None:
                assert node.same is not None and len(node.estart) == node.n + 1
            assert node.body == node.entry_sizes_total(), "listpack size drifted"
            for i in range(node.n):
                fields = node.fields_at(i)
                assert fields and len(fields) % 2 == 0
            total_live += node.live
        assert total_live == self.length
        last = self.last_entry()
        if last is not None:
            assert last[0] <= self.last_id
        assert self.entries_added >= self.length


def _collect_forward(
    node: StreamNode, i: int, end: tuple[int, int], out: list[Entry], limit: int
) -> bool:
    """Append live entries from index i on while ID <= end; True when done."""
    ms0, ms_arr, seq_arr, n, dead = node.ms0, node.ms, node.seq, node.n, node.dead
    fields_at = node.fields_at
    while i < n:
        sid = _tuple_new(StreamID, (ms0 + ms_arr[i], seq_arr[i]))
        if sid > end:
            return True
        if dead is None or i not in dead:
            out.append((sid, fields_at(i)))
            if len(out) == limit:
                return True
        i += 1
    return False


def _collect_backward(
    node: StreamNode, i: int, start: tuple[int, int], out: list[Entry], limit: int
) -> bool:
    """Append live entries from index i down while ID >= start; True when done."""
    ms0, ms_arr, seq_arr, dead = node.ms0, node.ms, node.seq, node.dead
    fields_at = node.fields_at
    while i >= 0:
        sid = _tuple_new(StreamID, (ms0 + ms_arr[i], seq_arr[i]))
        if sid < start:
            return True
        if dead is None or i not in dead:
            out.append((sid, fields_at(i)))
            if len(out) == limit:
                return True
        i -= 1
    return False


def _rax_node_count(keys: list[bytes]) -> int:
    """Nodes of a rax (compressed radix tree) holding these sorted, distinct 16-byte keys.

    The root, one node per branching point, one compressed node per chain of
    single-child bytes, one leaf per key: what rax.c keeps after any sequence
    of inserts and removals (verified against XINFO STREAM).
    """
    if not keys:
        return 1
    width = len(keys[0])

    def count(lo: int, hi: int, depth: int) -> int:
        if hi - lo == 1:
            return 2 if depth < width else 1
        first, last = keys[lo], keys[hi - 1]
        d = depth
        while first[d] == last[d]:
            d += 1
        total = (1 if d > depth else 0) + 1
        j = lo
        while j < hi:
            byte = keys[j][d]
            e = j + 1
            while e < hi and keys[e][d] == byte:
                e += 1
            total += count(j, e, d + 1)
            j = e
        return total

    return count(0, len(keys), 0)
