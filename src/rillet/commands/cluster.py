"""CLUSTER, ASKING, READONLY, READWRITE, and the cluster gate's routing of keyed commands.

With `cluster-enabled no` (Redis's default) Redis 8.2.3 answers every CLUSTER
subcommand, CLUSTER HELP and KEYSLOT included, with "This instance has cluster
support disabled" after the usual arity check (clusterCommand's first test), and
so do ASKING, READONLY and READWRITE. With `cluster-enabled yes` the node table
is rillet/cluster/state.py's ClusterState (ServerState.cluster) and these are
Redis's cluster.c/cluster_legacy.c commands over it; `route` is its
getNodeByQuery, which the dispatcher's gate calls (dispatch.py). The specs below
are Redis's (COMMAND INFO/DOCS), so clients that read them see Redis's shapes.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from rillet import errors
from rillet.cluster.keyslot import SLOTS, key_slot
from rillet.cluster.state import HANDSHAKE, MYSELF, PORT_INCR, ClusterNode, ClusterState
from rillet.commands.args import parse_int
from rillet.commands.server import flush_data
from rillet.commands.table import CommandSpec, command, container_docs, help_reply
from rillet.engine.keyspace import Database
from rillet.errors import ReplyError, c_text
from rillet.resp.types import OK, Map, SimpleString, Verbatim
from rillet.state import PAUSE_BY_MANUAL_FAILOVER, Client, ServerState

if TYPE_CHECKING:
    from rillet.cluster.bus import ClusterBus

log = logging.getLogger("rillet")

_ADMIN = "admin slow dangerous"


# (name, arity, flags, since, acl, syntax, complexity, summary)
_SUBCOMMANDS = (
    ("addslots", -3, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER ADDSLOTS slot [slot ...]",
     "O(N) where N is the total number of hash slot arguments",
     "Assigns new hash slots to a node."),
    ("addslotsrange", -4, "admin stale no_async_loading", "7.0.0", _ADMIN,
     "CLUSTER ADDSLOTSRANGE start-slot end-slot [start-slot end-slot ...]",
     "O(N) where N is the total number of the slots between the start slot and end slot"
     " arguments.",
     "Assigns new hash slot ranges to a node."),
    ("bumpepoch", 2, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER BUMPEPOCH", "O(1)", "Advances the cluster config epoch."),
    ("count-failure-reports", 3, "admin stale", "3.0.0", _ADMIN,
     "CLUSTER COUNT-FAILURE-REPORTS node-id", "O(N) where N is the number of failure reports",
     "Returns the number of active failure reports active for a node."),
    ("countkeysinslot", 3, "stale", "3.0.0", "slow",
     "CLUSTER COUNTKEYSINSLOT slot", "O(1)", "Returns the number of keys in a hash slot."),
    ("delslots", -3, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER DELSLOTS slot [slot ...]",
     "O(N) where N is the total number of hash slot arguments",
     "Sets hash slots as unbound for a node."),
    ("delslotsrange", -4, "admin stale no_async_loading", "7.0.0", _ADMIN,
     "CLUSTER DELSLOTSRANGE start-slot end-slot [start-slot end-slot ...]",
     "O(N) where N is the total number of the slots between the start slot and end slot"
     " arguments.",
     "Sets hash slot ranges as unbound for a node."),
    ("failover", -2, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER FAILOVER [FORCE | TAKEOVER]", "O(1)",
     "Forces a replica to perform a manual failover of its master."),
    ("flushslots", 2, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER FLUSHSLOTS", "O(1)", "Deletes all slots information from a node."),
    ("forget", 3, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER FORGET node-id", "O(1)", "Removes a node from the nodes table."),
    ("getkeysinslot", 4, "stale", "3.0.0", "slow",
     "CLUSTER GETKEYSINSLOT slot count", "O(N) where N is the number of requested keys",
     "Returns the key names in a hash slot."),
    ("help", 2, "loading stale", "5.0.0", "slow",
     "CLUSTER HELP", "O(1)", "Returns helpful text about the different subcommands."),
    ("info", 2, "stale", "3.0.0", "slow",
     "CLUSTER INFO", "O(1)", "Returns information about the state of a node."),
    ("keyslot", 3, "stale", "3.0.0", "slow",
     "CLUSTER KEYSLOT key", "O(N) where N is the number of bytes in the key",
     "Returns the hash slot for a key."),
    ("links", 2, "stale", "7.0.0", "slow",
     "CLUSTER LINKS", "O(N) where N is the total number of Cluster nodes",
     "Returns a list of all TCP links to and from peer nodes."),
    ("meet", -4, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER MEET ip port [cluster-bus-port]", "O(1)",
     "Forces a node to handshake with another node."),
    ("myid", 2, "stale", "3.0.0", "slow",
     "CLUSTER MYID", "O(1)", "Returns the ID of a node."),
    ("myshardid", 2, "stale", "7.2.0", "slow",
     "CLUSTER MYSHARDID", "O(1)", "Returns the shard ID of a node."),
    ("nodes", 2, "stale", "3.0.0", "slow",
     "CLUSTER NODES", "O(N) where N is the total number of Cluster nodes",
     "Returns the cluster configuration for a node."),
    ("replicas", 3, "admin stale", "5.0.0", _ADMIN,
     "CLUSTER REPLICAS node-id", "O(N) where N is the number of replicas.",
     "Lists the replica nodes of a master node."),
    ("replicate", 3, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER REPLICATE node-id", "O(1)", "Configure a node as replica of a master node."),
    ("reset", -2, "admin noscript stale", "3.0.0", _ADMIN,
     "CLUSTER RESET [HARD | SOFT]",
     "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a"
     " side effect.",
     "Resets a node."),
    ("saveconfig", 2, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER SAVECONFIG", "O(1)", "Forces a node to save the cluster configuration to disk."),
    ("set-config-epoch", 3, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER SET-CONFIG-EPOCH config-epoch", "O(1)",
     "Sets the configuration epoch for a new node."),
    ("setslot", -4, "admin stale no_async_loading", "3.0.0", _ADMIN,
     "CLUSTER SETSLOT slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE>",
     "O(1)", "Binds a hash slot to a node."),
    ("shards", 2, "loading stale", "7.0.0", "slow",
     "CLUSTER SHARDS", "O(N) where N is the total number of cluster nodes",
     "Returns the mapping of cluster slots to shards."),
    ("slaves", 3, "admin stale", "3.0.0", _ADMIN,
     "CLUSTER SLAVES node-id", "O(N) where N is the number of replicas.",
     "Lists the replica nodes of a master node."),
    ("slot-stats", -4, "loading stale", "8.2.0", "slow",
     "CLUSTER SLOT-STATS <SLOTSRANGE start-slot end-slot | ORDERBY metric [LIMIT limit]"
     " [ASC | DESC]>",
     "O(N) where N is the total number of slots based on arguments. O(N*log(N)) with ORDERBY"
     " subcommand.",
     "Return an array of slot usage statistics for slots assigned to the current node."),
    ("slots", 2, "loading stale", "3.0.0", "slow",
     "CLUSTER SLOTS", "O(N) where N is the total number of Cluster nodes",
     "Returns the mapping of cluster slots to nodes."),
)


def _cluster(ctx: Client) -> ClusterState:
    cluster = ctx.server.cluster
    if cluster is None:
        raise ReplyError(errors.CLUSTER_DISABLED)
    return cluster


def _changed(ctx: Client, cluster: ClusterState) -> None:
    """Redis's clusterDoBeforeSleep(UPDATE_STATE|SAVE_CONFIG), done at once."""
    cluster.update_state()
    _save(cluster)


