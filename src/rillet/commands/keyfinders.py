"""Key finders for commands whose keys move with their arguments (Redis's movablekeys).

A finder takes the command's argv and returns its keys as (argv index, Redis
key-spec flags). COMMAND GETKEYS and the ACL key checks both read them
through `CommandSpec.keys_with_flags`. A finder returns no keys for arguments
it cannot read (a bad numkeys): the command then answers its own error, and
GETKEYS says the arguments are invalid, as Redis does.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.commands import table

Finder = Callable[[list[bytes]], list[tuple[int, str]]]
SOURCE = "RO access"
DESTINATION = "OW update"


def _count(raw: bytes) -> int:
    try:
        return int(raw)
    except ValueError:
        return -1


def numkeys(at: int, dest: bool = False, source: str = SOURCE, notes: str = "") -> Finder:
    """Keys counted by the argument at `at` (genericGetKeys), after a destination key.

    The finder carries its key spec as `keynum` (at, dest, source flags, notes[, step]):
    COMMAND INFO shows it as Redis's "keynum" spec (commands/server.py)."""

    def find(argv: list[bytes]) -> list[tuple[int, str]]:
        n = _count(argv[at]) if at < len(argv) else -1
        if n <= 0 or at + n >= len(argv):
            return []
        keys = [(i, source) for i in range(at + 1, at + 1 + n)]
        return [(1, DESTINATION), *keys] if dest else keys

    find.keynum = (at, dest, source, notes)  # type: ignore[attr-defined]  # read by COMMAND
    return find


def msetex_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    """MSETEX numkeys key value [key value ...] [options]."""
    n = _count(argv[1]) if len(argv) > 1 else -1
    if n <= 0 or 1 + 2 * n >= len(argv):
        return []
    return [(i, "OW update") for i in range(2, 2 + 2 * n, 2)]


# Redis's msetex.json key spec: numkeys at 1, keys every other argument after it.
msetex_keys.keynum = (1, False, "OW update", "", 2)  # type: ignore[attr-defined]  # as above


_SCRIPT_NOTES = "We cannot tell how the keys will be used so we assume the worst, {}"

FINDERS: dict[str, Finder] = {
    **{name: numkeys(1) for name in ("sintercard", "zintercard", "zunion", "zinter", "zdiff")},
    **{name: numkeys(1, source="RW access delete") for name in ("lmpop", "zmpop")},
    **{name: numkeys(2, source="RW access delete") for name in ("blmpop", "bzmpop")},
    **{name: numkeys(2, dest=True) for name in ("zunionstore", "zinterstore", "zdiffstore")},
    "msetex": msetex_keys,
    # A script's declared keys: Redis cannot tell how the script uses them.
    # (Redis's EVALSHA and EVALSHA_RO specs carry no notes.)
    **{name: numkeys(2, source="RW access update", notes=_SCRIPT_NOTES.format("RW and UPDATE"))
       for name in ("eval", "fcall")},
    **{name: numkeys(2, source="RO access", notes=_SCRIPT_NOTES.format("RO and ACCESS"))
       for name in ("eval_ro", "fcall_ro")},
    "evalsha": numkeys(2, source="RW access update"),
    "evalsha_ro": numkeys(2, source="RO access"),
}


def install() -> None:
    """Give each registered command above its finder (commands/__init__ calls it)."""
    for name, finder in FINDERS.items():
        spec = table.COMMANDS.get(name)
        if spec is not None and spec.find_keys is None:
            spec.find_keys = finder
