"""The libraries Redis bundles with its Lua (bit, cjson, cmsgpack, struct), as Python shims.

lupa's Lua 5.1 ships none of them; scripts call these through the sandbox's
`bit`, `cjson`, `cmsgpack` and `struct` tables. Each follows its C library's
documented behaviour for the common cases (see docs/compat.md for the gaps).
"""

from __future__ import annotations

import json
import struct as pystruct
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lupa import lua51

_lua_type = lua51.lua_type


class LuaLibError(Exception):
    """Raised into Lua as the library's error message."""


@contextmanager
def deep_recursion(frames: int) -> Iterator[None]:
    """Room for `frames` more Python frames, for a walk as deep as Lua's limits allow
    (a table 1000 deep for cjson, 8000 for a script's reply). Python-to-Python calls
    take no C stack (3.11), so only the recursion limit stands in the way."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# Values from Lua arrive through lupa untyped, so the library functions take Any and
# test classes (`cls is X`) as Lua's own C functions test types.

# --- bit (LuaBitOp) ----------------------------------------------------------------
def _tobit(x: Any) -> int:
    n = int(x) & 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def _u(x: Any) -> int:
    return int(x) & 0xFFFFFFFF


def _tohex(x: Any, n: Any = 8) -> bytes:
    width = int(n)
    upper = width < 0
    width = min(abs(width), 8)
    text = format(_u(x) & ((1 << (4 * width)) - 1), f"0{width}x") if width else ""
    return (text.upper() if upper else text).encode()


def _fold(op: Callable[[int, int], int]) -> Callable[..., int]:
    def run(x: object, *rest: object) -> int:
        acc = _u(x)
        for y in rest:
            acc = op(acc, _u(y))
        return _tobit(acc)
    return run


def bit_functions() -> dict[bytes, Callable]:
    def rol(x: Any, n: Any) -> int:
        v, s = _u(x), int(n) & 31
        return _tobit((v << s) | (v >> (32 - s)))

    def ror(x: Any, n: Any) -> int:
        v, s = _u(x), int(n) & 31
        return _tobit((v >> s) | (v << (32 - s)))

    return {
        b"tobit": _tobit,
        b"tohex": _tohex,
        b"bnot": lambda x: _tobit(~_u(x)),
        b"band": _fold(lambda a, b: a & b),
        b"bor": _fold(lambda a, b: a | b),
        b"bxor": _fold(lambda a, b: a ^ b),
        b"lshift": lambda x, n: _tobit(_u(x) << (int(n) & 31)),
        b"rshift": lambda x, n: _tobit(_u(x) >> (int(n) & 31)),
        b"arshift": lambda x, n: _tobit(_tobit(x) >> (int(n) & 31)),
        b"rol": rol,
        b"ror": ror,
        b"bswap": lambda x: _tobit(int.from_bytes(_u(x).to_bytes(4, "little"), "big")),
    }


# --- cjson ----------------------------------------------------------------------------
def _json_number(value: float | int) -> bytes:
    if value != value or value in (float("inf"), float("-inf")):
        raise LuaLibError("Cannot serialise number: must not be NaN or Inf")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return b"%d" % int(value)
    return (b"%.14g" % value)


def _json_string(raw: bytes) -> bytes:
    out = bytearray(b'"')
    for byte in raw:
        if byte == 0x22:
            out += b'\\"'
        elif byte == 0x5C:
            out += b"\\\\"
        elif byte == 0x2F:
            out += b"\\/"
        elif byte == 0x0A:
            out += b"\\n"
        elif byte == 0x0D:
            out += b"\\r"
        elif byte == 0x09:
            out += b"\\t"
        elif byte == 0x08:
            out += b"\\b"
        elif byte == 0x0C:
            out += b"\\f"
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\u%04x" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


# lua_cjson's encode_max_depth: the 1001st nested table is refused.
JSON_MAX_DEPTH = 1000


def _json_encode(value: Any, out: bytearray, depth: int = 0) -> None:
    cls = value.__class__
    if cls is bytes:
        out += _json_string(value)
    elif cls is bool:
        out += b"true" if value else b"false"
    elif cls is int or cls is float:
        out += _json_number(value)
    elif value is None or _lua_type(value) == "userdata":
        # cjson.null (the only userdata a script can reach) is JSON's null.
        out += b"null"
    elif _lua_type(value) == "table":
        depth += 1
        if depth > JSON_MAX_DEPTH:
            raise LuaLibError(f"Cannot serialise, excessive nesting ({depth})")
        keys = list(value.keys())
        if keys and all(k.__class__ in (int, float) and k >= 1 and k == int(k) for k in keys):
            top = int(max(keys))
            if top > 10 and top > 2 * len(keys):
                raise LuaLibError("Cannot serialise table: excessively sparse array")
            out += b"["
            for i in range(1, top + 1):
                if i > 1:
                    out += b","
                _json_encode(value[i], out, depth)
            out += b"]"
            return
        out += b"{"
        for n, k in enumerate(keys):
            if k.__class__ is bytes:
                name = k
            elif k.__class__ in (int, float):
                name = _json_number(k)
            else:
                raise LuaLibError("Cannot serialise table: table key must be a number or string")
            if n:
                out += b","
            out += _json_string(name) + b":"
            _json_encode(value[k], out, depth)
        out += b"}"
    else:
        raise LuaLibError(f"Cannot serialise {_lua_type(value) or cls.__name__}: type not supported")


def json_encode(value: Any) -> bytes:
    out = bytearray()
    with deep_recursion(2 * JSON_MAX_DEPTH):
        _json_encode(value, out)
    return bytes(out)


def _json_too_deep(text: bytes) -> None:
    """lua_cjson's decode_max_depth: the 1001st nested array or object is refused,
    named by its (1-based) character. Python's parser would stop with its own
    recursion error (or go deeper), so the text is looked at first when it could
    nest that deep."""
    if text.count(b"[") + text.count(b"{") <= JSON_MAX_DEPTH:
        return
    depth = 0
    in_string = escaped = False
    for i, byte in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte == 0x5B or byte == 0x7B:
            depth += 1
            if depth > JSON_MAX_DEPTH:
                raise LuaLibError(f"Found too many nested data structures ({depth}) at character {i + 1}")
        elif byte == 0x5D or byte == 0x7D:
            depth -= 1


def json_decode(text: bytes, table: Callable, null: object) -> object:
    _json_too_deep(text)
    with deep_recursion(3 * JSON_MAX_DEPTH):
        return _from_json(json.loads(text), table, null)


def _from_json(value: Any, table: Callable, null: object) -> object:
    """A decoded JSON value as Lua's; JSON's null is cjson.null (a nil would drop the
    array item or object member, and `{"a":null}` would encode back as `{}`)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, list):
        return table([_from_json(v, table, null) for v in value])
    if isinstance(value, dict):
        return table({k.encode("utf-8", "surrogatepass"): _from_json(v, table, null)
                      for k, v in value.items()})
    if value is None:
        return null
    return value


