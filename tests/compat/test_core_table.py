"""The command table's central checks against Redis 8: wrong arity for every command,
unknown commands and subcommands (exact texts), and data types rillet does not have.
"""

from __future__ import annotations

import hiredis
import pytest

import rillet.commands  # noqa: F401  (registers every command)
from rillet.commands import table


def parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    return reader.gets()


def _arity_cases() -> list[tuple[str, ...]]:
    """For each command and subcommand: argument lists one short and one too long."""
    cases = []
    for spec in table.COMMANDS.values():
        specs = table.unique_subcommands(spec) or [spec]
        for one in specs:
            words = one.name.split("|")
            fixed = len(words)
            arity = one.arity
            if arity > 0:
                counts = [arity - 1, arity + 1]
            else:
                counts = [-arity - 1]
            for count in counts:
                if count < fixed:
                    continue  # cannot say a subcommand with fewer words than its name
                cases.append((*(w.upper() for w in words), *["x"] * (count - fixed)))
    return sorted(set(cases))


ARITY_CASES = _arity_cases()


def test_every_arity_case_is_generated():
    assert len(ARITY_CASES) > 50
    assert ("GET",) in ARITY_CASES and ("GET", "x", "x") in ARITY_CASES
    assert ("CONFIG", "GET") in ARITY_CASES


def test_wrong_arity_for_every_command(pair8):
    """Where Redis 8 has the command, the wrong-arity reply is the same bytes."""
    known = set()
    for name in parse(pair8.ref.call("COMMAND", "LIST")):
        known.add(name.decode())
    checked = 0
    for args in ARITY_CASES:
        name = args[0].lower() if len(args) == 1 or "|".join(args[:2]).lower() not in known \
            else "|".join(args[:2]).lower()
        if args[0].lower() not in known or args[0].upper() in ("SHUTDOWN", "DEBUG"):
            continue
        ours, ref = pair8.both(*args)
        assert ours == ref, (args, name, ours, ref)
        assert ours.startswith(b"-"), (args, ours)
        checked += 1
    assert checked > 50


def test_wrong_arity_reply_names_the_full_command(rillet_server):
    from tests.helpers.wire import Wire

    with Wire(rillet_server.port) as wire:
        assert wire.call("CONFIG", "GET") == b"-ERR wrong number of arguments for 'config|get' command\r\n"
        assert wire.call("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
        assert wire.call("get") == b"-ERR wrong number of arguments for 'get' command\r\n"


@pytest.mark.parametrize("args", [
    ("NOSUCH",), ("nosuch", "a", "b"), ("FOO", "x" * 200), ("FOO", *["arg"] * 40),
    ("F" * 300,), ("FOO", "a\r\nb"), ("", "x"), ("CONFIG|GET", "maxclients"), ("GET|X", "k"),
    ("X\x00Y",), ("ÉCHO", "é"), (b"FO\xffO", b"\xfe\x00z", "x" * 130), ("é" * 100, "é" * 70),
])
def test_unknown_command_text(pair, args):
    pair.check(*args)


@pytest.mark.parametrize("args", [
    ("CONFIG", "NOSUCH"), ("CONFIG", "nosuch", "x"), ("CLIENT", "FOO"), ("COMMAND", "FOO"),
    ("FUNCTION", "FOO"), ("OBJECT", "FOO"), ("MEMORY", "FOO"), ("CONFIG", "x" * 200),
    ("CLIENT", "a\r\nb"), ("CONFIG", b"\xff\x00x"), ("client", "é" * 70),
])
def test_unknown_subcommand_text(pair, args):
    pair.check(*args)
