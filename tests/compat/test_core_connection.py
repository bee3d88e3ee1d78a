"""Connection commands, byte for byte against Redis: PING, ECHO, HELLO, SELECT, QUIT, RESET, CLIENT.

`pair` runs a test against redis-server 7.0 and 8.2; `pair8` only against 8.2, for
behaviour that changed after 7.0 (8.x wins).
"""

from __future__ import annotations

import re
import socket

import pytest

from tests.helpers.diff import Pair
from tests.helpers.wire import Wire


def hello_normalise(raw: bytes) -> bytes:
    """Mask what HELLO legitimately differs in: version, client id, loaded modules."""
    raw = re.sub(rb"(\$7\r\nversion\r\n)\$\d+\r\n[^\r]*\r\n", rb"\1$1\r\nV\r\n", raw)
    raw = re.sub(rb"(\$2\r\nid\r\n):\d+\r\n", rb"\1:0\r\n", raw)
    return re.sub(rb"(\$7\r\nmodules\r\n).*\Z", rb"\1*0\r\n", raw, flags=re.S)


def ports(pair: Pair) -> tuple[int, int]:
    return pair.ours.sock.getpeername()[1], pair.ref.sock.getpeername()[1]


def another(pair: Pair) -> Pair:
    """A second pair of connections to the same two servers."""
    return Pair(*ports(pair))


def test_ping_echo(pair):
    pair.check("PING")
    pair.check("ping", "hello world")
    pair.check("PING", "")
    pair.check("PING", "a", "b")
    pair.check("ECHO", "x\r\ny")
    pair.check("ECHO", "")
    pair.check("ECHO")
    pair.check("ECHO", "a", "b")


def test_ping_in_resp3(pair):
    pair.check("HELLO", "3", normalise=hello_normalise)
    pair.check("PING")
    pair.check("PING", "x")


@pytest.mark.parametrize("args", [
    (), ("2",), ("3",), ("2", "SETNAME", "conn-1"), ("3", "AUTH", "default", "anything"),
    ("3", "SETNAME", "a", "SETNAME", "b"), ("2", "setname", "x", "auth", "default", "pw"),
])
def test_hello_reply(pair, args):
    pair.check("HELLO", *args, normalise=hello_normalise)
    pair.check("CLIENT", "GETNAME")
    pair.check("PING")


@pytest.mark.parametrize("args", [
    ("4",), ("1",), ("0",), ("-1",), ("abc",), ("2.0",), ("99999999999999999999",),
    ("3", "FOO"), ("3", "AUTH"), ("3", "AUTH", "default"), ("3", "SETNAME"),
    ("3", "AUTH", "nouser", "pw"), ("3", "SETNAME", "has space"), ("3", "SETNAME", "new\nline"),
    ("4", "AUTH", "nouser", "pw"), ("abc", "FOO"), ("3", "F\x00O\xff"),
    # found by the command fuzzer: NOPROTO comes before the options, and each SETNAME
    # name is checked where it stands
    ("4", "FOO"), ("1", "AUTH"), ("2", "SETNAME", "a b", "SETNAME", "ok"),
    ("2", "SETNAME", "a b", "FOO"),
])
def test_hello_errors(pair, args):
    pair.check("HELLO", *args, normalise=hello_normalise)
    # A failed HELLO leaves the protocol alone.
    pair.check("PING", "still-resp2?")
    pair.check("CLIENT", "GETNAME")


def test_hello_checks_setname_before_auth_8x(pair8):
    """Redis 8 checks a SETNAME name while parsing, before AUTH runs (7.0 after)."""
    pair8.check("HELLO", "2", "AUTH", "u", "p", "SETNAME", "a b")
    pair8.check("CLIENT", "GETNAME")


def test_hello_switches_back_to_resp2(pair):
    pair.check("HELLO", "3", normalise=hello_normalise)
    pair.check("HELLO", normalise=hello_normalise)
    pair.check("GET", "missing")
    pair.check("HELLO", "2", normalise=hello_normalise)
    pair.check("GET", "missing")


def test_select(pair):
    pair.check("SET", "k", "db0")
    pair.check("SELECT", "1")
    pair.check("GET", "k")
    pair.check("SET", "k", "db1")
    pair.check("SELECT", "15")
    for bad in ("16", "-1", "x", "1.5", "", "01"):
        pair.check("SELECT", bad)
    pair.check("SELECT", "1")
    pair.check("GET", "k")
    pair.check("SELECT", "0")
    pair.check("GET", "k")
    pair.check("SELECT")
    pair.check("SELECT", "1", "2")
    pair.check("FLUSHALL")


def test_quit_replies_ok_and_closes(pair):
    pair.check("QUIT")
    for wire in (pair.ours, pair.ref):
        wire.sock.settimeout(5)
        assert wire.sock.recv(10) == b""