# --- cmsgpack -------------------------------------------------------------------------
# lua_cmsgpack's LUACMSGPACK_MAX_NESTING: a table nested deeper packs as nil
# (a table that holds itself packs 16 levels, then nil).
MP_MAX_NESTING = 16


def _mp_pack(value: Any, out: bytearray, level: int = 0) -> None:
    cls = value.__class__
    if value is None or (level >= MP_MAX_NESTING and _lua_type(value) == "table"):
        out.append(0xC0)
    elif cls is bool:
        out.append(0xC3 if value else 0xC2)
    elif cls is float and not value.is_integer():
        out += b"\xcb" + pystruct.pack(">d", value)
    elif cls in (int, float):
        n = int(value)
        if 0 <= n < 128:
            out.append(n)
        elif -32 <= n < 0:
            out += pystruct.pack(">b", n)
        elif 0 <= n < 1 << 8:
            out += b"\xcc" + pystruct.pack(">B", n)
        elif 0 <= n < 1 << 16:
            out += b"\xcd" + pystruct.pack(">H", n)
        elif 0 <= n < 1 << 32:
            out += b"\xce" + pystruct.pack(">I", n)
        elif n >= 0:
            out += b"\xcf" + pystruct.pack(">Q", n)
        elif n >= -128:
            out += b"\xd0" + pystruct.pack(">b", n)
        elif n >= -(1 << 15):
            out += b"\xd1" + pystruct.pack(">h", n)
        elif n >= -(1 << 31):
            out += b"\xd2" + pystruct.pack(">i", n)
        else:
            out += b"\xd3" + pystruct.pack(">q", n)
    elif cls is bytes:
        n = len(value)
        if n < 32:
            out.append(0xA0 | n)
        elif n < 1 << 8:
            out += b"\xd9" + pystruct.pack(">B", n)
        elif n < 1 << 16:
            out += b"\xda" + pystruct.pack(">H", n)
        else:
            out += b"\xdb" + pystruct.pack(">I", n)
        out += value
    elif _lua_type(value) == "table":
        keys = list(value.keys())
        n = len(keys)
        if all(k.__class__ in (int, float) and k == i + 1 for i, k in enumerate(sorted(keys))):
            out += bytes([0x90 | n]) if n < 16 else (b"\xdc" + pystruct.pack(">H", n) if n < 1 << 16 else b"\xdd" + pystruct.pack(">I", n))
            for i in range(1, n + 1):
                _mp_pack(value[i], out, level + 1)
        else:
            out += bytes([0x80 | n]) if n < 16 else (b"\xde" + pystruct.pack(">H", n) if n < 1 << 16 else b"\xdf" + pystruct.pack(">I", n))
            for k in keys:
                _mp_pack(k, out, level + 1)
                _mp_pack(value[k], out, level + 1)
    else:
        out.append(0xC0)


