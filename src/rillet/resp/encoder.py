"""Render typed replies (see `types`) as RESP2 or RESP3 bytes.

`encode_into(out, reply, resp3)` appends to one buffer per batch so the
server does a single transport write for a whole pipeline.
"""

from __future__ import annotations

from rillet.compiled import compiled
from rillet.errors import ReplyError
from rillet.resp.fpconv import redis_double
from rillet.resp.types import (
    OK,
    PONG,
    QUEUED,
    Map,
    NoReply,
    NullArray,
    Push,
    Raw,
    SetReply,
    SimpleString,
    Verbatim,
)

# Small integers are encoded once: counters and lengths dominate integer replies.
INT_REPLIES = [b":%d\r\n" % i for i in range(1024)]
# The status replies sent most, pre-encoded (the same bytes in RESP2 and RESP3).
SIMPLE_REPLIES = {OK: b"+OK\r\n", PONG: b"+PONG\r\n", QUEUED: b"+QUEUED\r\n"}


def _bulk(out: bytearray, value: bytes, resp3: bool) -> None:
    out += b"$%d\r\n%s\r\n" % (len(value), value)


def _str(out: bytearray, value: str, resp3: bool) -> None:
    _bulk(out, value.encode(), resp3)


def _int(out: bytearray, value: int, resp3: bool) -> None:
    if 0 <= value < 1024:
        out += INT_REPLIES[value]
    else:
        out += b":%d\r\n" % value


def _bool(out: bytearray, value: bool, resp3: bool) -> None:
    if resp3:
        out += b"#t\r\n" if value else b"#f\r\n"
    else:
        out += b":1\r\n" if value else b":0\r\n"


def _double(out: bytearray, value: float, resp3: bool) -> None:
    text = format_double(value)
    if resp3:
        out += b",%s\r\n" % text
    else:
        _bulk(out, text, resp3)


# Redis's d2string: integral values as integers, else fpconv_dtoa's Grisu2 digits, which
# are not always the shortest (repr's): 17 digits for some doubles that repr gives in 16.
format_double = redis_double


def _null(out: bytearray, value: None, resp3: bool) -> None:
    out += b"_\r\n" if resp3 else b"$-1\r\n"


def _null_array(out: bytearray, value: NullArray, resp3: bool) -> None:
    out += b"_\r\n" if resp3 else b"*-1\r\n"


def _array(out: bytearray, value: list, resp3: bool) -> None:
    out += b"*%d\r\n" % len(value)
    for item in value:
        _WRITERS[type(item)](out, item, resp3)


def _map(out: bytearray, value: Map, resp3: bool) -> None:
    items = value.items
    out += (b"%%%d\r\n" % len(items)) if resp3 else (b"*%d\r\n" % (2 * len(items)))
    for key, item in items:
        _WRITERS[type(key)](out, key, resp3)
        _WRITERS[type(item)](out, item, resp3)


def _set(out: bytearray, value: SetReply, resp3: bool) -> None:
    out += (b"~%d\r\n" if resp3 else b"*%d\r\n") % len(value.items)
    for item in value.items:
        _WRITERS[type(item)](out, item, resp3)


def _push(out: bytearray, value: Push, resp3: bool) -> None:
    out += (b">%d\r\n" if resp3 else b"*%d\r\n") % len(value.items)
    for item in value.items:
        _WRITERS[type(item)](out, item, resp3)


def _verbatim(out: bytearray, value: Verbatim, resp3: bool) -> None:
    if resp3:
        out += b"=%d\r\n%s:%s\r\n" % (len(value.text) + 4, value.fmt, value.text)
    else:
        _bulk(out, value.text, resp3)


def _simple(out: bytearray, value: SimpleString, resp3: bool) -> None:
    out += b"+%s\r\n" % value


def _error(out: bytearray, value: ReplyError, resp3: bool) -> None:
    message = value.message
    if "\r" in message or "\n" in message:
        # An error echoing client input must not break the protocol line; as
        # Redis's addReplyErrorFormat: trim CR/LF at the ends, spaces inside.
        message = message.strip("\r\n").replace("\r", " ").replace("\n", " ")
    out += b"-%s\r\n" % message.encode("utf-8", "surrogateescape")


def _raw(out: bytearray, value: Raw, resp3: bool) -> None:
    out += value


def _nothing(out: bytearray, value: NoReply, resp3: bool) -> None:
    pass


class _Writers(dict):
    """Writer by exact type; subclasses (of ReplyError, say) resolve through their MRO once."""

    def __missing__(self, kind: type):
        for base in kind.__mro__[1:]:
            if base in self:
                self[kind] = self[base]
                return self[kind]
        raise TypeError(f"cannot encode reply of type {kind.__name__}")


_WRITERS = _Writers({
    bytes: _bulk,
    bytearray: _bulk,
    memoryview: lambda out, v, r: _bulk(out, bytes(v), r),
    str: _str,
    int: _int,
    bool: _bool,
    float: _double,
    type(None): _null,
    list: _array,
    tuple: _array,
    Map: _map,
    SetReply: _set,
    Push: _push,
    Verbatim: _verbatim,
    SimpleString: _simple,
    ReplyError: _error,
    NullArray: _null_array,
    Raw: _raw,
    NoReply: _nothing,
})


def encode_into(out: bytearray, reply: object, resp3: bool) -> None:
    _WRITERS[type(reply)](out, reply, resp3)


def encode(reply: object, resp3: bool = False) -> bytes:
    out = bytearray()
    encode_into(out, reply, resp3)
    return bytes(out)


# The pure-Python encoder, the reference for the compiled one below.
python_encode_into = encode_into

# encode_into compiled for arrays, bulk strings and integers (see _encoder.pyx
# and rillet/compiled.py); without it the Python writers above do all of it.
_encoder = compiled("rillet.resp._encoder")
# (Without encode_into yet when _encoder itself is importing us: something
# imported a compiled module that cimports it, such as server/_fastpath, first.
# _encoder then installs its encode_into here when its own import is done.)
if _encoder is not None and hasattr(_encoder, "encode_into"):
    encode_into = _encoder.encode_into  # noqa: F811