def test_quit_after_pipeline(pair):
    payload = b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n"
    got = []
    for wire in (pair.ours, pair.ref):
        wire.send_raw(payload)
        wire.sock.settimeout(5)
        data = b""
        while True:
            chunk = wire.sock.recv(100)
            if not chunk:
                break
            data += chunk
        got.append(data)
    assert got[0] == got[1] == b"+PONG\r\n+OK\r\n"


def test_reset(pair):
    pair.check("SELECT", "3")
    pair.check("CLIENT", "SETNAME", "before-reset")
    pair.check("HELLO", "3", normalise=hello_normalise)
    pair.check("WATCH", "w")
    pair.check("MULTI")
    pair.check("SET", "k", "v")
    pair.check("RESET")
    pair.check("CLIENT", "GETNAME")
    pair.check("EXEC")
    pair.check("GET", "missing")  # RESP2 null again
    pair.check("SET", "k", "v")
    pair.check("DBSIZE")  # db 0 again
    pair.check("RESET", "x")
    pair.check("SELECT", "3")
    pair.check("DBSIZE")


# --- CLIENT -------------------------------------------------------------------------------

def test_client_setname_getname(pair):
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETNAME", "worker-1")
    pair.check("CLIENT", "GETNAME")
    for bad in ("a b", "a\nb", "\x7f", "tab\tbed", "é"):
        pair.check("CLIENT", "SETNAME", bad)
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETNAME", "")
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETNAME")
    pair.check("CLIENT", "SETNAME", "a", "b")
    pair.check("CLIENT", "GETNAME", "x")


def test_client_name_checked_up_to_nul(pair8):
    # 8.x validates names as C strings; 7.0 looked at every byte.
    pair8.check("CLIENT", "SETNAME", "ok\x00 after nul")
    pair8.check("CLIENT", "GETNAME")
    pair8.check("CLIENT", "SETNAME", "\x00")
    pair8.check("HELLO", "2", "SETNAME", "x\x00 y", normalise=hello_normalise)
    pair8.check("CLIENT", "GETNAME")


def test_select_range(pair):
    for index in ("2147483648", "-2147483649", "-9223372036854775808", "9223372036854775807",
                  "99999999999999999999", "-1", "2147483647"):
        pair.check("SELECT", index)


def test_client_setinfo(pair8):
    pair8.check("CLIENT", "SETINFO", "LIB-NAME", "redis-py")
    pair8.check("CLIENT", "SETINFO", "lib-ver", "5.0.1")
    pair8.check("CLIENT", "SETINFO", "lib-name", "has space")
    pair8.check("CLIENT", "SETINFO", "LIB-NAME", "has space")
    pair8.check("CLIENT", "SETINFO", "lib-name", "nul\x00 then space")
    pair8.check("CLIENT", "SETINFO", "lib-ver", "new\nline")
    pair8.check("CLIENT", "SETINFO", "other", "x")
    pair8.check("CLIENT", "SETINFO", "lib-name")
    pair8.check("CLIENT", "SETINFO", "lib-name", "a", "b")


def test_client_id_is_an_integer(pair):
    ours, ref = pair.both("CLIENT", "ID")
    assert re.fullmatch(rb":\d+\r\n", ours) and re.fullmatch(rb":\d+\r\n", ref)
    pair.check("CLIENT", "ID", "x")


def test_client_unknown_subcommand_and_arity(pair):
    pair.check("CLIENT")
    pair.check("CLIENT", "NOSUCH")
    pair.check("CLIENT", "nosuch", "arg")
    pair.check("CLIENT", "KILL")
    pair.check("CLIENT", "INFO", "x")


# CLIENT LIST / INFO lines: field names in order, and the values that do not
# depend on the process (ids, addresses, ages, buffer sizes and counters do).
_VOLATILE = {
    "id", "addr", "laddr", "fd", "age", "idle", "qbuf", "qbuf-free", "argv-mem", "multi-mem",
    "rbs", "rbp", "obl", "oll", "omem", "tot-mem", "tot-net-in", "tot-net-out", "tot-cmds",
}


def _client_line_fields(raw: bytes) -> list[list[tuple[str, str]]]:
    text = raw.split(b"\r\n", 1)[1].decode()
    text = text[4:] if text.startswith("txt:") else text
    lines = [line for line in text.split("\n") if line.strip()]
    out = []
    for line in lines:
        fields = []
        for item in line.strip().split(" "):
            name, _, value = item.partition("=")
            fields.append((name, "*" if name in _VOLATILE else value))
        out.append(fields)
    return out


