"""A naive reference model of a Redis stream, for property tests of engine/stream.py.

Plain lists, no packing, no bisect: each node is a list of [id, fields, deleted]
entries and everything is recomputed from scratch (listpack sizes included),
transcribing t_stream.c's streamAppendItem / streamTrim / XDEL step by step.
It is slow on purpose; only small streams go through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

U64 = (1 << 64) - 1
_CANONICAL_INT = re.compile(rb"(0|-?[1-9][0-9]*)\Z")


def _int_size(v: int) -> int:
    for bits, size in ((7, 2), (13, 3), (16, 4), (24, 5), (32, 6)):
        lo = 0 if bits == 7 else -(1 << (bits - 1))
        hi = (1 << bits) - 1 if bits == 7 else (1 << (bits - 1)) - 1
        if lo <= v <= hi:
            return size
    return 10


def _element_size(value: bytes) -> int:
    if len(value) < 21 and _CANONICAL_INT.match(value):
        number = int(value)
        if -(1 << 63) <= number < (1 << 63):
            return _int_size(number)
    length = len(value)
    head = 1 if length < 64 else 2 if length < 4096 else 5
    body = head + length
    back = 1
    while body >= (1 << (7 * back)):
        back += 1
    return body + back


def _diff(a: int, b: int) -> int:
    d = (a - b) & U64
    return d - (1 << 64) if d >= (1 << 63) else d


class ModelNode:
    def __init__(self, master: tuple[int, int], fields: list[bytes]) -> None:
        self.master = master
        self.master_fields = fields[0::2]
        self.entries: list[list] = []  # [id, fields, deleted]

    @property
    def live(self) -> int:
        return sum(1 for e in self.entries if not e[2])

    def lp_bytes(self) -> int:
        size = 7
        size += _int_size(self.live) + _int_size(len(self.entries) - self.live)
        size += _int_size(len(self.master_fields))
        size += sum(_element_size(f) for f in self.master_fields) + _int_size(0)
        for sid, fields, _deleted in self.entries:
            same = fields[0::2] == self.master_fields
            nf = len(fields) // 2
            size += _int_size(2 if same else 0)  # flags (DELETED does not change the size)
            size += _int_size(_diff(sid[0], self.master[0]))
            size += _int_size(_diff(sid[1], self.master[1]))
            if same:
                size += sum(_element_size(v) for v in fields[1::2])
                size += _int_size(nf + 3)
            else:
                size += _int_size(nf) + sum(_element_size(x) for x in fields)
                size += _int_size(2 * nf + 4)
        return size


class StreamModel:
    def __init__(self, node_max_entries: int = 100, node_max_bytes: int = 4096) -> None:
        self.node_max_entries = node_max_entries
        self.node_max_bytes = node_max_bytes
        self.nodes: list[ModelNode] = []
        self.length = 0
        self.last_id = (0, 0)
        self.entries_added = 0
        self.max_deleted_id = (0, 0)

    # --- queries ------------------------------------------------------------------

    def live_entries(self) -> list[tuple[tuple[int, int], list[bytes]]]:
        return [(e[0], e[1]) for node in self.nodes for e in node.entries if not e[2]]

    def range(self, start, end, count=None, reverse=False):
        picked = [e for e in self.live_entries() if start <= e[0] <= end]
        if reverse:
            picked.reverse()
        if count is not None:
            picked = picked[: max(count, 0)]
        return picked

    @property
    def first_id(self) -> tuple[int, int]:
        live = self.live_entries()
        return live[0][0] if live else (0, 0)

    def node_shapes(self) -> list[tuple[tuple[int, int], int, int]]:
        """(master id, entries incl. deleted, live) per node."""
        return [(n.master, len(n.entries), n.live) for n in self.nodes]

    # --- writes ---------------------------------------------------------------------

    def append(self, sid: tuple[int, int], fields: list[bytes]) -> None:
        assert sid > self.last_id
        max_bytes = self.node_max_bytes
        if max_bytes == 0 or max_bytes > (1 << 30):
            max_bytes = 1 << 30
        tail = self.nodes[-1] if self.nodes else None
        if tail is not None:
            if tail.lp_bytes() + sum(len(x) for x in fields) >= max_bytes:
                tail = None
            elif self.node_max_entries and len(tail.entries) >= self.node_max_entries:
                tail = None
        if tail is None:
            tail = ModelNode(sid, fields)
            self.nodes.append(tail)
        tail.entries.append([sid, list(fields), False])
        self.length += 1
        self.entries_added += 1
        self.last_id = sid

    def delete(self, sid: tuple[int, int]) -> bool:
        for ni, node in enumerate(self.nodes):
            for entry in node.entries:
                if entry[0] == sid and not entry[2]:
                    if node.live == 1:
                        del self.nodes[ni]
                    else:
                        entry[2] = True
                    self.length -= 1
                    self.max_deleted_id = max(self.max_deleted_id, sid)
                    return True
        return False

    def trim(
        self,
        maxlen: int | None,
        minid: tuple[int, int] | None,
        approx: bool,
        limit: int,
        can_delete: Callable[[tuple[int, int]], bool] | None = None,
        on_deleted: Callable[[list], None] | None = None,
    ) -> int:
        keepref = can_delete is None and on_deleted is None
        deleted = 0
        removed: list = []
        ni = 0
        while ni < len(self.nodes):
            if maxlen is not None and self.length <= maxlen:
                break
            node = self.nodes[ni]
            entries = node.live
            if limit and deleted + entries > limit:
                break
            if maxlen is not None:
                remove_node = self.length - entries >= maxlen
            else:
                remove_node = node.entries[-1][0] < minid
            if remove_node and keepref:
                del self.nodes[ni]
                self.length -= entries
                deleted += entries
                continue
            if approx and not remove_node:
                break
            for entry in node.entries:
                if maxlen is not None:
                    if self.length <= maxlen:
                        break
                elif entry[0] >= minid:
                    break
                if entry[2]:
                    continue
                if can_delete is not None and not can_delete(entry[0]):
                    continue
                entry[2] = True
                removed.append(entry[0])
                self.length -= 1
                deleted += 1
            if not remove_node:
                break
            if node.live == 0:
                del self.nodes[ni]
            else:
                ni += 1
        if on_deleted is not None and removed:
            on_deleted(removed)
        return deleted
