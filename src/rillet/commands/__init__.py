"""The command table and one module per command family.

Importing this package registers every command in `table.TABLE`.
"""

from rillet.commands import (  # noqa: F401  (imported for their registrations)
    acl,
    arrays,
    bitmaps,
    cluster,
    connection,
    diagnostics,
    dump,
    functions,
    geo,
    groups,
    hashes,
    hotkeys,
    hyperloglog,
    introspection,
    keyfinders,
    keys,
    lists,
    migrate,
    modules,
    persistence,
    policies,
    pubsub,
    replication,
    scripting,
    server,
    sets,
    sort,
    streams,
    string_family,
    strings,
    tracking,
    transactions,
    vectorsets,
    zsets,
)

# Every family has registered its commands: the movable-key finders join their specs.
keyfinders.install()