def _save(cluster: ClusterState) -> None:
    """nodes.conf after a change; a failure is logged, the change stays (CLUSTER
    SAVECONFIG is the one that answers it)."""
    try:
        cluster.save()
    except OSError as error:
        log.warning("Could not save the cluster config %s: %s", cluster.path, error)


def _slot(raw: bytes) -> int:
    """Redis's getSlotOrReply."""
    slot = parse_int(raw, errors.CLUSTER_BAD_SLOT)
    if not 0 <= slot < SLOTS:
        raise ReplyError(errors.CLUSTER_BAD_SLOT)
    return slot


def _node(cluster: ClusterState, raw: bytes,
          message: str = errors.CLUSTER_UNKNOWN_NODE) -> ClusterNode:
    node = cluster.lookup(raw)
    if node is None:
        raise ReplyError(message.format(c_text(raw)))
    return node


def _slot_keys(db: Database, slot: int) -> Iterator[bytes]:
    """The keys of db 0 in `slot` (rillet keeps no per-slot index yet: a scan). Not a
    copy of the key list: every caller consumes it within its own call, so a
    GETKEYSINSLOT with a small count or SETSLOT's "any key?" stops at what it needs."""
    for key in db.data:
        if key_slot(key) == slot:
            yield key


def count_keys_in_slot(db: Database, slot: int) -> int:
    return sum(1 for _ in _slot_keys(db, slot))


def _preferred_endpoint(state: ServerState, node: ClusterNode) -> str | None:
    """clusterNodePreferredEndpoint; None for `unknown-endpoint`, where a reply shows a
    null (CLUSTER SLOTS) or an empty string (MOVED, CLUSTER SHARDS)."""
    kind = state.config.values["cluster-preferred-endpoint-type"]
    if kind == "ip":
        return node.ip
    if kind == "hostname":
        return node.hostname or "?"
    return None


def _repl_offset(ctx: Client, node: ClusterNode) -> int:
    if node.flags & MYSELF:
        replication = ctx.server.replication
        return replication.master_repl_offset if replication is not None else 0
    return node.repl_offset


def _help(ctx: Client, argv: list[bytes]) -> object:
    return help_reply("CLUSTER", *_HELP)


