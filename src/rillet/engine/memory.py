"""What a key costs: the estimate `used_memory` is built from.

CPython gives no cheap per-object byte count (tracemalloc is too slow to leave
on, mallinfo2 misses pymalloc's arenas, and RSS never shrinks when keys go),
so each key's cost is estimated from its shape: a fixed part per key and per
container, a part per element, and the elements' lengths. Containers are
measured from their length and the average size of a few elements (never a
walk over all of them), streams from their nodes' listpack byte counts (the
first few nodes' average, as Redis's MEMORY USAGE samples). The constants are
CPython 3.11-3.13 64-bit costs measured with tracemalloc (bytes objects,
dict entries at their usual load, tuples, floats); `tests/engine/test_memory.py`
holds the estimates to tracemalloc within a factor on generated data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from sortedcontainers import SortedList

from rillet.engine.hashes import Hash
from rillet.engine.lists import List
from rillet.engine.sets import Set
from rillet.engine.stream import Stream
from rillet.engine.vectorset import QUANT_NONE, VectorSet
from rillet.engine.zsets import Order, ZSet

# Per key in a Database: the key's bytes object (33 + len), its dict entries in
# data, the SCAN order (seq dict, two list slots, an int) and the access clock.
KEY_OVERHEAD = 186 + 33
BYTES_OVERHEAD = 33  # a bytes object's header (CPython: PyBytesObject + NUL)
# Containers: the object, its dict(s) at their smallest, per element overheads.
HASH_FIXED, HASH_PER_FIELD, HASH_PER_TTL = 320, 37 + 2 * BYTES_OVERHEAD, 100
SET_FIXED, SET_PER_MEMBER = 245, 37 + BYTES_OVERHEAD
# A sorted set's member: its dict entry and float, and in the order a tuple and its
# list slot (SortedList), or a packed 16-byte pair and its chunk's slack (_zorder).
ZSET_FIXED, ZSET_PER_MEMBER = 555, (125 if Order is SortedList else 85) + BYTES_OVERHEAD
# A list: its open ends hold bytes objects, its packed chunks a blob and an offsets array
# each (~nbytes, the listpack size, for their elements).
LIST_FIXED, LIST_PER_OPEN, LIST_PER_CHUNK = 815, 8 + BYTES_OVERHEAD, 220
STREAM_FIXED, STREAM_PER_NODE = 400, 600  # a node: its object, arrays, ID tuple, list slots
GROUP_FIXED, PEL_ENTRY, CONSUMER_FIXED = 500, 400, 300  # a PEL entry sits in three indexes
_SAMPLES = 4  # elements (or stream nodes) averaged per measure
# A vector set's node: its object, dict entry, link lists (level 0 holds up to 2*M) and
# the per-component slot of its vector (a float object more for NOQUANT).
VSET_FIXED, VSET_PER_NODE, VSET_PER_LINK = 600, 420, 8


def _sample_average(items: Iterable[Any], count: int, size_of: Callable[[Any], int]) -> float:
    if not count:
        return 0.0
    few = list(islice(items, _SAMPLES))
    return sum(map(size_of, few)) / len(few) if few else 0.0


def _pair_len(pair: tuple[bytes, bytes]) -> int:
    return len(pair[0]) + len(pair[1])


def _hash_size(value) -> int:
    fields = value.fields
    n = len(fields)
    return int(HASH_FIXED + n * (HASH_PER_FIELD + _sample_average(fields.items(), n, _pair_len))
               + HASH_PER_TTL * len(value.ttls))


def _set_size(value) -> int:
    members = value.members
    n = len(members)
    return int(SET_FIXED + n * (SET_PER_MEMBER + _sample_average(members, n, len)))


def _zset_size(value) -> int:
    scores = value.scores
    n = len(scores)
    return int(ZSET_FIXED + n * (ZSET_PER_MEMBER + _sample_average(scores, n, len)))


def _list_size(value) -> int:
    # nbytes (kept by the list) is its listpack size: the elements plus 1-5 bytes each.
    return (LIST_FIXED + value.open_count() * LIST_PER_OPEN + len(value.chunks) * LIST_PER_CHUNK
            + value.nbytes)


def stream_size(stream) -> int:
    """A stream: its nodes (object costs plus packed bytes, sampled) and its groups."""
    nodes = stream._nodes  # the nodes property, without its call
    count = len(nodes)
    size = STREAM_FIXED
    if count > _SAMPLES:
        # node.body is the emulated listpack size: within a few % of the packed
        # arrays and data blob the node holds. The first nodes stand for all.
        average = (nodes[0].body + nodes[1].body + nodes[2].body + nodes[3].body) / 4
        size += int(count * (STREAM_PER_NODE + average))
    elif count:
        size += count * STREAM_PER_NODE + sum(node.body for node in nodes)
    if stream.groups:
        for group in stream.groups.values():
            size += GROUP_FIXED + PEL_ENTRY * len(group.pel) + CONSUMER_FIXED * len(group.consumers)
    return size


def _vectorset_size(value) -> int:
    n = len(value.nodes)
    per_component = 32 if value.quant == QUANT_NONE else 8
    strings = _sample_average(value.nodes.values(), n, lambda node: 2 * BYTES_OVERHEAD
                              + len(node.item) + len(node.attrib or b""))
    size = VSET_FIXED + 4 * len(value.proj or ())
    return int(size + n * (VSET_PER_NODE + value.dim * per_component + strings
                           + VSET_PER_LINK * 2 * value.m))


_SIZERS: dict[type, Callable[[Any], int]] = {Stream: stream_size, Hash: _hash_size, Set: _set_size, ZSet: _zset_size,
                               List: _list_size, VectorSet: _vectorset_size}


def _bytes_size(value: bytes) -> int:
    return BYTES_OVERHEAD + len(value)


def _unknown_size(value: object) -> int:
    return 1024  # an engine object without an estimate: a nominal cost


_SIZERS[bytes] = _bytes_size
_sizer_of = _SIZERS.get


def value_size(value: object) -> int:
    """Estimated bytes held by one value (without its key)."""
    return _sizer_of(value.__class__, _unknown_size)(value)


def key_size(key: bytes, value: object) -> int:
    """Estimated bytes a key costs its database: the key, its slots, its value."""
    return int(KEY_OVERHEAD + len(key) + value_size(value))
