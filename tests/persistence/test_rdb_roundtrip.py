"""In-process RDB round trips of generated keyspaces: DEBUG DIGEST (entries, metadata,
groups, consumers, PEL with owners/times/counts, IDMP state) is the same after
dump_keyspace + load_keyspace, with and without compression, and node boundaries
and listpack sizes come back exactly (so MEMORY USAGE and `~` trimming agree)."""

from __future__ import annotations

import random

import pytest

from rillet.persistence import rdb
from rillet.state import ServerState
from tests.persistence.support import InProcess


def _generate(seed: int) -> InProcess:
    rnd = random.Random(seed)
    node = InProcess()
    run = node.run
    run("CONFIG", "SET", "stream-node-max-entries", rnd.choice([3, 10, 100]))
    for n in range(4):
        key = f"s{n}"
        for _ in range(rnd.randint(0, 120)):
            if rnd.random() < 0.7:
                run("XADD", key, "*", "f", rnd.randint(0, 9), "g", "x" * rnd.randint(0, 90))
            else:
                run("XADD", key, "*", *[rnd.choice(["a", "b", "17", "-3"]) for _ in range(4)])
        if rnd.random() < 0.5:
            run("XTRIM", key, "MAXLEN", "~", rnd.randint(0, 50))
        run("XGROUP", "CREATE", key, "g", "0", "MKSTREAM")
        run("XGROUP", "CREATECONSUMER", key, "g", "idle")
        for consumer in ("c1", "c2"):
            run("XREADGROUP", "GROUP", "g", consumer, "COUNT", rnd.randint(1, 20), "STREAMS",
                key, ">")
        pending = run("XPENDING", key, "g", "-", "+", 100)
        if isinstance(pending, list) and pending:
            first = pending[0][0]
            run("XCLAIM", key, "g", "c3", "0", first, "RETRYCOUNT", "5")
            run("XNACK", key, "g", "SILENT", "IDS", "1", pending[-1][0])
            run("XACK", key, "g", pending[len(pending) // 2][0])
        run("XDEL", key, "0-1", f"{rnd.randint(1, 2**40)}-0")
    run("XADD", "idmp", "*", "f", "u")
    run("XCFGSET", "idmp", "IDMP-DURATION", "300")  # clears producers: before the IDMP adds
    run("XADD", "idmp", "IDMP", "producer", "iid-1", "*", "f", "v")
    run("XADD", "idmp", "IDMP", "producer", "iid-2", "*", "f", "w")
    run("SET", "str", "value")
    run("SET", "num", "-12345")
    run("SET", "ttl", "v", "PX", "100000000")
    run("SELECT", "2")
    run("SET", "other-db", "here")
    run("SELECT", "0")
    return node


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("compress", [True, False])
def test_round_trip_keeps_digest_and_layout(seed, compress):
    source = _generate(seed)
    data = rdb.dump_keyspace(source.state, compress=compress)
    target = ServerState()
    rdb.load_keyspace(target, data)
    from rillet.persistence.digest import keyspace_digest

    assert source.state.keyspace[0].data[b"idmp"].idmp.producers  # the AUX field is exercised
    assert keyspace_digest(target) == source.digest()
    for index, db in enumerate(source.state.keyspace.dbs):
        loaded = target.keyspace.dbs[index]
        assert loaded.expires == db.expires
        for key, value in db.data.items():
            if isinstance(value, bytes):
                continue
            other = loaded.data[key]
            assert [(n.ms0, n.seq0, n.n, n.live, n.lp_bytes()) for n in other.nodes] == [
                (n.ms0, n.seq0, n.n, n.live, n.lp_bytes()) for n in value.nodes]
            for group in value.groups.values():
                got = other.groups[group.name]
                assert [(c.name, c.seen_time_ms, c.active_time_ms)
                        for c in got.consumers_in_order()] == [
                    (c.name, c.seen_time_ms, c.active_time_ms)
                    for c in group.consumers_in_order()]
                got.check_invariants()
    # And the loaded keyspace saves to the same bytes (ctime aside).
    again = rdb.dump_keyspace(target, compress=compress)
    start = data.index(b"aof-base")
    assert again[start:-8] == data[start:-8]