_MP_FIXED = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h",
             0xD2: ">i", 0xD3: ">q", 0xCA: ">f", 0xCB: ">d"}


# lua_cmsgpack decodes on Lua's C stack: the 4000th nested array or map overflows it.
MP_MAX_DECODE_DEPTH = 4000
_MP_OVERFLOW = {"array": "stack overflow (in function mp_decode_to_lua_array)",
                "map": "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"}


def _mp_unpack(data: bytes, pos: int, table: Callable, depth: int = 0) -> tuple[object, int]:
    if pos >= len(data):
        raise LuaLibError("Missing bytes in input.")
    b = data[pos]
    pos += 1
    if b < 0x80:
        return b, pos
    if b >= 0xE0:
        return b - 256, pos
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return data[pos:pos + n], pos + n
    if 0x90 <= b <= 0x9F:
        return _mp_array(data, pos, b & 0x0F, table, depth)
    if 0x80 <= b <= 0x8F:
        return _mp_map(data, pos, b & 0x0F, table, depth)
    if b == 0xC0:
        return None, pos
    if b in (0xC2, 0xC3):
        return b == 0xC3, pos
    fmt = _MP_FIXED.get(b)
    if fmt is not None:
        size = pystruct.calcsize(fmt)
        return pystruct.unpack_from(fmt, data, pos)[0], pos + size
    if b in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        size = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}[b]
        n = int.from_bytes(data[pos:pos + size], "big")
        pos += size
        return data[pos:pos + n], pos + n
    if b in (0xDC, 0xDD, 0xDE, 0xDF):
        size = 2 if b in (0xDC, 0xDE) else 4
        n = int.from_bytes(data[pos:pos + size], "big")
        pos += size
        return (_mp_array if b in (0xDC, 0xDD) else _mp_map)(data, pos, n, table, depth)
    raise LuaLibError("Bad data format in input.")


