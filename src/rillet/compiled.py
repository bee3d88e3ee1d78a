"""Which compiled modules run: the one switch between the compiled and the pure path.

Each compiled module (a .pyx) has its Python original beside it, or is held to
one by a test. Without the build, or with RILLET_PURE set in the environment
(read here and nowhere else), the Python runs.

Every module that can use a compiled form asks `compiled(name)` once, at import,
and uses the module it returns or, for None, its Python original. The Python
originals a compiled form replaces stay reachable under a `py_` name (`Py` for
classes, `python_` in resp/) as the reference; nothing chooses through them.
Modules compiled in Cython's pure mode are the exception: `X.py` with an `X.pxd`
beside it is compiled as it is (setup.py), so the Python is the code that runs; the
import system picks its form (PureModeFinder below), and nothing else chooses.
Where a compiled command body answers only the common case, its module's
`bind*(...)` hands it the Python bodies for the rest: wiring, done right after
`compiled()` said yes, beside the line that puts the compiled body in the
command table.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

# The pure path: set for the whole process at start (tests and `./dev` set it in the
# environment of the servers they launch).
PURE = bool(os.environ.get("RILLET_PURE"))

# A source checkout (not an installed wheel, whose files' times say nothing).
_CHECKOUT = os.path.exists(os.path.join(os.path.dirname(__file__), "..", "..", ".git"))


class StaleBuild(ImportError):
    """A pure-mode module's .py or .pxd is newer than its compiled form."""


class PureModeFinder:
    """Chooses for the modules compiled in Cython's pure mode (an `X.py` with an `X.pxd`
    beside it; setup.py compiles it to an extension of the same name, which the import
    system would otherwise always prefer): the `.py` under RILLET_PURE, else the
    compiled form, refusing one older than its sources in a checkout (it would run
    yesterday's code). A meta path finder by its find_spec alone: importlib.abc would
    cost the server's start ~30 ms of imports."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if path is None or not fullname.startswith("rillet."):
            return None
        name = fullname.rpartition(".")[2]
        for entry in path:
            source = os.path.join(entry, name + ".py")
            declarations = os.path.join(entry, name + ".pxd")
            if not (os.path.exists(source) and os.path.exists(declarations)):
                continue
            if PURE:
                return importlib.util.spec_from_file_location(fullname, source)
            if _CHECKOUT:
                _refuse_stale(entry, name, (source, declarations))
            return None
        return None


def _refuse_stale(entry: str, name: str, sources: tuple[str, ...]) -> None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        built = os.path.join(entry, name + suffix)
        if os.path.exists(built):
            newest = max(os.path.getmtime(path) for path in sources)
            if newest > os.path.getmtime(built):
                raise StaleBuild(f"{built} is older than its sources; rebuild it "
                                 "(./dev setup, or setup.py build_ext --inplace) or run with RILLET_PURE=1")
            return


if not any(isinstance(finder, PureModeFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, PureModeFinder())


def compiled(name: str) -> ModuleType | None:
    """The compiled module `name`, or None: PURE, or it was not built."""
    if PURE:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def as_slots(*classes: type) -> None:
    """For classes compiled in pure mode (extension types): their object fields read
    from interpreted code as fast as `__slots__` ones (rillet/_slots.pyx says why).
    Called by the defining module after the classes; nothing to do for classes
    defined in Python (RILLET_PURE, or not built)."""
    slots = compiled("rillet._slots")
    if slots is not None:
        for cls in classes:
            slots.as_slots(cls)
