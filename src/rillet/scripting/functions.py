"""Redis functions: libraries loaded with FUNCTION LOAD, called with FCALL.

A library's code runs once at load in the engine's Lua state, registering its
functions through `redis.register_function`; FCALL runs one of them with the
same rules as a script (scripting.engine). FUNCTION DUMP's payload is Redis's
(the libraries as an RDB file holds them, with DUMP's footer).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lupa import lua51

from rillet import errors
from rillet.errors import ReplyError
from rillet.persistence import rdb

if TYPE_CHECKING:
    from rillet.scripting.engine import LuaEngine

_NAME = re.compile(rb"^[A-Za-z0-9_]+$")
FUNCTION_FLAGS = ("no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys")


def _lua_tostring(number: float) -> bytes:
    """lua_tostring of a number: LUAI_NUMFFORMAT "%.14g" (glibc writes a negative NaN "-nan")."""
    if number != number:
        return b"-nan" if math.copysign(1.0, number) < 0 else b"nan"
    return b"%.14g" % number


@dataclass(eq=False)
class Function:
    name: bytes
    callback: Any
    flags: frozenset[str]
    description: bytes | None
    library: Library | None = None


@dataclass(eq=False)
class Library:
    name: bytes
    code: bytes
    functions: dict[bytes, Function] = field(default_factory=dict)


class RegistrationError(Exception):
    """An error raised into the library's Lua code (sandbox.lua's MARK turns it into {err=...};
    "u": not a command's error, so not counted in errorstats yet)."""

    def __str__(self) -> str:
        return "\0rillet\0u" + self.args[0]


def parse_metadata(code: bytes) -> bytes:
    """The library name from `#!lua name=...` (functionExtractLibMetaData)."""
    if not code.startswith(b"#!"):
        raise ReplyError(errors.FUNCTION_NO_METADATA)
    end = code.find(b"\n")
    line = code if end < 0 else code[:end]
    parts = line.split()
    engine_name = parts[0][2:]
    name = None
    for part in parts[1:]:
        if part.startswith(b"name="):
            name = part[5:]
        else:
            raise ReplyError(errors.FUNCTION_BAD_METADATA.format(part.decode("utf-8", "replace")))
    if name is None:
        raise ReplyError(errors.FUNCTION_NO_NAME)
    if engine_name.lower() != b"lua":
        raise ReplyError(errors.FUNCTION_NO_ENGINE.format(engine_name.decode("utf-8", "replace")))
    return name