_HELP = (
    b"COUNTKEYSINSLOT <slot>", b"    Return the number of keys in <slot>.",
    b"GETKEYSINSLOT <slot> <count>", b"    Return key names stored by current node in a slot.",
    b"INFO", b"    Return information about the cluster.",
    b"KEYSLOT <key>", b"    Return the hash slot for <key>.",
    b"MYID", b"    Return the node id.",
    b"MYSHARDID", b"    Return the node's shard id.",
    b"NODES", b"    Return cluster configuration seen by node. Output format:",
    b"    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link>"
    b" <slot> ...",
    b"REPLICAS <node-id>", b"    Return <node-id> replicas.",
    b"SLOTS", b"    Return information about slots range mappings. Each range is made of:",
    b"    start, end, master and replicas IP addresses, ports and ids",
    b"SLOT-STATS",
    b"    Return an array of slot usage statistics for slots assigned to the current node.",
    b"SHARDS",
    b"    Return information about slot range mappings and the nodes associated with them.",
    b"ADDSLOTS <slot> [<slot> ...]", b"    Assign slots to current node.",
    b"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    b"    Assign slots which are between <start-slot> and <end-slot> to current node.",
    b"BUMPEPOCH", b"    Advance the cluster config epoch.",
    b"COUNT-FAILURE-REPORTS <node-id>", b"    Return number of failure reports for <node-id>.",
    b"DELSLOTS <slot> [<slot> ...]", b"    Delete slots information from current node.",
    b"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    b"    Delete slots information which are between <start-slot> and <end-slot> from current"
    b" node.",
    b"FAILOVER [FORCE|TAKEOVER]", b"    Promote current replica node to being a master.",
    b"FORGET <node-id>", b"    Remove a node from the cluster.",
    b"FLUSHSLOTS", b"    Delete current node own slots information.",
    b"MEET <ip> <port> [<bus-port>]", b"    Connect nodes into a working cluster.",
    b"REPLICATE <node-id>", b"    Configure current node as replica to <node-id>.",
    b"RESET [HARD|SOFT]", b"    Reset current node (default: soft).",
    b"SET-CONFIG-EPOCH <epoch>", b"    Set config epoch of current node.",
    b"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    b"    Set slot state.",
    b"SAVECONFIG", b"    Force saving cluster configuration on disk.",
    b"LINKS",
    b"    Return information about all network links between this node and its peers.",
    b"    Output format is an array where each array element is a map containing attributes of"
    b" a link",
)


