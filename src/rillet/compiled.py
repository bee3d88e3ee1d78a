"""Which compiled modules run: every one is optional, in one place.

Each compiled module (a .pyx) has its Python original beside it, or is held to
one by a test. Without the build, or with RILLET_PURE set in the environment,
the Python runs.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def compiled(name: str) -> ModuleType | None:
    """The compiled module `name`, or None: RILLET_PURE is set, or it was not built."""
    if os.environ.get("RILLET_PURE"):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
