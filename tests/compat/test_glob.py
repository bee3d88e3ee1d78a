"""The glob matcher (rillet/glob.py): Redis's stringmatchlen semantics, and no pattern hangs.

- the compiled kernel equals the Python loop on generated patterns and subjects;
- both equal Redis 8.2.3, asked through KEYS with one key in the db;
- Redis's "pattern matching long nested loops" regressions and a family of
  backtracking worst cases get an answer (a 5 s socket timeout is the
  watchdog: the old regex translation never answered);
- SIGTERM during a long KEYS ends the server once the command is done.
"""

from __future__ import annotations

import signal
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet import glob
from tests.helpers import servers
from tests.helpers.wire import Wire

# Small alphabets, so that generated patterns and subjects meet often and
# every special character (and bytes >= 0x80, signed in Redis's ranges) shows up.
PATTERN_BYTES = st.sampled_from(list(b"ab*?[]^-\\A\x80\xff"))
SUBJECT_BYTES = st.sampled_from(list(b"ab-]\\^A\x80\xff"))
patterns = st.lists(PATTERN_BYTES, max_size=12).map(bytes)
subjects = st.lists(SUBJECT_BYTES, max_size=10).map(bytes)

compiled = glob.glob_match if glob.glob_match is not glob.match else None


@pytest.mark.skipif(compiled is None, reason="the compiled glob kernel is not built")
@settings(max_examples=3000, deadline=None)
@given(patterns, subjects, st.booleans())
def test_compiled_kernel_equals_python(pattern, subject, nocase):
    assert compiled(pattern, subject, nocase) == glob.match(pattern, subject, nocase)


@pytest.mark.parametrize("pattern, subject, expected", [
    (b"h?llo", b"hello", True),
    (b"h*llo", b"heeeello", True),
    (b"h[ae]llo", b"hallo", True),
    (b"h[^e]llo", b"hello", False),
    (b"h[a-b]llo", b"hbllo", True),
    (b"h[b-a]llo", b"hbllo", True),  # reversed ranges are swapped
    (b"h\\*llo", b"h*llo", True),
    (b"a\\", b"a\\", True),  # a trailing backslash is literal
    (b"[abc", b"c", True),  # an unterminated class closes at the end
    (b"*", b"", False),  # callers shortcut "*"; the matcher itself does not
    (b"a*", b"a", True),
    (b"*?" * 50_000, b"a" * 50_000, False),  # past Redis's 1000 nested '*'
])
def test_cases(pattern, subject, expected):
    assert glob.match(pattern, subject) is expected
    assert glob.glob_match(pattern, subject) is expected


@pytest.mark.needs_redis
@settings(max_examples=300, deadline=None)
@given(patterns, subjects)
def test_same_as_redis(redis8_server, rillet_server, pattern, subject):
    # KEYS answers "*" without matching (allkeys), so it cannot show that case.
    if pattern == b"*":
        return
    with Wire(redis8_server.port) as ref, Wire(rillet_server.port) as ours:
        for conn in (ref, ours):
            conn.call("SELECT", 9)
            conn.call("FLUSHDB")
            conn.call("SET", subject, "1")
        assert ours.call("KEYS", pattern) == ref.call("KEYS", pattern), (pattern, subject)
        for conn in (ref, ours):
            conn.call("FLUSHDB")


def _worst_cases():
    # Redis's unit/keyspace.tcl regressions, then patterns whose regex
    # translation backtracked exponentially.
    yield b"a" * 50_000, b"*?" * 50_000
    yield b"a" * 50_000, b"*?a" * 20_000
    for stars in (10, 20, 40):
        yield b"a" * 40, b"a*" * stars + b"b"
        yield b"ab" * 20, b"*a*b" * stars + b"c"
        yield b"a" * 40, b"*[a]?" * stars + b"[^a]"


@pytest.mark.parametrize("key, pattern", list(_worst_cases()))
def test_pathological_patterns_answer(rillet_server, key, pattern):
    with Wire(rillet_server.port, timeout=5.0) as conn:
        conn.call("SELECT", 10)
        conn.call("FLUSHDB")
        conn.call("SET", key, "1")
        assert conn.call("KEYS", pattern) == b"*0\r\n"
        assert conn.call("SCAN", 0, "MATCH", pattern, "COUNT", 100) == b"*2\r\n$1\r\n0\r\n*0\r\n"
        conn.call("FLUSHDB")
        assert conn.call("PING") == b"+PONG\r\n"


@pytest.mark.slow
def test_sigterm_during_long_keys_shuts_down_after_it():
    server = servers.start_rillet()
    try:
        with Wire(server.port) as conn:
            # ~400k keys: KEYS with a non-trivial pattern takes a while in Python.
            for start in range(0, 400_000, 10_000):
                conn.call("MSET", *[x for n in range(start, start + 10_000) for x in (f"k:{n}", "v")])
            conn.send_raw(b"KEYS *[0-9]*[0-9]*z\r\n")
            time.sleep(0.05)
            server.proc.send_signal(signal.SIGTERM)
            try:
                reply = conn.read_reply()
            except (TimeoutError, ConnectionError):
                reply = b""
            # Redis answers the command, then exits; either way the server must stop.
            assert reply in (b"*0\r\n", b"")
        assert server.proc.wait(30) == 0
    finally:
        server.stop(sig_kill=True)
