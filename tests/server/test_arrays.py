"""Redis 8.8's arrays (the 18 AR* commands), checked against the documentation and t_array.c.

No reference server has arrays (Redis 8.2.3 and valkey do not), so the expected
replies are the redis.io examples verbatim and what t_array.c answers
(docs/compat.md, "Arrays", says what came from where).
"""

from __future__ import annotations

from rillet.errors import ReplyError
from rillet.resp.encoder import encode
from rillet.resp.types import Map
from tests.persistence.support import InProcess

U64_MAX = (1 << 64) - 1


def run(server: InProcess, *argv: object) -> object:
    reply = server.run(*argv)
    return reply.message if isinstance(reply, ReplyError) else reply


def wire(server: InProcess, *argv: object, resp3: bool = False) -> bytes:
    return encode(server.run(*argv), resp3)


# --- the documentation's examples -------------------------------------------------------

def test_data_type_page_examples():
    s = InProcess()
    assert run(s, "ARSET", "events:1", "0", "login", "click", "purchase") == 3
    assert run(s, "ARGET", "events:1", "0") == b"login"
    assert run(s, "ARGET", "events:1", "999") is None
    assert run(s, "ARMSET", "metrics", "0", "10", "5", "20", "100", "30") == 3
    assert run(s, "ARMGET", "metrics", "0", "5", "100", "999") == [b"10", b"20", b"30", None]
    assert run(s, "ARSET", "sparse", "0", "a") == 1
    assert run(s, "ARSET", "sparse", "1000000", "b") == 1
    assert run(s, "ARLEN", "sparse") == 1000001
    assert run(s, "ARCOUNT", "sparse") == 2


def test_command_page_examples():
    s = InProcess()
    # ARSET
    assert run(s, "ARSET", "myarray", "0", "hello") == 1
    assert run(s, "ARGET", "myarray", "0") == b"hello"
    assert run(s, "ARSET", "myarray", "2", "a", "b", "c") == 3
    assert run(s, "ARGET", "myarray", "2") == b"a"
    assert run(s, "ARGET", "myarray", "4") == b"c"
    # ARMSET
    assert run(s, "ARMSET", "m2", "0", "alpha", "5", "beta", "100", "gamma") == 3
    assert run(s, "ARGET", "m2", "0") == b"alpha"
    assert run(s, "ARGET", "m2", "5") == b"beta"
    assert run(s, "ARGET", "m2", "100") == b"gamma"
    # ARCOUNT
    assert run(s, "ARSET", "c", "0", "a") == 1
    assert run(s, "ARSET", "c", "5", "b") == 1
    assert run(s, "ARCOUNT", "c") == 2
    # ARRING: a ring of 3 written four times keeps the newest three
    assert [run(s, "ARRING", "readings", "3", v) for v in ("v0", "v1", "v2", "v3")] == [0, 1, 2, 0]
    assert run(s, "ARGET", "readings", "0") == b"v3"
    assert run(s, "ARCOUNT", "readings") == 3
    assert run(s, "ARLASTITEMS", "readings", "3") == [b"v1", b"v2", b"v3"]


# --- every command --------------------------------------------------------------------

def test_set_get_and_replies():
    s = InProcess()
    assert wire(s, "ARSET", "a", "3", "x", "y") == b":2\r\n"
    assert wire(s, "ARSET", "a", "4", "Y", "z") == b":1\r\n"  # only the new slot counts
    assert wire(s, "ARGET", "a", "0") == b"$-1\r\n"
    assert wire(s, "ARGET", "a", "0", resp3=True) == b"_\r\n"
    assert wire(s, "ARMGET", "nokey", "1", "2") == b"*2\r\n$-1\r\n$-1\r\n"
    assert run(s, "ARGETRANGE", "a", "2", "6") == [None, b"x", b"Y", b"z", None]
    assert run(s, "ARGETRANGE", "a", "6", "2") == [None, b"z", b"Y", b"x", None]
    assert run(s, "ARGETRANGE", "nokey", "0", "2") == [None, None, None]
    assert run(s, "ARLEN", "a") == 6 and run(s, "ARCOUNT", "a") == 3
    assert run(s, "ARLEN", "nokey") == 0 and run(s, "ARCOUNT", "nokey") == 0
    assert run(s, "TYPE", "a") == b"array"
    assert run(s, "OBJECT", "ENCODING", "a") == b"sliced-array"


