"""The command table and one module per command family.

Importing this package registers every command in `table.TABLE`.
"""

from rillet.commands import (  # noqa: F401  (imported for their registrations)
    connection,
    keys,
    server,
    strings,
    transactions,
)
from rillet.commands import streams, groups  # noqa: F401,E402,I001
