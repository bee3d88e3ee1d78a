"""The classes compiled in Cython's pure mode declare every slot in their .pxd.

An `X.py` with an `X.pxd` beside it is compiled as it is (setup.py); the .pxd
declares the fields of its extension types. A slot added to the .py's `__slots__`
and not to the .pxd works interpreted (RILLET_PURE) but raises AttributeError in the
compiled build the first time it is set: this test names it instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
_FIELD = re.compile(r"^\s+cdef (?:public |readonly )?[\w.\[\]]+(?: [\w.\[\]]+)* ([\w\s,]+)$")


def _pure_mode_sources() -> list[Path]:
    return sorted(pxd for pxd in SRC.rglob("*.pxd")
                  if pxd.with_suffix(".py").exists() and not pxd.with_suffix(".pyx").exists())


def _declared(pxd: Path) -> dict[str, set[str]]:
    """Per `cdef class`, the names of the fields it declares."""
    fields: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in pxd.read_text().splitlines():
        line = line.split("#")[0].rstrip()
        header = re.match(r"^cdef class (\w+)", line)
        if header:
            current = fields.setdefault(header.group(1), set())
        elif line and not line[0].isspace():
            current = None
        elif current is not None and "(" not in line:
            match = _FIELD.match(line)
            if match:
                current.update(name.strip() for name in match.group(1).split(","))
    return fields


def _slots(py: Path) -> dict[str, set[str]]:
    """Per class of the module, the names in its literal `__slots__`."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(py.read_text())):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets)
                        and isinstance(item.value, (ast.Tuple, ast.List))):
                    found[node.name] = {e.value for e in item.value.elts
                                        if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return found


def test_there_are_pure_mode_modules() -> None:
    assert _pure_mode_sources()


def test_every_slot_of_a_compiled_class_is_declared() -> None:
    missing = []
    for pxd in _pure_mode_sources():
        slots = _slots(pxd.with_suffix(".py"))
        for name, declared in _declared(pxd).items():
            for slot in sorted(slots.get(name, set()) - declared - {"__dict__", "__weakref__"}):
                missing.append(f"{pxd.relative_to(SRC)}: {name}.{slot}")
    assert not missing, "slots the .pxd does not declare: " + ", ".join(missing)