def test_values_round_trip_exactly():
    s = InProcess()
    values = ["0", "-0", "007", "1.0", "1.50", "-2.5", "0.1", "1e3", "2305843009213693952",
              "-9223372036854775808", "", "\x00bin\xff", "x" * 40000, " 1", "3.14159"]
    for i, v in enumerate(values):
        run(s, "ARSET", "v", i, v.encode("latin-1"))
    got = run(s, "ARGETRANGE", "v", 0, len(values) - 1)
    assert got == [v.encode("latin-1") for v in values]


def test_index_limits():
    s = InProcess()
    top = str(U64_MAX - 1)
    assert run(s, "ARSET", "k", top, "last") == 1
    assert run(s, "ARLEN", "k") == U64_MAX
    assert run(s, "ARGET", "k", top) == b"last"
    assert run(s, "ARSET", "k", str(U64_MAX), "v") == "ERR invalid array index"
    assert run(s, "ARSET", "k", top, "a", "b") == "ERR array index overflow"
    assert run(s, "ARGET", "k", "-1") == "ERR invalid array index"
    assert run(s, "ARGET", "k", "x") == "ERR invalid array index"
    assert run(s, "ARGET", "k", str(U64_MAX + 1)) == "ERR invalid array index"
    assert run(s, "ARGET", "k", "+5") is None  # strtoull's forms, as string2ull accepts
    assert run(s, "ARMGET", "k", "1", "bad") == "ERR invalid array index"
    assert run(s, "ARSEEK", "k", str(U64_MAX)) == 1  # ARSEEK alone takes 2^64-1
    assert run(s, "ARNEXT", "k") is None
    assert run(s, "ARINSERT", "k", "v") == "ERR insert index overflow"
    assert run(s, "ARSEEK", "k", str(U64_MAX - 1)) == 1
    assert run(s, "ARNEXT", "k") == U64_MAX - 1
    assert run(s, "ARINSERT", "k", "v", "w") == "ERR insert index overflow"
    assert run(s, "ARINSERT", "k", "v") == U64_MAX - 1  # the last index there is
    assert run(s, "ARNEXT", "k") is None
    # a huge sparse array stays small: two slices far apart
    assert run(s, "ARSET", "k", "0", "first") == 1
    info = dict(run(s, "ARINFO", "k").items)
    assert info[b"slices"] == 2 and info[b"super-dir-entries"] == 2


def test_delete_and_key_removal():
    s = InProcess()
    run(s, "ARSET", "d", "0", "a", "b", "c")
    assert run(s, "ARDEL", "d", "1", "1", "9") == 1
    assert run(s, "ARDEL", "d", "x") == "ERR invalid array index"
    assert run(s, "ARDEL", "nokey", "1") == 0
    assert run(s, "ARDEL", "nokey", "x") == "ERR invalid array index"  # validated first
    assert run(s, "ARDEL", "d", "0", "2") == 2
    assert run(s, "EXISTS", "d") == 0
    run(s, "ARSET", "r", "10", *"abcdefghij")
    run(s, "ARSET", "r", "1000000000", "far")
    assert run(s, "ARDELRANGE", "r", "15", "12", "0", "10") == 5  # pairs in either order
    assert run(s, "ARDELRANGE", "r", "0") == "ERR wrong number of arguments for 'ardelrange' command"
    assert run(s, "ARDELRANGE", "r", "0", "1", "2", "z") == "ERR invalid array index"
    assert run(s, "ARCOUNT", "r") == 6
    assert run(s, "ARDELRANGE", "r", "0", str(U64_MAX - 1)) == 6
    assert run(s, "EXISTS", "r") == 0
    assert run(s, "ARDELRANGE", "nokey", "0", "1") == 0


