"""The cluster's node table as this node sees it: nodes, slots, epochs, nodes.conf.

A model of Redis's clusterState (cluster_legacy.c) without any I/O but the
config file: CLUSTER commands and, later, the bus's gossip drive it through
the methods below, with times (ms) from the injected Clock. Names, flags and
the nodes.conf text are Redis's, so a Redis node can read our file and we
can read its.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rillet.clock import Clock
from rillet.cluster.keyslot import SLOTS

log = logging.getLogger("rillet")

# Redis's CLUSTER_NODE_* bits (the bus carries them as they are).
MYSELF = 1
MASTER = 2
SLAVE = 4
PFAIL = 8
FAIL = 16
HANDSHAKE = 32
NOADDR = 64
MEET = 128
MIGRATE_TO = 256
NOFAILOVER = 512

# In Redis's order (representClusterNodeFlags); MEET and MIGRATE_TO are not shown.
_FLAG_NAMES = ((MYSELF, "myself"), (MASTER, "master"), (SLAVE, "slave"), (PFAIL, "fail?"),
               (FAIL, "fail"), (HANDSHAKE, "handshake"), (NOADDR, "noaddr"),
               (NOFAILOVER, "nofailover"))
_FLAG_BITS = {name: bit for bit, name in _FLAG_NAMES}

NAME_LEN = 40
PORT_INCR = 10000  # the bus port's offset from the client port (CLUSTER_PORT_INCR)
WRITABLE_DELAY_MS = 2000  # CLUSTER_WRITABLE_DELAY: a master waits this long after start
MIN_REJOIN_DELAY_MS = 500
MAX_REJOIN_DELAY_MS = 5000
BLACKLIST_TTL_MS = 60_000  # CLUSTER FORGET keeps a node out of gossip this long
FAIL_REPORT_VALIDITY_MULT = 2


class ConfigFileError(Exception):
    """nodes.conf cannot be read (Redis exits with "corrupted cluster config file")."""


def random_name() -> str:
    return secrets.token_hex(NAME_LEN // 2)


def flags_text(flags: int) -> str:
    names = [name for bit, name in _FLAG_NAMES if flags & bit]
    return ",".join(names) if names else "noflags"


def normalise_ip(text: str) -> str | None:
    """The address as Redis prints it (inet_ntop of inet_pton), None if not an IP."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


@dataclass(eq=False)
class ClusterNode:
    name: str
    flags: int = 0
    ip: str = ""
    port: int = 0
    cport: int = 0
    tls_port: int = 0
    hostname: str = ""
    human_nodename: str = ""
    shard_id: str = field(default_factory=random_name)
    master: ClusterNode | None = None
    replicas: list[ClusterNode] = field(default_factory=list)
    config_epoch: int = 0
    ping_sent: int = 0  # ms; 0 when no ping is waiting for its pong
    pong_received: int = 0
    fail_time: int = 0
    created_ms: int = 0
    numslots: int = 0
    repl_offset: int = 0
    # The bus sets these: an outbound link is up / an inbound one is.
    link: bool = False
    inbound_link: bool = False
    # Failure reports from masters: reporter's name -> when (ms).
    fail_reports: dict[str, int] = field(default_factory=dict)

    @property
    def is_master(self) -> bool:
        return bool(self.flags & MASTER)

    @property
    def is_replica(self) -> bool:
        return bool(self.flags & SLAVE)

    @property
    def failed(self) -> bool:
        return bool(self.flags & FAIL)

    @property
    def epoch(self) -> int:
        """The epoch CLUSTER NODES shows: a replica's is its master's."""
        if self.flags & SLAVE and self.master is not None:
            return self.master.config_epoch
        return self.config_epoch

    def address(self) -> str:
        """`ip:port@cport[,hostname]`, CLUSTER NODES' second field."""
        text = f"{self.ip}:{self.port}@{self.cport}"
        return f"{text},{self.hostname}" if self.hostname else text