def test_client_info_fields(pair8):
    pair8.check("CLIENT", "SETNAME", "info-test")
    pair8.check("SELECT", "2")
    ours, ref = pair8.both("CLIENT", "INFO")
    assert _client_line_fields(ours) == _client_line_fields(ref)
    pair8.check("HELLO", "3", normalise=hello_normalise)
    pair8.check("MULTI")
    pair8.check("PING")
    ours, ref = pair8.both("CLIENT", "INFO")
    assert ours.startswith(b"+QUEUED") and ref.startswith(b"+QUEUED")
    ours, ref = pair8.both("EXEC")
    assert ours[:1] == ref[:1] == b"*"
    ours, ref = pair8.both("CLIENT", "INFO")
    assert ours[:1] == ref[:1] == b"="
    assert _client_line_fields(ours) == _client_line_fields(ref)


def test_client_list_filters(pair8):
    me_ours = int(pair8.ours.call("CLIENT", "ID")[1:-2])
    me_ref = int(pair8.ref.call("CLIENT", "ID")[1:-2])
    ours = pair8.ours.call("CLIENT", "LIST", "ID", str(me_ours))
    ref = pair8.ref.call("CLIENT", "LIST", "ID", str(me_ref))
    assert _client_line_fields(ours) == _client_line_fields(ref)
    assert len(_client_line_fields(ours)) == 1
    pair8.check("CLIENT", "LIST", "ID", "999999")
    pair8.check("CLIENT", "LIST", "TYPE", "pubsub")
    pair8.check("CLIENT", "LIST", "TYPE", "master")
    pair8.check("CLIENT", "LIST", "TYPE", "bogus")
    pair8.check("CLIENT", "LIST", "ID", "abc")
    pair8.check("CLIENT", "LIST", "ID")
    pair8.check("CLIENT", "LIST", "FOO")
    # found by the command fuzzer: TYPE comes alone, ID takes every argument after it
    pair8.check("CLIENT", "LIST", "TYPE", "master", "ID", "1")
    pair8.check("CLIENT", "LIST", "TYPE", "pubsub", "TYPE", "master")
    pair8.check("CLIENT", "LIST", "ID", "999999", "TYPE", "normal")
    pair8.check("CLIENT", "LIST", "TYPE", "bo\x00gus")
    ours, ref = pair8.both("CLIENT", "LIST", "TYPE", "normal")
    assert ours.startswith(b"$") and ref.startswith(b"$")


def test_client_kill(pair):
    victims = another(pair)
    try:
        ids = [int(w.call("CLIENT", "ID")[1:-2]) for w in (victims.ours, victims.ref)]
        assert pair.ours.call("CLIENT", "KILL", "ID", str(ids[0])) == b":1\r\n"
        assert pair.ref.call("CLIENT", "KILL", "ID", str(ids[1])) == b":1\r\n"
        for wire in (victims.ours, victims.ref):
            wire.sock.settimeout(5)
            with pytest.raises((ConnectionError, OSError)):
                wire.call("PING")
    finally:
        victims.close()
    pair.check("CLIENT", "KILL", "ID", "999999")
    pair.check("CLIENT", "KILL", "ID", "0")
    pair.check("CLIENT", "KILL", "ID", "abc")
    pair.check("CLIENT", "KILL", "1.2.3.4:5")
    pair.check("CLIENT", "KILL", "FOO", "bar")
    pair.check("CLIENT", "KILL", "ID")
    pair.check("CLIENT", "KILL", "SKIPME", "maybe")
    pair.check("CLIENT", "KILL", "TYPE", "pubsub")
    pair.check("CLIENT", "KILL", "USER", "nobody")
    # A trailing filter with no value is a syntax error, not an internal error.
    pair.check("CLIENT", "KILL", "ID", "999999", "USER")


def test_client_kill_maxage(pair8):
    pair8.check("CLIENT", "KILL", "MAXAGE", "x")
    pair8.check("CLIENT", "KILL", "MAXAGE", "100000", "SKIPME", "yes")


def test_client_kill_self_and_by_address(pair):
    # SKIPME no: the client kills itself; the reply is still sent.
    for wire in (pair.ours, pair.ref):
        me = wire.call("CLIENT", "ID")[1:-2].decode()
        assert wire.call("CLIENT", "KILL", "ID", me, "SKIPME", "no") == b":1\r\n"
        wire.sock.settimeout(5)
        assert wire.sock.recv(10) == b""
    for port in ports(pair):
        with Wire(port) as victim, Wire(port) as killer:
            line = victim.call("CLIENT", "INFO").decode()
            addr = re.search(r" addr=(\S+)", line).group(1)
            assert killer.call("CLIENT", "KILL", addr) == b"+OK\r\n"
            assert killer.call("CLIENT", "KILL", "ADDR", addr) == b":0\r\n"
            with pytest.raises((ConnectionError, OSError)):
                victim.call("PING")


def test_inline_connection_commands(pair):
    for wire in (pair.ours, pair.ref):
        wire.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ours, ref = [], []
    for wire, out in ((pair.ours, ours), (pair.ref, ref)):
        wire.send_raw(b"PING\r\nECHO 'hi there'\r\nSELECT 1\r\n")
        out += [wire.read_reply() for _ in range(3)]
    assert ours == ref