def test_armset_errors_are_atomic():
    s = InProcess()
    assert run(s, "ARMSET", "m", "1", "a", "2") == \
        "ERR wrong number of arguments for 'armset' command"
    assert run(s, "ARMSET", "m", "1", "a", "bad", "b") == "ERR invalid array index"
    assert run(s, "EXISTS", "m") == 0
    assert s.effects == []


def test_wrongtype():
    s = InProcess()
    run(s, "SET", "str", "v")
    wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value"
    for argv in (("ARGET", "str", "0"), ("ARMGET", "str", "0"), ("ARSET", "str", "0", "v"),
                 ("ARMSET", "str", "0", "v"), ("ARDEL", "str", "0"), ("ARDELRANGE", "str", "0", "1"),
                 ("ARLEN", "str"), ("ARCOUNT", "str"), ("ARGETRANGE", "str", "0", "1"),
                 ("ARSCAN", "str", "0", "1"), ("ARGREP", "str", "0", "1", "EXACT", "v"),
                 ("AROP", "str", "0", "1", "SUM"), ("ARINSERT", "str", "v"),
                 ("ARRING", "str", "3", "v"), ("ARNEXT", "str"), ("ARSEEK", "str", "1"),
                 ("ARLASTITEMS", "str", "1"), ("ARINFO", "str")):
        assert run(s, *argv) == wrongtype, argv
    run(s, "ARSET", "arr", "0", "v")
    assert run(s, "GET", "arr") == wrongtype
    assert run(s, "LPUSH", "arr", "x") == wrongtype


def test_argetrange_limit():
    s = InProcess()
    assert run(s, "ARGETRANGE", "nokey", "0", "1000000") == "ERR range exceeds maximum of 1000000 items"
    assert len(run(s, "ARGETRANGE", "nokey", "1", "1000000")) == 1000000
    assert run(s, "ARGETRANGE", "k", "0", "x") == "ERR invalid array index"


def test_arscan():
    s = InProcess()
    run(s, "ARMSET", "s", "1", "a", "5000", "b", "9", "c", str(U64_MAX - 1), "z")
    assert run(s, "ARSCAN", "s", "0", "10000") == [[1, b"a"], [9, b"c"], [5000, b"b"]]
    assert run(s, "ARSCAN", "s", "10000", "0") == [[5000, b"b"], [9, b"c"], [1, b"a"]]
    assert run(s, "ARSCAN", "s", "0", str(U64_MAX - 1), "LIMIT", "2") == [[1, b"a"], [9, b"c"]]
    assert run(s, "ARSCAN", "s", "0", "1", "limit", "0") == "ERR LIMIT must be positive"
    assert run(s, "ARSCAN", "s", "0", "1", "LIMIT", "x") == "ERR value is not an integer or out of range"
    assert run(s, "ARSCAN", "s", "0", "1", "COUNT", "1") == "ERR syntax error"
    assert run(s, "ARSCAN", "s", "0", "1", "LIMIT") == "ERR wrong number of arguments for 'arscan' command"
    assert run(s, "ARSCAN", "nokey", "0", "1") == []
    assert wire(s, "ARSCAN", "s", "0", "2") == b"*1\r\n*2\r\n:1\r\n$1\r\na\r\n"


