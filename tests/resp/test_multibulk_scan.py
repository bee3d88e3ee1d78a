"""The compiled scan of canonical requests (_multibulk.pyx) against the Python parser.

`RequestParser.feed` must give the same commands and the same error with the
scan as without it, however the bytes are cut into reads.
"""

from __future__ import annotations

import random
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.resp import parser as parser_module
from tests.helpers.requests import feed_all as feed_chunks
from tests.helpers.requests import pack

multibulk = pytest.importorskip("rillet.resp._multibulk")
scan = multibulk.scan


def feed_all(chunks, pure: bool):
    with mock.patch.object(parser_module, "_scan", None if pure else scan), \
            mock.patch.object(parser_module, "_scan_bulks", None if pure else multibulk.bulks), \
            mock.patch.object(parser_module, "_blank", None if pure else multibulk.blank), \
            mock.patch.object(parser_module, "_fill", multibulk.fill):
        return feed_chunks(chunks)


def test_scan_takes_whole_canonical_commands_only():
    ping = pack(b"PING")
    assert scan(ping * 3, 100) == ([[b"PING"]] * 3, 3 * len(ping))
    assert scan(ping + ping[:-1], 100) == ([[b"PING"]], len(ping))
    assert scan(pack(b"SET", b"k", b"") + b"PING\r\n", 100) == (
        [[b"SET", b"k", b""]], len(pack(b"SET", b"k", b"")))


@pytest.mark.parametrize("data", [
    b"*01\r\n$4\r\nPING\r\n",  # leading zero
    b"*1\r\n$04\r\nPING\r\n",
    b"*0\r\n",  # an empty command: the Python parser skips it
    b"*-1\r\n",
    b"*+1\r\n$4\r\nPING\r\n",
    b"*1\r\n$-1\r\n",
    b"*1 \r\n$4\r\nPING\r\n",
    b"*1\rx$4\r\nPING\r\n",  # Redis skips the byte after '\r' unread
    b"*1\r\n$4\r\nPINGxx",  # ... and the two after a bulk
    b"*1\r\n:4\r\n",
    b"*1\r\n$5\r\nPING\r\n",  # the bulk runs into its own CRLF
    b"*1\r\n$4\r\nPING\r\n"[:-1],  # incomplete
    b"*1\r\n$11\r\nhello world\r\n".replace(b"11", b"99999999999999999999"),
])
def test_scan_leaves_anything_else_to_the_python_parser(data):
    assert scan(data, 512 * 1024 * 1024) == ([], 0)


def test_scan_leaves_other_types_and_huge_counts_alone():
    ping = pack(b"PING")
    assert scan(bytearray(ping), 100) == ([], 0)
    assert scan(memoryview(ping), 100) == ([], 0)
    assert scan(b"*70000\r\n" + b"$0\r\n\r\n" * 70000, 100) == ([], 0)
    assert scan(b"*3\r\n$0\r\n\r\n", 100) == ([], 0)


def test_scan_respects_proto_max_bulk_len():
    data = pack(b"ECHO", b"x" * 10)
    assert scan(data, 10)[1] == len(data)
    assert scan(data, 9) == ([], 0)


def test_the_name_shared_across_commands_is_an_equal_bytes_object():
    commands, _ = scan(pack(b"GET", b"a") + pack(b"GET", b"b") + pack(b"SET", b"c", b"d"), 100)
    assert commands == [[b"GET", b"a"], [b"GET", b"b"], [b"SET", b"c", b"d"]]
    assert all(type(arg) is bytes for command in commands for arg in command)


pieces = st.one_of(
    st.lists(st.binary(max_size=12), min_size=1, max_size=5).map(lambda c: pack(*c)),
    st.sampled_from([
        b"PING\r\n", b"*0\r\n", b"*01\r\n$1\r\na\r\n", b"*1\r\n$1\r\nax\r\n", b"*-1\r\n",
        b"*1\r\n+a\r\n", b"$1\r\n", b"\r\n", b"*2\r\n$1\r\n*\r\n$1\r\n*\r\n", b"*1\r\n",
    ]),
    st.binary(max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=12), st.randoms(use_true_random=False))
def test_property_same_verdict_with_and_without_the_scan(parts, rng):
    data = b"".join(parts)
    whole = feed_all([data], pure=True)
    assert feed_all([data], pure=False) == whole
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 5))) if len(data) > 1 else []
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    assert feed_all(chunks, pure=False) == feed_all(chunks, pure=True) == whole


