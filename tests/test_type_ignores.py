"""`# type: ignore` stays rare and specific: mypy runs in ./dev test (pyproject.toml's
[tool.mypy], warn_unused_ignores on), and what it is told to skip names the error code."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import rillet

ROOT = Path(rillet.__file__).resolve().parent
_IGNORE = re.compile(r"#\s*type:\s*ignore(\[[a-z-]+(?:,\s*[a-z-]+)*\])?")
LIMIT = 60


def _ignores() -> list[tuple[str, str | None]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in _IGNORE.finditer(line):
                found.append((f"{path.relative_to(ROOT)}:{no}", match.group(1)))
    return found


def test_type_ignores_are_few():
    assert len(_ignores()) <= LIMIT


def test_each_type_ignore_names_its_error_code():
    assert [where for where, codes in _ignores() if codes is None] == []


def test_every_compiled_module_is_opaque_to_mypy():
    # A module mypy cannot find fails the check where it is imported: each .pyx is
    # listed in pyproject.toml's override.
    config = tomllib.loads((ROOT.parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    listed = next(set(o["module"]) for o in config["tool"]["mypy"]["overrides"]
                  if "rillet.resp._multibulk" in o["module"])
    built = {".".join(p.relative_to(ROOT.parent).with_suffix("").parts)
             for p in ROOT.rglob("*.pyx")}
    assert built - listed == set()
