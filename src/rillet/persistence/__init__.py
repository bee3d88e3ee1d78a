"""Persistence: append-only file, snapshots, rewrite and recovery.

`attach(server)` wires persistence into a server according to its config:
effects flow to the AOF (aof.py) and replies wait for it (Server.flush_held),
snapshots and rewrites run in forked children (fork.py), the dataset loads at
start while clients get -LOADING (loader.py). File formats: rdb.py (Redis's
RDB: dbfilename, the AOF base, DUMP/RESTORE; primitives in rdb_format.py, the
stream codec in rdb_stream.py), aoflog.py (RESP incr files and the manifest);
valuetypes.py holds each type's digest and command form (DEBUG DIGEST, the
command-form rewrite). Each value type registers its codecs on importing this
package, so every user of rdb.py sees every type.
"""

from __future__ import annotations

from typing import Any

from rillet.persistence import (  # noqa: F401  (register their codecs)
    containers,
    rdb_arrays,
    rdb_containers,
    rdb_stream,
    rdb_vectorset,
    streams,
)


def attach(server: Any) -> Any:
    """Create the server's `Persistence`, install its hooks, and schedule loading."""
    from rillet.persistence.manager import Persistence

    persistence = Persistence(server.state, server.dispatcher, server)
    persistence.install()
    return persistence
