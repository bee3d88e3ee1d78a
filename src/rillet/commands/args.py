"""Shared argument parsing for command handlers.

Integers are parsed with Redis's rules (string2ll: no '+', no spaces, no
leading zeros besides "0", int64 range). `Options` walks `[NAME value]...`
style tails from a declarative description instead of per-command if/elif.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rillet import errors
from rillet.errors import ReplyError

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def parse_c_int(raw: bytes, message: str | None = None) -> int:
    """Redis's getIntFromObjectOrReply: a long long within a C int's range. `message`
    answers both failures when given, else Redis's two texts."""
    value = parse_int(raw, message or errors.NOT_INTEGER)
    if not -(2**31) <= value < 2**31:
        raise ReplyError(message or errors.INT32_OUT_OF_RANGE)
    return value


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

    def parse(self, argv: list[bytes], start: int, stop: int | None = None) -> dict[bytes, Any]:
        """keyword -> value(s); Any, as each value has its own converter's type."""
        found: dict[bytes, Any] = {}
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
            values: list[Any] = argv[i + 1 : i + 1 + count]
            if convert is not None:
                values = [convert(v) for v in values]
            found[word] = values[0] if count == 1 else values
            i += 1 + count
        return found


def parse_mpop(argv: list[bytes], at: int,
               which: Callable[[bytes], bool]) -> tuple[list[bytes], bool, int]:
    """`numkeys key [key ...] <end> [COUNT count]` from `at`, as LMPOP and ZMPOP (and
    their blocking forms) read it; `which` parses the end word (LEFT/RIGHT, MIN/MAX)."""
    n = parse_int(argv[at], errors.NUMKEYS_POSITIVE)
    if n <= 0:
        raise ReplyError(errors.NUMKEYS_POSITIVE)
    if at + 1 + n >= len(argv):
        raise ReplyError(errors.SYNTAX)
    keys = argv[at + 1:at + 1 + n]
    i = at + 1 + n
    end = which(argv[i])
    count = 1
    seen_count = False
    i += 1
    while i < len(argv):
        if argv[i].upper() == b"COUNT" and i + 1 < len(argv) and not seen_count:
            count = parse_int(argv[i + 1], errors.COUNT_POSITIVE)
            if count <= 0:
                raise ReplyError(errors.COUNT_POSITIVE)
            seen_count = True
            i += 2
        else:
            raise ReplyError(errors.SYNTAX)
    return keys, end, count