def _mp_array(data: bytes, pos: int, n: int, table: Callable, depth: int) -> tuple[object, int]:
    depth += 1
    if depth >= MP_MAX_DECODE_DEPTH:
        raise LuaLibError(_MP_OVERFLOW["array"])
    items = []
    for _ in range(n):
        item, pos = _mp_unpack(data, pos, table, depth)
        items.append(item)
    return table(items), pos


def _mp_map(data: bytes, pos: int, n: int, table: Callable, depth: int) -> tuple[object, int]:
    depth += 1
    if depth >= MP_MAX_DECODE_DEPTH:
        raise LuaLibError(_MP_OVERFLOW["map"])
    items = {}
    for _ in range(n):
        key, pos = _mp_unpack(data, pos, table, depth)
        value, pos = _mp_unpack(data, pos, table, depth)
        items[key] = value
    return table(items), pos


# --- struct (Roberto Ierusalimschy's struct library) ------------------------------------------
_STRUCT_SIZES = {"b": 1, "B": 1, "h": 2, "H": 2, "l": 8, "L": 8, "T": 8, "i": 4, "I": 4,
                 "f": 4, "d": 8}


def _struct_items(fmt: bytes) -> list[tuple[str, int]]:
    """(code, size) per item; endianness marks come through as ('<'|'>', 0)."""
    items = []
    text = fmt.decode("latin-1")
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        digits = ""
        while i < len(text) and text[i].isdigit():
            digits += text[i]
            i += 1
        if c in "<>!=":
            items.append((">" if c == ">" else "<", 0))
        elif c in "iI":
            items.append((c, int(digits) if digits else 4))
        elif c == "c":
            items.append((c, int(digits) if digits else 1))
        elif c in _STRUCT_SIZES or c in "xsz ":
            if c != " ":
                items.append((c, _STRUCT_SIZES.get(c, 1)))
        else:
            raise LuaLibError(f"invalid format option '{c}'")
    return items


def _struct_pack(fmt: bytes, *values: Any) -> bytes:
    out = bytearray()
    order = "<"
    args = list(values)
    for code, size in _struct_items(fmt):
        if size == 0:
            order = code
        elif code == "x":
            out.append(0)
        elif code in "fd":
            out += pystruct.pack(order + code, float(args.pop(0)))
        elif code in "bBhHlLTiI":
            n = int(args.pop(0)) & ((1 << (8 * size)) - 1)
            out += n.to_bytes(size, "little" if order == "<" else "big")
        elif code == "c":
            raw = args.pop(0)
            out += raw[:size].ljust(size, b"\0")
        elif code == "s":
            raw = args.pop(0)
            out += raw + b"\0"
        elif code == "z":
            raw = args.pop(0)
            out += raw + b"\0"
    return bytes(out)


def _struct_unpack(fmt: bytes, data: bytes, init: Any = 1) -> tuple:
    pos = int(init) - 1
    order = "<"
    results: list[object] = []
    for code, size in _struct_items(fmt):
        if size == 0:
            order = code
            continue
        if code in "sz":
            end = data.index(b"\0", pos)
            results.append(data[pos:end])
            pos = end + 1
            continue
        if pos + size > len(data):
            raise LuaLibError("data string too short")
        chunk = data[pos:pos + size]
        pos += size
        if code == "x":
            continue
        if code in "fd":
            results.append(pystruct.unpack(order + code, chunk)[0])
        elif code == "c":
            results.append(chunk)
        else:
            n = int.from_bytes(chunk, "little" if order == "<" else "big")
            if code in "bhliT" and code != "T" and n >= 1 << (8 * size - 1):
                n -= 1 << (8 * size)
            results.append(n)
    results.append(pos + 1)
    return tuple(results)


def _struct_size(fmt: bytes) -> int:
    total = 0
    for code, size in _struct_items(fmt):
        if code in "sz":
            raise LuaLibError("options 's' and 'z' have no fixed size")
        total += size
    return total


