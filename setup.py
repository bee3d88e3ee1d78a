"""Builds the optional compiled hot path; everything else is in pyproject.toml.

The modules in MODULES are Cython byte kernels and compiled forms of hot Python
functions, which the pure-Python code uses when they import (the Python originals
stay the reference). Beside them, every `.py` with a `.pxd` next to it is compiled
as it is (pure_mode_modules). RILLET_PURE=1 ignores all compiled modules. If Cython or a C compiler is missing,
or the build fails, the install goes on without them and rillet runs as pure
Python (slower, same behaviour).
"""

import glob
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

MODULES = {
    "rillet._slots": "src/rillet/_slots.pyx",
    "rillet.resp._multibulk": "src/rillet/resp/_multibulk.pyx",
    "rillet.resp._fpconv": "src/rillet/resp/_fpconv.pyx",
    "rillet.resp._encoder": "src/rillet/resp/_encoder.pyx",
    "rillet.resp._stream_entries": "src/rillet/resp/_stream_entries.pyx",
    "rillet.server._fastpath": "src/rillet/server/_fastpath.pyx",
    "rillet.persistence._aofenc": "src/rillet/persistence/_aofenc.pyx",
    "rillet.persistence._rdbfast": "src/rillet/persistence/_rdbfast.pyx",
    "rillet._glob": "src/rillet/_glob.pyx",
    "rillet.engine._hll": "src/rillet/engine/_hll.pyx",
    "rillet.engine._geo": "src/rillet/engine/_geo.pyx",
    "rillet.commands._writes": "src/rillet/commands/_writes.pyx",
    "rillet.commands._groups": "src/rillet/commands/_groups.pyx",
    "rillet.commands._claims": "src/rillet/commands/_claims.pyx",
    "rillet.commands._lists": "src/rillet/commands/_lists.pyx",
    "rillet.commands._hashes": "src/rillet/commands/_hashes.pyx",
    "rillet.commands._sets": "src/rillet/commands/_sets.pyx",
    "rillet.engine._pelindex": "src/rillet/engine/_pelindex.pyx",
    "rillet.engine._zorder": "src/rillet/engine/_zorder.pyx",
    "rillet.commands._zsets": "src/rillet/commands/_zsets.pyx",
    "rillet.engine._listchunks": "src/rillet/engine/_listchunks.pyx",
    "rillet.spark._xrange_columns": "src/rillet/spark/_xrange_columns.pyx",
    "rillet.scripting._calls": "src/rillet/scripting/_calls.pyx",
    "rillet.engine._vdist": "src/rillet/engine/_vdist.pyx",
}


def pure_mode_modules():
    """Python modules compiled as they are (Cython's pure-Python mode): every `X.py` with an
    `X.pxd` beside it, which declares the typed fields and C functions. The `.py` is the
    one source; RILLET_PURE=1 runs it interpreted (rillet/compiled.py's import hook)."""
    found = {}
    for pxd in sorted(glob.glob("src/rillet/**/*.pxd", recursive=True)):
        py = pxd[:-len(".pxd")] + ".py"
        if os.path.exists(py) and not os.path.exists(pxd[:-len(".pxd")] + ".pyx"):
            found[py[len("src/"):-len(".py")].replace("/", ".")] = py
    return found


# Cython must not trust annotations in pure-mode modules (`list[int]` would become an
# exact-type check at each call): their C types live only in the .pxd.
PURE_MODE_DIRECTIVES = {"annotation_typing": False}

# Per-module C flags. _vdist must round every float step as the Python emulation does:
# no FMA contraction (a*b+c rounded once) and never -ffast-math.
COMPILE_ARGS = {
    "rillet.engine._vdist": ["-ffp-contract=off", "-fno-fast-math"],
}


class OptionalBuildExt(build_ext):
    """build_ext that warns instead of failing: the extensions only make rillet faster."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # no compiler, missing headers...
            self._skip(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            self._skip(error, ext.name)

    def _skip(self, error, name="the compiled hot path"):
        print(f"warning: not building {name} ({error}); rillet runs as pure Python",
              file=sys.stderr)


def extensions():
    if os.environ.get("RILLET_PURE") or sys.platform == "win32":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not installed; rillet runs as pure Python", file=sys.stderr)
        return []
    from setuptools import Extension

    modules = [Extension(name, [path], extra_compile_args=COMPILE_ARGS.get(name, []))
               for name, path in MODULES.items()]
    pure = [Extension(name, [path]) for name, path in pure_mode_modules().items()]
    return (cythonize(modules, language_level=3, quiet=True)
            + (cythonize(pure, language_level=3, quiet=True,
                         compiler_directives=PURE_MODE_DIRECTIVES) if pure else []))


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