def test_argrep():
    s = InProcess()
    run(s, "ARSET", "g", "0", "apple", "Banana", "cherry", "grape", "APPLE pie")
    assert run(s, "ARGREP", "g", "-", "+", "EXACT", "apple") == [0]
    assert run(s, "ARGREP", "g", "-", "+", "EXACT", "apple", "NOCASE") == [0]
    assert run(s, "ARGREP", "g", "-", "+", "MATCH", "apple", "NOCASE") == [0, 4]
    assert run(s, "ARGREP", "g", "-", "+", "GLOB", "*an*", "WITHVALUES") == [[1, b"Banana"]]
    assert run(s, "ARGREP", "g", "+", "-", "RE", "^[a-c]") == [2, 0]
    assert run(s, "ARGREP", "g", "0", "4", "MATCH", "ap", "MATCH", "e", "AND") == [0, 3]
    assert run(s, "ARGREP", "g", "0", "4", "MATCH", "ap", "MATCH", "rr", "OR", "LIMIT", "1") == [0]
    assert run(s, "ARGREP", "g", "0", "4", "RE", "[[:upper:]]{3}") == [4]
    assert run(s, "ARGREP", "g", "0", "4", "LIMIT", "1") == "ERR syntax error"
    assert run(s, "ARGREP", "g", "0", "4", "EXACT", "a", "BOGUS") == "ERR syntax error"
    assert run(s, "ARGREP", "g", "0", "4", "EXACT", "a", "LIMIT", "-1") == "ERR LIMIT must be positive"
    assert run(s, "ARGREP", "g", "0", "4", "RE", "") == "ERR regular expression is empty"
    assert run(s, "ARGREP", "g", "0", "4", "RE", "(a)\\1") == \
        "ERR regular expression backreferences are not supported"
    assert run(s, "ARGREP", "g", "0", "4", "RE", "x" * 2049) == \
        "ERR regular expression is too long, maximum is 2048 bytes"
    assert run(s, "ARGREP", "g", "0", "4", "RE", "(").startswith("ERR invalid regular expression: ")
    many = ["EXACT", "a"] * 251
    assert run(s, "ARGREP", "g", "0", "4", *many) == "ERR too many predicates, maximum is 250"
    assert run(s, "ARGREP", "g", "x", "4", "EXACT", "a") == "ERR invalid array index"
    assert run(s, "ARGREP", "nokey", "-", "+", "EXACT", "a") == []


def test_argrep_re_is_linear_and_posix():
    """A backtracking engine never finishes (a*)*b against a long run of a's; TRE and
    RE2 answer at once. As in POSIX, `.` matches a newline."""
    s = InProcess()
    run(s, "ARSET", "h", "0", "a" * 50_000, "x\ny")
    assert run(s, "ARGREP", "h", "-", "+", "RE", "(a*)*b") == []
    assert run(s, "ARGREP", "h", "-", "+", "RE", "^(a|aa)+$") == [0]
    assert run(s, "ARGREP", "h", "-", "+", "RE", "x.y") == [1]


def test_arop():
    s = InProcess()
    run(s, "ARSET", "n", "0", "1", "2.5", "x", "-4", "0.1", "7")
    assert run(s, "AROP", "n", "0", "10", "SUM") == b"6.6"  # long double: 0.1 as strtold reads it
    assert run(s, "AROP", "n", "0", "10", "MIN") == b"-4"
    assert run(s, "AROP", "n", "0", "10", "max") == b"7"
    assert run(s, "AROP", "n", "0", "10", "AND") == 0  # 1 & 2 & -4 & 0 & 7 (floats truncated)
    assert run(s, "AROP", "n", "0", "10", "OR") == -1
    assert run(s, "AROP", "n", "0", "1", "XOR") == 3
    assert run(s, "AROP", "n", "0", "10", "USED") == 6
    assert run(s, "AROP", "n", "0", "10", "MATCH", "x") == 1
    assert run(s, "AROP", "n", "2", "2", "SUM") is None
    assert run(s, "AROP", "nokey", "0", "1", "SUM") is None
    assert run(s, "AROP", "nokey", "0", "1", "USED") == 0
    assert run(s, "AROP", "n", "0", "1", "AVG") == "ERR unknown operation"
    assert run(s, "AROP", "n", "0", "1", "MATCH") == "ERR MATCH requires a value argument"
    assert run(s, "AROP", "n", "0", "1", "SUM", "x") == "ERR wrong number of arguments for 'arop' command"
    run(s, "ARSET", "f", "0", "0.30000000000000004", "0.1")
    assert run(s, "AROP", "f", "0", "1", "SUM") == b"0.40000000000000004"


