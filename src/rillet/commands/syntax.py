"""COMMAND DOCS `arguments` from a handler's syntax line.

Every handler's docstring starts with the command's Redis syntax line
(`XDEL key id [id ...]`). redis-cli builds its input hints from COMMAND DOCS'
argument trees, so the tree is derived from that one line instead of a second,
hand-kept description of each command:

- `[ ... ]` is optional, `< a | b >` a required choice, `a | b` inside brackets
  a choice; several words together form a block;
- `x [x ...]` (or `a b [a b ...]`) is one argument, or block, marked multiple;
- an upper-case word is a token: alone it is a pure-token, followed by a
  lower-case word it names that argument (`COUNT count`); `*`, `$`, `=`, `~`
  are tokens too;
- a lower-case word is an argument: `key` and `newkey` are keys (the command's
  only key spec), counts and times are integers, `pattern` is a pattern.

Names of choices and blocks are made up from their parts, where Redis's JSON
has hand-picked ones ("condition", "data"); the hints read the same.
"""

from __future__ import annotations

import re

from rillet.resp.types import Map, SetReply, SimpleString

_SPLIT = re.compile(r"\.\.\.|[\[\]<>|]|[^\s\[\]<>|]+")
_TOKEN = re.compile(r"^(?:[A-Z][A-Z0-9_-]*|[*$=~+-])$")
_KEYS = frozenset({"key", "newkey"})
_INTEGER = re.compile(
    r"(count|index|numids|increment|decrement|milliseconds|seconds|maxsize|duration|cursor"
    r"|entries-added|unix-time|min-idle-time|protover|ms)$"
)


class _Arg:
    __slots__ = ("name", "type", "token", "optional", "multiple", "children")

    def __init__(self, name: str, kind: str, token: str | None = None,
                 children: list[_Arg] | None = None) -> None:
        self.name = name
        self.type = kind
        self.token = token
        self.optional = False
        self.multiple = False
        self.children = children or []

    def shape(self) -> tuple:
        """What `x [x ...]` compares: names and types (the token is said once, before)."""
        return self.name, self.type, tuple(child.shape() for child in self.children)

    def render(self) -> Map:
        """Redis's addReplyCommandArgList: fields in its order, flags a set of statuses
        (redis-cli asserts that they are)."""
        items: list[tuple[bytes, object]] = [(b"name", self.name.encode()), (b"type", self.type.encode())]
        if self.type not in ("oneof", "block"):
            items.append((b"display_text", self.name.encode()))
        if self.type == "key":
            items.append((b"key_spec_index", 0))
        if self.token is not None:
            items.append((b"token", self.token.encode()))
        flags = [SimpleString(flag) for flag, on in
                 ((b"optional", self.optional), (b"multiple", self.multiple)) if on]
        if flags:
            items.append((b"flags", SetReply(flags)))
        if self.children:
            items.append((b"arguments", [child.render() for child in self.children]))
        return Map(items)


def _word(word: str) -> _Arg:
    if _TOKEN.match(word):
        return _Arg(word.lower() if word[0].isalpha() else word, "pure-token", word)
    if word in _KEYS:
        return _Arg(word, "key")
    if word == "pattern":
        return _Arg(word, "pattern")
    return _Arg(word, "integer" if _INTEGER.search(word) else "string")


def _combined(kind: str, parts: list[_Arg]) -> _Arg:
    return _Arg("-".join(part.name for part in parts), kind, children=parts)


class _Parser:
    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.at = 0

    def sequence(self, stops: tuple[str, ...]) -> tuple[list[_Arg], bool]:
        """Items up to a stop word, and whether they ended with `...` (a repetition)."""
        items: list[_Arg] = []
        bare_token = False  # items[-1] is a token written as a bare word here
        while self.at < len(self.words) and self.words[self.at] not in stops:
            word = self.words[self.at]
            self.at += 1
            if word == "...":
                return items, True
            if word in ("[", "<"):
                self._group(items, optional=word == "[")
                bare_token = False
            elif bare_token and not _TOKEN.match(word):
                arg = _word(word)  # `COUNT count`: the token introduces the argument
                arg.token = items.pop().token
                items.append(arg)
                bare_token = False
            else:
                items.append(_word(word))
                bare_token = items[-1].type == "pure-token" and word[0].isalpha()
        return items, False

    def _group(self, items: list[_Arg], optional: bool) -> None:
        close = "]" if optional else ">"
        choices: list[list[_Arg]] = []
        repeated = False
        while True:
            choice, repeated = self.sequence(("|", close))
            choices.append(choice)
            if self.at >= len(self.words) or self.words[self.at] != "|":
                break
            self.at += 1
        self.at += 1  # the closing bracket
        if repeated:
            _repeat(items, choices[-1])
            return
        parts = [choice[0] if len(choice) == 1 else _combined("block", choice)
                 for choice in choices if choice]
        if not parts:
            return
        group = parts[0] if len(parts) == 1 else _combined("oneof", parts)
        group.optional = optional
        items.append(group)


def _repeat(items: list[_Arg], repeated: list[_Arg]) -> None:
    """`x [x ...]` / `a b [a b ...]`: the items before the group become one multiple argument."""
    n = len(repeated)
    if not n:
        return
    target = repeated[0] if n == 1 else _combined("block", repeated)
    if len(items) >= n and [a.shape() for a in items[-n:]] == [b.shape() for b in repeated]:
        target.token = items[-n].token  # said once, before the first: `STREAMS key [key ...]`
        del items[-n:]
    target.multiple = True
    items.append(target)


def arguments(syntax: str, name: str) -> list[Map]:
    """The argument tree of `syntax`, whose first words are the command's `name` (`config|get`)."""
    words = _SPLIT.findall(syntax)
    items, _ = _Parser(words[len(name.split("|")):]).sequence(())
    return [item.render() for item in items]
