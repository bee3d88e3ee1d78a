"""The import rules of docs/architecture.md, checked on the source.

- The layers, top to bottom, are LAYERS: a module imports only modules of its own
  layer or of the layers below it;
- in particular engine/ imports nothing of rillet above it, and no asyncio;
  persistence/ never imports commands/; replication/ never imports commands/,
  server/ or dispatch; resp/ imports only itself and the leaves;
- no import cycles between rillet's modules at import time: a lazy import (in a
  function) or one guarded by `if TYPE_CHECKING:` may close a loop;
- console/ reads state only: no server, dispatch, persistence, replication, asyncio;
- Python modules get a compiled module only from `rillet.compiled.compiled()`.

Every import counts for the layer rules: at module level or inside a function
(a lazy import is still a dependency), in `.py` files and in the Cython sources
(`.pyx`, `.pxd`, `.pxi`: `cimport`, `from ... cimport`, `import`), and a
module named to `rillet.compiled.compiled("...")`. ALLOWED lists the exceptions.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

import rillet

ROOT = Path(rillet.__file__).resolve().parent
CYTHON = (".pyx", ".pxd", ".pxi")

# Top to bottom; a prefix names a module and its submodules. Every module is in one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("rillet.cli", "rillet.__main__", "rillet.spark", "rillet.pipelines", "rillet.bench",
     "rillet.launch", "rillet.client"),
    ("rillet.server",),
    # The web console renders what it reads of the state; server/http.py serves it.
    ("rillet.console",),
    ("rillet.dispatch",),
    # Beside each other: EVAL is a command, and redis.call runs commands.
    ("rillet.commands", "rillet.scripting"),
    # Below commands: DUMP/RESTORE/MIGRATE use the RDB format, SAVE and REPLICAOF
    # drive these; they see commands only as effects (argument lists). CLUSTER's
    # commands and the dispatcher's gate drive the cluster's node table.
    ("rillet.persistence", "rillet.replication", "rillet.cluster"),
    ("rillet.state", "rillet.memory"),
    ("rillet.pubsub", "rillet.notify", "rillet.observe", "rillet.tracking", "rillet.acl",
     "rillet.config", "rillet.hotkeys"),
    ("rillet.engine",),
    ("rillet.resp",),
    # The leaves, used by all.
    ("rillet", "rillet.clock", "rillet.errors", "rillet.glob", "rillet._glob", "rillet.compiled",
     "rillet.serverlog",
     "rillet.gcpolicy", "rillet.cpuaffinity", "rillet._systime", "rillet._columns", "rillet._slots"),
)

# Imports the rules would refuse that stay for now, each with why: (importer, imported
# module or package).
ALLOWED: dict[tuple[str, str], str] = {
    # LuaEngine looks commands up and asks the ACL check (commands/table.py, acl.py);
    # importing any of commands/ runs its __init__, which imports every family, and
    # commands/scripting.py and functions.py import LuaEngine, lazily (the first script
    # does): no cycle at import time.
    ("rillet.scripting.engine", "rillet.commands"): "the table and the ACL check",
    # The compiled twins read their Python original's tables (the powers of ten, the
    # writers) while the original imports them through compiled() at its end: an
    # import-time cycle that works because the tables exist by then. They go when
    # the byte kernels' references move under tests/ (issue 27).
    ("rillet.resp._fpconv", "rillet.resp.fpconv"): "reads fpconv's tables",
    ("rillet.resp._encoder", "rillet.resp.encoder"): "reads the writers, installs encode_into",
    # A reply a subscriber's command parks (Block) keeps its own frames for later;
    # lazy, as state.py imports pubsub.py.
    ("rillet.pubsub", "rillet.state"): "PubSub.leave tells a Block apart",
}


def _allowed(name: str, target: str) -> bool:
    return any(name == importer and (target == imported or target.startswith(imported + "."))
               for importer, imported in ALLOWED)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package(path: Path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _absolute(package: str, level: int, module: str) -> str:
    """`from <level dots><module> import ...` inside `package`, as an absolute name."""
    if not level:
        return module
    anchor = package.split(".")
    anchor = anchor[: len(anchor) - level + 1]
    return ".".join([*anchor, module] if module else anchor)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _compiled_name(node: ast.Call) -> str | None:
    """The module a `compiled("rillet....")` call names, if this is one."""
    func = node.func
    named = (isinstance(func, ast.Name) and func.id == "compiled") or (
        isinstance(func, ast.Attribute) and func.attr == "compiled")
    if named and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _python_imports(path: Path, via_compiled: bool = True) -> list[tuple[str, bool]]:
    """(imported module, at import time) for every import outside TYPE_CHECKING blocks,
    and every module named to compiled() unless `via_compiled` is False."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _package(path)
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, top) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(package, child.level, child.module or "")
                found.append((base, top))
                # `from rillet.x import y` may name a submodule y.
                found.extend((f"{base}.{alias.name}", top) for alias in child.names)
            elif via_compiled and isinstance(child, ast.Call) and (name := _compiled_name(child)):
                found.append((name, top))
            inner_top = top and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner_top)

    visit(tree, True)
    return found