def test_random_big_pipelines_agree():
    rng = random.Random(7)
    commands = [[rng.randbytes(rng.randint(0, 40)) for _ in range(rng.randint(1, 6))]
                for _ in range(500)]
    data = b"".join(pack(*c) for c in commands)
    assert feed_all([data], pure=False) == (commands, None)
    chunks = [data[i : i + 777] for i in range(0, len(data), 777)]
    assert feed_all(chunks, pure=False) == feed_all(chunks, pure=True) == (commands, None)


def test_arguments_equal_to_the_previous_commands_are_shared():
    data = (pack(b"XADD", b"s", b"1-1", b"f", b"v") + pack(b"XADD", b"s", b"1-2", b"f", b"v")
            + pack(b"XADD", b"t", b"1-2", b"f" * 33) + pack(b"XADD", b"t", b"1-2", b"f" * 33))
    commands, used = scan(data, 100)
    assert used == len(data)
    assert commands == [[b"XADD", b"s", b"1-1", b"f", b"v"], [b"XADD", b"s", b"1-2", b"f", b"v"],
                        [b"XADD", b"t", b"1-2", b"f" * 33], [b"XADD", b"t", b"1-2", b"f" * 33]]
    assert commands[1][3] is commands[0][3] and commands[1][4] is commands[0][4]
    assert commands[3][3] is not commands[2][3]  # (longer ones are not compared)
    assert all(type(arg) is bytes for command in commands for arg in command)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from([b"", b"a", b"ab", b"ba", b"x" * 32, b"x" * 33, b"\r\n"]),
                         min_size=1, max_size=5), max_size=20))
def test_property_repeated_arguments_read_as_the_python_parser_reads_them(commands):
    data = b"".join(pack(*c) for c in commands)
    assert feed_all([data], pure=False) == feed_all([data], pure=True) == (commands, None)


def test_bulks_takes_the_whole_canonical_arguments_of_a_half_read_command():
    bulks = multibulk.bulks
    buf = bytearray(b"xx$1\r\na\r\n$0\r\n\r\n$3\r\nbc")
    args: list[bytes] = []
    assert bulks(buf, 2, args, 5, 100) == (15, 2, 1)  # stops at the unfinished "$3"
    assert args == [b"a", b""]
    assert bulks(buf, 2, [], 1, 100) == (9, 1, 1)  # never more than the command lacks
    for odd in (b"$01\r\na\r\n", b"$1\rxa\r\n", b"$1\r\naxy", b"$-1\r\n", b":1\r\n", b"$2\r\na"):
        assert bulks(bytearray(odd), 0, args, 3, 100) == (0, 0, 0)  # the Python step's
    assert bulks(bytearray(b"$3\r\nabc\r\n"), 0, [], 1, 2) == (0, 0, 0)  # over the bulk limit


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"$1\r\na\r\n", b"$0\r\n\r\n", b"$1\rxb\r\n", b"$1\r\ncxy",
                                 b"$2\r\n\r\n\r\n", b"$01\r\na\r\n", b"$3\r\nabc\r\n"]),
                min_size=1, max_size=30),
       st.randoms(use_true_random=False))
def test_property_a_half_read_command_parses_the_same_with_and_without_bulks(parts, rng):
    data = b"*%d\r\n" % len(parts) + b"".join(parts) + b"*1\r\n$4\r\nPING\r\n"
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 8)))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    assert feed_all(chunks, pure=False) == feed_all(chunks, pure=True) == feed_all([data], pure=True)


def test_fill_writes_a_blank_argument_within_bounds():
    target = multibulk.blank(4)
    multibulk.fill(target, 1, bytearray(b"abcd"), 1, 3)
    assert target[1:] == b"bcd"
    for at, start, n in ((2, 0, 3), (0, 2, 3), (-1, 0, 1), (0, 0, -1)):
        with pytest.raises(IndexError):
            multibulk.fill(target, at, bytearray(b"abcd"), start, n)


@pytest.mark.parametrize("tail", [b"\r\n", b"xy"])
def test_big_arguments_read_in_place_agree_however_cut(tail):
    big = bytes(range(256)) * 200  # over BIG_ARG (32 kB)
    data = (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % len(big) + big + tail
            + pack(b"ECHO", big[:40_000]) + pack(b"PING"))
    whole = ([[b"SET", b"k", big], [b"ECHO", big[:40_000]], [b"PING"]], None)
    rng = random.Random(len(tail))
    for _ in range(10):
        cuts = sorted(rng.sample(range(1, len(data)), 12))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert feed_all(chunks, pure=False) == feed_all(chunks, pure=True) == whole
    assert feed_all([data[:-3], data[-3:]], pure=False) == whole
