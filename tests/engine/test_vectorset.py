"""Vector sets without a server: the graph's invariants through adds and removes, the
RDB form's round trip and its corruption checks, the FILTER language, Redis's digits."""

from __future__ import annotations

import random

import pytest

from rillet.engine import vexpr
from rillet.engine.vectorset import QUANT_BIN, QUANT_NONE, QUANT_Q8, VectorSet
from rillet.persistence import rdb
from rillet.persistence.rdb_format import RDBError
from rillet.resp.fpconv import redis_double


def _check_graph(vset: VectorSet) -> None:
    for node in vset.nodes.values():
        assert len(node.links) == node.level + 1
        for layer, links in enumerate(node.links):
            assert len(links) <= vset.max_links(layer)
            assert len(set(map(id, links))) == len(links)
            worst = max(((vset.node_distance(node, x), -i) for i, x in enumerate(links)),
                        default=(0.0, 0))
            assert node.worst[layer] == (worst[0], -worst[1])  # the RDB's worst-link field
            for other in links:
                assert other is not node and other.level >= layer
                assert vset.nodes[other.item] is other
                assert node in other.links[layer]  # links are bidirectional
    if vset.nodes:
        assert vset.entry is not None and vset.entry.level == vset.max_level
        assert vset.max_level == max(n.level for n in vset.nodes.values())


@pytest.mark.parametrize("quant", [QUANT_Q8, QUANT_BIN, QUANT_NONE])
def test_graph_invariants_and_rdb_round_trip(quant):
    rng = random.Random(7)
    vset = VectorSet(5, quant, 4, rng=rng)
    for i in range(120):
        vec = [rng.uniform(-1, 1) for _ in range(5)]
        vset.insert(b"e%d" % (i % 90), vec, b'{"i": %d}' % i if i % 3 else None)
        if i % 7 == 0:
            vset.remove(b"e%d" % rng.randrange(90))
        if i % 10 == 0:
            _check_graph(vset)
    _check_graph(vset)
    payload = rdb.dump_value(vset)
    assert rdb.verify_payload(payload)
    back = rdb.restore_value(payload, None)
    _check_graph(back)
    assert [n.item for n in back.head_first()] == [n.item for n in vset.nodes.values()]
    for item, node in vset.nodes.items():
        twin = back.nodes[item]
        assert (twin.id, twin.q, twin.l2, twin.qrange, twin.attrib) == (
            node.id, node.q, node.l2, node.qrange, node.attrib)
        assert [[x.item for x in level] for level in twin.links] == \
            [[x.item for x in level] for level in node.links]
    assert back.numattribs == vset.numattribs and back.last_id == vset.last_id


def test_rdb_refuses_links_that_are_not_reciprocal():
    vset = VectorSet(2, QUANT_Q8)
    for i in range(4):
        vset.insert(b"e%d" % i, [float(i), 1.0], None)
    a, b = vset.nodes[b"e0"], vset.nodes[b"e1"]
    if b in a.links[0]:
        b.links[0].remove(a)
    else:
        a.links[0].append(b)
    payload = rdb.dump_value(vset)
    with pytest.raises(RDBError):
        rdb.restore_value(payload, None)


@pytest.mark.parametrize("expr, json, expected", [
    (".a > 1", b'{"a": 2}', True), (".a > 1", b'{"b": 2}', False), (".a > 1", b"[1]", False),
    ("not .a", b'{"a": false}', True), (".a == null", b'{"a": null}', True),
    (".s == 'x\\'y'", b'{"s": "x\'y"}', False), (".s == \"q\"", b'{"s": "q"}', True),
    ('.t == "a\tb"', b'{"t": "a\\tb"}', True), ("'b' in .l", b'{"l": ["a", "b"]}', True),
    (".n in [1, 2]", b'{"n": 2.0}', True), ("2 ** 3 ** 2 == 512", b"{}", True),
    (".o", b'{"o": {"x": 1}}', False), ("(1 + 2) * 3 == 9 and 7 % 4 == 3", b"{}", True),
    (".n / 0 > 1", b'{"n": 3}', True), (".s > 5", b'{"s": "10"}', True),
])
def test_filter_language(expr, json, expected):
    assert vexpr.run(vexpr.compile_expr(expr.encode()), json) is expected


@pytest.mark.parametrize("expr, pos", [
    (".a >", 0), ("(.a", 0), ("$", 0), ("1 $ 2", 2), ("1e-5", 2), ("'open", 5), ("!!1", 0), ("", 0),
])
def test_filter_syntax_errors(expr, pos):
    with pytest.raises(vexpr.ExprError) as info:
        vexpr.compile_expr(expr.encode())
    assert info.value.pos == pos


@pytest.mark.parametrize("value, text", [
    (0.4612727761268616, b"0.46127277612686157"), (0.08218765258789062, b"0.08218765258789063"),
    (3.0, b"3"), (-0.0, b"-0"), (1e300, b"1e+300"), (0.1, b"0.1"), (2.5e-7, b"2.5e-7"),
    (float("inf"), b"inf"), (-1.5, b"-1.5"), (123456.789, b"123456.789"),
])
def test_redis_double_digits(value, text):
    assert redis_double(value) == text
