"""Vector sets (Redis 8's `vectorset` module type): elements with a vector each.

The model follows Redis's modules/vector-sets (vset.c, hnsw.c) where a reply
or the RDB form depends on it:

- Vectors are L2-normalised on insert (the norm is kept to give VEMB back the
  input) and stored as Q8 (per-vector int8 with its max-abs range, the
  default), BIN (sign bits in 64-bit words) or NOQUANT (float32). Every step is
  single-precision arithmetic as hnsw.c does it (`f32` rounds each result), so
  VEMB, the scores and the stored bytes are Redis's to the bit.
- Nodes carry Redis's graph fields: an id from a per-set counter (an update is
  a delete and a re-insert, with a new id), a random level (p = 1/4, at most
  16), per level a list of bidirectional links bounded by M (2*M on level 0, where a new node asks for M).
  The node list is Redis's: newest first, which is the RDB order.
- Search is exact (all nodes ranked by hnsw.c's distance), which is what HNSW
  returns on the small sets clients and tests use; links are chosen by ranking
  all nodes of a level (Redis walks the graph for candidates), with hnsw.c's
  diversity rule and the M bound. See docs/compat.md "Vector sets".
- The per-node work (distance, the ranking scan, the link checks) and the encoding
  (normalise, Q8) have compiled forms in engine/_vdist.pyx, bit-identical to the
  Python here, which stays the reference (the pure path; tests/engine/test_vdist.py).
  So node.q is packed (array 'b' / 'Q' / 'f'): the kernel reads it in place.

No asyncio, RESP or commands here: commands/vectorsets.py speaks for it.
"""

from __future__ import annotations

import math
import random
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator
from operator import itemgetter, mul

from rillet.compiled import compiled

QUANT_NONE, QUANT_Q8, QUANT_BIN = 0, 1, 2  # HNSW_QUANT_* (the RDB's low config byte)
QUANT_NAMES = {QUANT_NONE: b"f32", QUANT_Q8: b"int8", QUANT_BIN: b"bin"}
DEFAULT_M = 16  # HNSW_DEFAULT_M
MIN_M, MAX_M = 4, 4096  # HNSW_MIN_M, HNSW_MAX_M
MAX_LEVEL = 16  # HNSW_MAX_LEVEL
LEVEL_P = 0.25  # HNSW_P
MAX_DIM = 1 << 16  # VSET_MAX_VECTOR_DIM
DEFAULT_EF_CONSTRUCTION = 200  # VSET_DEFAULT_C_EF
DEFAULT_SEARCH_EF = 100  # VSET_DEFAULT_SEARCH_EF

_U32 = struct.Struct("<I")
_F32 = struct.Struct("f")
_pack_f32, _unpack_f32 = _F32.pack, _F32.unpack


def f32(x: float) -> float:
    """`x` rounded to single precision, as a C float holds it (overflow is ±inf)."""
    try:
        return _unpack_f32(_pack_f32(x))[0]
    except OverflowError:
        return array("f", (x,))[0]


def f32_list(values) -> list[float]:
    return array("f", values).tolist()


def float_bits(x: float) -> int:
    return _U32.unpack(array("f", (x,)).tobytes())[0]


def bits_float(bits: int) -> float:
    return array("f", _U32.pack(bits & 0xFFFFFFFF))[0]


