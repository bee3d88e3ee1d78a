"""Redis's conversion rules between command replies and Lua values, both ways.

A command's reply (rillet's typed reply values) becomes a Lua value by the
script's protocol (redis.setresp, 2 by default); a script's return value
becomes a reply by the rules of script_lua.c luaReplyToRedisReply.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import getrecursionlimit, setrecursionlimit
from typing import Any

from lupa import lua51

from rillet.errors import SCRIPT_STACK_LIMIT, ReplyError
from rillet.resp.encoder import encode, format_double
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


# luaReplyToRedisReply's Lua stack: the returned value sits at slot 2, an array's
# item one slot above its table, a map's key four and value three, a set's member
# three; a value whose 4 slots would pass LUAI_MAXCSTACK is an error in its place
# (a table that holds itself gives 7995 nested arrays, then the error).
_TOP_SLOT = 2
_MAX_SLOT = 8000 - 4
# A reply this deep is encoded in pieces (Raw), so the encoder's own recursion stays short.
_ENCODE_EVERY = 128


def from_lua(value: Any, lua_resp: int, resp3: bool, shape: Callable, count: Callable) -> object:
    """A script's return value as a reply (luaReplyToRedisReply); `value` is a Lua
    value from lupa, dispatched on its class. `shape` is sandbox.lua's reply_shape
    (tables are read raw); `count` counts an error reply in errorstats."""
    if _lua_type(value) != "table":
        return _from_lua(value, lua_resp, resp3, shape, count, _TOP_SLOT)
    # Room for a frame per level and one for its list's comprehension (libs.deep_recursion,
    # inline: this runs for every table a script returns).
    limit = getrecursionlimit()
    setrecursionlimit(limit + 2 * _MAX_SLOT)
    try:
        return _from_lua(value, lua_resp, resp3, shape, count, _TOP_SLOT)
    finally:
        setrecursionlimit(limit)


def _from_lua(value: Any, lua_resp: int, resp3: bool, shape: Callable, count: Callable,
              slot: int) -> object:
    if slot > _MAX_SLOT:  # (any value: luaReplyToRedisReply checks the stack first)
        count(SCRIPT_STACK_LIMIT)
        return ReplyError(SCRIPT_STACK_LIMIT)
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
        return None  # functions, userdata (cjson.null), threads: nil, as Redis
    described = shape(value)
    kind, payload, extra = described[:3]
    if kind == b"array":
        # Strings and integers as they are (most items), while a slot is left for them.
        items = described[3:] if payload <= 4000 else [value[i] for i in range(1, payload + 1)]
        inner = slot + 1
        if inner > _MAX_SLOT:
            reply: object = [_from_lua(item, lua_resp, resp3, shape, count, inner) for item in items]
        else:
            reply = [item if item.__class__ is bytes or item.__class__ is int
                     else _from_lua(item, lua_resp, resp3, shape, count, inner) for item in items]
    elif kind == b"err":
        text = _error_text(payload)
        if not extra:  # a command's error was counted when it failed
            count(text)
        return ReplyError(text)
    elif kind == b"ok":
        return SimpleString(payload.replace(b"\r", b" ").replace(b"\n", b" "))
    elif kind == b"double":
        return float(payload)
    elif kind == b"big_number":
        big = payload.replace(b"\r", b" ").replace(b"\n", b" ")
        return Raw(b"(%s\r\n" % big) if resp3 else big
    elif kind == b"verbatim":
        # addReplyVerbatim: three bytes of the format, space-padded at its end (NUL).
        return Verbatim(payload, extra.split(b"\0", 1)[0][:3].ljust(3))
    elif kind == b"map":
        reply = Map([(_from_lua(k, lua_resp, resp3, shape, count, slot + 4),
                      _from_lua(v, lua_resp, resp3, shape, count, slot + 3))
                     for k, v in payload.items()])
    else:  # set
        reply = SetReply([_from_lua(k, lua_resp, resp3, shape, count, slot + 3)
                          for k in payload.keys()])
    if slot >= _ENCODE_EVERY and slot % _ENCODE_EVERY < 4:
        return Raw(encode(reply, resp3))
    return reply
