"""The bus's pure parts: the node flags as the wire carries them, and the header
a node sends (Redis's clusterBuildMessageHdr), with no sockets."""

from __future__ import annotations

from rillet.clock import ManualClock
from rillet.cluster import busproto as bp
from rillet.cluster import state as cs
from rillet.cluster.bus import ClusterBus, from_wire, to_wire


class _Config(dict):
    def __getitem__(self, key: str) -> object:
        return self.get(key, 0)


def test_flags_map_to_redis_bits_and_back():
    pairs = [(cs.MYSELF, bp.NodeFlag.MYSELF), (cs.MASTER, bp.NodeFlag.MASTER),
             (cs.SLAVE, bp.NodeFlag.SLAVE), (cs.PFAIL, bp.NodeFlag.PFAIL),
             (cs.FAIL, bp.NodeFlag.FAIL), (cs.HANDSHAKE, bp.NodeFlag.HANDSHAKE),
             (cs.NOADDR, bp.NodeFlag.NOADDR), (cs.MEET, bp.NodeFlag.MEET),
             (cs.MIGRATE_TO, bp.NodeFlag.MIGRATE_TO), (cs.NOFAILOVER, bp.NodeFlag.NOFAILOVER)]
    for ours, wire in pairs:
        assert to_wire(ours) == wire and from_wire(wire) == ours
    every = sum(ours for ours, _ in pairs)
    assert from_wire(to_wire(every)) == every
    # EXTENSIONS_SUPPORTED is the bus's own business: no bit of the node table.
    assert from_wire(bp.NodeFlag.EXTENSIONS_SUPPORTED | bp.NodeFlag.MASTER) == cs.MASTER


def test_a_replica_sends_its_masters_slots_and_epoch():
    cluster = cs.ClusterState(ManualClock(), port=7000, cport=17000)
    bus = ClusterBus(cluster, _Config(), offset=lambda: 1234)
    master = cluster.add_peer("m" * 40, "127.0.0.1", 7001)
    master.config_epoch = 5
    cluster.assign_slots(master, range(100, 200))
    cluster.current_epoch = 7
    cluster.replicate(master)
    msg = bp.decode(bp.encode(bus._header(bp.MsgType.PING, bp.PingBody())))
    assert msg.sender == cluster.myself.name and msg.slaveof == master.name
    assert msg.config_epoch == 5 and msg.current_epoch == 7 and msg.offset == 1234
    assert bp.bitmap_slots(msg.myslots) == list(range(100, 200))
    assert msg.flags == bp.NodeFlag.SLAVE | bp.NodeFlag.MYSELF
    assert (msg.port, msg.cport, msg.myip) == (7000, 17000, "")
    assert msg.mflags[0] == bp.MFlag0.EXT_DATA
    assert cluster.bus is bus


def test_extensions_carry_what_redis_sends():
    cluster = cs.ClusterState(ManualClock(), port=7000, cport=17000)
    bus = ClusterBus(cluster, _Config())
    cluster.myself.hostname = "host-a"
    forgotten = cluster.add_peer("f" * 40, "127.0.0.1", 7002)
    cluster.forget(forgotten)
    exts = bus._extensions()
    assert [type(ext) for ext in exts] == [bp.HostnameExt, bp.ForgottenNodeExt,
                                           bp.ShardIdExt, bp.InternalSecretExt]
    assert exts[1].name == "f" * 40 and 0 < exts[1].ttl <= 60
    assert exts[2].shard_id == cluster.myself.shard_id