def make_libraries(table: Callable, null: object, where: Callable) -> dict[str, object]:
    """The four library tables, built with the runtime's `table` (table_from); `null`
    is the runtime's cjson.null; `where` gives luaL_error's prefix for the line that
    called the library ("user_script:1: ", or "" when a C function called it)."""
    def guard(fn: Callable) -> Callable:
        # A Python exception must reach Lua as the library's message, as luaL_error words it.
        def run(*args: object) -> object:
            try:
                return fn(*args)
            except (LuaLibError, TypeError, ValueError, IndexError, OverflowError, pystruct.error) as error:
                raise LuaLibError(where().decode("utf-8", "surrogateescape") + str(error)) from None
        return run

    keep_buffer = [True]

    def encode_keep_buffer(*args: Any) -> bool:
        """lua_cjson's setting for reusing its buffer (no effect on the output): "on",
        "off" or a boolean sets it; the setting is the answer."""
        if len(args) > 1:
            raise LuaLibError("bad argument #2 to 'encode_keep_buffer' (found too many arguments)")
        value = args[0] if args else None
        if value.__class__ is bool:
            keep_buffer[0] = value
        elif value in (b"on", b"off"):
            keep_buffer[0] = value == b"on"
        elif isinstance(value, bytes):
            text = value.decode("utf-8", "surrogateescape")
            raise LuaLibError(f"bad argument #1 to 'encode_keep_buffer' (invalid option '{text}')")
        elif value.__class__ in (int, float):
            text = f"{value:.14g}"
            raise LuaLibError(f"bad argument #1 to 'encode_keep_buffer' (invalid option '{text}')")
        elif value is not None:
            raise LuaLibError(f"bad argument #1 to 'encode_keep_buffer' (string expected, got {_lua_type(value)})")
        return keep_buffer[0]

    cjson = {
        b"encode": guard(json_encode),
        b"decode": guard(lambda text: json_decode(text, table, null)),
        b"null": null,
        b"encode_keep_buffer": guard(encode_keep_buffer),
    }
    cmsgpack = {
        b"pack": guard(lambda *values: b"".join(_pack_one(v) for v in values)),
        b"unpack": guard(lambda data: _unpack_all(data, table)),
        b"unpack_one": guard(lambda data, offset=0: _unpack_some(data, table, 1, offset)),
        b"unpack_limit": guard(lambda data, limit, offset=0: _unpack_some(data, table, limit, offset)),
    }
    return {
        "bit": table({k: guard(v) for k, v in bit_functions().items()}),
        "cjson": table(cjson),
        "cmsgpack": table(cmsgpack),
        "struct": table({b"pack": guard(_struct_pack), b"unpack": guard(_struct_unpack),
                         b"size": guard(_struct_size)}),
    }


def _pack_one(value: Any) -> bytes:
    out = bytearray()
    _mp_pack(value, out)
    return bytes(out)


def _unpack_some(data: bytes, table: Callable, limit: Any, offset: Any) -> tuple:
    """cmsgpack.unpack_one / unpack_limit: the offset to go on from (-1 at the end),
    then up to `limit` values from `offset` (mp_unpack_full: a limit and offset of 0
    unpack all, as cmsgpack.unpack)."""
    limit, start, size = int(limit), int(offset), len(data)
    if limit == 0 and start == 0:
        return _unpack_all(data, table)
    if start < 0 or limit < 0:
        # (Redis prints the input's length as the limit.)
        raise LuaLibError(f"Invalid request to unpack with offset of {start} and limit of {size}.")
    if start > size:
        raise LuaLibError(f"Start offset {start} greater than input length {size}.")
    values: list[object] = []
    pos = start
    with deep_recursion(2 * MP_MAX_DECODE_DEPTH):
        while pos < size and len(values) < limit:
            value, pos = _mp_unpack(data, pos, table)
            values.append(value)
    return (-1 if pos >= size else pos, *values)


def _unpack_all(data: bytes, table: Callable) -> tuple:
    values = []
    pos = 0
    with deep_recursion(2 * MP_MAX_DECODE_DEPTH):
        while pos < len(data):
            value, pos = _mp_unpack(data, pos, table)
            values.append(value)
    return tuple(values)