# --- the read-only subcommands (cluster.c) ------------------------------------------------
def _info(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    assigned, good, pfail, failed = cluster.slot_counts()
    myself = cluster.myself
    lines = [
        f"cluster_state:{'ok' if cluster.ok else 'fail'}",
        f"cluster_slots_assigned:{assigned}",
        f"cluster_slots_ok:{good}",
        f"cluster_slots_pfail:{pfail}",
        f"cluster_slots_fail:{failed}",
        f"cluster_known_nodes:{len(cluster.nodes)}",
        f"cluster_size:{cluster.size}",
        f"cluster_current_epoch:{cluster.current_epoch}",
        f"cluster_my_epoch:{myself.epoch}",
    ]
    for direction, counts in (("sent", cluster.sent), ("received", cluster.received)):
        lines.extend(f"cluster_stats_messages_{kind}_{direction}:{count}"
                     for kind, count in counts.items() if count)
        lines.append(f"cluster_stats_messages_{direction}:{sum(counts.values())}")
    lines.append(f"total_cluster_links_buffer_limit_exceeded:{cluster.links_buffer_limit_exceeded}")
    return Verbatim(("\r\n".join(lines) + "\r\n").encode())


def _nodes(ctx: Client, argv: list[bytes]) -> object:
    return Verbatim(_cluster(ctx).nodes_text().encode())


def _myid(ctx: Client, argv: list[bytes]) -> object:
    return _cluster(ctx).myself.name.encode()


def _myshardid(ctx: Client, argv: list[bytes]) -> object:
    return _cluster(ctx).myself.shard_id.encode()


def _keyslot(ctx: Client, argv: list[bytes]) -> object:
    _cluster(ctx)
    return key_slot(argv[2])


def _countkeysinslot(ctx: Client, argv: list[bytes]) -> object:
    _cluster(ctx)
    slot = parse_int(argv[2])
    if not 0 <= slot < SLOTS:
        raise ReplyError(errors.CLUSTER_COUNT_BAD_SLOT)
    return count_keys_in_slot(ctx.server.keyspace[0], slot)


def _getkeysinslot(ctx: Client, argv: list[bytes]) -> object:
    _cluster(ctx)
    slot = parse_int(argv[2])
    count = parse_int(argv[3])
    if not 0 <= slot < SLOTS or count < 0:
        raise ReplyError(errors.CLUSTER_GETKEYS_BAD_ARGS)
    return list(islice(_slot_keys(ctx.server.keyspace[0], slot), count))


def _node_entry(ctx: Client, node: ClusterNode) -> list[object]:
    """addNodeToNodeReply: endpoint, port, id, and the other known endpoints."""
    kind = ctx.server.config.values["cluster-preferred-endpoint-type"]
    extra: list[tuple[bytes, bytes]] = []
    if kind != "ip":
        extra.append((b"ip", node.ip.encode()))
    if kind != "hostname" and node.hostname:
        extra.append((b"hostname", node.hostname.encode()))
    endpoint = _preferred_endpoint(ctx.server, node)
    return [None if endpoint is None else endpoint.encode(), node.port, node.name.encode(),
            Map(extra)]


def _replica_available(ctx: Client, node: ClusterNode) -> bool:
    return not node.failed and _repl_offset(ctx, node) != 0


def _slots(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    reply = []
    for start, end, owner in cluster.slot_runs():
        entry: list[object] = [start, end, _node_entry(ctx, owner)]
        entry.extend(_node_entry(ctx, replica) for replica in owner.replicas
                     if _replica_available(ctx, replica))
        reply.append(entry)
    return reply


def _shard_node(ctx: Client, node: ClusterNode) -> Map:
    """addNodeDetailsToShardReply."""
    fields: list[tuple[bytes, object]] = [(b"id", node.name.encode())]
    if node.port:
        fields.append((b"port", node.port))
    if node.tls_port:
        fields.append((b"tls-port", node.tls_port))
    endpoint = _preferred_endpoint(ctx.server, node)
    fields.append((b"ip", node.ip.encode()))
    fields.append((b"endpoint", b"" if endpoint is None else endpoint.encode()))
    if node.hostname:
        fields.append((b"hostname", node.hostname.encode()))
    offset = _repl_offset(ctx, node)
    fields.append((b"role", b"replica" if node.is_replica else b"master"))
    fields.append((b"replication-offset", offset))
    if node.failed:
        health = b"fail"
    elif node.is_replica and offset == 0:
        health = b"loading"
    else:
        health = b"online"
    fields.append((b"health", health))
    return Map(fields)


def _shards(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    shards: dict[str, list[ClusterNode]] = {}
    for node in cluster.nodes.values():
        if not node.flags & HANDSHAKE:
            shards.setdefault(node.shard_id, []).append(node)
    ranges = cluster.ranges_by_node()
    reply = []
    for members in shards.values():
        master = next((node for node in members if node.is_master), members[0])
        slots: list[int] = []
        for start, end in ranges.get(master, ()):
            slots += (start, end)
        reply.append(Map([(b"slots", slots),
                          (b"nodes", [_shard_node(ctx, node) for node in members])]))
    return reply


def _replicas(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    node = _node(cluster, argv[2])
    if node.is_replica:
        raise ReplyError(errors.CLUSTER_NOT_A_MASTER)
    return [cluster.node_line(replica).encode() for replica in node.replicas]


def _links(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    links = cluster.bus.links_info() if cluster.bus is not None else cluster.links
    return [Map([(name.encode(), value) for name, value in link]) for link in links]


def _count_failure_reports(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    return cluster.failure_reports(_node(cluster, argv[2]))


# --- the subcommands that change the node table (cluster_legacy.c) -----------------------
def _check_slots(cluster: ClusterState, chosen: set[int], delete: bool, first: int,
                 last: int) -> None:
    """checkSlotAssignmentsOrReply."""
    for slot in range(first, last + 1):
        owner = cluster.slots[slot]
        if delete and owner is None:
            raise ReplyError(errors.CLUSTER_SLOT_UNASSIGNED.format(slot))
        if not delete and owner is not None:
            raise ReplyError(errors.CLUSTER_SLOT_BUSY.format(slot))
        if slot in chosen:
            raise ReplyError(errors.CLUSTER_SLOT_TWICE.format(slot))
        chosen.add(slot)


def _update_slots(ctx: Client, cluster: ClusterState, chosen: set[int], delete: bool) -> object:
    ordered = sorted(chosen)
    if delete:
        cluster.unassign_slots(ordered)
    else:
        cluster.assign_slots(cluster.myself, ordered)
    _changed(ctx, cluster)
    return OK


def _slots_each(ctx: Client, argv: list[bytes], delete: bool) -> object:
    cluster = _cluster(ctx)
    slots = [_slot(raw) for raw in argv[2:]]  # every argument parses before any is checked
    chosen: set[int] = set()
    for slot in slots:
        _check_slots(cluster, chosen, delete, slot, slot)
    return _update_slots(ctx, cluster, chosen, delete)


def _slots_ranges(ctx: Client, argv: list[bytes], delete: bool) -> object:
    cluster = _cluster(ctx)
    if len(argv) % 2:
        raise ReplyError(errors.wrong_arity(f"cluster|{argv[1].lower().decode()}"))
    chosen: set[int] = set()
    for at in range(2, len(argv), 2):
        first, last = _slot(argv[at]), _slot(argv[at + 1])
        if first > last:
            raise ReplyError(errors.CLUSTER_RANGE_REVERSED.format(first, last))
        _check_slots(cluster, chosen, delete, first, last)
    return _update_slots(ctx, cluster, chosen, delete)


def _flushslots(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    if len(ctx.server.keyspace[0]):
        raise ReplyError(errors.CLUSTER_FLUSHSLOTS_NOT_EMPTY)
    cluster.unassign_slots([slot for slot in range(SLOTS) if cluster.slots[slot] is cluster.myself])
    _changed(ctx, cluster)
    return OK


def _setslot(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    myself = cluster.myself
    if myself.is_replica:
        raise ReplyError(errors.CLUSTER_SETSLOT_ON_REPLICA)
    slot = _slot(argv[2])
    action = argv[3].lower()
    if action == b"migrating" and len(argv) == 5:
        if cluster.slots[slot] is not myself:
            raise ReplyError(errors.CLUSTER_NOT_SLOT_OWNER.format(slot))
        node = _node(cluster, argv[4], errors.CLUSTER_UNKNOWN_NODE_SETSLOT)
        if node.is_replica:
            raise ReplyError(errors.CLUSTER_TARGET_NOT_MASTER)
        cluster.migrating[slot] = node
    elif action == b"importing" and len(argv) == 5:
        if cluster.slots[slot] is myself:
            raise ReplyError(errors.CLUSTER_ALREADY_SLOT_OWNER.format(slot))
        node = _node(cluster, argv[4], errors.CLUSTER_UNKNOWN_NODE_SETSLOT)
        if node.is_replica:
            raise ReplyError(errors.CLUSTER_TARGET_NOT_MASTER)
        cluster.importing[slot] = node
    elif action == b"stable" and len(argv) == 4:
        cluster.importing.pop(slot, None)
        cluster.migrating.pop(slot, None)
    elif action == b"node" and len(argv) == 5:
        node = _node(cluster, argv[4])
        if node.is_replica:
            raise ReplyError(errors.CLUSTER_TARGET_NOT_MASTER)
        was_mine = cluster.slots[slot] is myself
        # One scan at most, stopping at the slot's first key (there is no per-slot index).
        has_keys = (was_mine and node is not myself) or slot in cluster.migrating
        has_keys = has_keys and any(_slot_keys(ctx.server.keyspace[0], slot))
        if was_mine and node is not myself and has_keys:
            raise ReplyError(errors.CLUSTER_SLOT_HAS_KEYS.format(slot))
        if slot in cluster.migrating and not has_keys:
            del cluster.migrating[slot]
        importing = node is myself and slot in cluster.importing
        cluster.assign_slots(node, [slot])  # (ends the import when it is ours now)
        if was_mine and node is not myself and not myself.numslots \
                and ctx.server.config.values["cluster-allow-replica-migration"]:
            log.info("Lost my last slot during slot migration. Reconfiguring myself as a"
                     " replica of %s", node.name)
            cluster.replicate(node)
        if importing:
            # A slot moved by hand: a new epoch so that the cluster takes our claim.
            if cluster.bump_epoch_without_consensus():
                log.info("configEpoch updated after importing slot %d", slot)
    else:
        raise ReplyError(errors.CLUSTER_SETSLOT_SYNTAX)
    _changed(ctx, cluster)
    return OK


def _bumpepoch(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    bumped = cluster.bump_epoch_without_consensus()
    _changed(ctx, cluster)
    word = "BUMPED" if bumped else "STILL"
    return SimpleString(f"{word} {cluster.myself.config_epoch}".encode())


def _saveconfig(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    try:
        cluster.save()
    except OSError as error:
        raise ReplyError(errors.CLUSTER_SAVE_FAILED.format(error.strerror)) from None
    return OK


def _meet(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    if len(argv) > 5:
        raise ReplyError(errors.subcommand_syntax(argv[1], "cluster"))
    try:
        port = parse_int(argv[3])
    except ReplyError:
        raise ReplyError(errors.CLUSTER_MEET_BAD_PORT.format(c_text(argv[3]))) from None
    if len(argv) == 5:
        try:
            cport = parse_int(argv[4])
        except ReplyError:
            raise ReplyError(errors.CLUSTER_MEET_BAD_BUS_PORT.format(c_text(argv[4]))) from None
    else:
        cport = port + PORT_INCR
    if cluster.start_handshake(argv[2].decode("latin-1"), port, cport) is None:
        raise ReplyError(errors.CLUSTER_MEET_BAD_ADDRESS.format(c_text(argv[2]), c_text(argv[3])))
    return OK


def _forget(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    node = cluster.lookup(argv[2])
    if node is None:
        if cluster.blacklisted(argv[2].decode("latin-1")):
            return OK  # forgotten already (gossip may have told us first)
        raise ReplyError(errors.CLUSTER_UNKNOWN_NODE.format(c_text(argv[2])))
    myself = cluster.myself
    if node is myself:
        raise ReplyError(errors.CLUSTER_FORGET_MYSELF)
    if myself.is_replica and myself.master is node:
        raise ReplyError(errors.CLUSTER_FORGET_MY_MASTER)
    cluster.forget(node)
    _changed(ctx, cluster)
    return OK


def _replicate(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    node = _node(cluster, argv[2])
    myself = cluster.myself
    if node is myself:
        raise ReplyError(errors.CLUSTER_REPLICATE_MYSELF)
    if node.is_replica:
        raise ReplyError(errors.CLUSTER_REPLICATE_REPLICA)
    if myself.is_master and (myself.numslots or len(ctx.server.keyspace[0])):
        raise ReplyError(errors.CLUSTER_REPLICATE_NOT_EMPTY)
    cluster.replicate(node)
    _changed(ctx, cluster)
    return OK


def _set_config_epoch(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    epoch = parse_int(argv[2])
    if epoch < 0:
        raise ReplyError(errors.CLUSTER_BAD_EPOCH.format(epoch))
    if len(cluster.nodes) > 1:
        raise ReplyError(errors.CLUSTER_EPOCH_OTHER_NODES)
    if cluster.myself.config_epoch:
        raise ReplyError(errors.CLUSTER_EPOCH_NONZERO)
    cluster.myself.config_epoch = epoch
    log.info("configEpoch set to %d via CLUSTER SET-CONFIG-EPOCH", epoch)
    cluster.current_epoch = max(cluster.current_epoch, epoch)
    _changed(ctx, cluster)
    return OK


def _reset(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    hard = False
    if len(argv) == 3:
        word = argv[2].lower()
        if word not in (b"hard", b"soft"):
            raise ReplyError(errors.SYNTAX)
        hard = word == b"hard"
    elif len(argv) > 3:
        raise ReplyError(errors.subcommand_syntax(argv[1], "cluster"))
    if cluster.myself.is_master and len(ctx.db):
        raise ReplyError(errors.CLUSTER_RESET_WITH_KEYS)
    was_replica = cluster.myself.is_replica
    cluster.reset(hard)
    if was_replica:
        flush_data(ctx.server, None)  # Redis's emptyData: the old master's data goes
    _changed(ctx, cluster)
    return OK


def _failover(ctx: Client, argv: list[bytes]) -> object:
    cluster = _cluster(ctx)
    if len(argv) > 3:
        raise ReplyError(errors.subcommand_syntax(argv[1], "cluster"))
    force = False
    if len(argv) == 3:
        word = argv[2].lower()
        if word not in (b"force", b"takeover"):
            raise ReplyError(errors.SYNTAX)
        force = True
    myself = cluster.myself
    if myself.is_master:
        raise ReplyError(errors.CLUSTER_FAILOVER_ON_MASTER)
    master = myself.master
    if master is None:
        raise ReplyError(errors.CLUSTER_FAILOVER_NO_MASTER)
    if not force and (master.failed or not master.link):
        raise ReplyError(errors.CLUSTER_FAILOVER_MASTER_DOWN)
    if cluster.bus is None:
        raise ReplyError(errors.CLUSTER_FAILOVER_NO_BUS)
    cluster.bus.manual_failover(force, force and argv[2].lower() == b"takeover")
    return OK


def _slot_stats(ctx: Client, argv: list[bytes]) -> object:
    """CLUSTER SLOT-STATS SLOTSRANGE | ORDERBY key-count (rillet keeps no per-slot CPU or
    network counts: key-count is the one metric, as with cluster-slot-stats-enabled no)."""
    cluster = _cluster(ctx)
    word = argv[2].lower()
    mine = cluster.myself
    if word == b"slotsrange" and len(argv) == 5:
        first, last = _slot(argv[3]), _slot(argv[4])
        if first > last:
            raise ReplyError(errors.SLOT_STATS_REVERSED.format(first, last))
        chosen = [slot for slot in range(first, last + 1) if cluster.slots[slot] is mine]
        counts = _slot_key_counts(ctx.server.keyspace[0]) if chosen else {}
    elif word == b"orderby":
        if argv[3].lower() != b"key-count":
            raise ReplyError(errors.SLOT_STATS_METRIC)
        limit: int | None = None
        descending: bool | None = None
        at = 4
        while at < len(argv):
            option = argv[at].lower()
            if option == b"limit" and at + 1 < len(argv):
                if limit is not None:
                    raise ReplyError(errors.SLOT_STATS_REPEATED)
                limit = parse_int(argv[at + 1], errors.SLOT_STATS_LIMIT)
                if not 1 <= limit <= SLOTS:
                    raise ReplyError(errors.SLOT_STATS_LIMIT)
                at += 2
            elif option in (b"asc", b"desc"):
                if descending is not None:
                    raise ReplyError(errors.SLOT_STATS_REPEATED)
                descending = option == b"desc"
                at += 1
            else:
                raise ReplyError(errors.SYNTAX)
        sign = 1 if descending is False else -1
        counts = _slot_key_counts(ctx.server.keyspace[0])
        owned = [slot for slot in range(SLOTS) if cluster.slots[slot] is mine]
        owned.sort(key=lambda slot: (sign * counts.get(slot, 0), slot))
        chosen = owned[:SLOTS if limit is None else limit]
    else:
        raise ReplyError(errors.subcommand_syntax(argv[1], "cluster"))
    return [[slot, Map([(b"key-count", counts.get(slot, 0))])] for slot in chosen]


def _slot_key_counts(db: Database) -> dict[int, int]:
    counts: dict[int, int] = {}
    for key in db.data:
        slot = key_slot(key)
        counts[slot] = counts.get(slot, 0) + 1
    return counts


_IMPLEMENTED: dict[str, Callable[[Client, list[bytes]], object]] = {
    "addslots": functools.partial(_slots_each, delete=False),
    "addslotsrange": functools.partial(_slots_ranges, delete=False), "bumpepoch": _bumpepoch,
    "count-failure-reports": _count_failure_reports, "countkeysinslot": _countkeysinslot,
    "delslots": functools.partial(_slots_each, delete=True),
    "delslotsrange": functools.partial(_slots_ranges, delete=True), "failover": _failover,
    "flushslots": _flushslots, "forget": _forget, "getkeysinslot": _getkeysinslot,
    "help": _help, "info": _info, "keyslot": _keyslot, "links": _links, "meet": _meet,
    "myid": _myid, "myshardid": _myshardid, "nodes": _nodes, "replicas": _replicas,
    "replicate": _replicate, "reset": _reset, "saveconfig": _saveconfig,
    "set-config-epoch": _set_config_epoch, "setslot": _setslot, "shards": _shards,
    "slaves": _replicas, "slot-stats": _slot_stats, "slots": _slots,
}


def _register_subcommands() -> None:
    for name, arity, flags, since, acl, syntax, complexity, summary in _SUBCOMMANDS:
        implementation = _IMPLEMENTED[name]

        def handler(ctx: Client, argv: list[bytes], run: Callable[..., object] = implementation,
                    ) -> object:
            if ctx.server.cluster is None:
                raise ReplyError(errors.CLUSTER_DISABLED)
            return run(ctx, argv)

        handler.__doc__ = f"{syntax}\n\n{summary}"
        command(f"cluster|{name}", arity, flags, group="cluster", since=since, acl=acl,
                complexity=complexity, summary=summary)(handler)


_register_subcommands()


@command("asking", 1, "fast", group="cluster", since="3.0.0", acl="fast connection",
         complexity="O(1)", summary="Signals that a cluster client is following an -ASK redirect.")
def asking(ctx: Client, argv: list[bytes]) -> object:
    """ASKING"""
    _cluster(ctx)
    ctx.cluster_asking = True
    return OK


@command("readonly", 1, "loading stale fast", group="cluster", since="3.0.0",
         acl="fast connection", complexity="O(1)",
         summary="Enables read-only queries for a connection to a Redis Cluster replica node.")
def readonly(ctx: Client, argv: list[bytes]) -> object:
    """READONLY"""
    _cluster(ctx)
    ctx.cluster_readonly = True
    return OK


@command("readwrite", 1, "loading stale fast", group="cluster", since="3.0.0",
         acl="fast connection", complexity="O(1)",
         summary="Enables read-write queries for a connection to a Reids Cluster replica node.")
def readwrite(ctx: Client, argv: list[bytes]) -> object:
    """READWRITE"""
    _cluster(ctx)
    ctx.cluster_readonly = False
    return OK


container_docs("cluster", "3.0.0", "A container for Redis Cluster commands.", "cluster")


# --- the gate: Redis's getNodeByQuery ---------------------------------------------------------
_SHARD_PUBSUB = frozenset({"spublish", "ssubscribe"})
# Commands whose `find_keys` only tells their one key's flags (SET's GET, BITFIELD's
# GET-only form, DELEX's conditions): their key is argv[1], alone
# (tests/cluster/test_gate.py checks it).
ONE_KEY_FINDERS = frozenset({"set", "bitfield", "delex"})


def has_keys(spec: CommandSpec) -> bool:
    """Redis redirects only commands that may have keys (key specs or movable keys) and EXEC."""
    return spec.first_key > 0 or spec.find_keys is not None or spec.name == "exec"


def route(state: ServerState, client: Client, spec: CommandSpec, argv: list[bytes]) -> str | None:
    """The error that sends the command elsewhere (-MOVED, -ASK, -CROSSSLOT, -TRYAGAIN,
    -CLUSTERDOWN), or None when this node serves it."""
    return locate(state, client, spec, argv)[0]


def locate(state: ServerState, client: Client, spec: CommandSpec,
           argv: list[bytes]) -> tuple[str | None, int]:
    """`route`'s answer and the slot of the command's keys (-1 if it has none)."""
    cluster: ClusterState = state.cluster
    myself = cluster.myself
    if spec.first_key == spec.last_key == 1 and len(argv) > 1 and (
            spec.find_keys is None or spec.name in ONE_KEY_FINDERS):
        # The common case, one key: served here when its slot is ours and stable and
        # the cluster is up, whatever else the rules below would look at.
        slot = key_slot(argv[1])
        if cluster.slots[slot] is myself and cluster.ok and slot not in cluster.migrating \
                and slot not in cluster.importing:
            return None, slot
    if spec.name == "exec":
        if client.multi is None:
            return None, -1  # EXEC answers its own error
        commands = client.multi
    else:
        commands = [(spec, argv)]
    owner: ClusterNode | None = None
    first_key: bytes | None = None
    slot = 0
    multiple_keys = migrating = importing = shard_pubsub = False
    missing = existing = 0
    for each_spec, each_argv in commands:
        if each_spec.name in _SHARD_PUBSUB:
            shard_pubsub = True
        try:
            positions = _key_positions(each_spec, each_argv)
        except Exception:  # malformed: the command's own parsing answers
            continue
        for position in positions:
            key = each_argv[position]
            this_slot = key_slot(key)
            if first_key is None:
                first_key, slot = key, this_slot
                owner = cluster.slots[slot]
                if owner is None:
                    return errors.CLUSTER_DOWN_UNBOUND, slot
                if owner is myself and slot in cluster.migrating:
                    migrating = True
                elif slot in cluster.importing:
                    importing = True
            elif this_slot != slot:
                return errors.CLUSTER_CROSSSLOT, slot
            elif key != first_key:
                multiple_keys = True
            if (migrating or importing) and not shard_pubsub:
                if _present(state, key):
                    existing += 1
                else:
                    missing += 1
    if owner is None:
        return None, -1
    if owner is myself and not (migrating or importing) and cluster.ok:
        return None, slot
    write = spec.is_write or (spec.name == "exec" and any(s.is_write for s, _ in commands))
    if not cluster.ok:
        values = state.config.values
        if shard_pubsub:
            if not values["cluster-allow-pubsubshard-when-down"]:
                return errors.CLUSTER_DOWN, slot
        elif not values["cluster-allow-reads-when-down"]:
            return errors.CLUSTER_DOWN, slot
        elif write:
            return errors.CLUSTER_DOWN_READONLY, slot
    if (migrating or importing) and spec.name == "migrate":
        return None, slot
    if migrating and missing:
        if existing:
            return errors.CLUSTER_TRYAGAIN, slot
        target = cluster.migrating[slot]
        endpoint = _preferred_endpoint(state, target) or ""
        return errors.CLUSTER_ASK.format(slot, endpoint, target.port), slot
    if importing and (client.cluster_asking or "asking" in spec.flags):
        if multiple_keys and missing:
            return errors.CLUSTER_TRYAGAIN, slot
        return None, slot
    if (client.cluster_readonly or shard_pubsub) and not write and myself.is_replica \
            and myself.master is owner:
        return None, slot
    if owner is not myself:
        endpoint = _preferred_endpoint(state, owner) or ""
        return errors.CLUSTER_MOVED.format(slot, endpoint, owner.port), slot
    return None, slot


def _present(state: ServerState, key: bytes) -> bool:
    """In db 0 and not expired, without expiring it (Redis's LOOKUP_NOEXPIRE)."""
    db = state.keyspace[0]
    deadline = db.expires.get(key)
    return key in db.data and (deadline is None or deadline > state.clock.now_ms())


def _key_positions(spec: CommandSpec, argv: list[bytes]) -> Iterable[int]:
    """Where the command's keys are (CommandSpec.keys_with_flags without the flags,
    which the gate does not need and which cost more than the rest of it)."""
    if spec.find_keys is not None:
        return [position for position, _flags in spec.find_keys(argv)]
    argc = len(argv)
    return [position for position in spec.key_indexes(argc) if position < argc]


# --- cluster-enabled yes: the node table at start ---------------------------------------------
def enable(state: ServerState) -> ClusterState:
    """Build this node's ClusterState from the configuration and nodes.conf (created if
    missing), as Redis's clusterInit; the server calls it before loading data."""
    config = state.config
    port = config["cluster-announce-port"] or config["port"]
    cport = config["cluster-announce-bus-port"] or config["cluster-port"] or \
        config["port"] + PORT_INCR
    path = os.path.join(str(config["dir"]), str(config["cluster-config-file"]))
    cluster = ClusterState(state.clock, path, port=port, cport=cport,
                           tls_port=config["cluster-announce-tls-port"] or config["tls-port"],
                           node_timeout_ms=config["cluster-node-timeout"])
    if not cluster.load():
        log.info("No cluster configuration found, I'm %s", cluster.myself.name)
        cluster.save()
    _follow_config(state, cluster)
    state.enable_cluster(cluster)
    cluster.on_set_master = functools.partial(_replicate_from, state)
    cluster.on_slots_deleted = functools.partial(_drop_shard_channels, state)
    return cluster


def attach_bus(state: ServerState) -> ClusterBus:
    """The cluster bus for `state`'s node table, fed by the server's replication,
    pub/sub and pauses."""
    from rillet.cluster.bus import ClusterBus

    cluster = state.cluster

    def offset() -> int:
        replication = state.replication
        return replication.master_repl_offset if replication is not None else 0

    def deliver(channel: bytes, message: bytes, shard: bool) -> None:
        state.pubsub.publish(channel, message, shard=shard)

    def data_age_ms() -> int:
        link = state.replication.link if state.replication is not None else None
        if link is None or link.up:
            return 0
        return int((time.monotonic() - link.down_since) * 1000)

    def promote() -> None:
        if cluster.on_set_master is not None:
            cluster.on_set_master(None, 0)

    def pause(ms: int) -> None:
        if ms:
            state.pause(state.clock.now_ms() + ms, False, PAUSE_BY_MANUAL_FAILOVER)
        else:
            state.unpause(PAUSE_BY_MANUAL_FAILOVER)  # a user's CLIENT PAUSE stays

    def replicating() -> bool:
        return state.replication is None or state.replication.master_host is not None

    return ClusterBus(cluster, state.config, offset=offset, deliver=deliver,
                      data_age_ms=data_age_ms, promote=promote, pause=pause,
                      replicating=replicating)


def _drop_shard_channels(state: ServerState, slots: set[int]) -> None:
    """Slots left this node's table: their shard channels' subscribers are unsubscribed."""
    pubsub = state.pubsub
    for channel in [channel for channel in pubsub.shard if key_slot(channel) in slots]:
        pubsub.drop_shard_channel(channel)


def _follow_config(state: ServerState, cluster: ClusterState) -> None:
    config = state.config
    myself = cluster.myself

    def settings(_value: object = None) -> None:
        cluster.node_timeout_ms = config["cluster-node-timeout"]
        cluster.require_full_coverage = config["cluster-require-full-coverage"]

    def announced(field: str, name: str) -> None:
        def changed(value: object) -> None:
            # A cleared cluster-announce-ip leaves the address to be learnt again (Redis's
            # clusterUpdateMyselfIp); what the node announces is in its nodes.conf line.
            setattr(cluster.myself, field, value)
            _save(cluster)
        config.watch(name, changed)

    settings()
    config.watch("cluster-node-timeout", settings)
    config.watch("cluster-require-full-coverage", settings)
    announced("ip", "cluster-announce-ip")
    announced("hostname", "cluster-announce-hostname")
    announced("human_nodename", "cluster-announce-human-nodename")
    # At start, the address nodes.conf has stays unless one is announced.
    if config["cluster-announce-ip"]:
        myself.ip = config["cluster-announce-ip"]
    myself.hostname = config["cluster-announce-hostname"]
    myself.human_nodename = config["cluster-announce-human-nodename"]


def _replicate_from(state: ServerState, host: str | None, port: int) -> None:
    """CLUSTER REPLICATE / RESET: replication follows (Redis's replicationSetMaster)."""
    replication = state.replication
    if replication is not None:
        replication.replicaof(host, port, cause="cluster")
