"""Import a client library for a test, or skip it when the library is not installed.

`./dev test` installs every library these tests use (the `test` extra, and
.venv-libs for the ones that pin an old redis-py) and sets RILLET_LIBS_REQUIRED=1:
there a missing library fails the test instead of skipping it, so CI cannot
pass by silently running none of them.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def require(module: str) -> ModuleType:
    if os.environ.get("RILLET_LIBS_REQUIRED") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module)
