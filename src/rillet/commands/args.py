"""Shared argument parsing for command handlers.

Integers are parsed with Redis's rules (string2ll: no '+', no spaces, no
leading zeros besides "0", int64 range). `Options` walks `[NAME value]...`
style tails from a declarative description instead of per-command if/elif.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet import errors
from rillet.errors import ReplyError

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def parse_int(raw: bytes, message: str = errors.NOT_INTEGER) -> int:
    """Redis's string2ll, raising `message` on anything it would reject."""
    n = len(raw)
    if n == 0 or n > 20:
        raise ReplyError(message)
    first = raw[0]
    if first == 45:  # '-'
        body = raw[1:]
        if not body or not body.isdigit() or body[0] == 48:
            raise ReplyError(message)
    elif not raw.isdigit() or (first == 48 and n > 1):
        raise ReplyError(message)
    value = int(raw)
    if value > INT64_MAX or value < INT64_MIN:
        raise ReplyError(message)
    return value


def int_in_range(low: int, high: int, message: str) -> Callable[[bytes], int]:
    """An `Options` converter: an integer (Redis's rules) in [low, high], else `message`."""

    def convert(raw: bytes) -> int:
        value = parse_int(raw)
        if not low <= value <= high:
            raise ReplyError(message)
        return value

    return convert


class Options:
    """Parse a tail of keyword options.

    `spec` maps an upper-case keyword to the number of values it takes and a
    converter for them (None: a flag). Converters run in argument order, so
    their errors come in the order Redis reports them. Unknown keywords and
    missing values raise `syntax`; a repeated keyword's last value wins.
    """

    __slots__ = ("spec", "syntax")

    def __init__(
        self,
        spec: dict[bytes, tuple[int, Callable[[bytes], object] | None]],
        syntax: str = errors.SYNTAX,
    ) -> None:
        self.spec = spec
        self.syntax = syntax

    def parse(self, argv: list[bytes], start: int, stop: int | None = None) -> dict[bytes, object]:
        found: dict[bytes, object] = {}
        i = start
        end = len(argv) if stop is None else stop
        while i < end:
            word = argv[i].upper()
            entry = self.spec.get(word)
            if entry is None:
                raise ReplyError(self.syntax)
            count, convert = entry
            if count == 0:
                found[word] = True
                i += 1
                continue
            if i + count >= end:  # the keyword's values run past the tail
                raise ReplyError(self.syntax)
            values = argv[i + 1 : i + 1 + count]
            if convert is not None:
                values = [convert(v) for v in values]
            found[word] = values[0] if count == 1 else values
            i += 1 + count
        return found


def glob_match(pattern: bytes, subject: bytes, nocase: bool = False) -> bool:
    """Redis's stringmatchlen: *, ?, [abc], [^a], [a-z] and backslash escapes."""
    return _compile_glob(pattern, nocase).fullmatch(subject) is not None


_GLOB_CACHE: dict[tuple[bytes, bool], object] = {}


def _compile_glob(pattern: bytes, nocase: bool):
    import re

    key = (pattern, nocase)
    compiled = _GLOB_CACHE.get(key)
    if compiled is not None:
        return compiled
    out = bytearray()
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i : i + 1]
        if ch == b"*":
            out += b".*"
        elif ch == b"?":
            out += b"."
        elif ch == b"\\" and i + 1 < n:
            i += 1
            out += re.escape(pattern[i : i + 1])
        elif ch == b"[":
            j = i + 1
            negate = j < n and pattern[j : j + 1] == b"^"
            if negate:
                j += 1
            items = bytearray()
            while j < n and pattern[j : j + 1] != b"]":
                if pattern[j : j + 1] == b"\\" and j + 1 < n:
                    j += 1
                    items += re.escape(pattern[j : j + 1])
                elif j + 2 < n and pattern[j + 1 : j + 2] == b"-" and pattern[j + 2 : j + 3] != b"]":
                    lo, hi = sorted((pattern[j], pattern[j + 2]))
                    items += re.escape(bytes([lo])) + b"-" + re.escape(bytes([hi]))
                    j += 2
                else:
                    items += re.escape(pattern[j : j + 1])
                j += 1
            # An unterminated class matches as if it were closed (Redis's loop).
            if items:
                out += b"[" + (b"^" if negate else b"") + bytes(items) + b"]"
            else:
                out += b"[\\x00-\\xff]" if negate else b"(?!)"
            i = j
        else:
            out += re.escape(ch)
        i += 1
    compiled = re.compile(bytes(out), re.DOTALL | (re.IGNORECASE if nocase else 0))
    if len(_GLOB_CACHE) > 256:
        _GLOB_CACHE.clear()
    _GLOB_CACHE[key] = compiled
    return compiled