class Functions:
    """The libraries and the function namespace they share."""

    def __init__(self, engine: LuaEngine) -> None:
        self.engine = engine
        self.libraries: dict[bytes, Library] = {}
        # By lower-cased name: Redis's function namespace ignores case (FCALL TEST
        # finds `test`, and a library cannot add `Test` beside it), though a
        # library's own names and library names do not.
        self.functions: dict[bytes, Function] = {}

    def find(self, name: bytes) -> Function | None:
        """The function FCALL `name` calls (any case)."""
        return self.functions.get(name.lower())

    def load(self, code: bytes, replace: bool) -> bytes:
        name = parse_metadata(code)
        if not _NAME.match(name):
            raise ReplyError(errors.FUNCTION_BAD_LIBRARY_NAME)
        existing = self.libraries.get(name)
        if existing is not None and not replace:
            raise ReplyError(errors.FUNCTION_LIBRARY_EXISTS.format(name.decode("utf-8", "replace")))
        library = self._compile(name, code)
        for function_name in library.functions:
            owner = self.find(function_name)
            if owner is not None and owner.library is not existing:
                raise ReplyError(errors.FUNCTION_EXISTS.format(function_name.decode("utf-8", "replace")))
        if existing is not None:
            self._remove(existing)
        self._add(library)
        return name

    def _compile(self, name: bytes, code: bytes) -> Library:
        library = Library(name, code)
        end = code.find(b"\n")
        body = b"" if end < 0 else code[end:]  # the shebang line stays, empty, for line numbers

        def register(*args: object) -> None:
            self._register(library, args)

        ok, result = self.engine.run_library(body, register)
        if ok is None:
            raise ReplyError(errors.FUNCTION_COMPILE.format(self._load_error(result)))
        if not ok:
            raise ReplyError(errors.FUNCTION_REGISTER_FAILED.format(self._load_error(result)))
        if not library.functions:
            raise ReplyError(errors.FUNCTION_NONE_REGISTERED)
        return library

    def _load_error(self, result: Any) -> str:  # (a Lua value)
        if lua51.lua_type(result) == "table":
            err = result[b"err"]
            if isinstance(err, bytes):
                return err.decode("utf-8", "surrogateescape")
        if isinstance(result, bytes):
            return result.decode("utf-8", "surrogateescape")
        return str(result)

    def _register(self, library: Library, args: tuple) -> None:
        if len(args) == 2:
            name, callback = args
            flags: frozenset[str] = frozenset()
            description = None
            if lua51.lua_type(callback) != "function":
                raise RegistrationError(errors.FUNCTION_SECOND_NOT_FUNCTION)
        elif len(args) == 1 and lua51.lua_type(args[0]) == "table":
            spec = args[0]
            name, callback = spec[b"function_name"], spec[b"callback"]
            for key in spec.keys():
                if key not in (b"function_name", b"callback", b"flags", b"description"):
                    raise RegistrationError(errors.FUNCTION_UNKNOWN_ARGUMENT.format(
                        key.decode("utf-8", "replace") if isinstance(key, bytes) else key))
            description = spec[b"description"]
            if description is not None and not isinstance(description, bytes):
                raise RegistrationError(errors.FUNCTION_BAD_DESCRIPTION)
            raw_flags = spec[b"flags"]
            flag_set = set()
            if raw_flags is not None:
                if lua51.lua_type(raw_flags) != "table":
                    raise RegistrationError(errors.FUNCTION_BAD_FLAGS)
                for flag in raw_flags.values():
                    text = flag.decode("utf-8", "replace") if isinstance(flag, bytes) else None
                    if text not in FUNCTION_FLAGS:
                        raise RegistrationError(errors.FUNCTION_UNKNOWN_FLAG)
                    flag_set.add(text)
            flags = frozenset(flag_set)
        else:
            raise RegistrationError(errors.FUNCTION_REGISTER_ARGS)
        if isinstance(name, (int, float)):
            name = _lua_tostring(name)
        if not isinstance(name, bytes):
            raise RegistrationError(errors.FUNCTION_NAME_NOT_STRING)
        if lua51.lua_type(callback) != "function":
            raise RegistrationError(errors.FUNCTION_CALLBACK_NOT_FUNCTION)
        if not _NAME.match(name):
            raise RegistrationError(errors.FUNCTION_BAD_LIBRARY_NAME)
        if name in library.functions:
            raise RegistrationError(errors.FUNCTION_ALREADY_IN_LIBRARY)
        library.functions[name] = Function(name, callback, flags, description, library)

    def _add(self, library: Library) -> None:
        self.libraries[library.name] = library
        for name, function in library.functions.items():
            self.functions[name.lower()] = function

    def _remove(self, library: Library) -> None:
        del self.libraries[library.name]
        for name in library.functions:
            self.functions.pop(name.lower(), None)

    def delete(self, name: bytes) -> None:
        library = self.libraries.get(name)
        if library is None:
            raise ReplyError(errors.FUNCTION_LIBRARY_NOT_FOUND)
        self._remove(library)

    def flush(self) -> None:
        self.libraries.clear()
        self.functions.clear()

    # --- DUMP / RESTORE -------------------------------------------------------------
    def dump(self) -> bytes:
        return rdb.dump_functions([library.code for library in self.libraries.values()])

    def restore(self, payload: bytes, policy: bytes) -> None:
        if not rdb.verify_payload(payload):
            raise ReplyError(errors.FUNCTION_RESTORE_PAYLOAD)
        try:
            codes = rdb.restore_functions(payload)
        except ValueError as error:
            raise ReplyError(f"ERR {error}") from None
        # Build the new set apart, so that a failure leaves the current one untouched.
        fresh = Functions(self.engine)
        for code in codes:
            fresh.load(code, replace=False)
        if policy == b"APPEND":
            for name, library in fresh.libraries.items():
                if name in self.libraries:
                    raise ReplyError(errors.FUNCTION_LIBRARY_EXISTS.format(name.decode("utf-8", "replace")))
                for function_name in library.functions:
                    if self.find(function_name) is not None:
                        raise ReplyError(errors.FUNCTION_EXISTS_RESTORE.format(
                            function_name.decode("utf-8", "replace")))
        elif policy == b"REPLACE":
            for library in fresh.libraries.values():
                for function_name in library.functions:
                    owner = self.find(function_name)
                    if owner is not None and owner.library is not None \
                            and owner.library.name not in fresh.libraries:
                        raise ReplyError(errors.FUNCTION_EXISTS_RESTORE.format(
                            function_name.decode("utf-8", "replace")))
            for name in fresh.libraries:
                if name in self.libraries:
                    self._remove(self.libraries[name])
        else:  # FLUSH
            self.flush()
        for library in fresh.libraries.values():
            self._add(library)
