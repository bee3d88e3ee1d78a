"""Reply encoding: every typed reply in RESP2 and RESP3, byte for byte, and back through hiredis."""

from __future__ import annotations

import re

import hiredis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.errors import ReplyError
from rillet.resp.encoder import encode, encode_into, format_double
from rillet.resp.types import (
    NO_REPLY,
    NULL_ARRAY,
    OK,
    QUEUED,
    Map,
    Push,
    Raw,
    SetReply,
    SimpleString,
    Verbatim,
)

# (reply, RESP2 bytes, RESP3 bytes)
CASES = [
    (OK, b"+OK\r\n", b"+OK\r\n"),
    (QUEUED, b"+QUEUED\r\n", b"+QUEUED\r\n"),
    (SimpleString(b"PONG"), b"+PONG\r\n", b"+PONG\r\n"),
    (ReplyError("ERR syntax error"), b"-ERR syntax error\r\n", b"-ERR syntax error\r\n"),
    (ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value"),
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (0, b":0\r\n", b":0\r\n"),
    (1023, b":1023\r\n", b":1023\r\n"),
    (1024, b":1024\r\n", b":1024\r\n"),
    (-1, b":-1\r\n", b":-1\r\n"),
    (2**63 - 1, b":9223372036854775807\r\n", b":9223372036854775807\r\n"),
    (-(2**63), b":-9223372036854775808\r\n", b":-9223372036854775808\r\n"),
    (b"", b"$0\r\n\r\n", b"$0\r\n\r\n"),
    (b"hello", b"$5\r\nhello\r\n", b"$5\r\nhello\r\n"),
    (b"a\r\nb\x00", b"$5\r\na\r\nb\x00\r\n", b"$5\r\na\r\nb\x00\r\n"),
    (bytearray(b"xy"), b"$2\r\nxy\r\n", b"$2\r\nxy\r\n"),
    (memoryview(b"xy"), b"$2\r\nxy\r\n", b"$2\r\nxy\r\n"),
    ("text", b"$4\r\ntext\r\n", b"$4\r\ntext\r\n"),
    (None, b"$-1\r\n", b"_\r\n"),
    (NULL_ARRAY, b"*-1\r\n", b"_\r\n"),
    (True, b":1\r\n", b"#t\r\n"),
    (False, b":0\r\n", b"#f\r\n"),
    (1.5, b"$3\r\n1.5\r\n", b",1.5\r\n"),
    (3.0, b"$1\r\n3\r\n", b",3\r\n"),
    (float("inf"), b"$3\r\ninf\r\n", b",inf\r\n"),
    (float("-inf"), b"$4\r\n-inf\r\n", b",-inf\r\n"),
    ([], b"*0\r\n", b"*0\r\n"),
    ([b"a", 1, None], b"*3\r\n$1\r\na\r\n:1\r\n$-1\r\n", b"*3\r\n$1\r\na\r\n:1\r\n_\r\n"),
    ((b"t",), b"*1\r\n$1\r\nt\r\n", b"*1\r\n$1\r\nt\r\n"),
    ([[b"x", [OK]], []], b"*2\r\n*2\r\n$1\r\nx\r\n*1\r\n+OK\r\n*0\r\n",
     b"*2\r\n*2\r\n$1\r\nx\r\n*1\r\n+OK\r\n*0\r\n"),
    (Map([(b"k", 1), (b"m", Map([]))]),
     b"*4\r\n$1\r\nk\r\n:1\r\n$1\r\nm\r\n*0\r\n",
     b"%2\r\n$1\r\nk\r\n:1\r\n$1\r\nm\r\n%0\r\n"),
    (Map({b"a": b"b"}), b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"%1\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (SetReply([b"a", SimpleString(b"b")]), b"*2\r\n$1\r\na\r\n+b\r\n", b"~2\r\n$1\r\na\r\n+b\r\n"),
    (Push([b"message", b"ch", b"x"]),
     b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n",
     b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n"),
    (Verbatim(b"# Server\r\n"), b"$10\r\n# Server\r\n\r\n", b"=14\r\ntxt:# Server\r\n\r\n"),
    (Verbatim(b"**x**", b"mkd"), b"$5\r\n**x**\r\n", b"=9\r\nmkd:**x**\r\n"),
    (Raw(b":42\r\n"), b":42\r\n", b":42\r\n"),
    (NO_REPLY, b"", b""),
    ([NO_REPLY], b"*1\r\n", b"*1\r\n"),
]


def _case_id(reply) -> str:
    # Without the object's address: the ids must be the same in every process
    # (pytest-xdist workers compare what they collected).
    return re.sub(r" (object )?at 0x[0-9a-f]+", "", repr(reply))[:40]


@pytest.mark.parametrize("reply,resp2,resp3", CASES, ids=[_case_id(c[0]) for c in CASES])
def test_encode_exact_bytes(reply, resp2, resp3):
    assert encode(reply, resp3=False) == resp2
    assert encode(reply, resp3=True) == resp3


def test_error_subclass_encodes_as_error():
    class Custom(ReplyError):
        pass

    assert encode(Custom("NOGROUP No such key")) == b"-NOGROUP No such key\r\n"


def test_unknown_reply_type_is_a_type_error():
    with pytest.raises(TypeError):
        encode(object())


def test_encode_into_appends_to_one_buffer():
    out = bytearray(b"+PONG\r\n")
    encode_into(out, 7, False)
    encode_into(out, [b"a"], True)
    assert bytes(out) == b"+PONG\r\n:7\r\n*1\r\n$1\r\na\r\n"


# Doubles as Redis 8.2 prints them (ZSCORE in RESP3 on redis-server 8.2.3).
@pytest.mark.parametrize("value,text", [
    (1e-5, b"0.00001"), (0.1, b"0.1"), (1e16, b"10000000000000000"),
    (1e18, b"1000000000000000000"), (4.7e18, b"4.7e+18"), (5e18, b"5e+18"), (1e20, b"1e+20"),
    (123.456, b"123.456"), (1.5e300, b"1.5e+300"), (2.5e-300, b"2.5e-300"),
    (0.000123, b"0.000123"), (1234567.125, b"1234567.125"), (-1e-7, b"-1e-7"),
    (1.25e-7, b"1.25e-7"), (1e105, b"1e+105"), (-1.5, b"-1.5"), (1.234567890125e21,
    b"1.234567890125e+21"), (0.0, b"0"), (-0.0, b"-0"), (float("nan"), b"nan"),
])
def test_format_double_matches_redis(value, text):
    assert format_double(value) == text


# --- round trips through hiredis (an independent RESP2/RESP3 reader) ------------------

_INCOMPLETE = object()


def _decode(raw: bytes):
    reader = hiredis.Reader(notEnoughData=_INCOMPLETE)
    reader.feed(raw)
    value = reader.gets()
    assert value is not _INCOMPLETE, raw
    assert reader.gets() is _INCOMPLETE  # exactly one reply
    return value


scalars = st.one_of(
    st.binary(max_size=40),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.none(),
)
replies = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5), max_leaves=25)


def _expected(value, resp3: bool):
    if isinstance(value, list):
        return [_expected(v, resp3) for v in value]
    return value


@settings(max_examples=200, deadline=None)
@given(replies, st.booleans())
def test_round_trip_through_hiredis(reply, resp3):
    assert _decode(encode(reply, resp3)) == _expected(reply, resp3)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.binary(max_size=10), scalars, max_size=6))
