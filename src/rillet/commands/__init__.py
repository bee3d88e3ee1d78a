"""The command table and one module per command family.

Importing this package registers every command in `table.TABLE`.
"""

from rillet.commands import (  # noqa: F401  (imported for their registrations)  # noqa: F401,E402,I001
    acl,
    connection,
    dump,
    functions,
    groups,
    hashes,
    keyfinders,  # noqa: E402
    keys,
    lists,
    persistence,  # noqa: F401,E402,I001
    pubsub,
    replication,
    scripting,
    server,
    sets,
    streams,
    string_family,
    strings,
    transactions,
    zsets,
)

keyfinders.install()
