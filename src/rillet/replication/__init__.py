"""Replication: master and replica roles speaking Redis's replication protocol.

The replication stream is the effects stream: `Replication`'s effect sink
gathers every write's effects, and at the end of each read batch (as clients'
replies) they are encoded once as RESP (SELECT when the db changes) into the
backlog (backlog.py) and written once to each online replica. A replica's link
(replica.py) applies its master's stream through the dispatcher as an
internal client, and forwards the exact bytes to its own replicas, so offsets
agree along a chain (PSYNC2). Full syncs ship a snapshot made in a forked
child (payload.py is the one place that knows the snapshot format).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rillet.replication.core import Host, Replication
    from rillet.state import ServerState


def attach(server: Host) -> Replication:
    """Create the server's `Replication` and install its hooks (sink, INFO, cron, startup)."""
    from rillet.replication.core import Replication

    replication = Replication(server)
    replication.install()
    return replication


def of(state: ServerState) -> Replication | None:
    """The server's `Replication`, or None (a bare `ServerState` in unit tests)."""
    return state.replication