def test_map_round_trip(items):
    # RESP3 maps decode to dicts; RESP2 renders the same pairs as a flat array.
    assert _decode(encode(Map(items), True)) == items
    flat = _decode(encode(Map(items), False))
    assert dict(zip(flat[::2], flat[1::2], strict=True)) == items


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False))
def test_double_round_trips(value):
    assert float(format_double(value)) == value
    assert _decode(encode(value, True)) == value
    assert float(_decode(encode(value, False))) == value


def test_resp3_only_types_round_trip():
    assert _decode(encode(True, True)) is True
    assert _decode(encode(False, True)) is False
    assert _decode(encode(None, True)) is None
    assert _decode(encode(SetReply([b"a", b"b"]), True)) == [b"a", b"b"]
    assert _decode(encode(Verbatim(b"hello"), True)) == b"hello"
    push = _decode(encode(Push([b"message", b"c", b"m"]), True))
    assert list(push) == [b"message", b"c", b"m"]


# Every reply type, nested, for comparing the compiled encoder with the Python one.
_every_type = st.recursive(
    st.one_of(
        scalars,
        st.integers(min_value=-(2**70), max_value=2**70),  # beyond int64: the Python writer
        st.booleans(),
        st.floats(allow_nan=True),
        st.text(max_size=10),
        st.binary(max_size=10).map(SimpleString),
        st.just(NULL_ARRAY),
        st.text(max_size=20).map(ReplyError),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.lists(st.tuples(inner, inner), max_size=3).map(Map),
        st.lists(inner, max_size=3).map(SetReply),
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_every_type, st.booleans())
def test_compiled_encoder_writes_the_python_encoders_bytes(reply, resp3):
    from rillet.resp import encoder

    if encoder.encode_into is encoder.python_encode_into:
        pytest.skip("the compiled encoder is not built (or RILLET_PURE is set)")
    compiled, python = bytearray(b"x"), bytearray(b"x")
    encoder.encode_into(compiled, reply, resp3)
    encoder.python_encode_into(python, reply, resp3)
    assert compiled == python
