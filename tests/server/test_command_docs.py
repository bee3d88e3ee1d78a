"""COMMAND DOCS `arguments`, derived from each handler's syntax line (commands/syntax.py)."""

from __future__ import annotations

import re

import pytest

import rillet.commands  # noqa: F401  (registers the commands)
from rillet.commands.syntax import arguments
from rillet.commands.table import COMMANDS, unique_subcommands
from rillet.resp.types import Map, SetReply


def _plain(value: object) -> object:
    """Maps as dicts with str keys, bytes as str: easy to compare."""
    if isinstance(value, Map):
        return {k.decode(): _plain(v) for k, v in value.items}
    if isinstance(value, SetReply):
        return [_plain(v) for v in value.items]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode()
    return value


def _args(syntax: str, name: str) -> list:
    return _plain(arguments(syntax, name))  # type: ignore[return-value]


def test_keys_repetition_and_tokens_take_redis_shapes():
    # As Redis 8.2.3's COMMAND DOCS XDEL (shared/reference), names included.
    assert _args("XDEL key id [id ...]", "xdel") == [
        {"name": "key", "type": "key", "key_spec_index": 0, "display_text": "key"},
        {"name": "id", "type": "string", "display_text": "id", "flags": ["multiple"]},
    ]
    assert _args("XRANGE key start end [COUNT count]", "xrange")[-1] == {
        "name": "count", "type": "integer", "token": "COUNT", "display_text": "count",
        "flags": ["optional"],
    }


def test_choices_blocks_and_repeated_blocks():
    args = _args("XTRIM key <MAXLEN | MINID> [= | ~] threshold [LIMIT count]", "xtrim")
    assert [a["type"] for a in args] == ["key", "oneof", "oneof", "string", "integer"]
    assert [c["token"] for c in args[1]["arguments"]] == ["MAXLEN", "MINID"]
    assert "flags" not in args[1] and args[2]["flags"] == ["optional"]
    data = _args("MSET key value [key value ...]", "mset")
    assert len(data) == 1 and data[0]["type"] == "block" and data[0]["flags"] == ["multiple"]
    assert [a["name"] for a in data[0]["arguments"]] == ["key", "value"]


def test_a_token_keeps_its_argument_through_a_repetition():
    args = _args("XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]", "xread")
    streams = args[2]
    assert (streams["token"], streams["name"], streams["flags"]) == ("STREAMS", "key", ["multiple"])
    assert args[3]["name"] == "id" and "token" not in args[3]


def test_a_subcommand_skips_both_names():
    assert _args("CONFIG GET parameter [parameter ...]", "config|get")[0]["name"] == "parameter"


def _every_spec():
    for spec in COMMANDS.values():
        yield spec
        yield from unique_subcommands(spec)


@pytest.mark.parametrize("spec", [s for s in _every_spec() if s.handler is not None],
                         ids=lambda s: s.name)
def test_every_syntax_line_parses_to_balanced_arguments(spec):
    rendered = _plain(arguments(spec.syntax, spec.name))
    words = re.split(r"[\s\[\]<>|]+|\.\.\.", spec.syntax)[len(spec.name.split("|")):]

    def names(items):
        for item in items:
            yield item["name"]
            yield item.get("token")
            yield from names(item.get("arguments", []))

    # Every word of the syntax line (bar brackets and "...") shows up in the tree.
    seen = set(names(rendered))
    for word in words:
        if word:
            assert word in seen or word.lower() in seen, (spec.name, word)
