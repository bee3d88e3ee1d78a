"""A writable replica's own TTLs (Redis's slaveKeysWithExpire and expireSlaveKeys).

A replica leaves expiry to its master's DELs (engine/keyspace.py's expire_mode),
but no DEL will come for a TTL the replica's own clients set (replica-read-only
no): such keys are remembered as they get it (Database.on_set_expire) and the
replica expires them itself, a batch every cron tick. TTLs that come with the
master's stream, a snapshot or a full sync are not remembered. As in Redis, a
key is remembered by name with the databases it was set in, forgotten when it
is gone or has no TTL left, and the whole list is dropped by a full sync.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rillet.engine.keyspace import Database
    from rillet.state import ServerState

_BATCH = 1000  # keys looked at per cron tick


class OwnExpiries:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        # key -> bitmap of the databases where a client of ours gave it a TTL;
        # looked at from the front, put back at the end while not yet due.
        self.keys: OrderedDict[bytes, int] = OrderedDict()

    def arm(self, on: bool) -> None:
        """Remember TTLs set from now on (a writable replica), or stop remembering."""
        hook = self.remember if on else None
        for db in self.state.keyspace.dbs:
            db.on_set_expire = hook

    def remember(self, db: Database, key: bytes) -> None:
        if self.state.loading:
            return  # (an AOF replayed at start: the master's history, as a snapshot's)
        self.keys[key] = self.keys.get(key, 0) | (1 << db.index)

    def cron(self) -> None:
        keys = self.keys
        # DEBUG SET-ACTIVE-EXPIRE 0 stops it, as Redis's databasesCron; a CLIENT PAUSE
        # does not (Redis's expireSlaveKeys does not look at the pause).
        if not keys or not self.state.active_expire_enabled:
            return
        dbs = self.state.keyspace.dbs
        for _ in range(min(len(keys), _BATCH)):
            key, bits = keys.popitem(last=False)
            left = 0
            index = 0
            while bits >> index:
                if bits >> index & 1:
                    db = dbs[index]
                    if key in db.expires and not db.expire_due(key):
                        left |= 1 << index
                index += 1
            if left:
                keys[key] = left

    def clear(self) -> None:
        self.keys.clear()