def _cython_statements(text: str) -> Iterator[tuple[bool, list[str]]]:
    """(inside a function, tokens) of each logical line of a Cython source, without
    strings and comments. Python's tokenizer reads Cython's lines well enough for this."""
    depth = 0
    blocks: list[tuple[int, bool]] = []  # (depth of the header, is a function)
    line: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.INDENT:
            depth += 1
        elif tok.type == tokenize.DEDENT:
            depth -= 1
        elif tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if line:
                while blocks and blocks[-1][0] >= depth:
                    blocks.pop()
                yield any(func for _, func in blocks), line
                if line[-1] == ":":
                    blocks.append((depth, _is_function_header(line)))
            line = []
        elif tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.STRING):
            line.append(tok.string)


def _is_function_header(tokens: list[str]) -> bool:
    if tokens[0] in ("def", "async"):
        return True
    return (tokens[0] in ("cdef", "cpdef") and "(" in tokens
            and not {"class", "extern", "struct", "union", "enum"} & set(tokens[:3]))


def _names(tokens: list[str]) -> list[str]:
    """The dotted names of `a.b as c, d` (parentheses and `as` aliases dropped)."""
    names, current, skip = [], "", False
    for tok in [*tokens, ","]:
        if tok in "()":
            continue
        if tok == ",":
            if current:
                names.append(current)
            current, skip = "", False
        elif tok == "as":
            skip = True
        elif not skip:
            current += tok
    return names


def _cython_imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at import time) for every import and cimport of a Cython source."""
    package = _package(path)
    found: list[tuple[str, bool]] = []
    for in_function, tokens in _cython_statements(path.read_text(encoding="utf-8")):
        top = not in_function
        if tokens[0] in ("import", "cimport"):
            found.extend((name, top) for name in _names(tokens[1:]))
        elif tokens[0] == "from" and ("import" in tokens or "cimport" in tokens):
            keyword = tokens.index("cimport" if "cimport" in tokens else "import")
            source = "".join(tokens[1:keyword])
            module = source.lstrip(".")
            base = _absolute(package, len(source) - len(module), module)
            found.append((base, top))
            found.extend((f"{base}.{name}", top) for name in _names(tokens[keyword + 1:]))
    return found


def _sources() -> dict[str, list[Path]]:
    """Each rillet module's source files (a .pyx and its .pxd are one module)."""
    modules: dict[str, list[Path]] = {}
    for path in sorted(ROOT.rglob("*")):
        if path.suffix == ".py" or path.suffix in CYTHON:
            modules.setdefault(_module_name(path), []).append(path)
    return modules


def _imports(paths: list[Path]) -> list[tuple[str, bool]]:
    return [found for path in paths for found in (
        _python_imports(path) if path.suffix == ".py" else _cython_imports(path))]


