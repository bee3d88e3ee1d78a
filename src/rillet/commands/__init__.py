"""The command table and one module per command family.

Importing this package registers every command in `table.TABLE`.
"""

from rillet.commands import (  # noqa: F401  (imported for their registrations)
    acl,
    connection,
    dump,
    functions,
    groups,
    hashes,
    introspection,
    keyfinders,
    keys,
    lists,
    persistence,
    pubsub,
    replication,
    scripting,
    server,
    sets,
    streams,
    string_family,
    strings,
    tracking,
    transactions,
    zsets,
)

# Every family has registered its commands: the movable-key finders join their specs.
keyfinders.install()
