"""Redis's conversion rules between command replies and Lua values, both ways.

A command's reply (rillet's typed reply values) becomes a Lua value by the
script's protocol (redis.setresp, 2 by default); a script's return value
becomes a reply by the rules of script_lua.c luaReplyToRedisReply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lupa import lua51

from rillet.errors import ReplyError
from rillet.resp.encoder import format_double
from rillet.resp.types import Map, NullArray, Push, Raw, SetReply, SimpleString, Verbatim

_lua_type = lua51.lua_type


class Builders:
    """Lua-side constructors (sandbox.lua): `table` (lupa's table_from) for the rare shapes."""

    __slots__ = ("_ok_batch", "_oks", "array", "error", "status", "table")

    def __init__(self, table: Callable, status: Callable, error: Callable, array: Callable,
                 ok_batch: Callable) -> None:
        self.table = table
        self.status = status
        self.error = error
        self.array = array
        self._ok_batch = ok_batch
        self._oks: list[object] = []

    def status_of(self, text: bytes) -> object:
        """A new {ok=text} table. The commonest, {ok="OK"} (SET's reply), comes from a
        batch made by one call into Lua: a call per table costs as much as a redis.call's
        crossing. Each table is handed out once (a script may change the one it got)."""
        if text == b"OK":
            oks = self._oks
            if not oks:
                oks.extend(self._ok_batch())
            return oks.pop()
        return self.status(bytes(text))


def to_lua(value: Any, resp3: bool, build: Builders) -> object:
    """A reply value as Lua sees it.

    (`value` is Any: the branches test its class, `cls is X`, which mypy cannot narrow.)
    """
    cls = value.__class__
    if cls is bytes or cls is int:
        return value
    if cls is SimpleString:
        return build.status_of(value)
    if cls is list or cls is tuple or cls is Push:
        items = value.items if cls is Push else value
        converted = [to_lua(item, resp3, build) for item in items]
        if len(converted) > 256:  # varargs live on Lua's C stack (8000 slots at most)
            return build.table(converted)
        return build.array(*converted)
    if cls is str:
        return value.encode()
    if cls is bool:
        return value if resp3 else int(value)
    if value is None or cls is NullArray:
        # RESP2's null is false (a nil would end an array); RESP3's is nil.
        return None if resp3 else False
    if cls is float:
        return build.table({b"double": value}) if resp3 else format_double(value)
    if cls is Map:
        if resp3:
            return build.table({b"map": build.table({to_lua(k, resp3, build): to_lua(v, resp3, build)
                                           for k, v in value.items})})
        flat = []
        for k, v in value.items:
            flat.append(to_lua(k, resp3, build))
            flat.append(to_lua(v, resp3, build))
        return build.table(flat)
    if cls is SetReply:
        if resp3:
            return build.table({b"set": build.table({to_lua(k, resp3, build): True
                                           for k in value.items})})
        return build.table([to_lua(item, resp3, build) for item in value.items])
    if cls is Verbatim:
        if resp3:
            return build.table({b"verbatim_string": build.table({b"format": value.fmt, b"string": value.text})})
        return value.text
    if isinstance(value, ReplyError):
        return build.error(value.message.encode("utf-8", "surrogateescape"))
    if cls is Raw:
        parsed, _ = _parse_raw(bytes(value), 0)
        return to_lua(parsed, resp3, build)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, int):
        return int(value)
    raise TypeError(f"no Lua conversion for {cls.__name__}")


def _parse_raw(data: bytes, pos: int) -> tuple[object, int]:
    """The few pre-encoded replies handlers keep (Raw) back to reply values."""
    kind = data[pos:pos + 1]
    end = data.index(b"\r\n", pos)
    line = data[pos + 1:end]
    pos = end + 2
    if kind == b"+":
        return SimpleString(line), pos
    if kind == b"-":
        return ReplyError(line.decode("utf-8", "surrogateescape")), pos
    if kind == b":":
        return int(line), pos
    if kind == b",":  # a RESP3 double kept with Redis's digits (vector sets)
        return float(line), pos
    if kind == b"$":
        n = int(line)
        if n < 0:
            return None, pos
        return data[pos:pos + n], pos + n + 2
    if kind == b"*":
        n = int(line)
        if n < 0:
            return NullArray(), pos
        items = []
        for _ in range(n):
            item, pos = _parse_raw(data, pos)
            items.append(item)
        return items, pos
    raise ValueError(f"unexpected reply type {kind!r}")


def _error_text(raw: bytes) -> str:
    # addReplyErrorFormat: CR and LF would break the protocol; Redis makes them spaces.
    return raw.decode("utf-8", "surrogateescape").replace("\r", " ").replace("\n", " ")


def from_lua(value: Any, lua_resp: int, resp3: bool) -> object:
    """A script's return value as a reply (luaReplyToRedisReply); `value` is a Lua
    value from lupa, dispatched on its class."""
    cls = value.__class__
    if cls is bytes:
        return value
    if cls is int:
        return value
    if cls is float:
        # (long long) of a Lua number: truncation toward zero; NaN and what is out of
        # range give x86-64's "integer indefinite", INT64_MIN, as Redis on x86-64.
        if value == value and -2**63 <= value < 2**63:
            return int(value)
        return -2**63
    if cls is bool:
        if lua_resp == 2:
            return 1 if value else None
        return value
    if value is None:
        return None
    if _lua_type(value) != "table":
        return None  # functions, userdata, threads: nil, as Redis
    err = value[b"err"]
    if err.__class__ is bytes:
        return ReplyError(_error_text(err))
    ok = value[b"ok"]
    if ok.__class__ is bytes:
        return SimpleString(ok.replace(b"\r", b" ").replace(b"\n", b" "))
    double = value[b"double"]
    if double.__class__ in (int, float):
        return float(double)
    big = value[b"big_number"]
    if big.__class__ is bytes:
        big = big.replace(b"\r", b" ").replace(b"\n", b" ")
        return Raw(b"(%s\r\n" % big) if resp3 else big
    mapping = value[b"map"]
    if _lua_type(mapping) == "table":
        return Map([(from_lua(k, lua_resp, resp3), from_lua(v, lua_resp, resp3)) for k, v in mapping.items()])
    members = value[b"set"]
    if _lua_type(members) == "table":
        return SetReply([from_lua(k, lua_resp, resp3) for k in members.keys()])
    verbatim = value[b"verbatim_string"]
    if _lua_type(verbatim) == "table":
        text, fmt = verbatim[b"string"], verbatim[b"format"]
        if text.__class__ is bytes and fmt.__class__ is bytes:
            # addReplyVerbatim: three bytes of the format, space-padded at its end (NUL).
            return Verbatim(text, fmt.split(b"\0", 1)[0][:3].ljust(3))
    items = []
    i = 1
    while True:
        item = value[i]
        if item is None:
            break
        items.append(from_lua(item, lua_resp, resp3))
        i += 1
    return items
