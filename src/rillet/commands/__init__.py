"""The command table and one module per command family.

Importing this package registers every command in `table.TABLE`.
"""

from rillet.commands import (  # noqa: F401  (imported for their registrations)  # noqa: F401,E402,I001
    connection,
    functions,
    groups,
    introspection,
    keys,
    persistence,
    pubsub,  # noqa: F401,E402,I001
    scripting,
    server,
    streams,
    strings,
    transactions,
)
