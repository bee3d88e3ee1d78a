"""Persistence: append-only file, snapshots, rewrite and recovery.

`attach(server)` wires persistence into a server according to its config:
effects flow to the AOF (aof.py) and replies wait for it (Server.flush_held),
snapshots and rewrites run in forked children (fork.py), the dataset loads at
start while clients get -LOADING (loader.py). File formats: snapshot.py (the
snapshot / AOF base), aoflog.py (RESP incr files and the manifest); value
types register their codecs in snapshot.py (strings) and streams.py.
"""

from __future__ import annotations

from typing import Any


def attach(server: Any) -> Any:
    """Create the server's `Persistence`, install its hooks, and schedule loading."""
    from rillet.persistence import containers, streams  # noqa: F401  (register the value codecs)
    from rillet.persistence.manager import Persistence

    persistence = Persistence(server.state, server.dispatcher, server)
    persistence.install()
    return persistence