def _rillet_imports(modules: dict[str, list[Path]], name: str, top_only: bool = False) -> set[str]:
    out = set()
    for target, top in _imports(modules[name]):
        if top_only and not top:
            continue
        if target in modules and target != name:
            out.add(target)
    return out


def _violations(prefix: str, forbidden: tuple[str, ...], banned_stdlib: tuple[str, ...] = ()):
    bad = []
    for name, paths in _sources().items():
        if not (name == prefix or name.startswith(prefix + ".")):
            continue
        for target, _top in _imports(paths):
            if (target.startswith(forbidden) or target.split(".")[0] in banned_stdlib) \
                    and not _allowed(name, target):
                bad.append(f"{name} imports {target}")
    return sorted(set(bad))


def test_the_reader_sees_lazy_imports_and_cimports():
    # The cases that once passed unseen: a Cython cimport, a lazy import, a compiled() name.
    modules = _sources()
    assert "rillet.engine._pelindex" in _rillet_imports(modules, "rillet.commands._groups")
    assert "rillet.resp._command" in _rillet_imports(modules, "rillet.persistence._aofenc")
    assert "rillet.state" in _rillet_imports(modules, "rillet.pubsub")
    assert "rillet.state" not in _rillet_imports(modules, "rillet.pubsub", top_only=True)
    assert "rillet.commands._writes" in _rillet_imports(modules, "rillet.commands.streams")
    assert _cython_imports(ROOT / "scripting" / "_calls.pyx").count(("lupa", False)) == 1


def _layer(name: str) -> int:
    found = [i for i, prefixes in enumerate(LAYERS) for prefix in prefixes
             if name == prefix or (prefix != "rillet" and name.startswith(prefix + "."))]
    assert found, f"{name} is in no layer of LAYERS"
    return found[0]


def test_layers_import_downwards():
    modules = _sources()
    upward = sorted({f"{name} imports {target}" for name, paths in modules.items()
                     for target, _top in _imports(paths)
                     if target in modules and _layer(target) < _layer(name)
                     and not _allowed(name, target)})
    assert upward == []


def test_every_exception_is_still_needed():
    modules = _sources()
    for name, target in ALLOWED:
        assert any(_allowed(name, imported) for imported in _rillet_imports(modules, name)
                   if imported.startswith(target)), f"{name} no longer imports {target}"


def test_compiled_modules_load_only_through_compiled():
    # rillet/compiled.py is the one switch: Python code asks it for a compiled module
    # and never imports one itself (a compiled module may cimport another).
    modules = _sources()
    built = {name for name, paths in modules.items() if any(p.suffix == ".pyx" for p in paths)}
    direct = sorted({f"{name} imports {target}" for name, paths in modules.items()
                     for path in paths if path.suffix == ".py"
                     for target, _top in _python_imports(path, via_compiled=False)
                     if target in built})
    assert direct == []


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


def test_cluster_state_needs_no_server():
    # The node table is driven by CLUSTER commands and (later) the bus's gossip, with
    # times from the Clock; only a bus module may speak asyncio.
    bad = _violations("rillet.cluster", ("rillet.commands", "rillet.server", "rillet.dispatch",
                                         "rillet.persistence", "rillet.replication"),
                      ("asyncio",))
    assert [line for line in bad if not line.startswith("rillet.cluster.bus ")] == []


def test_resp_imports_only_itself():
    assert _violations("rillet.resp", (
        "rillet.engine", "rillet.commands", "rillet.server", "rillet.persistence",
        "rillet.dispatch", "rillet.state",
    )) == []


def _with_packages(name: str) -> list[str]:
    """`name` and the packages above it: importing a module runs their __init__ first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def test_no_import_cycles():
    modules = _sources()
    # A module inside a package is imported after that package: naming it adds no edge.
    graph = {name: {package for target in _rillet_imports(modules, name, top_only=True)
                    if not _allowed(name, target) for package in _with_packages(target)
                    if package in modules and package not in _with_packages(name)}
             for name in modules}
    cycles = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
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
