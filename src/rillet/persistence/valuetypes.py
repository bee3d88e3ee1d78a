"""Each value type's logical form: its DEBUG DIGEST hash and the commands that rebuild it.

A type registers one `ValueType` (strings below; streams in streams.py, the
containers in containers.py, vector sets in rdb_vectorset.py); digest.py and
the command-form rewrite (rewrite.py) look it up by the value's class, so a
new type adds one entry and no change here. File formats live elsewhere
(rdb.py and its codecs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ValueType:
    """How one value type is digested and rewritten as commands.

    Each function also gets a `CodecContext` (the server state: state kept
    beside the value, such as a stream's IDMP map).
    """

    # The type byte hashed into each key's digest (values fixed: digests stay comparable).
    tag: int
    name: str
    cls: type
    digest: Callable[[Any, CodecContext], bytes]
    # Commands that rebuild the value under `key` (the AOF rewrite without an RDB preamble).
    commands: Callable[[bytes, Any, CodecContext], Iterator[list[bytes]]]


TYPES_BY_CLASS: dict[type, ValueType] = {}


def register(value_type: ValueType) -> None:
    TYPES_BY_CLASS[value_type.cls] = value_type


def type_of(value: object) -> ValueType:
    found = TYPES_BY_CLASS.get(value.__class__)
    if found is None:
        raise TypeError(f"no value type registered for {value.__class__.__name__}")
    return found


@dataclass
class CodecContext:
    """What a type's functions may need from the server: its `ServerState`."""

    state: Any


def _string_commands(key: bytes, value: bytes, context: CodecContext) -> Iterator[list[bytes]]:
    yield [b"SET", key, value]


register(ValueType(0, "string", bytes, lambda value, _: value, _string_commands))
