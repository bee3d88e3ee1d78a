"""The cluster bus end to end: rillet nodes form clusters over it, with each other and
with Redis 8.2.3 nodes, and fail over.

Every wait is bounded by a few times the node timeout (or by a start's delays: a
master's state stays `fail` for 2 s after it starts); nothing asserts on timings.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable

import pytest

from tests.cluster import support
from tests.helpers import servers
from tests.helpers.wire import Wire

# Serial in ./dev test: up to six servers each, and a 1 s node timeout that a machine
# busy with other tests' servers could turn into a false PFAIL.
pytestmark = pytest.mark.slow

NODE_TIMEOUT_MS = 1000
ARGS = ("--cluster-node-timeout", str(NODE_TIMEOUT_MS))
WAIT_S = 30.0  # a start's delays, a few node timeouts, a replica's first sync
RANGES = ((0, 5460), (5461, 10922), (10923, 16383))


def _until(check: Callable[[], object], what: str, timeout_s: float = WAIT_S) -> object:
    return support.until(check, what, timeout_s)


class Node:
    def __init__(self, handle: servers.ServerHandle) -> None:
        self.handle = handle
        self.port = handle.port
        self.wire = Wire(handle.port)
        self.id = support.myid(self.wire).decode()

    def call(self, *args: object) -> bytes:
        return self.wire.call(*args)

    def nodes(self) -> dict[str, list[str]]:
        """CLUSTER NODES by node id: flags without myself, master, link state, slots."""
        raw = self.call("CLUSTER", "NODES").decode("latin-1")
        table = {}
        for line in raw.split("\n")[1:]:
            fields = line.split()
            if len(fields) >= 8:
                flags = ",".join(f for f in fields[2].split(",") if f != "myself")
                table[fields[0]] = [fields[1].split(",")[0], flags, fields[3], *fields[8:]]
        return table

    def state_ok(self) -> bool:
        return b"cluster_state:ok" in self.call("CLUSTER", "INFO")

    def kill(self) -> None:
        self.wire.close()
        self.handle.stop(kill=True)


def _start(kinds: list[str]) -> list[Node]:
    """Started side by side (a rillet start is slow): a cluster node each."""
    handles: list[servers.ServerHandle] = []
    try:
        for kind in kinds:
            port = support.free_cluster_port()
            if kind == "rillet":
                handles.append(servers.start_rillet(*support.CLUSTER_ARGS, *ARGS, port=port,
                                                    wait=False))
            else:
                handles.append(support.start(kind, *ARGS, port=port))
        for handle in handles:
            if handle.kind == "rillet":
                handle.wait_ready()
        return [Node(handle) for handle in handles]
    except BaseException:
        for handle in handles:
            handle.stop(kill=True)
        raise


def _stop(nodes: list[Node]) -> None:
    for node in nodes:
        try:
            node.wire.close()
        except OSError:
            pass
        node.handle.stop(kill=True)


def _agree(nodes: list[Node]) -> dict[str, list[str]] | None:
    """The common CLUSTER NODES view of `nodes` once every one is ok and they agree."""
    views = []
    for node in nodes:
        if not node.state_ok():
            return None
        view = node.nodes()
        if any(entry[1] in ("handshake", "noaddr") for entry in view.values()):
            return None
        views.append(view)
    return views[0] if all(view == views[0] for view in views) else None


def _replica_of(view: dict[str, list[str]], master: Node, nodes: list[Node]) -> Node:
    [replica] = [node for node in nodes if view[node.id][2] == master.id]
    return replica


def _link_up(node: Node) -> bool:
    return b"master_link_status:up" in node.call("INFO", "replication")


def _cli(*args: str) -> str:
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli not available")
    done = subprocess.run([cli, *args], capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def test_three_rillet_masters_meet_and_publish():
    nodes = _start(["rillet"] * 3)
    try:
        a, b, c = nodes
        assert a.call("CLUSTER", "MEET", "127.0.0.1", b.port) == b"+OK\r\n"
        assert a.call("CLUSTER", "MEET", "127.0.0.1", c.port) == b"+OK\r\n"
        for node, (first, last) in zip(nodes, RANGES, strict=True):
            assert node.call("CLUSTER", "ADDSLOTSRANGE", first, last) == b"+OK\r\n"
        view = _until(lambda: _agree(nodes), "three nodes agreeing, cluster_state:ok")
        for node, (first, last) in zip(nodes, RANGES, strict=True):
            address, flags, master, *slots = view[node.id]
            assert (address, flags, master, slots) == (
                f"127.0.0.1:{node.port}@{node.port + 10000}", "master", "-", [f"{first}-{last}"])
        # CONFIG epochs collided at 0: the bus gave each master its own.
        epochs = {int(n.call("CLUSTER", "INFO").split(b"cluster_my_epoch:")[1].split(b"\r")[0])
                  for n in nodes}
        assert len(epochs) == 3
        info = a.call("CLUSTER", "INFO")
        for name in (b"ping_sent", b"pong_received", b"meet_sent"):
            assert int(info.split(b"cluster_stats_messages_" + name + b":")[1].split(b"\r")[0])
        # CLUSTER LINKS: a link to each other node and one from it.
        links = a.call("CLUSTER", "LINKS")
        assert links.count(b"direction") == 4
        # PUBLISH reaches the other nodes' subscribers over the bus.
        sub = Wire(c.port)
        sub.call("SUBSCRIBE", "news")
        a.call("PUBLISH", "news", "hello")
        assert b"hello" in sub.read_reply()
        sub.close()
        # redis-cli --cluster check finds the cluster whole.
        report = _cli("--cluster", "check", f"127.0.0.1:{a.port}")
        assert "[OK] All nodes agree about slots configuration." in report
        assert "[OK] All 16384 slots covered." in report
    finally:
        _stop(nodes)


def test_redis_cli_create_with_replicas_failover_and_kill():
    nodes = _start(["rillet"] * 6)
    try:
        report = _cli("--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes),
                      "--cluster-replicas", "1", "--cluster-yes")
        assert "[OK] All 16384 slots covered." in report, report
        view = _until(lambda: _agree(nodes), "six nodes agreeing, cluster_state:ok")
        masters = [n for n in nodes if view[n.id][1] == "master"]
        assert len(masters) == 3
        report = _cli("--cluster", "check", f"127.0.0.1:{nodes[0].port}")
        assert "[OK] All 16384 slots covered." in report
        assert report.count("1 additional replica(s)") == 3

        # CLUSTER FAILOVER on a replica: it and its master swap roles, writes kept.
        first = masters[0]
        replica = _replica_of(view, first, nodes)
        _until(lambda: _link_up(replica), "the replica's first sync")
        # SPUBLISH on a master reaches its replica's SSUBSCRIBE over the bus.
        channel = _key_of(view[first.id][3])
        sub = Wire(replica.port)
        sub.call("SSUBSCRIBE", channel)
        assert first.call("SPUBLISH", channel, "sharded") == b":0\r\n"
        assert b"sharded" in sub.read_reply()
        sub.close()
        slot_key = _key_of(view[first.id][3])
        assert first.call("SET", slot_key, "before") == b"+OK\r\n"
        assert first.call("WAIT", 1, 5000) == b":1\r\n"
        assert replica.call("CLUSTER", "FAILOVER") == b"+OK\r\n"

        def swapped() -> dict[str, list[str]] | None:
            view = _agree(nodes)
            if view and view[replica.id][1] == "master" and view[first.id][2] == replica.id:
                return view
            return None

        view = _until(swapped, "the manual failover agreed by all")
        assert replica.call("GET", slot_key) == b"$6\r\nbefore\r\n"

        # kill -9 of a master: its replica is elected (PFAIL, FAIL, votes).
        victim = masters[1]
        heir = _replica_of(view, victim, nodes)
        victim_slots = view[victim.id][3:]
        _until(lambda: _link_up(heir), "the replica's first sync")
        first_slot, _, last_slot = victim_slots[0].partition("-")
        confirmed = [support.key_in(int(first_slot), int(last_slot), f"w{i}_") for i in range(30)]
        for key in confirmed:
            assert victim.call("SET", key, "1") == b"+OK\r\n"
        assert victim.call("WAIT", 1, 5000) == b":1\r\n"
        victim.kill()
        alive = [n for n in nodes if n is not victim]

        def promoted() -> dict[str, list[str]] | None:
            view = _agree(alive)
            if view and view[heir.id][1] == "master" and "fail" in view[victim.id][1].split(","):
                return view
            return None

        view = _until(promoted, "the replica promoted and agreed by all")
        assert view[heir.id][3:] == victim_slots
        assert [heir.call("GET", key) for key in confirmed] == [b"$1\r\n1\r\n"] * 30
    finally:
        _stop(nodes)


def _key_of(slot_range: str) -> str:
    first, _, last = slot_range.partition("-")
    return support.key_in(int(first), int(last or first), "fo")


@pytest.mark.needs_redis
def test_mixed_rillet_and_redis_nodes():
    """rillet and Redis 8.2.3 masters, a Redis replica of a rillet master and a rillet
    replica of a Redis master: they agree; CLUSTER FAILOVER swaps each pair (each side
    playing master once); kill -9 of each new master elects its old one back."""
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    nodes = _start(["rillet", "redis8", "rillet", "redis8", "rillet"])
    try:
        m1, m2, m3, r1, r2 = nodes  # r1 (Redis) replicates m1 (rillet); r2 (rillet) m2 (Redis)
        for node in nodes[1:]:
            assert m1.call("CLUSTER", "MEET", "127.0.0.1", node.port) == b"+OK\r\n"
        for node, (first, last) in zip((m1, m2, m3), RANGES, strict=True):
            assert node.call("CLUSTER", "ADDSLOTSRANGE", first, last) == b"+OK\r\n"
        _until(lambda: all(len(n.nodes()) == 5 for n in nodes), "every node known to all")
        _until(lambda: r1.call("CLUSTER", "REPLICATE", m1.id) == b"+OK\r\n", "REPLICATE m1")
        _until(lambda: r2.call("CLUSTER", "REPLICATE", m2.id) == b"+OK\r\n", "REPLICATE m2")
        view = _until(lambda: (v := _agree(nodes)) and v[r1.id][2] == m1.id
                      and v[r2.id][2] == m2.id and v, "five nodes agreeing")
        assert [view[n.id][3:] for n in (m1, m2, m3)] == [[f"{a}-{b}"] for a, b in RANGES]
        assert len({_normal_slots(n.call("CLUSTER", "SLOTS")) for n in nodes}) == 1
        # The hostname extension: Redis shows what a rillet node announces.
        m3.call("CONFIG", "SET", "cluster-announce-hostname", "rillet-m3")
        _until(lambda: b",rillet-m3 " in m2.call("CLUSTER", "NODES"),
               "the hostname gossiped to Redis")
        _until(lambda: _link_up(r1) and _link_up(r2), "the replicas' first syncs")
        keys = [support.key_in(*RANGES[0], "mx"), support.key_in(*RANGES[1], "mx")]
        for master, key in zip((m1, m2), keys, strict=True):
            assert master.call("SET", key, "kept") == b"+OK\r\n"
            assert master.call("WAIT", 1, 5000) == b":1\r\n"

        def swapped(replica: Node, master: Node) -> Callable[[], object]:
            def check() -> object:
                view = _agree(nodes)
                return (view and view[replica.id][1] == "master"
                        and view[master.id][2] == replica.id and _link_up(master))
            return check

        # CLUSTER FAILOVER on the rillet replica of the Redis master, then on the Redis
        # replica of the rillet master: the masters pause, the replicas catch up, win.
        assert r2.call("CLUSTER", "FAILOVER") == b"+OK\r\n"
        _until(swapped(r2, m2), "rillet replica r2 taking over from Redis m2")
        assert r1.call("CLUSTER", "FAILOVER") == b"+OK\r\n"
        _until(swapped(r1, m1), "Redis replica r1 taking over from rillet m1")
        assert r1.call("GET", keys[0]) == b"$4\r\nkept\r\n"
        assert r2.call("GET", keys[1]) == b"$4\r\nkept\r\n"

        # kill -9 of the Redis master r1: rillet m1 is elected (votes of r2, m3).
        r1.kill()
        alive = [m1, m2, m3, r2]
        view = _until(lambda: (v := _agree(alive)) and v[m1.id][1] == "master" and v,
                      "rillet m1 elected")
        assert view[m1.id][3:] == [f"{RANGES[0][0]}-{RANGES[0][1]}"]
        assert m1.call("GET", keys[0]) == b"$4\r\nkept\r\n"
        # kill -9 of the rillet master r2: Redis m2 is elected (votes of m1, m3).
        r2.kill()
        alive = [m1, m2, m3]
        view = _until(lambda: (v := _agree(alive)) and v[m2.id][1] == "master" and v,
                      "Redis m2 elected")
        assert view[m2.id][3:] == [f"{RANGES[1][0]}-{RANGES[1][1]}"]
        assert m2.call("GET", keys[1]) == b"$4\r\nkept\r\n"
    finally:
        _stop(nodes)


def _normal_slots(raw: bytes) -> bytes:
    """CLUSTER SLOTS as one node or another sends it (the same bytes)."""
    return re.sub(rb"\s+", b" ", raw)


@pytest.mark.needs_redis
def test_reshard_between_rillet_and_redis():
    """`redis-cli --cluster reshard` moves 200 slots (keys, a stream with its group)
    from a rillet master to a Redis 8.2.3 one, then 100 of them on to rillet."""
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    nodes = _start(["rillet", "redis8", "rillet"])
    try:
        a, b, c = nodes
        for node in nodes[1:]:
            assert a.call("CLUSTER", "MEET", "127.0.0.1", node.port) == b"+OK\r\n"
        for node, (first, last) in zip(nodes, RANGES, strict=True):
            assert node.call("CLUSTER", "ADDSLOTSRANGE", first, last) == b"+OK\r\n"
        _until(lambda: _agree(nodes), "three nodes agreeing")
        keys = [support.key_in(0, 199, f"rs{i}_") for i in range(40)]
        for key in keys:
            assert a.call("SET", key, key) == b"+OK\r\n"
        stream = support.key_in(100, 199, "stream")
        a.call("XADD", stream, "1-1", "f", "v")
        assert a.call("XGROUP", "CREATE", stream, "g", "0") == b"+OK\r\n"
        a.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", stream, ">")
        for source, target, count in ((a, b, 200), (b, c, 100)):
            report = _cli("--cluster", "reshard", f"127.0.0.1:{a.port}", "--cluster-from",
                          source.id, "--cluster-to", target.id, "--cluster-slots", str(count),
                          "--cluster-yes")
            assert "[OK] All 16384 slots covered." in report, report
            view = _until(lambda: _agree(nodes), "the nodes agreeing after a reshard")
        assert view[c.id][3:] == ["0-99", f"{RANGES[2][0]}-{RANGES[2][1]}"]
        assert view[b.id][3:] == ["100-199", f"{RANGES[1][0]}-{RANGES[1][1]}"]
        report = _cli("--cluster", "check", f"127.0.0.1:{c.port}")
        assert "[OK] All nodes agree about slots configuration." in report
        assert "open" not in report.split("Check for open slots...")[1].split(">>>")[0]
        got = [_cli("-c", "-p", str(a.port), "GET", key).strip() for key in keys]
        assert got == keys
        pending = _cli("-c", "-p", str(a.port), "XPENDING", stream, "g")
        assert "alice" in pending
    finally:
        _stop(nodes)


@pytest.mark.needs_redis
def test_replica_migrates_to_an_orphaned_master():
    """A master with two replicas (rillet and Redis) gives one to a master whose only
    replica died (cluster-migration-barrier 1)."""
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    nodes = _start(["rillet", "redis8", "rillet", "redis8", "rillet"])
    try:
        m1, m2, r1a, r1b, r2 = nodes
        for node in nodes[1:]:
            assert m1.call("CLUSTER", "MEET", "127.0.0.1", node.port) == b"+OK\r\n"
        assert m1.call("CLUSTER", "ADDSLOTSRANGE", 0, 8191) == b"+OK\r\n"
        assert m2.call("CLUSTER", "ADDSLOTSRANGE", 8192, 16383) == b"+OK\r\n"
        _until(lambda: all(len(n.nodes()) == 5 for n in nodes), "every node known to all")
        for replica, master in ((r1a, m1), (r1b, m1), (r2, m2)):
            _until(lambda r=replica, m=master: r.call("CLUSTER", "REPLICATE", m.id) == b"+OK\r\n",
                   "REPLICATE")
        _until(lambda: (v := _agree(nodes)) and v[r2.id][2] == m2.id, "five nodes agreeing")
        r2.kill()
        alive = [m1, m2, r1a, r1b]
        view = _until(lambda: (v := _agree(alive)) and m2.id in (v[r1a.id][2], v[r1b.id][2])
                      and v, "a replica of m1 migrating to m2")
        moved = min(r1a, r1b, key=lambda node: node.id)  # the smaller name goes
        assert view[moved.id][2] == m2.id
    finally:
        _stop(nodes)