def _roundf(x: float) -> float:
    """C roundf: halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def normalize(vec: list[float]) -> tuple[list[float], float | None]:
    """hnsw_normalize_vector: (normalised copy, l2) with float32 steps; (vec, None) if all zero."""
    dim = len(vec)
    l2 = 0.0
    i = 0
    while i + 3 < dim:
        a, b, c, d = vec[i], vec[i + 1], vec[i + 2], vec[i + 3]
        s = f32(f32(a * a) + f32(b * b))
        s = f32(s + f32(c * c))
        s = f32(s + f32(d * d))
        l2 = f32(l2 + s)
        i += 4
    while i < dim:
        l2 = f32(l2 + f32(vec[i] * vec[i]))
        i += 1
    if l2 == 0:
        return list(vec), None
    l2 = f32(math.sqrt(l2))
    return f32_list([x / l2 for x in vec]), l2


def quantize_q8(vec: list[float]) -> tuple[array, float]:
    """quantize_to_q8: int8 quants and the max-abs range."""
    max_abs = 0.0
    for x in vec:
        if x > max_abs:
            max_abs = x
        if -x > max_abs:
            max_abs = -x
    if max_abs == 0:
        return array("b", bytes(len(vec))), 0.0
    scale = f32(127.0 / max_abs)
    out = []
    for x in vec:
        v = f32(x * scale)
        if v != v or v in (math.inf, -math.inf):
            # A subnormal range makes the scale inf: x86's float-to-int conversion gives
            # INT_MIN, whose (int8_t) is 0 (Redis 8.2.3 stores 0 quants there).
            out.append(0)
            continue
        q = int(_roundf(v))
        out.append(((q + 128) & 0xFF) - 128)  # the (int8_t) cast
    return array("b", out), max_abs


def quantize_bin(vec: list[float]) -> array:
    words = [0] * ((len(vec) + 63) // 64)
    for j, x in enumerate(vec):
        if x > 0:
            words[j >> 6] |= 1 << (j & 63)
    return array("Q", words)


def projection_matrix(input_dim: int, output_dim: int) -> list[float]:
    """createProjectionMatrix: the deterministic Hadamard-pattern matrix, row-major."""
    scale = f32(1.0 / math.sqrt(input_dim))
    neg = f32(-scale)
    return [scale if bin(i & j).count("1") % 2 == 0 else neg
            for i in range(output_dim) for j in range(input_dim)]


def apply_projection(vec: list[float], matrix: list[float], input_dim: int,
                     output_dim: int) -> list[float]:
    out = []
    for i in range(output_dim):
        row = i * input_dim
        total = 0.0
        for j in range(input_dim):
            total = f32(total + f32(matrix[row + j] * vec[j]))
        out.append(total)
    return out


class Node:
    """One element: its name, JSON attributes, graph fields and stored vector."""

    __slots__ = ("item", "attrib", "id", "level", "q", "l2", "qrange", "links", "worst")

    def __init__(self, item: bytes, attrib: bytes | None, node_id: int, level: int,
                 q: array, l2: float, qrange: float) -> None:
        self.item = item
        self.attrib = attrib
        self.id = node_id
        self.level = level
        # The stored vector, packed (what engine/_vdist.pyx reads in place): Q8 array('b'),
        # BIN array('Q') of 64-bit words, NOQUANT array('f'). Set here only.
        self.q = q
        self.l2 = l2
        self.qrange = qrange
        self.links: list[list[Node]] = [[] for _ in range(level + 1)]
        # Per level: (worst_distance, worst_idx), hnsw.c's cached worst link (RDB v1 field).
        self.worst: list[tuple[float, int]] = [(0.0, 0)] * (level + 1)


class VectorSet:
    TYPE_NAME = b"vectorset"
    ENCODING = b"raw"  # a module value's OBJECT ENCODING
    COPYABLE = False  # vset.c registers no copy callback: COPY refuses the key
    __slots__ = ("dim", "quant", "m", "proj", "proj_input", "nodes", "uid", "last_id",
                 "max_level", "entry", "numattribs", "rng")

    def __init__(self, dim: int, quant: int = QUANT_Q8, m: int = DEFAULT_M, uid: int = 0,
                 rng: random.Random | None = None) -> None:
        self.dim = dim
        self.quant = quant
        self.m = m
        self.proj: list[float] | None = None
        self.proj_input = 0
        # element -> Node in insertion order: reversed, Redis's node list (head first).
        self.nodes: dict[bytes, Node] = {}
        self.uid = uid  # VectorSetTypeNextId at creation (VINFO vset-uid)
        self.last_id = 0
        self.max_level = 0
        self.entry: Node | None = None
        self.numattribs = 0
        self.rng = rng or random

    def __len__(self) -> int:
        return len(self.nodes)

    def encoding(self) -> bytes:
        return self.ENCODING

    def memory_usage(self) -> int:
        """MEMORY USAGE's figure: VectorSetMemUsage's formula (the first 20 nodes' strings
        sampled) with the C sizes that put a one-element set where Redis 8.2.3 has it."""
        n = len(self.nodes)
        size = 1791 + (4 * self.proj_input * self.dim if self.proj is not None else 0)
        if not n:
            return size
        size += n * (337 + self.quant_bytes()) + 24 * n * 4 // 3
        links = self.m * 2
        size += 8 * links * n + (8 * (links // 2) * n) // 3
        items = attribs = scanned = with_attr = 0
        for node in self.head_first():
            if scanned == 20:
                break
            scanned += 1
            items += 16 + len(node.item)
            if node.attrib is not None:
                with_attr += 1
                attribs += 16 + len(node.attrib)
        size += items // scanned * n
        size += (attribs // with_attr if with_attr else 64) * self.numattribs
        return size + 16 * n

    def head_first(self) -> Iterator[Node]:
        """Nodes in Redis's list order (newest first): RDB save, digest, VRANDMEMBER's walk."""
        return reversed(self.nodes.values())

    # -- vectors ------------------------------------------------------------------------------

    def quant_bytes(self) -> int:
        if self.quant == QUANT_NONE:
            return self.dim * 4
        if self.quant == QUANT_Q8:
            return self.dim
        return (self.dim + 63) // 64 * 8

    def encode(self, vec: list[float], keep_l2: bool = True) -> tuple[array, float, float]:
        """(stored quants, l2, range) of a float32 vector, as hnsw_node_new makes them."""
        normed, l2 = normalize(vec)
        if l2 is None:
            l2 = 1.0  # an all-zero vector keeps the node's default l2
        if self.quant == QUANT_Q8:
            q, qrange = quantize_q8(normed)
            return q, l2, qrange
        if self.quant == QUANT_BIN:
            return quantize_bin(normed), l2, 0.0
        return array("f", normed), l2, 0.0

    def vector_of(self, node: Node) -> list[float]:
        """hnsw_get_node_vector: dequantised and de-normalised (float32 steps)."""
        if self.quant == QUANT_NONE:
            vec = node.q.tolist()
        elif self.quant == QUANT_Q8:
            r = node.qrange
            vec = [f32(f32(q * r) / 127) for q in node.q]
        else:
            return [1.0 if node.q[j >> 6] >> (j & 63) & 1 else -1.0 for j in range(self.dim)]
        l2 = node.l2
        return [f32(x * l2) for x in vec]

    def raw_bytes(self, node: Node) -> bytes:
        """The stored vector as Redis keeps it (VEMB RAW, RDB, DUMP)."""
        if self.quant == QUANT_BIN and _BIG_ENDIAN:  # Redis writes the words little-endian
            words = array("Q", node.q)
            words.byteswap()
            return words.tobytes()
        return node.q.tobytes()  # int8 two's complement / native float32 as Redis has them

    def from_raw(self, data: bytes) -> array:
        if self.quant == QUANT_Q8:
            return array("b", data)
        if self.quant == QUANT_BIN:
            return array("Q", struct.unpack(f"<{len(data) // 8}Q", data))
        return array("f", data)

    def distance(self, qa: array, ra: float, qb: array, rb: float) -> float:
        """hnsw_distance between two stored vectors (0 same direction .. 2 opposite)."""
        return distance(self.quant, self.dim, qa, ra, qb, rb)

    def node_distance(self, a: Node, b: Node) -> float:
        return self.distance(a.q, a.qrange, b.q, b.qrange)

    def query(self, vec: list[float]) -> tuple[array, float]:
        """hnsw_init_tmp_node: the search vector normalised and quantised like a node's."""
        normed, _ = normalize(vec)
        if self.quant == QUANT_Q8:
            return quantize_q8(normed)
        if self.quant == QUANT_BIN:
            return quantize_bin(normed), 0.0
        return array("f", normed), 0.0

    def project(self, vec: list[float]) -> list[float]:
        assert self.proj is not None
        return apply_projection(vec, self.proj, self.proj_input, self.dim)

    # -- search -------------------------------------------------------------------------------

    def ranked(self, q: array, qrange: float, accept=None,
               oldest_first: bool = False, min_level: int = 0,
               limit: int | None = None) -> list[tuple[float, Node]]:
        """Every node (on a level >= min_level, that `accept` takes) with its distance to
        the query, nearest first, the first `limit` of them (all if None).
        Equal distances: older nodes first for a linear scan (VSIM TRUTH: Redis's scan of
        its node list, where a later push wins ties), newer first otherwise (what Redis's
        graph walk most often gives; it depends on the walk, docs/compat.md)."""
        values = self.nodes.values()
        return rank(list(values) if oldest_first else list(reversed(values)), self.quant,
                    self.dim, q, qrange, accept, min_level, limit)

    # -- changes ------------------------------------------------------------------------------

    def random_level(self) -> int:
        level = 0
        rand = self.rng.random
        while rand() < LEVEL_P and level < MAX_LEVEL:
            level += 1
        return level

    def insert(self, item: bytes, vec: list[float], attrib: bytes | None,
               ef: int = DEFAULT_EF_CONSTRUCTION) -> bool:
        """vectorSetInsert with update: True if added, False if `item` was there (its
        vector replaced by a delete and re-insert; `attrib` replaces its attributes
        unless None, b"" removes them)."""
        old = self.nodes.get(item)
        if old is not None:
            self._unlink(old)
            del self.nodes[item]
            keep = old.attrib
            if attrib is not None:
                if keep is not None:
                    self.numattribs -= 1
                keep = attrib or None
                if keep is not None:
                    self.numattribs += 1
            self._add(item, vec, keep, ef)
            return False
        if attrib is not None:  # kept even when empty, as vectorSetInsert keeps it
            self.numattribs += 1
        self._add(item, vec, attrib, ef)
        return True

    def _add(self, item: bytes, vec: list[float], attrib: bytes | None, ef: int) -> None:
        q, l2, qrange = self.encode(vec)
        self.last_id += 1
        node = Node(item, attrib, self.last_id, self.random_level(), q, l2, qrange)
        self._link_new(node, ef)
        self.nodes[item] = node

    def remove(self, item: bytes) -> bool:
        node = self.nodes.pop(item, None)
        if node is None:
            return False
        if node.attrib is not None:
            self.numattribs -= 1
        self._unlink(node)
        return True

    def set_attrib(self, item: bytes, attrib: bytes) -> bool:
        node = self.nodes.get(item)
        if node is None:
            return False
        if node.attrib is not None:
            self.numattribs -= 1
        node.attrib = attrib or None
        if node.attrib is not None:
            self.numattribs += 1
        return True

    # -- the graph ----------------------------------------------------------------------------

    def max_links(self, layer: int) -> int:
        return self.m * 2 if layer == 0 else self.m

    def _update_worst(self, node: Node, layer: int) -> None:
        node.worst[layer] = worst_link(self.quant, self.dim, node, node.links[layer])

    def _connect(self, a: Node, b: Node, layer: int, dist: float | None = None) -> None:
        """Link a and b both ways (hnsw_update_worst_neighbor_on_add for each)."""
        if dist is None:
            dist = self.node_distance(a, b)
        for x, y in ((a, b), (b, a)):
            links = x.links[layer]
            links.append(y)
            if len(links) == 1 or dist > x.worst[layer][0]:
                x.worst[layer] = (dist, len(links) - 1)

    def _drop_link(self, x: Node, y: Node, layer: int) -> None:
        """hnsw_update_worst_neighbor_on_remove after taking y out of x's links."""
        links = x.links[layer]
        index = links.index(y)
        del links[index]
        worst_d, worst_i = x.worst[layer]
        if not links:
            x.worst[layer] = (0.0, 0)
        elif index == worst_i:
            self._update_worst(x, layer)
        elif index < worst_i:
            x.worst[layer] = (worst_d, worst_i - 1)

    def _disconnect(self, a: Node, b: Node, layer: int) -> None:
        self._drop_link(a, b, layer)
        self._drop_link(b, a, layer)

    def _select(self, node: Node, candidates: list[tuple[float, Node]], layer: int,
                aggressive: int, required: int) -> None:
        """select_neighbors: link `node` to candidates, nearest first, bidirectionally,
        until it has `required` links. A new node asks for M even on level 0, whose
        room is 2*M: the rest is left for the backlinks of later inserts."""
        cap = min(self.max_links(layer), required)
        links = node.links[layer]
        for dist, other in candidates:
            if len(links) >= cap:
                return
            if other in links:
                continue
            if not aggressive and nearer_link(self.quant, self.dim, other, links, dist):
                continue  # diversity: an accepted link is nearer to the candidate
            if len(other.links[layer]) < self.max_links(layer):
                self._connect(node, other, layer, dist)
                continue
            worst_d, worst_i = other.worst[layer]
            if not aggressive and dist >= worst_d:
                continue
            dropped = other.links[layer][worst_i]
            floor = self.m // 2 if aggressive == 0 else self.m // 4
            if len(dropped.links[layer]) <= floor:
                continue
            self._disconnect(other, dropped, layer)
            self._connect(node, other, layer, dist)

    def _link_new(self, node: Node, ef: int) -> None:
        if self.entry is None:
            self.entry, self.max_level = node, node.level
            return
        for layer in range(min(node.level, self.max_level), -1, -1):
            candidates = self.ranked(node.q, node.qrange, min_level=layer, limit=max(ef, 1))
            self._select(node, candidates, layer, 0, self.m)
            if layer == 0 and len(node.links[0]) < self.m // 2:
                self._select(node, candidates, layer, 1, self.m)
                if len(node.links[0]) < self.m // 4:
                    self._select(node, candidates, layer, 2, self.m // 4)
        if node.level > self.max_level:
            self.entry, self.max_level = node, node.level

    def _unlink(self, node: Node) -> None:
        """hnsw_delete_node: drop the node's links, then relink its orphaned neighbours
        among themselves where both have room (nearest pairs first)."""
        for layer in range(node.level + 1):
            orphans = list(node.links[layer])
            for other in orphans:
                self._drop_link(other, node, layer)
            node.links[layer] = []
            pairs = []
            for i, a in enumerate(orphans):
                for b in orphans[i + 1:]:
                    if b not in a.links[layer]:
                        pairs.append((self.node_distance(a, b), a.id, b.id, a, b))
            pairs.sort(key=lambda p: (p[0], p[1], p[2]))
            cap = self.max_links(layer)
            for dist, _, _, a, b in pairs:
                if len(a.links[layer]) < cap and len(b.links[layer]) < cap \
                        and b not in a.links[layer]:
                    self._connect(a, b, layer, dist)
        if self.entry is node:
            self.entry, self.max_level = None, 0
            for other in self.head_first():
                if other is node:
                    continue
                if self.entry is None or other.level > self.max_level:
                    self.entry, self.max_level = other, other.level

    # -- serialisation (hnsw_serialize_node / hnsw_insert_serialized) -------------------------

    def node_params(self, node: Node) -> list[int]:
        params = [node.id, (node.level & 0xFF) | (1 << 24)]
        for layer in range(node.level + 1):
            links = node.links[layer]
            params.append(len(links))
            params.append(self.max_links(layer))
            params.extend(other.id for other in links)
            worst_d, worst_i = node.worst[layer]
            params.append((float_bits(worst_d) << 32) | worst_i)
        params.append((float_bits(node.qrange) << 32) | float_bits(node.l2))
        return params

    def load_node(self, item: bytes, attrib: bytes | None, raw: bytes,
                  params: list[int]) -> tuple[Node, list[list[int]]] | None:
        """A node from its RDB form, links still as ids (resolve_links fixes them)."""
        if len(params) < 2:
            return None
        node_id, level, version = params[0], params[1] & 0xFF, (params[1] >> 24) & 0xFF
        if version > 1 or node_id == 0 or level > MAX_LEVEL:
            return None
        node = Node(item, attrib, node_id, level, self.from_raw(raw), 1.0, 0.0)
        ids: list[list[int]] = []
        at = 2
        for layer in range(level + 1):
            if at + 2 + (version > 0) > len(params):
                return None
            count, cap = params[at], params[at + 1]
            at += 2
            if count > cap or cap > MAX_M * 4 or at + count + (version > 0) > len(params):
                return None
            ids.append(params[at:at + count])
            at += count
            if version > 0:
                packed = params[at]
                at += 1
                worst_i = packed & 0xFFFFFFFF
                if count and worst_i >= count:
                    return None
                node.worst[layer] = (bits_float(packed >> 32), worst_i)
        if at >= len(params):
            return None
        packed = params[at]
        node.l2, node.qrange = bits_float(packed & 0xFFFFFFFF), bits_float(packed >> 32)
        self.last_id = max(self.last_id, node_id)
        if node.attrib is not None:
            self.numattribs += 1
        if self.entry is None or level > self.max_level:
            self.entry, self.max_level = node, level
        return node, ids

    def resolve_links(self, loaded: list[tuple[Node, list[list[int]]]]) -> bool:
        """hnsw_deserialize_index: ids to nodes; False on duplicate or dangling ids or
        links that are not reciprocal."""
        by_id: dict[int, Node] = {}
        for node, _ in loaded:
            if node.id in by_id:
                return False
            by_id[node.id] = node
        seen: set[tuple[int, int, int]] = set()
        for node, ids in loaded:
            for layer, layer_ids in enumerate(ids):
                if len(set(layer_ids)) != len(layer_ids):
                    return False
                links = []
                for other_id in layer_ids:
                    other = by_id.get(other_id)
                    if other_id == node.id or other is None or other.level < layer:
                        return False
                    links.append(other)
                    seen.add((node.id, other_id, layer))
                node.links[layer] = links
        return all((b, a, layer) in seen for a, b, layer in seen)


_scales: dict[float, float] = {}


def _range_scale(r: float) -> float:
    """f32(range / 127), memoised: every distance needs it for both nodes."""
    scale = _scales.get(r)
    if scale is None:
        if len(_scales) > 100_000:
            _scales.clear()
        scale = _scales[r] = f32(r / 127)
    return scale


def distance(quant: int, dim: int, qa: array, ra: float, qb: array, rb: float) -> float:
    """hnsw_distance between two stored vectors of a set of `quant` and `dim`."""
    if quant == QUANT_Q8:
        if ra == 0 or rb == 0:
            return 1.0
        dot = sum(map(mul, qa, qb))
        scale = f32(_range_scale(ra) * _range_scale(rb))
        d = f32(1.0 - f32(f32(dot) * scale))
        return 0.0 if d < 0 else 2.0 if d > 2 else d
    if quant == QUANT_BIN:
        opposite = sum(bin(x ^ y).count("1") for x, y in zip(qa, qb, strict=True))
        return f32(f32(opposite * 2) / dim)
    return _float_distance(qa, qb)


def rank(nodes: Iterable[Node], quant: int, dim: int, q: array, qrange: float,
         accept, min_level: int, limit: int | None) -> list[tuple[float, Node]]:
    """VectorSet.ranked's scan: (distance, node) for the nodes (in order) on a level >=
    min_level that `accept` takes, sorted by distance (stable), the first `limit`."""
    dist = py_distance  # the reference throughout, even with the compiled kernel loaded
    out = [(dist(quant, dim, q, qrange, n.q, n.qrange), n) for n in nodes
           if n.level >= min_level and (accept is None or accept(n))]
    out.sort(key=itemgetter(0))
    return out if limit is None else out[:limit]


def nearer_link(quant: int, dim: int, node: Node, links: list[Node], dist: float) -> bool:
    """select_neighbors' diversity test: is any of `links` nearer to `node` than `dist`?"""
    d = py_distance
    q, r = node.q, node.qrange
    return any(d(quant, dim, q, r, x.q, x.qrange) < dist for x in links)


def worst_link(quant: int, dim: int, node: Node, links: list[Node]) -> tuple[float, int]:
    """(distance, index) of the farthest of `links` from `node` (the first of equals),
    (0.0, 0) for none: hnsw.c's cached worst link."""
    d = py_distance
    worst_d, worst_i = 0.0, 0
    for i, other in enumerate(links):
        dist = d(quant, dim, node.q, node.qrange, other.q, other.qrange)
        if dist > worst_d:
            worst_d, worst_i = dist, i
    return worst_d, worst_i


def _float_distance(x: array, y: array) -> float:
    """vectors_distance_float's scalar form: two float32 accumulators over blocks of 8."""
    dim = len(x)
    dot0 = dot1 = 0.0
    i = 0
    while i + 7 < dim:
        s = f32(x[i] * y[i])
        s = f32(s + f32(x[i + 1] * y[i + 1]))
        s = f32(s + f32(x[i + 2] * y[i + 2]))
        s = f32(s + f32(x[i + 3] * y[i + 3]))
        dot0 = f32(dot0 + s)
        s = f32(x[i + 4] * y[i + 4])
        s = f32(s + f32(x[i + 5] * y[i + 5]))
        s = f32(s + f32(x[i + 6] * y[i + 6]))
        s = f32(s + f32(x[i + 7] * y[i + 7]))
        dot1 = f32(dot1 + s)
        i += 8
    while i < dim:
        dot0 = f32(dot0 + f32(x[i] * y[i]))
        i += 1
    return f32(1.0 - f32(dot0 + dot1))


_BIG_ENDIAN = sys.byteorder == "big"

# The Python originals stay reachable: tests/engine/test_vdist.py holds the compiled
# forms (engine/_vdist.pyx) to them.
py_distance, py_rank, py_nearer_link, py_worst_link = distance, rank, nearer_link, worst_link
py_normalize, py_quantize_q8 = normalize, quantize_q8
_vdist = compiled("rillet.engine._vdist")
if _vdist is not None:
    distance, rank, nearer_link, worst_link = (
        _vdist.distance, _vdist.rank, _vdist.nearer_link, _vdist.worst_link)
    normalize, quantize_q8 = _vdist.normalize, _vdist.quantize_q8

_uids = iter(range(1 << 62))


def next_uid() -> int:
    """VectorSetTypeNextId++: every set created (VADD on a new key, RDB load, RESTORE)
    takes the next id, process-wide, as Redis's module-global counter does."""
    return next(_uids)
