"""Request parsing without sockets: multibulk and inline, split anywhere, every protocol error.

Expected error texts are Redis's (networking.c); tests/server/test_protocol.py checks
the same inputs against real redis-server processes.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.resp.parser import INLINE_MAX_SIZE, RequestParser, SlowParser, split_args
from tests.helpers.requests import feed_all, pack


def split_randomly(data: bytes, rng: random.Random, max_cuts: int = 30) -> list[bytes]:
    if len(data) < 2:
        return [data]
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, max_cuts))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


# --- well-formed multibulk ------------------------------------------------------------

def test_pipeline_in_one_read():
    data = pack("SET", "k", "v") + pack("GET", "k") + pack("PING")
    assert feed_all([data]) == ([[b"SET", b"k", b"v"], [b"GET", b"k"], [b"PING"]], None)


def test_binary_safe_arguments():
    value = bytes(range(256)) + b"\r\n*1\r\n$4\r\nPING\r\n+OK\r\n"
    assert feed_all([pack("SET", b"k\r\n", value)]) == ([[b"SET", b"k\r\n", value]], None)


def test_empty_argument_and_empty_commands_are_skipped():
    data = b"*0\r\n" + pack("ECHO", "") + b"*-1\r\n" + pack("PING")
    assert feed_all([data]) == ([[b"ECHO", b""], [b"PING"]], None)


@pytest.mark.parametrize("arg", [b"*", b"a*b", b"=", b"+", b"(", b"%", b"~", b">", b"|", b"$"])
def test_arguments_that_look_like_resp_type_bytes(arg):
    # XADD's '*' and payloads holding RESP type bytes must not confuse the fast path.
    data = pack("XADD", "s", arg, "f", arg) * 3
    assert feed_all([data]) == ([[b"XADD", b"s", arg, b"f", arg]] * 3, None)


def test_byte_by_byte_feeding():
    commands = [[b"SET", b"key:%d" % i, b"v" * i] for i in range(20)] + [[b"XADD", b"s", b"*", b"a", b"1"]]
    data = b"".join(pack(*c) for c in commands)
    assert feed_all([data[i : i + 1] for i in range(len(data))]) == (commands, None)


def test_random_splits_agree_with_one_read():
    rng = random.Random(1234)
    commands = []
    for _ in range(200):
        args = [rng.choice([b"SET", b"GET", b"XADD", b"ECHO"])]
        args += [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 30)))
                 for _ in range(rng.randrange(0, 5))]
        commands.append(args)
    data = b"".join(pack(*c) for c in commands)
    assert feed_all([data]) == (commands, None)
    for _ in range(100):
        assert feed_all(split_randomly(data, rng)) == (commands, None)


def test_large_value_across_many_reads():
    value = b"x" * 300_000
    data = pack("SET", "big", value) + pack("PING")
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]
    assert feed_all(chunks) == ([[b"SET", b"big", value], [b"PING"]], None)


def test_split_right_after_an_argument_then_next_read_starts_with_dollar():
    # A read that ends between two arguments of one command: the next read starts
    # with '$', which must continue that command, not start an inline one.
    assert feed_all([b"*2\r\n$4\r\nECHO\r\n", b"$5\r\nhello\r\n"]) == ([[b"ECHO", b"hello"]], None)
    assert feed_all([b"*2\r\n", b"$4\r\nECHO\r\n", b"$2\r\nhi\r\n"]) == ([[b"ECHO", b"hi"]], None)


@pytest.mark.parametrize("tail", [b"$", b":", b"-", b"_", b",", b"#", b"!"])
def test_read_ending_in_a_lone_type_byte_keeps_it(tail):
    # hiredis consumes a lone type byte at the end of a read without saying so
    # (has_data() is False): the byte starts an inline command in Redis.
    data = pack("PING") + pack("ECHO", "a")
    assert feed_all([data + tail, b"1\r\n"]) == ([[b"PING"], [b"ECHO", b"a"], [tail + b"1"]], None)


def test_fast_path_resumes_after_a_split_command():
    parser = RequestParser()
    assert parser.feed(b"*1\r\n$4\r\nPI") == ([], None)
    got, error = parser.feed(b"NG\r\n" + pack("ECHO", "a") * 3)
    assert error is None and got == [[b"PING"]] + [[b"ECHO", b"a"]] * 3
    assert parser._slow is None  # back on hiredis


# --- inline commands --------------------------------------------------------------------

@pytest.mark.parametrize("line,args", [
    (b"PING\r\n", [b"PING"]),
    (b"PING\n", [b"PING"]),
    (b"  SET   k  v  \r\n", [b"SET", b"k", b"v"]),
    (b'SET k "a b"\r\n', [b"SET", b"k", b"a b"]),
    (b"SET k 'a b'\r\n", [b"SET", b"k", b"a b"]),
    (b'ECHO "\\x41\\x4a\\n\\r\\t\\b\\a\\\\\\""\r\n', [b"ECHO", b"AJ\n\r\t\b\a\\\""]),
    (b'ECHO "\\xZZ"\r\n', [b"ECHO", b"xZZ"]),
    (b"ECHO 'it\\'s'\r\n", [b"ECHO", b"it's"]),
    (b"ECHO 'a\\nb'\r\n", [b"ECHO", b"a\\nb"]),
    (b'ECHO ""\r\n', [b"ECHO", b""]),
    (b'ECHO a"b c" d\r\n', [b"ECHO", b"ab c", b"d"]),
    (b"ECHO a\x0bb\r\n", [b"ECHO", b"a\x0bb"]),  # \v only separates between words
    (b"\x0bECHO ab\r\n", [b"ECHO", b"ab"]),
    (b'ECHO "a"\x0b\r\n', [b"ECHO", b"a"]),
    (b"ECHO a\rb\r\n", [b"ECHO", b"a", b"b"]),
])
def test_inline(line, args):
    assert feed_all([line]) == ([args], None)


def test_inline_blank_lines_are_skipped_and_mix_with_multibulk():
    data = b"\r\n\n  \r\nPING\r\n" + pack("ECHO", "x") + b"ECHO y\r\n" + pack("PING")
    assert feed_all([data]) == ([[b"PING"], [b"ECHO", b"x"], [b"ECHO", b"y"], [b"PING"]], None)


def test_inline_split_across_reads():
    assert feed_all([b"SET k ", b'"a', b' b"', b"\r", b"\n"]) == ([[b"SET", b"k", b"a b"]], None)


@pytest.mark.parametrize("line", [b'PING "a\r\n', b"PING 'a\r\n", b'PING "a"b\r\n', b"PING 'a'b\r\n",
                                  b'PING "a\\"\r\n'])
def test_unbalanced_quotes(line):
    assert feed_all([line]) == ([], "ERR Protocol error: unbalanced quotes in request")


def test_split_args_matches_sdssplitargs_on_nul():
    # The C function stops at the first NUL byte.
    assert split_args(b"SET a\x00b c") == [b"SET", b"a"]
    assert split_args(b'"a\x00b"') is None


# --- protocol errors (exact texts) ---------------------------------------------------------

MB = "ERR Protocol error: invalid multibulk length"
BL = "ERR Protocol error: invalid bulk length"


@pytest.mark.parametrize("data,commands,error", [
    (b"*x\r\n", [], MB),
    (b"*\r\n", [], MB),
    (b"*+1\r\n$4\r\nPING\r\n", [], MB),
    (b"*01\r\n$4\r\nPING\r\n", [], MB),
    (b"*1 \r\n$4\r\nPING\r\n", [], MB),
    (b"*-0\r\n", [], MB),
    (b"*3000000000\r\n", [], MB),
    (b"*99999999999999999999\r\n", [], MB),
    (b"*1\r\n$x\r\n", [], BL),
    (b"*1\r\n$\r\n", [], BL),
    (b"*1\r\n$-1\r\n", [], BL),
    (b"*1\r\n$ 4\r\nPING\r\n", [], BL),
    (b"*1\r\n$04\r\nPING\r\n", [], BL),
    (b"*1\r\n$+4\r\nPING\r\n", [], BL),
    (b"*1\r\n$536870913\r\n", [], BL),
    (b"*1\r\n+PING\r\n", [], "ERR Protocol error: expected '$', got '+'"),
    (b"*1\r\n:1\r\n", [], "ERR Protocol error: expected '$', got ':'"),
    (b"*1\r\n*1\r\n$4\r\nPING\r\n", [], "ERR Protocol error: expected '$', got '*'"),
    (b"*2\r\n$4\r\nECHO\r\n=8\r\ntxt:PING\r\n", [], "ERR Protocol error: expected '$', got '='"),
    (b"*2\r\n$4\r\nECHO\r\n(12\r\n", [], "ERR Protocol error: expected '$', got '('"),
    (b"*1\r\n~1\r\n$1\r\na\r\n", [], "ERR Protocol error: expected '$', got '~'"),
    (b"*1\r\n%1\r\n$1\r\na\r\n$1\r\nb\r\n", [], "ERR Protocol error: expected '$', got '%'"),
    (b"*1\r\n%1\r\n*1\r\n$1\r\na\r\n$1\r\nb\r\n", [], "ERR Protocol error: expected '$', got '%'"),
    (b"*2\r\n$4\r\nECHO\r\n|1\r\n$1\r\na\r\n$1\r\nb\r\n", [], "ERR Protocol error: expected '$', got '|'"),
    (b"*2\r\n$4\r\nECHO\r\n>1\r\n$1\r\na\r\n", [], "ERR Protocol error: expected '$', got '>'"),
    (b"*2\r\n$4\r\nECHO\r\n#t\r\n", [], "ERR Protocol error: expected '$', got '#'"),
    (b"*2\r\n$4\r\nECHO\r\n_\r\n", [], "ERR Protocol error: expected '$', got '_'"),
    (b"*2\r\n$4\r\nECHO\r\n,1.5\r\n", [], "ERR Protocol error: expected '$', got ','"),
    (b"*2\r\n$4\r\nECHO\r\n!3\r\nERR\r\n", [], "ERR Protocol error: expected '$', got '!'"),
    (b"*2\r\n$4\r\nECHO\r\n-ERR x\r\n", [], "ERR Protocol error: expected '$', got '-'"),
    (b"*1\r$4\r\nPING\r\n", [], "ERR Protocol error: expected '$', got '4'"),
    (b"*1\r\n$4\r\nPING\r\n*1\r\n$-5\r\n", [[b"PING"]], BL),
    (b"*1\r\n$4\r\nPING\r\n*2\r\n:1\r\n", [[b"PING"]], "ERR Protocol error: expected '$', got ':'"),
    (b"PING\r\n*x\r\n", [[b"PING"]], MB),
])
def test_protocol_errors(data, commands, error):
    assert feed_all([data]) == (commands, error)
    # Same verdict however the bytes arrive.
    assert feed_all([data[i : i + 1] for i in range(len(data))]) == (commands, error)


@pytest.mark.parametrize("data", [
    b"*1\r\n$4\r\nPING\r",       # waiting for the byte after '\r'
    b"*1\r\n$4\r\nPING\n",
    b"*1\n$4\nPING\n",           # '\n' alone does not end a count line
    b"*1\r\n$4\r\nPI",
    b"PING",
    b"PING\x00junk\r\n",          # Redis searches lines with strchr(): a NUL hides the end
    b"*1\x00\r\n$4\r\nPING\r\n",
    b"*1\r\n$4\x00\r\nPING\r\n",
    b"\x00\r\n",
])
def test_incomplete_requests_wait(data):
    parser = RequestParser()
    assert parser.feed(data) == ([], None)


def test_only_two_bytes_after_a_bulk_are_skipped_unchecked():
    # Redis (and hiredis) skip the two bytes after a payload without looking at them.
    assert feed_all([b"*1\r\n$4\r\nPINGxx\r\nPING\r\n"]) == ([[b"PING"], [b"PING"]], None)
    assert feed_all([b"*1\rX$4\r\nPING\r\n"]) == ([[b"PING"]], None)


def test_dollar_line_outside_multibulk_is_an_inline_command():
    assert feed_all([b"$4\r\nPING\r\n"]) == ([[b"$4"], [b"PING"]], None)


def test_too_big_inline_request():
    data = b"x" * (INLINE_MAX_SIZE + 1)
    assert feed_all([data]) == ([], "ERR Protocol error: too big inline request")
    # At the limit it still waits for the newline.
    assert feed_all([b"x" * INLINE_MAX_SIZE]) == ([], None)


def test_too_big_count_strings():
    assert feed_all([b"*" + b"1" * INLINE_MAX_SIZE + b"2"]) == (
        [], "ERR Protocol error: too big mbulk count string")
    assert feed_all([b"*1\r\n$" + b"1" * INLINE_MAX_SIZE]) == (
        [], "ERR Protocol error: too big bulk count string")


def test_nul_hidden_line_end_becomes_too_big_inline():
    parser = RequestParser()
    assert parser.feed(b"PING\x00\r\n") == ([], None)
    got, error = parser.feed(b"y" * INLINE_MAX_SIZE)
    assert error is not None and error.message == "ERR Protocol error: too big inline request"


def test_proto_max_bulk_len():
    assert feed_all([b"*1\r\n$2000000\r\n"], max_bulk_len=1024 * 1024) == ([], BL)
    assert feed_all([b"*1\r\n$1048576\r\n"], max_bulk_len=1024 * 1024) == ([], None)


def test_query_buffer_limit_closes_without_reply():
    parser = RequestParser(max_query_buffer=1024 * 1024)
    chunk = b"*2\r\n$3\r\nGET\r\n$2000000\r\n" + b"x" * 60000
    got, error = parser.feed(chunk)
    assert error is None
    for _ in range(20):
        got, error = parser.feed(b"x" * 60000)
        if error is not None:
            break
    assert error is not None and error.message == ""


# --- unauthenticated limits ---------------------------------------------------------------

def test_unauthenticated_limits():
    def unauth(data):
        parser = RequestParser()
        parser.authenticated = False
        return feed_all([data], parser)

    assert unauth(b"*11\r\n") == ([], "ERR Protocol error: unauthenticated multibulk length")
    assert unauth(b"*1\r\n$16385\r\n") == ([], "ERR Protocol error: unauthenticated bulk length")
    assert unauth(pack("AUTH", "x" * 16384)) == ([[b"AUTH", b"x" * 16384]], None)
    ten = [b"a"] * 10
    assert unauth(pack(*ten)) == ([ten], None)


def test_authentication_lifts_the_limits_for_later_reads():
    parser = RequestParser()
    parser.authenticated = False
    assert parser.feed(pack("AUTH", "pw")) == ([[b"AUTH", b"pw"]], None)
    parser.authenticated = True
    eleven = [b"a"] * 11
    assert parser.feed(pack(*eleven)) == ([eleven], None)


# --- the slow parser agrees with hiredis on valid input ----------------------------------------

command_lists = st.lists(
    st.lists(st.binary(max_size=20), min_size=1, max_size=6), min_size=1, max_size=20
)


@settings(max_examples=150, deadline=None)
@given(command_lists, st.randoms(use_true_random=False))
def test_property_any_split_parses_the_same(commands, rng):
    data = b"".join(pack(*c) for c in commands)
    assert feed_all([data]) == (commands, None)
    assert feed_all(split_randomly(data, rng)) == (commands, None)
    slow = SlowParser(512 * 1024 * 1024)
    slow.buf += data
    assert slow.parse() == (commands, None)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.randoms(use_true_random=False))
def test_property_garbage_same_verdict_however_split(data, rng):
    # Commands and error must not depend on how the bytes were cut into reads.
    whole = feed_all([data])
    assert feed_all(split_randomly(data, rng)) == whole
    assert feed_all([data[i : i + 1] for i in range(len(data))]) == whole


def test_huge_announced_count_allocates_nothing_up_front():
    # hiredis would allocate the whole announced array at once (8 bytes per
    # element); Redis, and rillet, grow the argument list as arguments arrive.
    import tracemalloc

    tracemalloc.start()
    try:
        parser = RequestParser()
        assert parser.feed(b"*50000000\r\n$4\r\nECHO\r\n") == ([], None)
        got, error = RequestParser().feed(b"*1\r\n~50000000\r\n")
        assert error is not None and error.message == "ERR Protocol error: expected '$', got '~'"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024


def test_many_tiny_arguments_count_against_the_query_buffer_limit():
    parser = RequestParser(max_query_buffer=1024 * 1024)
    got, error = parser.feed(b"*2000000000\r\n")
    assert (got, error) == ([], None)
    for _ in range(100):
        got, error = parser.feed(b"$0\r\n\r\n" * 10000)
        if error is not None:
            break
    assert error is not None and error.message == ""
