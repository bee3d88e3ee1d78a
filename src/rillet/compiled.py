"""Which compiled modules run: the one switch between the compiled and the pure path.

Each compiled module (a .pyx) has its Python original beside it, or is held to
one by a test. Without the build, or with RILLET_PURE set in the environment
(read here and nowhere else), the Python runs.

Every module that can use a compiled form asks `compiled(name)` once, at import,
and uses the module it returns or, for None, its Python original. The Python
originals a compiled form replaces stay reachable under a `py_` name (`Py` for
classes, `python_` in resp/) as the reference; nothing chooses through them.
Where a compiled command body answers only the common case, its module's
`bind*(...)` hands it the Python bodies for the rest: wiring, done right after
`compiled()` said yes, beside the line that puts the compiled body in the
command table.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

# The pure path: set for the whole process at start (tests and `./dev` set it in the
# environment of the servers they launch).
PURE = bool(os.environ.get("RILLET_PURE"))


def compiled(name: str) -> ModuleType | None:
    """The compiled module `name`, or None: PURE, or it was not built."""
    if PURE:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
