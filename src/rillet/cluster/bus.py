"""The cluster bus: links to the other nodes, Redis's clusterCron and clusterProcessPacket.

busproto.py is the wire format; this module is what Redis's cluster_legacy.c does
with it, on asyncio: a listener on the bus port (cluster-port, else port + 10000),
one outbound link per known node (we send PING/MEET on it and read its PONGs) and
the inbound links the others open (we answer PING/MEET with PONG on them). The
node table is ClusterState's; the server's cron calls `cron` (Redis runs its
clusterCron every 100 ms) and times come from the ClusterState's Clock.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rillet.cluster import busproto as bp
from rillet.cluster.keyslot import SLOTS
from rillet.cluster.state import (
    FAIL,
    HANDSHAKE,
    MASTER,
    MEET,
    MIGRATE_TO,
    MYSELF,
    NOADDR,
    NOFAILOVER,
    PFAIL,
    SLAVE,
    ClusterNode,
    ClusterState,
)

log = logging.getLogger("rillet")

CRON_PERIOD_MS = 100
FAIL_UNDO_TIME_MULT = 2  # CLUSTER_FAIL_UNDO_TIME_MULT
MF_TIMEOUT_MS = 5000  # CLUSTER_MF_TIMEOUT
MF_PAUSE_MULT = 2  # CLUSTER_MF_PAUSE_MULT
REPLICA_MIGRATION_DELAY_MS = 5000  # CLUSTER_SLAVE_MIGRATION_DELAY
# ClusterState keeps its own bit order; the wire carries Redis's CLUSTER_NODE_* bits.
_WIRE_BITS = ((MYSELF, bp.NodeFlag.MYSELF), (MASTER, bp.NodeFlag.MASTER),
              (SLAVE, bp.NodeFlag.SLAVE), (PFAIL, bp.NodeFlag.PFAIL), (FAIL, bp.NodeFlag.FAIL),
              (HANDSHAKE, bp.NodeFlag.HANDSHAKE), (NOADDR, bp.NodeFlag.NOADDR),
              (MEET, bp.NodeFlag.MEET), (MIGRATE_TO, bp.NodeFlag.MIGRATE_TO),
              (NOFAILOVER, bp.NodeFlag.NOFAILOVER))


def to_wire(flags: int) -> int:
    return sum(int(wire) for bit, wire in _WIRE_BITS if flags & bit)


def from_wire(flags: int) -> int:
    return sum(bit for bit, wire in _WIRE_BITS if flags & wire)


@dataclass(eq=False)
class Link:
    """One bus connection (Redis's clusterLink): outbound when `inbound` is False."""

    bus: ClusterBus
    inbound: bool
    node: ClusterNode | None = None
    ctime: int = 0
    transport: asyncio.Transport | None = None
    buffer: bytearray = field(default_factory=bytearray)
    pending: list[bytes] = field(default_factory=list)  # queued before the connect ends
    closed: bool = False

    def send(self, packet: bytes) -> None:
        if self.closed:
            return
        if self.transport is None:
            self.pending.append(packet)
            return
        limit = self.bus.config["cluster-link-sendbuf-limit"]
        if limit and self.transport.get_write_buffer_size() + len(packet) > limit:
            # Redis frees a link whose send buffer passes cluster-link-sendbuf-limit.
            self.bus.cluster.links_buffer_limit_exceeded += 1
            self.bus.free_link(self)
            return
        self.transport.write(packet)

    def send_buffer(self) -> int:
        return self.transport.get_write_buffer_size() if self.transport is not None else 0


class _LinkProtocol(asyncio.Protocol):
    def __init__(self, link: Link) -> None:
        self.link = link

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        link = self.link
        link.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if link.closed:
            transport.close()
            return
        if link.inbound:
            link.bus.inbound.append(link)
        for packet in link.pending:
            link.send(packet)
        link.pending.clear()

    def data_received(self, data: bytes) -> None:
        link = self.link
        if link.closed:
            return
        buffer = link.buffer
        buffer += data
        bus = link.bus
        while not link.closed:
            try:
                totlen = bp.packet_length(buffer)
            except bp.BadFrame as error:
                log.warning("Bad message on the cluster bus: %s", error)
                bus.free_link(link)
                return
            if totlen is None or len(buffer) < totlen:
                return
            packet = bytes(buffer[:totlen])
            del buffer[:totlen]
            try:
                msg = bp.decode(packet)
            except bp.BusProtocolError as error:
                log.warning("Dropping a cluster bus packet: %s", error)
                continue
            try:
                bus.process(link, msg)
            except Exception:
                log.exception("error processing a cluster bus packet")

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.bus.free_link(self.link)


class ClusterBus:
    def __init__(self, cluster: ClusterState, config: Any, *,
                 offset: Callable[[], int] = lambda: 0,
                 deliver: Callable[[bytes, bytes, bool], object] | None = None,
                 data_age_ms: Callable[[], int] = lambda: 0,
                 promote: Callable[[], None] | None = None,
                 pause: Callable[[int], None] | None = None,
                 replicating: Callable[[], bool] = lambda: True) -> None:
        self.cluster = cluster
        self.config = config
        self.clock = cluster.clock
        self.offset = offset  # our replication offset
        self.deliver = deliver  # PUBLISH from the bus, to local subscribers
        self.data_age_ms = data_age_ms  # a replica: since its master link went down
        self.promote = promote  # a replica that won an election stops replicating
        self.pause = pause  # a master pauses writes for a manual failover
        self.replicating = replicating  # replication has a master (REPLICAOF is set)
        self.outbound: dict[ClusterNode, Link] = {}
        self.inbound: list[Link] = []
        self.inbound_of: dict[ClusterNode, Link] = {}
        self.data_received: dict[ClusterNode, int] = {}
        self.supports_ext: set[str] = set()
        self.secret = secrets.token_bytes(bp.NAMELEN)
        self.iteration = 0
        self._last_cron = 0
        self._dirty = False
        self._listeners: list[asyncio.base_events.Server] = []
        # Replica election (clusterState's failover_auth_*) and manual failover.
        self.auth_time = 0
        self.auth_count = 0
        self.auth_sent = False
        self.auth_rank = 0
        self.auth_epoch = 0
        self.voted_time: dict[ClusterNode, int] = {}
        self.orphaned_since: dict[ClusterNode, int] = {}
        self.mf_end = 0
        self.mf_slave: ClusterNode | None = None
        self.mf_master_offset = -1
        self.mf_can_start = False
        self.mf_force = False
        cluster.bus = self

    # --- listening ---------------------------------------------------------------------
    async def bind(self) -> list[asyncio.base_events.Server]:
        loop = asyncio.get_running_loop()
        port = self.config["cluster-port"] or self.config["port"] + 10000
        for host in str(self.config["bind"]).split():
            host = host.lstrip("-")
            try:
                listener = await loop.create_server(
                    lambda: _LinkProtocol(Link(self, True, ctime=self.clock.now_ms())),
                    host, port, reuse_address=True, start_serving=False)
            except OSError as error:
                log.warning("Could not bind the cluster bus port %s:%d: %s", host, port, error)
                raise
            self._listeners.append(listener)
        return list(self._listeners)

    # --- links ---------------------------------------------------------------------------
    def _connect(self, node: ClusterNode) -> None:
        link = Link(self, False, node, ctime=self.clock.now_ms())
        self.outbound[node] = link
        # A PING (MEET for a node we MEET) goes first, queued until the connect ends:
        # failure detection counts from it (clusterLinkConnectHandler).
        old_ping_sent = node.ping_sent
        self.send_ping(link, bp.MsgType.MEET if node.flags & MEET else bp.MsgType.PING)
        if old_ping_sent:
            node.ping_sent = old_ping_sent
        node.flags &= ~MEET
        loop = asyncio.get_running_loop()
        task = loop.create_task(loop.create_connection(lambda: _LinkProtocol(link), node.ip,
                                                       node.cport))
        task.add_done_callback(lambda done: self._connected(link, done))

    def _connected(self, link: Link, done: asyncio.Future[Any]) -> None:
        if done.cancelled() or done.exception() is not None:
            node = link.node
            if node is not None and not node.ping_sent:
                node.ping_sent = self.clock.now_ms()  # so that failure detection works
            self.free_link(link)
            return
        if link.node is not None and not link.closed:
            link.node.link = True

    def free_link(self, link: Link) -> None:
        if link.closed:
            return
        link.closed = True
        if link.transport is not None:
            link.transport.close()
        node = link.node
        if link.inbound:
            if link in self.inbound:
                self.inbound.remove(link)
            if node is not None and self.inbound_of.get(node) is link:
                del self.inbound_of[node]
                node.inbound_link = False
        elif node is not None and self.outbound.get(node) is link:
            del self.outbound[node]
            node.link = False

    def _forget_links(self, node: ClusterNode) -> None:
        link = self.outbound.get(node)
        if link is not None:
            self.free_link(link)
        link = self.inbound_of.get(node)
        if link is not None:
            self.free_link(link)
        self.data_received.pop(node, None)
        self.voted_time.pop(node, None)
        self.orphaned_since.pop(node, None)

    def del_node(self, node: ClusterNode) -> None:
        self._forget_links(node)
        self.cluster.del_node(node)

    def close(self) -> None:
        for listener in self._listeners:
            listener.close()
        for link in list(self.outbound.values()) + list(self.inbound):
            self.free_link(link)

    def links_info(self) -> list[list[tuple[str, object]]]:
        """CLUSTER LINKS: our link to each node and the one it opened to us. The send
        buffer is the transport's (rillet keeps no preallocated block: allocated = used)."""
        rows: list[list[tuple[str, object]]] = []
        for node, link in list(self.outbound.items()) + list(self.inbound_of.items()):
            pending = link.send_buffer()
            rows.append([("direction", "from" if link.inbound else "to"), ("node", node.name),
                         ("create-time", link.ctime), ("events", "rw" if pending else "r"),
                         ("send-buffer-allocated", pending), ("send-buffer-used", pending)])
        return rows

    # --- sending --------------------------------------------------------------------------
    def _header(self, kind: int, body: bp.Body = None) -> bp.Message:
        """clusterBuildMessageHdr: a replica sends its master's slots and configEpoch."""
        cluster = self.cluster
        myself = cluster.myself
        master = myself.master if myself.is_replica and myself.master is not None else myself
        mflags = 0
        if self.mf_end and myself.is_master:
            mflags |= bp.MFlag0.PAUSED
        if kind in bp.PING_TYPES:
            mflags |= bp.MFlag0.EXT_DATA
        return bp.Message(
            type=kind, sender=myself.name, body=body, current_epoch=cluster.current_epoch,
            config_epoch=master.config_epoch, offset=self.offset(),
            myslots=bp.slots_bitmap(s for s, owner in enumerate(cluster.slots) if owner is master),
            slaveof=myself.master.name if myself.is_replica and myself.master is not None else None,
            myip=str(self.config["cluster-announce-ip"] or ""), port=myself.port,
            pport=myself.tls_port, cport=myself.cport, flags=to_wire(myself.flags),
            state=bp.CLUSTER_OK if cluster.ok else bp.CLUSTER_FAIL,
            mflags=bytes([mflags, 0, 0]))

    def _send(self, link: Link, msg: bp.Message) -> None:
        name = _type_name(msg.type)
        self.cluster.sent[name] = self.cluster.sent.get(name, 0) + 1
        link.send(bp.encode(msg))

    def _gossip(self, node: ClusterNode) -> bp.Gossip:
        return bp.Gossip(node.name, node.ping_sent // 1000, node.pong_received // 1000, node.ip,
                         node.port, node.cport, to_wire(node.flags), node.tls_port)

    def send_ping(self, link: Link, kind: int) -> None:
        """clusterSendPing: a tenth of the nodes (at least 3) as gossip, plus every PFAIL one."""
        cluster = self.cluster
        nodes = list(cluster.nodes.values())
        freshnodes = len(nodes) - 2
        wanted = min(max(len(nodes) // 10, 3), freshnodes)
        chosen: list[ClusterNode] = []
        tries = wanted * 3
        while freshnodes > 0 and len(chosen) < wanted and tries > 0:
            tries -= 1
            node = random.choice(nodes)
            if (node.flags & (MYSELF | PFAIL | HANDSHAKE | NOADDR) or node is link.node
                    or (not node.link and not node.numslots) or node in chosen):
                continue
            chosen.append(node)
            freshnodes -= 1
        chosen += [node for node in nodes if node.flags & PFAIL and not node.flags
                   & (HANDSHAKE | NOADDR)]
        body = bp.PingBody([self._gossip(node) for node in chosen])
        if link.node is not None and link.node.name in self.supports_ext:
            body.extensions = self._extensions()
        if link.node is not None and kind == bp.MsgType.PING:
            link.node.ping_sent = self.clock.now_ms()
        self._send(link, self._header(kind, body))

    def _extensions(self) -> list[bp.PingExt]:
        myself = self.cluster.myself
        exts: list[bp.PingExt] = []
        if myself.hostname:
            exts.append(bp.HostnameExt(myself.hostname))
        if myself.human_nodename:
            exts.append(bp.HumanNodenameExt(myself.human_nodename))
        now = self.clock.now_ms()
        self.cluster.blacklist_cleanup()
        for name, until in self.cluster.blacklist.items():
            exts.append(bp.ForgottenNodeExt(name, max(0, (until - now) // 1000)))
        exts.append(bp.ShardIdExt(myself.shard_id))
        exts.append(bp.InternalSecretExt(self.secret))
        return exts

    def broadcast(self, msg: bp.Message) -> None:
        for node, link in list(self.outbound.items()):
            if not node.flags & (MYSELF | HANDSHAKE):
                self._send(link, msg)

    def broadcast_pong(self, local_only: bool = False) -> None:
        """clusterBroadcastPong: tell the others of a change at once (a new role, new slots)."""
        myself = self.cluster.myself
        for node, link in list(self.outbound.items()):
            if node.flags & (MYSELF | HANDSHAKE):
                continue
            if local_only:
                mine = myself.master if myself.is_replica else myself
                if not (node is mine or node.master is mine):
                    continue
            self.send_ping(link, bp.MsgType.PONG)

    def publish(self, channel: bytes, message: bytes, shard: bool) -> None:
        """PUBLISH goes to every node, SPUBLISH to the nodes of our shard."""
        kind = bp.MsgType.PUBLISHSHARD if shard else bp.MsgType.PUBLISH
        msg = self._header(kind, bp.PublishBody(channel, message))
        if not shard:
            self.broadcast(msg)
            return
        myself = self.cluster.myself
        master = myself.master if myself.is_replica and myself.master is not None else myself
        for node in [master, *master.replicas]:
            link = self.outbound.get(node)
            if link is not None and node is not myself:
                self._send(link, msg)

    def send_fail(self, node: ClusterNode) -> None:
        self.broadcast(self._header(bp.MsgType.FAIL, bp.FailBody(node.name)))

    def send_update(self, link: Link | None, node: ClusterNode) -> None:
        if link is None:
            return
        slots = bp.slots_bitmap(s for s, owner in enumerate(self.cluster.slots) if owner is node)
        self._send(link, self._header(bp.MsgType.UPDATE,
                                      bp.UpdateBody(node.config_epoch, node.name, slots)))

    # --- receiving (clusterProcessPacket) ---------------------------------------------------
    def process(self, link: Link, msg: bp.Message) -> None:
        cluster = self.cluster
        now = self.clock.now_ms()
        kind = msg.type
        name = _type_name(kind)
        cluster.received[name] = cluster.received.get(name, 0) + 1
        if link.node is not None and not link.node.flags & HANDSHAKE:
            sender: ClusterNode | None = link.node
        else:
            sender = cluster.lookup(msg.sender)
            if sender is not None and sender.flags & HANDSHAKE:
                sender = None
        if sender is not None and link.inbound and self.inbound_of.get(sender) is not link:
            old = self.inbound_of.get(sender)
            if old is not None:
                self.free_link(old)
            link.node = sender
            self.inbound_of[sender] = link
            sender.inbound_link = True
        if sender is not None:
            self.data_received[sender] = now
            if msg.mflags[0] & bp.MFlag0.EXT_DATA:
                self.supports_ext.add(sender.name)
        if sender is not None and not sender.flags & HANDSHAKE:
            if msg.current_epoch > cluster.current_epoch:
                cluster.current_epoch = msg.current_epoch
            if msg.config_epoch > sender.config_epoch and not msg.slaveof:
                sender.config_epoch = msg.config_epoch
                self._changed()
            sender.repl_offset = msg.offset
            myself = cluster.myself
            if (self.mf_end and myself.is_replica and myself.master is sender
                    and msg.mflags[0] & bp.MFlag0.PAUSED and self.mf_master_offset == -1):
                self.mf_master_offset = msg.offset
        if kind in (bp.MsgType.PING, bp.MsgType.MEET):
            self._ping_or_meet(link, msg, sender)
        if kind in bp.PING_TYPES:
            if not self._ping_types(link, msg, sender):
                return
        elif kind == bp.MsgType.FAIL:
            if sender is not None:
                assert isinstance(msg.body, bp.FailBody)
                failing = cluster.lookup(msg.body.nodename)
                if failing is not None and not failing.flags & (FAIL | MYSELF):
                    log.info("FAIL message received from %s about %s", sender.name, failing.name)
                    cluster.set_node_flags(failing, FAIL, PFAIL)
                    self._changed()
        elif kind in (bp.MsgType.PUBLISH, bp.MsgType.PUBLISHSHARD):
            if sender is not None and self.deliver is not None:
                assert isinstance(msg.body, bp.PublishBody)
                self.deliver(msg.body.channel, msg.body.message,
                             kind == bp.MsgType.PUBLISHSHARD)
        elif kind == bp.MsgType.FAILOVER_AUTH_REQUEST:
            if sender is not None:
                self._vote(sender, msg)
        elif kind == bp.MsgType.FAILOVER_AUTH_ACK:
            if (sender is not None and sender.is_master and sender.numslots
                    and msg.current_epoch >= self.auth_epoch):
                self.auth_count += 1
                self._handle_replica_failover()
        elif kind == bp.MsgType.MFSTART:
            myself = cluster.myself
            if sender is not None and sender.master is myself:
                self._reset_manual_failover()
                self.mf_end = now + MF_TIMEOUT_MS
                self.mf_slave = sender
                if self.pause is not None:
                    self.pause(MF_TIMEOUT_MS * MF_PAUSE_MULT)
                log.info("Manual failover requested by replica %s.", sender.name)
                out = self.outbound.get(sender)
                if out is not None:
                    self.send_ping(out, bp.MsgType.PING)
        elif kind == bp.MsgType.UPDATE:
            assert isinstance(msg.body, bp.UpdateBody)
            if sender is None:
                return
            node = cluster.lookup(msg.body.nodename)
            if node is None or node.config_epoch >= msg.body.config_epoch:
                return
            if node.is_replica:
                cluster.set_master(node, None)
            node.config_epoch = msg.body.config_epoch
            self._update_slots(node, msg.body.config_epoch, msg.body.slots)
            self._changed()

    def _ping_or_meet(self, link: Link, msg: bp.Message, sender: ClusterNode | None) -> None:
        cluster = self.cluster
        myself = cluster.myself
        if ((msg.type == bp.MsgType.MEET or not myself.ip)
                and not self.config["cluster-announce-ip"] and link.transport is not None):
            # Our address as the others reach us (Redis learns it from a MEET).
            local = link.transport.get_extra_info("sockname")
            if local and local[0] != myself.ip:
                myself.ip = local[0]
                self._changed()
        if sender is None and msg.type == bp.MsgType.MEET:
            peer = link.transport.get_extra_info("peername") if link.transport else None
            ip = msg.myip or (peer[0] if peer else "")
            node = cluster.add_peer(_random_name(), ip,
                                    msg.port, msg.cport, HANDSHAKE)
            node.tls_port = msg.pport
            self._gossip_section(msg, None, trusted=True)
            self._changed()
        self.send_ping(link, bp.MsgType.PONG)

    def _ping_types(self, link: Link, msg: bp.Message, sender: ClusterNode | None) -> bool:
        cluster = self.cluster
        now = self.clock.now_ms()
        node = link.node
        if not link.inbound and node is not None:
            if node.flags & HANDSHAKE:
                if sender is not None:
                    # We knew it under its name: the handshake node goes.
                    self._update_address(sender, link, msg)
                    self.del_node(node)
                    self._changed()
                    return False
                cluster.rename_node(node, msg.sender)
                log.info("Handshake with node %s completed.", msg.sender)
                node.flags &= ~HANDSHAKE
                node.flags |= from_wire(msg.flags) & (MASTER | SLAVE)
                self._changed()
            elif node.name != msg.sender:
                log.info("PONG contains mismatching sender ID: %s != %s", node.name, msg.sender)
                node.flags |= NOADDR
                node.ip, node.port, node.cport = "", 0, 0
                self.free_link(link)
                self._changed()
                return False
        if sender is not None:
            sender.flags = (sender.flags & ~NOFAILOVER) | (from_wire(msg.flags) & NOFAILOVER)
            if msg.type == bp.MsgType.PING and self._update_address(sender, link, msg):
                self._changed()
        if not link.inbound and node is not None and msg.type == bp.MsgType.PONG:
            node.pong_received = now
            node.ping_sent = 0
            if node.flags & PFAIL:
                cluster.set_node_flags(node, 0, PFAIL)
                self._changed()
            elif node.flags & FAIL:
                self._clear_failure_if_needed(node)
        if sender is None:
            return True
        # A change of role.
        if msg.slaveof is None:
            if sender.is_replica:
                cluster.set_master(sender, None)
                self._changed()
        else:
            master = cluster.lookup(msg.slaveof)
            if sender.is_master:
                cluster.unassign_slots([s for s in range(SLOTS) if cluster.slots[s] is sender])
                sender.flags = (sender.flags & ~(MASTER | MIGRATE_TO)) | SLAVE
                self._changed()
            if master is not None and sender.master is not master:
                cluster.set_master(sender, master)
                self._changed()
        sender_master = sender if sender.is_master else sender.master
        dirty = False
        if sender_master is not None:
            ours = bp.slots_bitmap(s for s, owner in enumerate(cluster.slots)
                                   if owner is sender_master)
            dirty = ours != msg.myslots
        if sender.is_master and dirty:
            self._update_slots(sender, msg.config_epoch, msg.myslots)
        if dirty:
            for slot in bp.bitmap_slots(msg.myslots):
                owner = cluster.slots[slot]
                if owner is sender or owner is None:
                    continue
                if owner.config_epoch > msg.config_epoch:
                    self.send_update(self.outbound.get(sender), owner)
                    break
        myself = cluster.myself
        if (myself.is_master and sender.is_master
                and msg.config_epoch == myself.config_epoch):
            self._epoch_collision(sender)
        self._gossip_section(msg, sender)
        assert isinstance(msg.body, bp.PingBody)
        self._ping_ext(sender, msg.body.extensions)
        return True

    def _update_address(self, node: ClusterNode, link: Link, msg: bp.Message) -> bool:
        """nodeUpdateAddressIfNeeded: a node seen at another address (a restart)."""
        if link is self.outbound.get(node) or link.transport is None:
            return False
        peer = link.transport.get_extra_info("peername")
        ip = msg.myip or (peer[0] if peer else node.ip)
        if node.ip == ip and node.port == msg.port and node.cport == msg.cport:
            return False
        node.ip, node.port, node.cport, node.tls_port = ip, msg.port, msg.cport, msg.pport
        old = self.outbound.get(node)
        if old is not None:
            self.free_link(old)
        node.flags &= ~NOADDR
        log.info("Address updated for node %s, now %s:%d", node.name, ip, msg.port)
        return True

    def _clear_failure_if_needed(self, node: ClusterNode) -> None:
        """clearNodeFailureIfNeeded: a replica or a master without slots comes back at once,
        a master with slots after long enough that no replica took over."""
        now = self.clock.now_ms()
        if node.is_replica or not node.numslots or (
                now - node.fail_time > self.cluster.node_timeout_ms * FAIL_UNDO_TIME_MULT):
            log.info("Clear FAIL state for node %s", node.name)
            self.cluster.set_node_flags(node, 0, FAIL)
            self._changed()

    def _update_slots(self, sender: ClusterNode, epoch: int, bitmap: bytes) -> None:
        """clusterUpdateSlotsConfigWith: slots claimed under a greater epoch change hands;
        if ours all went to the sender, we follow it (a failover happened)."""
        cluster = self.cluster
        myself = cluster.myself
        if sender is myself:
            return
        cur_master = myself if myself.is_master else myself.master
        new_master: ClusterNode | None = None
        moved: list[int] = []
        for slot in bp.bitmap_slots(bitmap):
            owner = cluster.slots[slot]
            if owner is sender or slot in cluster.importing:
                continue
            if owner is None or owner.config_epoch < epoch:
                if owner is cur_master and cur_master is not None:
                    new_master = sender
                moved.append(slot)
        if not moved:
            return
        cluster.assign_slots(sender, moved)
        self._changed()
        if new_master is not None and cur_master is not None and not cur_master.numslots:
            log.info("Configuration change detected. Reconfiguring myself as a replica of %s",
                     sender.name)
            cluster.replicate(new_master)
            self._reset_manual_failover()

    def _epoch_collision(self, sender: ClusterNode) -> None:
        """clusterHandleConfigEpochCollision: the node with the smaller name takes a new epoch."""
        cluster = self.cluster
        myself = cluster.myself
        if sender.name <= myself.name:
            return
        cluster.current_epoch += 1
        myself.config_epoch = cluster.current_epoch
        self._changed()
        log.info("WARNING: configEpoch collision with node %s. configEpoch set to %d",
                 sender.name, myself.config_epoch)

    def _gossip_section(self, msg: bp.Message, sender: ClusterNode | None,
                        trusted: bool = False) -> None:
        cluster = self.cluster
        assert isinstance(msg.body, bp.PingBody)
        now = self.clock.now_ms()
        for entry in msg.body.gossip:
            flags = from_wire(entry.flags) & ~MYSELF
            node = cluster.lookup(entry.nodename)
            if node is not None:
                if sender is not None and sender.is_master and node is not cluster.myself:
                    if flags & (FAIL | PFAIL):
                        cluster.add_failure_report(node, sender)
                        if cluster.mark_failed(node):
                            log.info("Marking node %s as failing (quorum reached).", node.name)
                            # A replica too: the reports were masters'; it only spreads it.
                            self.send_fail(node)
                            self._changed()
                    else:
                        cluster.del_failure_report(node, sender)
                if (not flags & (FAIL | PFAIL) and not node.ping_sent
                        and not cluster.failure_reports(node)):
                    pong = entry.pong_received * 1000
                    if pong <= now + 500 and pong > node.pong_received:
                        node.pong_received = pong
                if (node.flags & (FAIL | PFAIL) and not flags & (NOADDR | FAIL | PFAIL)
                        and (node.ip, node.port, node.cport)
                        != (entry.ip, entry.port, entry.cport)):
                    old = self.outbound.get(node)
                    if old is not None:
                        self.free_link(old)
                    node.ip, node.port, node.cport = entry.ip, entry.port, entry.cport
                    node.flags &= ~NOADDR
            elif ((sender is not None or trusted) and not flags & NOADDR
                  and not cluster.blacklisted(entry.nodename) and bp.is_node_id(entry.nodename)):
                if sender is None:
                    # A MEET's gossip (Redis trusts the MEET): a handshake, not the name.
                    cluster.start_handshake(entry.ip, entry.port, entry.cport)
                    continue
                node = cluster.add_peer(entry.nodename, entry.ip, entry.port, entry.cport,
                                        flags & ~(PFAIL | FAIL | HANDSHAKE | MEET) or MASTER)
                node.tls_port = entry.pport
                self._changed()

    def _ping_ext(self, sender: ClusterNode, exts: list[bp.PingExt]) -> None:
        """clusterProcessPingExt; a hostname or human nodename not sent is cleared."""
        cluster = self.cluster
        hostname = human = ""
        for ext in exts:
            if isinstance(ext, bp.HostnameExt):
                hostname = ext.hostname
            elif isinstance(ext, bp.HumanNodenameExt):
                human = ext.nodename
            elif isinstance(ext, bp.ForgottenNodeExt):
                node = cluster.lookup(ext.name)
                if node is not None and node is not cluster.myself and not (
                        cluster.myself.is_replica and cluster.myself.master is node):
                    self._forget_links(node)
                    cluster.forget(node)
                    cluster.blacklist[ext.name] = self.clock.now_ms() + ext.ttl * 1000
                    self._changed()
            elif isinstance(ext, bp.ShardIdExt):
                if sender.shard_id != ext.shard_id:
                    sender.shard_id = ext.shard_id
                    for replica in sender.replicas if sender.is_master else ():
                        replica.shard_id = ext.shard_id
                    self._changed()
            elif isinstance(ext, bp.InternalSecretExt):
                if ext.secret < self.secret:
                    self.secret = ext.secret
        if sender.hostname != hostname or sender.human_nodename != human:
            sender.hostname, sender.human_nodename = hostname, human
            self._changed()

    # --- cron (clusterCron) -----------------------------------------------------------------
    def cron(self) -> None:
        now = self.clock.now_ms()
        if now - self._last_cron < CRON_PERIOD_MS * 9 // 10:  # (the server's ticks jitter)
            return
        self._last_cron = now
        self.iteration += 1
        cluster = self.cluster
        myself = cluster.myself
        # clusterUpdateMyselfFlags: cluster-replica-no-failover shows as nofailover.
        if self.config["cluster-replica-no-failover"]:
            myself.flags |= NOFAILOVER
        else:
            myself.flags &= ~NOFAILOVER
        for stale in [node for node in (*self.outbound, *self.inbound_of)
                      if cluster.nodes.get(node.name) is not node]:
            self._forget_links(stale)  # deleted by a command (FORGET, RESET)
        timeout = cluster.node_timeout_ms
        handshake_timeout = max(timeout, 1000)
        for node in list(cluster.nodes.values()):
            if node.flags & (MYSELF | NOADDR):
                continue
            if node.flags & HANDSHAKE and now - node.created_ms > handshake_timeout:
                self.del_node(node)
                continue
            if node not in self.outbound and node.ip and node.cport:
                self._connect(node)
        if self.iteration % 10 == 0:
            candidates = [node for node in random.sample(list(cluster.nodes.values()),
                                                         min(5, len(cluster.nodes)))
                          if node in self.outbound and not node.ping_sent
                          and not node.flags & (MYSELF | HANDSHAKE)]
            if candidates:
                oldest = min(candidates, key=lambda node: node.pong_received)
                self.send_ping(self.outbound[oldest], bp.MsgType.PING)
        for node in list(cluster.nodes.values()):
            if node.flags & (MYSELF | NOADDR | HANDSHAKE):
                continue
            link = self.outbound.get(node)
            ping_delay = now - node.ping_sent
            data_delay = now - self.data_received.get(node, 0)
            if (link is not None and now - link.ctime > timeout and node.ping_sent
                    and ping_delay > timeout / 2 and data_delay > timeout / 2):
                self.free_link(link)
                link = None
            if link is not None and not node.ping_sent and now - node.pong_received > timeout / 2:
                self.send_ping(link, bp.MsgType.PING)
                continue
            if self.mf_end and cluster.myself.is_master and self.mf_slave is node and link:
                self.send_ping(link, bp.MsgType.PING)
                continue
            if not node.ping_sent:
                continue
            if min(ping_delay, data_delay) > timeout and not node.flags & (PFAIL | FAIL):
                log.info("*** NODE %s possibly failing", node.name)
                node.flags |= PFAIL
        if self.mf_end and self.mf_end < now:
            log.info("Manual failover timed out.")
            self._reset_manual_failover()
        master = myself.master
        if (myself.is_replica and master is not None and master.ip and not self.replicating()
                and cluster.on_set_master is not None):
            # A replica started from nodes.conf: replication follows the table (clusterCron).
            cluster.on_set_master(master.ip, master.port)
        if cluster.myself.is_replica:
            self._handle_manual_failover()
            self._handle_replica_failover()
            if self.config["cluster-allow-replica-migration"]:
                self._handle_replica_migration()
        cluster.cron()
        self._save_if_dirty()

    def _changed(self) -> None:
        """Redis's clusterDoBeforeSleep(UPDATE_STATE|SAVE_CONFIG): the state now, the file
        (fsynced) once per cron tick however many packets changed it."""
        self.cluster.update_state()
        self._dirty = True

    def _save_if_dirty(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        cluster = self.cluster
        try:
            cluster.save()
        except OSError as error:
            log.warning("Could not save the cluster config %s: %s", cluster.path, error)

    # --- votes (clusterSendFailoverAuthIfNeeded) ---------------------------------------------
    def _vote(self, node: ClusterNode, msg: bp.Message) -> None:
        cluster = self.cluster
        myself = cluster.myself
        now = self.clock.now_ms()
        master = node.master
        if myself.is_replica or not myself.numslots:
            return
        if msg.current_epoch < cluster.current_epoch:
            return
        if cluster.last_vote_epoch == cluster.current_epoch:
            return
        force = bool(msg.mflags[0] & bp.MFlag0.FORCEACK)
        if not node.is_replica or master is None or (not master.failed and not force):
            return
        if now - self.voted_time.get(master, 0) < cluster.node_timeout_ms * 2:
            return
        for slot in bp.bitmap_slots(msg.myslots):
            owner = cluster.slots[slot]
            if owner is not None and owner.config_epoch > msg.config_epoch:
                return
        cluster.last_vote_epoch = cluster.current_epoch
        self.voted_time[master] = now
        self._changed()
        link = self.outbound.get(node)
        if link is not None:
            self._send(link, self._header(bp.MsgType.FAILOVER_AUTH_ACK))
        log.info("Failover auth granted to %s for epoch %d", node.name, cluster.current_epoch)

    # --- replica election (clusterHandleSlaveFailover) -------------------------------------------
    def _rank(self) -> int:
        myself = self.cluster.myself
        master = myself.master
        if master is None:
            return 0
        mine = self.offset()
        return sum(1 for replica in master.replicas
                   if replica is not myself and not replica.flags & NOFAILOVER
                   and replica.repl_offset > mine)

    def _handle_replica_failover(self) -> None:
        cluster = self.cluster
        myself = cluster.myself
        master = myself.master
        now = self.clock.now_ms()
        timeout = cluster.node_timeout_ms
        auth_timeout = max(timeout * 2, 2000)
        retry = auth_timeout * 2
        manual = bool(self.mf_end and self.mf_can_start)
        if (myself.is_master or master is None or (not master.failed and not manual)
                or (self.config["cluster-replica-no-failover"] and not manual)
                or not master.numslots):
            return
        factor = self.config["cluster-replica-validity-factor"]
        if factor and not manual:
            age = self.data_age_ms() - timeout
            if age > timeout * factor + 10 * 1000:
                return  # data too old to take over
        if now - self.auth_time > retry:
            self.auth_time = now + 500 + random.randint(0, 499)
            self.auth_count = 0
            self.auth_sent = False
            self.auth_rank = self._rank()
            self.auth_time += self.auth_rank * 1000
            if manual:
                self.auth_time = now
                self.auth_rank = 0
            self.broadcast_pong(local_only=True)
            return
        if not self.auth_sent and not manual:
            rank = self._rank()
            if rank > self.auth_rank:
                self.auth_time += (rank - self.auth_rank) * 1000
                self.auth_rank = rank
        if now < self.auth_time:
            return
        if now - self.auth_time > auth_timeout:
            return
        if not self.auth_sent:
            cluster.current_epoch += 1
            self.auth_epoch = cluster.current_epoch
            log.info("Starting a failover election for epoch %d.", cluster.current_epoch)
            msg = self._header(bp.MsgType.FAILOVER_AUTH_REQUEST)
            if manual:
                msg.mflags = bytes([bp.MFlag0.FORCEACK, 0, 0])
            self.broadcast(msg)
            self.auth_sent = True
            self._changed()
            return
        needed = cluster.size // 2 + 1
        if self.auth_count >= needed:
            log.info("Failover election won: I'm the new master.")
            if myself.config_epoch < self.auth_epoch:
                myself.config_epoch = self.auth_epoch
            self._failover()

    def _failover(self) -> None:
        """clusterFailoverReplaceYourMaster: take the master's slots and tell everyone."""
        cluster = self.cluster
        myself = cluster.myself
        old = myself.master
        if old is None:
            return
        slots = [s for s in range(SLOTS) if cluster.slots[s] is old]
        cluster.set_master(myself, None)
        if self.promote is not None:
            self.promote()
        cluster.assign_slots(myself, slots)
        self._changed()
        self.broadcast_pong()
        self._reset_manual_failover()

    # --- replica migration (clusterHandleSlaveMigration) ---------------------------------------
    def _ok_replicas(self, master: ClusterNode) -> int:
        return sum(1 for replica in master.replicas if not replica.flags & (FAIL | PFAIL))

    def _handle_replica_migration(self) -> None:
        """A replica of a master with the most working replicas (more than
        cluster-migration-barrier) moves to an orphaned master: one with slots that
        had replicas and has none working, after 5 s; the replica with the smallest
        name among those masters' goes."""
        cluster = self.cluster
        myself = cluster.myself
        mymaster = myself.master
        if not cluster.ok or mymaster is None:
            return
        masters = [node for node in cluster.nodes.values()
                   if node.is_master and not node.flags & (FAIL | MYSELF | NOADDR | HANDSHAKE)]
        counts = {node: self._ok_replicas(node) for node in masters}
        max_replicas = max(counts.values(), default=0)
        orphaned = any(not count and node.numslots and node.flags & MIGRATE_TO
                       for node, count in counts.items())
        if (not orphaned or max_replicas < 2 or counts.get(mymaster) != max_replicas
                or counts[mymaster] <= self.config["cluster-migration-barrier"]):
            return
        now = self.clock.now_ms()
        target: ClusterNode | None = None
        candidate = myself
        for node in cluster.nodes.values():
            count = counts.get(node, 0)
            if (node in counts and not count and node.flags & MIGRATE_TO):
                if target is None and node.numslots:
                    target = node
                self.orphaned_since.setdefault(node, now)
            else:
                self.orphaned_since.pop(node, None)
            if count == max_replicas:
                for replica in node.replicas:
                    if replica.name < candidate.name:
                        candidate = replica
        if (target is not None and candidate is myself
                and now - self.orphaned_since[target] > REPLICA_MIGRATION_DELAY_MS):
            log.info("Migrating to orphaned master %s", target.name)
            cluster.replicate(target)
            self._changed()

    # --- manual failover (CLUSTER FAILOVER) --------------------------------------------------
    def manual_failover(self, force: bool, takeover: bool) -> None:
        """CLUSTER FAILOVER on a replica (checked by the command)."""
        cluster = self.cluster
        myself = cluster.myself
        master = myself.master
        self._reset_manual_failover()
        self.mf_end = self.clock.now_ms() + MF_TIMEOUT_MS
        if takeover:
            # No votes: a new epoch of our own, and the slots.
            log.info("Taking over the master (user request).")
            cluster.bump_epoch_without_consensus()
            self._failover()
            return
        if force:
            log.info("Forced failover user request accepted.")
            self.mf_can_start = True
            return
        log.info("Manual failover user request accepted.")
        link = self.outbound.get(master) if master is not None else None
        if link is not None:
            self._send(link, self._header(bp.MsgType.MFSTART))

    def _reset_manual_failover(self) -> None:
        if self.mf_slave is not None and self.pause is not None:
            self.pause(0)
        self.mf_end = 0
        self.mf_can_start = False
        self.mf_slave = None
        self.mf_master_offset = -1

    def _handle_manual_failover(self) -> None:
        if not self.mf_end or self.mf_can_start or self.mf_master_offset == -1:
            return
        if self.mf_master_offset == self.offset():
            self.mf_can_start = True
            log.info("All master replication stream processed, manual failover can start.")


def _type_name(kind: int) -> str:
    """The message type as CLUSTER INFO names it (clusterGetMessageTypeString)."""
    names = {0: "ping", 1: "pong", 2: "meet", 3: "fail", 4: "publish", 5: "auth-req",
             6: "auth-ack", 7: "update", 8: "mfstart", 9: "module", 10: "publishshard"}
    return names.get(int(kind), "unknown")


def _random_name() -> str:
    return secrets.token_hex(bp.NAMELEN // 2)
