"""MODULE: rillet loads no modules; it has Redis 8's built-in one, vectorset.

MODULE LIST (and HELLO, INFO modules) show vectorset as Redis 8 shows its
built-in vector sets module (commands/vectorsets.py). LOAD, LOADEX and UNLOAD are Redis's protected commands:
refused as Redis refuses them unless `enable-module-command` allows them (its
default is "no", so a default Redis and rillet give the same error). Where they
are allowed, LOAD/LOADEX answer Redis's error for a library that fails to load
(rillet cannot load a Redis module: it is not a C server) and UNLOAD Redis's
error for a module name it does not know.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.table import command, container_docs, help_reply
from rillet.errors import ReplyError
from rillet.resp.types import Map
from rillet.state import Client

# Redis 8's built-in modules rillet implements: (name, version, INFO's options).
BUILT_IN = (("vectorset", 1, "handle-io-errors|handle-repl-async-load"),)


def module_entries() -> list[Map]:
    """MODULE LIST's and HELLO's entries."""
    return [Map([(b"name", name.encode()), (b"ver", ver), (b"path", b""), (b"args", [])])
            for name, ver, _ in BUILT_IN]


def module_info_lines() -> list[tuple[str, object]]:
    """INFO modules."""
    return [("module", f"name={name},ver={ver},api=1,filters=0,usedby=[],using=[],options=[{opts}]")
            for name, ver, opts in BUILT_IN]

_ADMIN = "admin slow dangerous"
_ADMIN_FLAGS = "admin noscript no_async_loading"
_GATE = "enable-module-command"  # Redis's CMD_PROTECTED: checked by dispatch


@command("module|list", 2, "admin noscript", group="server", since="4.0.0", acl=_ADMIN,
         complexity="O(N) where N is the number of loaded modules.")
def module_list(ctx: Client, argv: list[bytes]) -> object:
    """MODULE LIST

    Returns all loaded modules."""
    return module_entries()


@command("module|load", -3, _ADMIN_FLAGS, group="server", since="4.0.0", acl=_ADMIN,
         complexity="O(1)", protected_by=_GATE)
def module_load(ctx: Client, argv: list[bytes]) -> object:
    """MODULE LOAD path [arg [arg ...]]

    Loads a module."""
    raise ReplyError(errors.MODULE_LOAD_FAILED)


@command("module|loadex", -3, _ADMIN_FLAGS, group="server", since="7.0.0", acl=_ADMIN,
         complexity="O(1)", protected_by=_GATE)
def module_loadex(ctx: Client, argv: list[bytes]) -> object:
    """MODULE LOADEX path [CONFIG name value [CONFIG name value ...]] [ARGS args [ARGS args ...]]

    Loads a module using extended parameters."""
    raise ReplyError(errors.MODULE_LOAD_FAILED)


@command("module|unload", 3, _ADMIN_FLAGS, group="server", since="4.0.0", acl=_ADMIN,
         complexity="O(1)", protected_by=_GATE)
def module_unload(ctx: Client, argv: list[bytes]) -> object:
    """MODULE UNLOAD name

    Unloads a module."""
    if any(argv[2].lower() == name.encode() for name, _, _ in BUILT_IN):
        raise ReplyError(errors.MODULE_UNLOAD_BUILT_IN)  # Redis's module names: any case
    raise ReplyError(errors.MODULE_UNLOAD_UNKNOWN)


@command("module|help", 2, "loading stale", group="server", since="5.0.0", acl="slow",
         complexity="O(1)")
def module_help(ctx: Client, argv: list[bytes]) -> object:
    """MODULE HELP

    Returns helpful text about the different subcommands."""
    return help_reply(
        "MODULE",
        b"LIST",
        b"    Return a list of loaded modules.",
        b"LOAD <path> [<arg> ...]",
        b"    Load a module library from <path>, passing to it any optional arguments.",
        b"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        b"    Load a module library from <path>, while passing it module configurations and"
        b" optional arguments.",
        b"UNLOAD <name>",
        b"    Unload a module.",
    )


container_docs("module", "4.0.0", "A container for module commands.", "server")