class ClusterState:
    """This node's view of the cluster (Redis's clusterState)."""

    def __init__(self, clock: Clock, path: str = "", *, port: int = 0, cport: int = 0,
                 tls_port: int = 0, node_timeout_ms: int = 15000) -> None:
        self.clock = clock
        self.path = path  # nodes.conf; "" keeps everything in memory (unit tests)
        self.nodes: dict[str, ClusterNode] = {}
        self.slots: list[ClusterNode | None] = [None] * SLOTS
        self.migrating: dict[int, ClusterNode] = {}  # slot -> the node it moves to
        self.importing: dict[int, ClusterNode] = {}  # slot -> the node it comes from
        self.current_epoch = 0
        self.last_vote_epoch = 0
        self.blacklist: dict[str, int] = {}  # forgotten names -> until (ms)
        self.node_timeout_ms = node_timeout_ms
        self.require_full_coverage = True
        # clusterUpdateState's results and its clocks.
        self.ok = False
        self.size = 0
        self._first_update_ms = 0
        self._minority_ms = 0
        # Bus statistics by message type name ("ping"...): CLUSTER INFO shows them.
        self.sent: dict[str, int] = {}
        self.received: dict[str, int] = {}
        self.links_buffer_limit_exceeded = 0
        # The bus's links for CLUSTER LINKS, as (name, value) pairs each.
        self.links: list[list[tuple[str, object]]] = []
        # Called with (ip, port) when myself becomes a replica, (None, 0) when it stops.
        self.on_set_master: Callable[[str | None, int], None] | None = None
        # Called with the slots that lost their owner by a change (Redis's
        # clusterDelSlot: their shard channels' subscribers are unsubscribed).
        self.on_slots_deleted: Callable[[set[int]], None] | None = None
        self._deleted: set[int] = set()
        # The bus (rillet.cluster.bus.ClusterBus) once the server runs one: CLUSTER LINKS,
        # FAILOVER and PUBLISH reach the other nodes through it.
        self.bus: Any = None
        self.myself = self._new_node(random_name(), MYSELF | MASTER)
        self.myself.port, self.myself.cport, self.myself.tls_port = port, cport, tls_port
        self.add_node(self.myself)

    # --- nodes ---------------------------------------------------------------------
    def _new_node(self, name: str, flags: int) -> ClusterNode:
        return ClusterNode(name, flags, created_ms=self.clock.now_ms())

    def lookup(self, name: bytes | str) -> ClusterNode | None:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        return self.nodes.get(name) if len(name) == NAME_LEN else None

    def add_node(self, node: ClusterNode) -> ClusterNode:
        self.nodes[node.name] = node
        return node

    def add_peer(self, name: str, ip: str, port: int, cport: int = 0, flags: int = MASTER,
                 *, hostname: str = "", shard_id: str = "") -> ClusterNode:
        """A node learned of (gossip, a handshake's PONG, tests); replaces one of that name."""
        node = self._new_node(name, flags)
        node.ip, node.port, node.cport = ip, port, cport or port + PORT_INCR
        node.hostname = hostname
        if shard_id:
            node.shard_id = shard_id
        old = self.nodes.get(name)
        if old is not None:
            self.del_node(old)
        return self.add_node(node)

    def start_handshake(self, ip: str, port: int, cport: int) -> bool | None:
        """CLUSTER MEET: a node in handshake under a random name until the bus learns
        its own. None: not an address (Redis's EINVAL); False: one is in progress."""
        norm = normalise_ip(ip)
        if norm is None or not (0 < port <= 65535 and 0 < cport <= 65535):
            return None
        for node in self.nodes.values():
            if node.flags & HANDSHAKE and node.ip == norm and node.port == port \
                    and node.cport == cport:
                return False
        node = self._new_node(random_name(), HANDSHAKE | MEET)
        node.ip, node.port, node.cport = norm, port, cport
        self.add_node(node)
        return True

    def rename_node(self, node: ClusterNode, name: str) -> None:
        """A handshake's PONG told the node's real name."""
        del self.nodes[node.name]
        node.name = name
        self.add_node(node)

    def del_node(self, node: ClusterNode) -> None:
        """Redis's clusterDelNode: its slots, its reports and its place as a replica go."""
        for slot, other in list(self.importing.items()):
            if other is node:
                del self.importing[slot]
        for slot, other in list(self.migrating.items()):
            if other is node:
                del self.migrating[slot]
        if node.numslots:  # (most nodes deleted, by RESET or FORGET, serve none)
            for slot in range(SLOTS):
                if self.slots[slot] is node:
                    self._del_slot(slot)
            self._slots_deleted()
        for other in self.nodes.values():
            other.fail_reports.pop(node.name, None)
        if node.master is not None and node in node.master.replicas:
            node.master.replicas.remove(node)
        for replica in node.replicas:
            replica.master = None
        self.nodes.pop(node.name, None)

    def forget(self, node: ClusterNode) -> None:
        """CLUSTER FORGET: gone, and kept out of gossip for a minute."""
        self.blacklist_cleanup()
        self.blacklist[node.name] = self.clock.now_ms() + BLACKLIST_TTL_MS
        self.del_node(node)

    def blacklist_cleanup(self) -> None:
        now = self.clock.now_ms()
        for name in [name for name, until in self.blacklist.items() if until < now]:
            del self.blacklist[name]

    def blacklisted(self, name: str) -> bool:
        self.blacklist_cleanup()
        return name in self.blacklist

    def set_node_flags(self, node: ClusterNode, add: int = 0, remove: int = 0) -> None:
        node.flags = (node.flags | add) & ~remove
        if add & FAIL:
            node.fail_time = self.clock.now_ms()

    def set_master(self, node: ClusterNode, master: ClusterNode | None) -> None:
        """`node` replicates `master` (None: it is a master)."""
        was_replica = node.master is not None
        if node.master is not None and node in node.master.replicas:
            node.master.replicas.remove(node)
        node.master = master
        if master is None:
            node.flags = (node.flags | MASTER) & ~SLAVE
            if was_replica and node is not self.myself:
                # A promoted replica is a target for replica migration (clusterSetNodeAsMaster).
                node.flags |= MIGRATE_TO
            return
        node.flags = (node.flags | SLAVE) & ~(MASTER | MIGRATE_TO)
        node.shard_id = master.shard_id
        if node not in master.replicas:
            master.replicas.append(node)
            master.flags |= MIGRATE_TO  # it had a replica: one may migrate to it (clusterNodeAddSlave)

    def replicate(self, master: ClusterNode) -> None:
        """CLUSTER REPLICATE (Redis's clusterSetMaster): myself becomes its replica."""
        myself = self.myself
        if myself.is_master:
            for slot in range(SLOTS):
                if self.slots[slot] is myself:
                    self._del_slot(slot)
            self._slots_deleted()
            self.migrating.clear()
            self.importing.clear()
        self.set_master(myself, master)
        if self.on_set_master is not None:
            self.on_set_master(master.ip, master.port)

    # --- failure detection (the bus's gossip drives these) ------------------------------
    def add_failure_report(self, node: ClusterNode, reporter: ClusterNode) -> None:
        node.fail_reports[reporter.name] = self.clock.now_ms()

    def del_failure_report(self, node: ClusterNode, reporter: ClusterNode) -> None:
        node.fail_reports.pop(reporter.name, None)

    def failure_reports(self, node: ClusterNode) -> int:
        """Reports younger than twice the node timeout (clusterNodeCleanupFailureReports)."""
        oldest = self.clock.now_ms() - self.node_timeout_ms * FAIL_REPORT_VALIDITY_MULT
        for name in [name for name, when in node.fail_reports.items() if when < oldest]:
            del node.fail_reports[name]
        return len(node.fail_reports)

    def mark_failed(self, node: ClusterNode) -> bool:
        """PFAIL -> FAIL once a majority of masters reports it (markNodeAsFailingIfNeeded);
        True if it was marked now."""
        if not node.flags & PFAIL or node.flags & FAIL:
            return False
        quorum = self.size // 2 + 1
        failures = self.failure_reports(node) + (1 if self.myself.is_master else 0)
        if failures < quorum:
            return False
        self.set_node_flags(node, FAIL, PFAIL)
        return True

    # --- slots ---------------------------------------------------------------------
    def _add_slot(self, node: ClusterNode, slot: int) -> None:
        if self.slots[slot] is not None:
            return
        self.slots[slot] = node
        node.numslots += 1
        if node.numslots == 1 and any(other.replicas for other in self.nodes.values()
                                      if other.is_master):
            # A master's first slot makes it a target for replica migration, if any
            # master has replicas now (clusterNodeSetSlotBit).
            node.flags |= MIGRATE_TO

    def _del_slot(self, slot: int) -> None:
        owner = self.slots[slot]
        if owner is not None:
            owner.numslots -= 1
            self.slots[slot] = None
            self._deleted.add(slot)

    def _slots_deleted(self) -> None:
        """After a change: tell which slots lost their owner (even if they got another)."""
        if self._deleted:
            deleted, self._deleted = self._deleted, set()
            if self.on_slots_deleted is not None:
                self.on_slots_deleted(deleted)

    def assign_slots(self, node: ClusterNode, slots: Iterable[int]) -> None:
        """`node` serves `slots` (ADDSLOTS, SETSLOT NODE, a bus update); an importing
        state ends for the node that now owns the slot."""
        self._note_minority()
        for slot in slots:
            if node is self.myself:
                self.importing.pop(slot, None)
            self._del_slot(slot)
            self._add_slot(node, slot)
        self._slots_deleted()

    def unassign_slots(self, slots: Iterable[int]) -> None:
        self._note_minority()
        for slot in slots:
            self.importing.pop(slot, None)
            self._del_slot(slot)
        self._slots_deleted()

    def ranges_by_node(self) -> dict[ClusterNode, list[tuple[int, int]]]:
        """Every owner's slot ranges, in slot order, from one pass over the slots (a
        pass per node made CLUSTER NODES and SHARDS cost nodes x 16384 steps)."""
        ranges: dict[ClusterNode, list[tuple[int, int]]] = {}
        for start, end, owner in self.slot_runs():
            ranges.setdefault(owner, []).append((start, end))
        return ranges

    def slot_runs(self) -> list[tuple[int, int, ClusterNode]]:
        """Maximal runs of slots with one owner, in slot order (CLUSTER SLOTS)."""
        runs: list[tuple[int, int, ClusterNode]] = []
        owner: ClusterNode | None = None
        start = 0
        slots = self.slots
        for slot in range(SLOTS + 1):
            here = slots[slot] if slot < SLOTS else None
            if here is not owner:
                if owner is not None:
                    runs.append((start, slot - 1, owner))
                owner, start = here, slot
        return runs

    # --- epochs --------------------------------------------------------------------
    def max_epoch(self) -> int:
        return max([node.config_epoch for node in self.nodes.values()] + [self.current_epoch])

    def bump_epoch_without_consensus(self) -> bool:
        """Redis's clusterBumpConfigEpochWithoutConsensus: False if already the greatest."""
        myself = self.myself
        if myself.config_epoch == 0 or myself.config_epoch != self.max_epoch():
            self.current_epoch += 1
            myself.config_epoch = self.current_epoch
            return True
        return False

    # --- health (clusterUpdateState) -------------------------------------------------
    def rejoin_delay_ms(self) -> int:
        return min(max(self.node_timeout_ms, MIN_REJOIN_DELAY_MS), MAX_REJOIN_DELAY_MS)

    def _masters(self) -> tuple[int, int]:
        """(masters serving a slot, those of them not FAIL or PFAIL)."""
        size = reachable = 0
        for node in self.nodes.values():
            if node.is_master and node.numslots:
                size += 1
                if not node.flags & (FAIL | PFAIL):
                    reachable += 1
        return size, reachable

    def _note_minority(self) -> None:
        """Redis's cron updates the state every 100 ms: a minority seen just before a
        change of slots starts the rejoin delay from then."""
        size, reachable = self._masters()
        if reachable < size // 2 + 1:
            self._minority_ms = self.clock.now_ms()

    def update_state(self) -> bool:
        """clusterUpdateState: ok when every slot is served by a node not FAIL (unless
        cluster-require-full-coverage is no) and a majority of masters is reachable;
        a master waits its writable and rejoin delays before it turns ok."""
        now = self.clock.now_ms()
        if not self._first_update_ms:
            self._first_update_ms = now
        myself = self.myself
        if myself.is_master and not self.ok and now - self._first_update_ms < WRITABLE_DELAY_MS:
            return self.ok
        # Every slot served by a node not FAIL (counted per node: the cron runs this).
        ok = not self.require_full_coverage or sum(
            node.numslots for node in self.nodes.values() if not node.flags & FAIL) == SLOTS
        self.size, reachable = self._masters()
        if reachable < self.size // 2 + 1:
            ok = False
            self._minority_ms = now
        if ok != self.ok:
            if ok and myself.is_master and now - self._minority_ms < self.rejoin_delay_ms():
                return self.ok
            log.info("Cluster state changed: %s", "ok" if ok else "fail")
            self.ok = ok
        return ok

    def cron(self) -> None:
        """The server's cron tick (Redis's clusterCron, what of it needs no bus): a
        handshake that has not completed in the node timeout (1 s at least) is dropped."""
        now = self.clock.now_ms()
        timeout = max(self.node_timeout_ms, 1000)
        for node in [node for node in self.nodes.values() if node.flags & HANDSHAKE]:
            if now - node.created_ms > timeout:
                self.del_node(node)
        self.update_state()

    def slot_counts(self) -> tuple[int, int, int, int]:
        """(assigned, ok, pfail, fail) slots, CLUSTER INFO's counts."""
        assigned = good = pfail = failed = 0
        for owner in self.slots:
            if owner is None:
                continue
            assigned += 1
            if owner.flags & FAIL:
                failed += 1
            elif owner.flags & PFAIL:
                pfail += 1
            else:
                good += 1
        return assigned, good, pfail, failed

    # --- RESET ---------------------------------------------------------------------
    def reset(self, hard: bool) -> None:
        """CLUSTER RESET: back to a lone master; HARD also takes a new name and epoch 0.
        (Emptying a replica's data and leaving replication are the caller's.)"""
        myself = self.myself
        if myself.is_replica:
            self.set_master(myself, None)
            if self.on_set_master is not None:
                self.on_set_master(None, 0)
        self.migrating.clear()
        self.importing.clear()
        self.unassign_slots(range(SLOTS))
        for node in list(self.nodes.values()):
            if node is not myself:
                self.del_node(node)
        if hard:
            self.current_epoch = 0
            self.last_vote_epoch = 0
            myself.config_epoch = 0
            del self.nodes[myself.name]
            myself.name = random_name()
            myself.shard_id = random_name()
            self.add_node(myself)
            log.info("Node hard reset, now I'm %s", myself.name)

    # --- nodes.conf ------------------------------------------------------------------
    def node_line(self, node: ClusterNode, for_file: bool = False,
                  ranges: list[tuple[int, int]] | None = None) -> str:
        """One line of CLUSTER NODES (clusterGenNodeDescription); the file's has the aux
        fields after the address. `ranges`: the node's, if the caller has them."""
        address = node.address()
        if for_file:
            parts = [address if node.hostname else address + ","]
            parts.append(f"tls-port={node.tls_port}")
            if node.human_nodename:
                parts.append(f"nodename={node.human_nodename}")
            parts.append(f"shard-id={node.shard_id}")
            address = ",".join(parts)
        master = node.master.name if node.flags & SLAVE and node.master is not None else "-"
        connected = node.link or node.inbound_link or node.flags & MYSELF
        fields = [node.name, address, flags_text(node.flags), master, str(node.ping_sent),
                  str(node.pong_received), str(node.epoch),
                  "connected" if connected else "disconnected"]
        if ranges is None:
            ranges = self.ranges_by_node().get(node, []) if node.numslots else []
        for start, end in ranges:
            fields.append(str(start) if start == end else f"{start}-{end}")
        if node is self.myself:
            for slot in sorted(set(self.migrating) | set(self.importing)):
                if slot in self.migrating:
                    fields.append(f"[{slot}->-{self.migrating[slot].name}]")
                else:
                    fields.append(f"[{slot}-<-{self.importing[slot].name}]")
        return " ".join(fields)

    def nodes_text(self, for_file: bool = False) -> str:
        """CLUSTER NODES; nodes.conf leaves out the nodes still in handshake."""
        ranges = self.ranges_by_node()
        return "".join(self.node_line(node, for_file, ranges.get(node, [])) + "\n"
                       for node in self.nodes.values()
                       if not (for_file and node.flags & HANDSHAKE))

    def config_text(self) -> str:
        return (self.nodes_text(for_file=True)
                + f"vars currentEpoch {self.current_epoch} lastVoteEpoch {self.last_vote_epoch}\n")

    def save(self) -> None:
        """nodes.conf, atomically: a temp file fsynced, renamed over, the directory fsynced."""
        if not self.path:
            return
        directory = os.path.dirname(os.path.abspath(self.path))
        temp = os.path.join(directory, f"tmp-{os.getpid()}-{os.path.basename(self.path)}")
        data = self.config_text().encode()
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, self.path)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def load(self) -> bool:
        """Read nodes.conf (Redis's clusterLoadConfig); False if there is none or it is
        empty. Raises ConfigFileError for a file Redis would refuse."""
        try:
            with open(self.path, encoding="latin-1") as file:
                text = file.read()
        except FileNotFoundError:
            return False
        if not text:
            return False
        now = self.clock.now_ms()
        port, cport, tls_port = self.myself.port, self.myself.cport, self.myself.tls_port
        self.nodes.clear()
        self.slots = [None] * SLOTS
        found_myself: ClusterNode | None = None

        def named(name: str) -> ClusterNode:
            node = self.nodes.get(name)
            if node is None:
                node = self.add_node(self._new_node(name, 0))
            return node

        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                found_myself = self._load_line(line, now, named) or found_myself
            except ValueError as error:
                # A field that is not a number, an unbalanced quote: refused as corrupted
                # (not a traceback at start; Redis's atoi would read 0: docs/compat.md).
                raise ConfigFileError(f"{line} ({error})") from None
        if found_myself is None:
            raise ConfigFileError("no myself line")
        self.myself = found_myself
        self._deleted.clear()
        # The ports come from the configuration, not from the file (Redis updates them).
        found_myself.port, found_myself.cport, found_myself.tls_port = port, cport, tls_port
        self.current_epoch = max(self.current_epoch, self.max_epoch())
        log.info("Node configuration loaded, I'm %s", found_myself.name)
        return True

    def _load_line(self, line: str, now: int,
                   named: Callable[[str], ClusterNode]) -> ClusterNode | None:
        """One line of nodes.conf into the table; the node if it is `myself`."""
        argv = shlex.split(line)
        found_myself: ClusterNode | None = None
        if argv[0].lower() == "vars":
            for key, value in zip(argv[1::2], argv[2::2], strict=False):
                if key.lower() == "currentepoch":
                    self.current_epoch = int(value)
                elif key.lower() == "lastvoteepoch":
                    self.last_vote_epoch = int(value)
                else:
                    log.warning("Skipping unknown cluster config variable '%s'", key)
            return None
        if len(argv) < 8 or len(argv[0]) != NAME_LEN:
            raise ConfigFileError(line)
        node = named(argv[0])
        self._parse_address(node, argv[1])
        for flag in argv[2].split(","):
            if flag == "noflags":
                continue
            bit = _FLAG_BITS.get(flag.lower())
            if bit is None:
                raise ConfigFileError(f"Unknown flag in redis cluster config file: {flag}")
            node.flags |= bit
            if bit == MYSELF:
                found_myself = node
            elif bit == FAIL:
                node.fail_time = now
        if argv[3] != "-":
            self.set_master(node, named(argv[3]))
        node.ping_sent = now if int(argv[4]) else 0
        node.pong_received = now if int(argv[5]) else 0
        node.config_epoch = int(argv[6])
        for word in argv[8:]:
            self._parse_slots(node, word, named)
        return found_myself

    @staticmethod
    def _parse_address(node: ClusterNode, text: str) -> None:
        main, _, aux = text.partition(",")
        host, colon, ports = main.rpartition(":")
        if not colon:
            raise ConfigFileError(text)
        base, _, bus = ports.partition("@")
        node.ip, node.port = host, int(base)
        node.cport = int(bus) if bus else node.port + PORT_INCR
        if aux:
            hostname, *fields = aux.split(",")
            node.hostname = hostname
            for pair in fields:
                key, _, value = pair.partition("=")
                if key == "shard-id":
                    node.shard_id = value
                elif key == "nodename":
                    node.human_nodename = value
                elif key == "tls-port":
                    node.tls_port = int(value)

    def _parse_slots(self, node: ClusterNode, word: str,
                     named: Callable[[str], ClusterNode]) -> None:
        if word.startswith("["):
            slot_text, arrow, other = word[1:-1].partition("->-")
            if arrow:
                self.migrating[int(slot_text)] = named(other)
                return
            slot_text, arrow, other = word[1:-1].partition("-<-")
            if not arrow:
                raise ConfigFileError(word)
            self.importing[int(slot_text)] = named(other)
            return
        start, _, stop = word.partition("-")
        first = int(start)
        last = int(stop) if stop else first
        if not (0 <= first <= last < SLOTS):
            raise ConfigFileError(word)
        for slot in range(first, last + 1):
            self._del_slot(slot)
            self._add_slot(node, slot)
