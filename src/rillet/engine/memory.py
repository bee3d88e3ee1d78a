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

from itertools import islice

# Per key in a Database: the key's bytes object (33 + len), its dict entries in
# data, the SCAN order (seq dict, two list slots, an int) and the access clock.
KEY_OVERHEAD = 186 + 33
BYTES_OVERHEAD = 33  # a bytes object's header (CPython: PyBytesObject + NUL)
# Containers: the object, its dict(s) at their smallest, per element overheads.
HASH_FIXED, HASH_PER_FIELD, HASH_PER_TTL = 320, 37 + 2 * BYTES_OVERHEAD, 100
SET_FIXED, SET_PER_MEMBER = 245, 37 + BYTES_OVERHEAD
ZSET_FIXED, ZSET_PER_MEMBER = 555, 125 + BYTES_OVERHEAD  # dict entry, float, tuple, list slot
LIST_FIXED, LIST_PER_ITEM = 815, 8 + BYTES_OVERHEAD
STREAM_FIXED, STREAM_PER_NODE = 400, 600  # a node: its object, arrays, ID tuple, list slots
GROUP_FIXED, PEL_ENTRY, CONSUMER_FIXED = 500, 400, 300  # a PEL entry sits in three indexes
_SAMPLES = 4  # elements (or stream nodes) averaged per measure


def _sample_average(items: object, count: int, size_of) -> float:  # type: ignore[no-untyped-def]
    if not count:
        return 0.0
    few = list(islice(items, _SAMPLES))  # type: ignore[call-overload]
    return sum(map(size_of, few)) / len(few) if few else 0.0


def _pair_len(pair: tuple[bytes, bytes]) -> int:
    return len(pair[0]) + len(pair[1])


def value_size(value: object) -> int:
    """Estimated bytes held by one value (without its key)."""
    kind = value.__class__
    if kind is bytes:
        return BYTES_OVERHEAD + len(value)  # type: ignore[arg-type]
    name = getattr(kind, "TYPE_NAME", b"")
    if name == b"stream":
        return stream_size(value)
    if name == b"hash":
        fields = value.fields  # type: ignore[attr-defined]
        n = len(fields)
        return (HASH_FIXED + n * (HASH_PER_FIELD + _sample_average(fields.items(), n, _pair_len))
                + HASH_PER_TTL * len(value.ttls))  # type: ignore[attr-defined]
    if name == b"set":
        members = value.members  # type: ignore[attr-defined]
        n = len(members)
        return int(SET_FIXED + n * (SET_PER_MEMBER + _sample_average(members, n, len)))
    if name == b"zset":
        scores = value.scores  # type: ignore[attr-defined]
        n = len(scores)
        return int(ZSET_FIXED + n * (ZSET_PER_MEMBER + _sample_average(scores, n, len)))
    if name == b"list":
        # nbytes (kept by the list) is its listpack size: the elements plus 1-5 bytes each.
        return LIST_FIXED + len(value.items) * LIST_PER_ITEM + value.nbytes  # type: ignore[attr-defined]
    return 1024  # an unknown engine object: a nominal cost


def stream_size(stream) -> int:  # type: ignore[no-untyped-def]
    """A stream: its nodes (object costs plus packed bytes, sampled) and its groups."""
    nodes = stream.nodes
    count = len(nodes)
    size = STREAM_FIXED
    if count:
        sample = nodes[:_SAMPLES] if count > _SAMPLES else nodes
        # node.body is the emulated listpack size: within a few % of the packed
        # arrays and data blob the node holds.
        average = sum(node.body for node in sample) / len(sample)
        size += int(count * (STREAM_PER_NODE + average))
    for group in stream.groups.values():
        size += GROUP_FIXED + PEL_ENTRY * len(group.pel) + CONSUMER_FIXED * len(group.consumers)
    return size


def key_size(key: bytes, value: object) -> int:
    """Estimated bytes a key costs its database: the key, its slots, its value."""
    return int(KEY_OVERHEAD + len(key) + value_size(value))
