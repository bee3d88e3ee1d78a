"""The import rules of docs/architecture.md, checked on the source.

- engine/ imports nothing of rillet above it (no resp, commands, server,
  persistence, dispatch, state, asyncio);
- persistence/ never imports commands/;
- resp/ imports only itself (and errors);
- console/ reads state only: no server, dispatch, persistence, replication, asyncio;
- no import cycles between rillet's modules, other than through imports
  guarded by `if TYPE_CHECKING:`.
Imports inside functions count: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rillet

ROOT = Path(rillet.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level) for every import outside TYPE_CHECKING blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, top) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found.append((base, top))
                # `from rillet.x import y` may name a submodule y.
                found.extend((f"{base}.{alias.name}", top) for alias in child.names)
            inner_top = top and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner_top)

    visit(tree, True)
    return found


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _rillet_imports(modules: dict[str, Path], name: str, top_only: bool = False) -> set[str]:
    out = set()
    for target, top in _imports(modules[name]):
        if top_only and not top:
            continue
        if target in modules and target != name:
            out.add(target)
    return out


def _violations(prefix: str, forbidden: tuple[str, ...], allowed_stdlib_ban: tuple[str, ...] = ()):
    modules = _sources()
    bad = []
    for name, path in modules.items():
        if not (name == prefix or name.startswith(prefix + ".")):
            continue
        for target, _top in _imports(path):
            if target.startswith(forbidden) or target.split(".")[0] in allowed_stdlib_ban:
                bad.append(f"{name} imports {target}")
    return sorted(set(bad))


def test_engine_imports_nothing_above_it():
    assert _violations("rillet.engine", (
        "rillet.resp", "rillet.commands", "rillet.server", "rillet.persistence",
        "rillet.dispatch", "rillet.state", "rillet.replication", "rillet.spark",
    ), ("asyncio",)) == []


def test_persistence_never_imports_commands():
    assert _violations("rillet.persistence", ("rillet.commands",)) == []


def test_replication_never_imports_commands_or_server():
    # The server and its dispatcher reach replication through the objects they pass it.
    assert _violations("rillet.replication", ("rillet.commands", "rillet.server",
                                              "rillet.dispatch")) == []


def test_console_only_reads_state():
    # The console renders what it reads; sockets and timers are server/http.py's.
    assert _violations("rillet.console", ("rillet.server", "rillet.dispatch",
                                          "rillet.persistence", "rillet.replication"),
                       ("asyncio", "socket")) == []


def test_resp_imports_only_itself():
    assert _violations("rillet.resp", (
        "rillet.engine", "rillet.commands", "rillet.server", "rillet.persistence",
        "rillet.dispatch", "rillet.state",
    )) == []


def test_no_import_cycles():
    modules = _sources()
    graph = {name: _rillet_imports(modules, name, top_only=True) for name in modules}
    cycles = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            # A package's __init__ importing its own submodules is not a cycle of layers.
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                walk(nxt, stack)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [])
    assert cycles == []
