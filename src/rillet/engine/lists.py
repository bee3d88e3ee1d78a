"""The list type: a deque of bytes.

OBJECT ENCODING follows Redis 7.2+: `listpack` while the elements fit one
listpack node under list-max-listpack-size (negative: a byte budget of
4/8/16/32/64 KB; positive: an entry count), `quicklist` beyond; a quicklist
goes back to `listpack` when it shrinks under half the limit. The byte size
is the listpack encoding's (engine/listpack_size.py), kept as a running sum.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rillet.engine.listpack_size import LISTPACK_EMPTY_SIZE, element_size

_SIZE_LIMITS = {-1: 4096, -2: 8192, -3: 16384, -4: 32768, -5: 65536}
_SAFETY_LIMIT = 8192  # quicklist's SIZE_SAFETY_LIMIT for count-limited nodes


def _exceeds(max_size: int, nbytes: int, count: int) -> bool:
    """quicklistNodeExceedsLimit."""
    if max_size < 0:
        return nbytes > _SIZE_LIMITS.get(max_size, 8192)
    return nbytes > _SAFETY_LIMIT or count > max_size


class List:
    TYPE_NAME = b"list"
    __slots__ = ("items", "nbytes", "big")

    def __init__(self, items: Iterable[bytes] = ()) -> None:
        self.items: deque[bytes] = deque(items)
        self.nbytes = LISTPACK_EMPTY_SIZE + sum(map(element_size, self.items))
        self.big = False

    @classmethod
    def from_list(cls, items: Iterable[bytes], max_size: int = -2) -> List:
        value = cls(items)
        value.note_size(max_size)
        return value

    def to_list(self) -> list[bytes]:
        return list(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def push(self, values: Iterable[bytes], left: bool) -> None:
        add = self.items.appendleft if left else self.items.append
        for v in values:
            add(v)
            self.nbytes += element_size(v)

    def pop(self, left: bool) -> bytes:
        v = self.items.popleft() if left else self.items.pop()
        self.nbytes -= element_size(v)
        return v

    def replace(self, items: Iterable[bytes]) -> None:
        self.items = deque(items)
        self.nbytes = LISTPACK_EMPTY_SIZE + sum(map(element_size, self.items))

    def set_at(self, index: int, value: bytes) -> None:
        self.nbytes += element_size(value) - element_size(self.items[index])
        self.items[index] = value

    def insert(self, index: int, value: bytes) -> None:
        self.items.insert(index, value)
        self.nbytes += element_size(value)

    def note_size(self, max_size: int) -> None:
        """For a list built whole (loading): the encoding its content gets."""
        self.big = _exceeds(max_size, self.nbytes, len(self.items))

    def will_add(self, values: list[bytes], max_size: int) -> None:
        """Before adding `values`: Redis's listTypeTryConvertListpack (raw lengths, checked first)."""
        if not self.big and _exceeds(max_size, self.nbytes + sum(map(len, values)),
                                     len(self.items) + len(values)):
            self.big = True

    def shrunk(self, max_size: int) -> None:
        """After removing: listTypeTryConvertQuicklist back under half the limit."""
        if not self.big:
            return
        if max_size < 0:
            small = self.nbytes <= _SIZE_LIMITS.get(max_size, 8192) // 2
        else:
            small = len(self.items) <= max_size // 2 and self.nbytes <= _SAFETY_LIMIT // 2
        if small:
            self.big = False

    def copy(self) -> List:
        value = List(self.items)
        value.big = self.big
        return value

    def encoding(self) -> bytes:
        return b"quicklist" if self.big else b"listpack"

    def memory_usage(self) -> int:
        return 64 + self.nbytes
