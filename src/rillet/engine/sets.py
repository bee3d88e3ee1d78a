"""The set type.

Members are kept in a dict (insertion order, O(1) membership). OBJECT
ENCODING follows Redis: `intset` while every member is a canonical int64 and
the count fits set-max-intset-entries, `listpack` while the count fits
set-max-listpack-entries and members fit set-max-listpack-value, then
`hashtable`; an encoding only ever moves towards `hashtable` (except a new
set made by a *STORE command, which starts from its content).
"""

from __future__ import annotations

from collections.abc import Iterable

from rillet.compiled import as_slots

INTSET, LISTPACK, HASHTABLE = 0, 1, 2
_NAMES = (b"intset", b"listpack", b"hashtable")
# set-max-intset-entries, set-max-listpack-entries, set-max-listpack-value
DEFAULT_LIMITS = (512, 128, 64)
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


def is_int64(value: bytes) -> bool:
    """Redis's string2ll acceptance: canonical decimal in int64 range."""
    n = len(value)
    if n == 0 or n > 20:
        return False
    if value[0] == 45:  # '-'
        body = value[1:]
        if not body.isdigit() or body[0] == 48:
            return False
    elif not value.isdigit() or (value[0] == 48 and n > 1):
        return False
    return _I64_MIN <= int(value) <= _I64_MAX


class Set:
    TYPE_NAME = b"set"
    __slots__ = ("members", "kind")

    def __init__(self) -> None:
        self.members: dict[bytes, None] = {}
        self.kind = INTSET

    @classmethod
    def from_members(cls, members: Iterable[bytes], limits: tuple[int, int, int] | None = None) -> Set:
        s = cls()
        s.members = dict.fromkeys(members)
        s.kind = s.fresh_kind(limits or DEFAULT_LIMITS)
        return s

    def to_set(self) -> set[bytes]:
        return set(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, member: bytes) -> bool:
        return member in self.members

    def add(self, member: bytes) -> bool:
        if member in self.members:
            return False
        self.members[member] = None
        return True

    def remove(self, member: bytes) -> bool:
        if member in self.members:
            del self.members[member]
            return True
        return False

    def fresh_kind(self, limits: tuple[int, int, int]) -> int:
        """The encoding Redis gives a set built from scratch with this content."""
        intset_max, lp_entries, lp_value = limits
        n = len(self.members)
        if n <= intset_max and all(is_int64(m) for m in self.members):
            return INTSET
        if n <= lp_entries and all(len(m) <= lp_value for m in self.members):
            return LISTPACK
        return HASHTABLE

    def note_added(self, added: list[bytes], limits: tuple[int, int, int]) -> None:
        """After adds: Redis's setTypeMaybeConvert / setTypeAdd conversions."""
        intset_max, lp_entries, lp_value = limits
        n = len(self.members)
        if self.kind == INTSET:
            if all(is_int64(m) for m in added) and n <= intset_max:
                return
            # Redis adds one by one: the ints before the first conversion were
            # kept sorted in the intset; the rest follow in insertion order.
            fresh = set(added)
            ints = [m for m in self.members if m not in fresh]
            cut = 0
            while cut < len(added) and is_int64(added[cut]) and len(ints) + cut < intset_max:
                cut += 1
            self.members = dict.fromkeys(sorted(ints + added[:cut], key=int) + added[cut:])
            self.kind = LISTPACK
        if self.kind == LISTPACK:
            if n > lp_entries or any(len(m) > lp_value for m in added):
                self.kind = HASHTABLE

    def copy(self) -> Set:
        value = Set()
        value.members = dict(self.members)
        value.kind = self.kind
        return value

    def encoding(self) -> bytes:
        return _NAMES[self.kind]

    def memory_usage(self) -> int:
        return 64 + sum(len(m) + 16 for m in self.members)

# (Compiled: an extension type, engine/sets.pxd; its fields read as slots from Python.)
as_slots(Set)
