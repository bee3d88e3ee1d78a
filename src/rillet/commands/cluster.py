"""CLUSTER, ASKING, READONLY, READWRITE: what a Redis with cluster support disabled answers.

rillet is a standalone server (`cluster-enabled no`, as Redis by default). Redis
8.2.3 answers every CLUSTER subcommand there, CLUSTER HELP and KEYSLOT included,
with "This instance has cluster support disabled" after the usual arity check
(clusterCommand's first test), and so do ASKING, READONLY and READWRITE. The
specs below are Redis's (COMMAND INFO/DOCS), so clients that read them see
Redis's shapes.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.table import command, container_docs
from rillet.errors import ReplyError
from rillet.state import Client

_ADMIN = "admin slow dangerous"


def _disabled(ctx: Client, argv: list[bytes]) -> object:
    raise ReplyError(errors.CLUSTER_DISABLED)


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


def _register_subcommands() -> None:
    for name, arity, flags, since, acl, syntax, complexity, summary in _SUBCOMMANDS:
        def handler(ctx: Client, argv: list[bytes]) -> object:
            return _disabled(ctx, argv)

        handler.__doc__ = f"{syntax}\n\n{summary}"
        command(f"cluster|{name}", arity, flags, group="cluster", since=since, acl=acl,
                complexity=complexity, summary=summary)(handler)


_register_subcommands()


@command("asking", 1, "fast", group="cluster", since="3.0.0", acl="fast connection",
         complexity="O(1)", summary="Signals that a cluster client is following an -ASK redirect.")
def asking(ctx: Client, argv: list[bytes]) -> object:
    """ASKING"""
    raise ReplyError(errors.CLUSTER_DISABLED)


@command("readonly", 1, "loading stale fast", group="cluster", since="3.0.0",
         acl="fast connection", complexity="O(1)",
         summary="Enables read-only queries for a connection to a Redis Cluster replica node.")
def readonly(ctx: Client, argv: list[bytes]) -> object:
    """READONLY"""
    raise ReplyError(errors.CLUSTER_DISABLED)


@command("readwrite", 1, "loading stale fast", group="cluster", since="3.0.0",
         acl="fast connection", complexity="O(1)",
         summary="Enables read-write queries for a connection to a Reids Cluster replica node.")
def readwrite(ctx: Client, argv: list[bytes]) -> object:
    """READWRITE"""
    raise ReplyError(errors.CLUSTER_DISABLED)


container_docs("cluster", "3.0.0", "A container for Redis Cluster commands.", "cluster")