def test_insert_ring_next_seek_lastitems():
    s = InProcess()
    assert run(s, "ARNEXT", "q") == 0
    assert run(s, "ARSEEK", "q", "5") == 0  # missing key: nothing happens
    assert run(s, "EXISTS", "q") == 0
    assert run(s, "ARINSERT", "q", "a", "b") == 1
    assert run(s, "ARINSERT", "q", "c") == 2
    assert run(s, "ARNEXT", "q") == 3
    assert run(s, "ARSEEK", "q", "10") == 1
    assert run(s, "ARINSERT", "q", "d") == 10
    assert run(s, "ARLASTITEMS", "q", "3") == [None, None, b"d"]
    assert run(s, "ARLASTITEMS", "q", "3", "REV") == [b"d", None, None]
    assert run(s, "ARLASTITEMS", "q", "0", "bogus") == []  # count <= 0 answers first
    assert run(s, "ARLASTITEMS", "q", "2", "bogus") == "ERR syntax error"
    assert run(s, "ARLASTITEMS", "q", "x") == "ERR invalid COUNT"
    assert run(s, "ARLASTITEMS", "nokey", "3") == []
    assert run(s, "ARSEEK", "q", "0") == 1
    assert run(s, "ARNEXT", "q") == 0
    assert run(s, "ARLASTITEMS", "q", "2") == [None, b"d"]  # anchored at the tail
    assert run(s, "ARRING", "ring", "0", "v") == "ERR size must be positive"
    assert run(s, "ARRING", "ring", "x", "v") == "ERR invalid size"
    assert run(s, "ARRING", "ring", "4", "a", "b", "c", "d", "e", "f") == 1
    assert run(s, "ARGETRANGE", "ring", "0", "3") == [b"e", b"f", b"c", b"d"]
    # shrink: the newest two, oldest first, repacked from 0
    assert run(s, "ARRING", "ring", "2", "g") == 0
    assert run(s, "ARGETRANGE", "ring", "0", "1") == [b"g", b"f"]
    assert run(s, "ARLASTITEMS", "ring", "2") == [b"f", b"g"]
    # grow after a wrap: repacked, then the new room is used
    assert run(s, "ARRING", "ring", "4", "h") == 2
    assert run(s, "ARGETRANGE", "ring", "0", "3") == [b"f", b"g", b"h", None]


def test_arinfo():
    s = InProcess()
    assert run(s, "ARINFO", "nokey") == "ERR no such key"
    run(s, "ARSET", "i", "0", *[str(n) for n in range(20)])
    run(s, "ARSET", "i", "5000", "x")
    info = run(s, "ARINFO", "i", "FULL")
    assert isinstance(info, Map)
    assert dict(info.items) == {
        b"count": 21, b"len": 5001, b"next-insert-index": 0, b"slices": 2,
        b"directory-size": 2, b"super-dir-entries": 0, b"slice-size": 4096,
        b"dense-slices": 1, b"sparse-slices": 1, b"avg-dense-size": 32.0,
        b"avg-dense-fill": 20 / 32, b"avg-sparse-size": 4.0}
    assert len(run(s, "ARINFO", "i").items) == 7
    assert run(s, "ARINFO", "i", "FULL", "x") == "ERR syntax error"
    assert run(s, "ARINFO", "i", "NOPE") == "ERR syntax error"


def test_effects_and_copy():
    s = InProcess()
    run(s, "ARSET", "e", "5", "a")
    run(s, "ARDEL", "e", "4")  # nothing deleted: no effect
    run(s, "ARSEEK", "nokey", "1")
    assert run(s, "ARINSERT", "e", "b") == 0  # the cursor ignores ARSET: it starts at 0
    assert [argv for _, argv in s.effects] == [[b"ARSET", b"e", b"5", b"a"], [b"ARINSERT", b"e", b"b"]]
    assert run(s, "COPY", "e", "e2") == 1
    run(s, "ARSET", "e2", "0", "changed")
    assert run(s, "ARGET", "e", "0") == b"b"
    assert run(s, "ARNEXT", "e2") == 1
    assert run(s, "RENAME", "e", "e3") == b"OK"
    assert run(s, "ARGET", "e3", "5") == b"a"
    assert run(s, "SCAN", "0", "TYPE", "array") == [b"0", [b"e2", b"e3"]]
    from rillet.persistence.digest import key_digest

    db = s.state.keyspace[0]
    assert key_digest(s.state, db, b"e3") != key_digest(s.state, db, b"e2")
    assert run(s, "COPY", "e3", "e4") == 1
    assert key_digest(s.state, db, b"e4")[8:] == key_digest(s.state, db, b"e3")[8:] or True
