"""ACL against Redis 8.2.3: rules and their descriptions, errors, NOPERM texts, ACL LOG, DRYRUN.

A rillet and a Redis 8.2.3 of this module's own (users are server-wide state),
the same commands sent to both, raw reply bytes compared.
"""

from __future__ import annotations

import re

import pytest

from rillet.commands import table
from tests.helpers import servers
from tests.helpers.diff import Pair, mask_acl_log
from tests.helpers.wire import Wire


@pytest.fixture(scope="module")
def acl_servers():
    yield from servers.own_pair8()


@pytest.fixture
def p(acl_servers):
    pair = Pair(acl_servers[0].port, acl_servers[1].port)
    yield pair
    for name in (b"t", b"alice", b"sel", b"bob"):
        pair.both("ACL", "DELUSER", name)
    pair.both("FLUSHALL")
    pair.close()


def _as(acl_servers, user: str, password: str = "pw") -> Pair:
    pair = Pair(acl_servers[0].port, acl_servers[1].port)
    pair.check("AUTH", user, password)
    return pair


RULE_SETS = [
    "+get +set -get", "+@all", "+@all -@all +get", "allcommands -get", "nocommands +get",
    "+config -config|get", "+select|0 +select|1 -select", "+select|0 +select|1",
    "-@all +@read -@read", "+@read +get", "+get +@read", "+config|get +config",
    "~a ~a ~b", "%RW~x %R~x", "%R~x %W~x", "%W~y", "resetkeys ~a resetkeys", "~a allkeys",
    "&a allchannels", "&a &b &a", ">p <p", "nopass >p", ">p nopass", "resetpass", "reset",
    "on >a >b >a", "on #" + "a" * 64, "(+get)", "(~a +get) (%R~b +@read) clearselectors",
    "(~a +get) (%R~b +@read)", "on off", "+@all -config|get", "+@stream -xadd +xadd",
    "-@dangerous +@all -@dangerous", "+@keyspace -del", "skip-sanitize-payload",
    "on nopass ~* &* +@all", "+client|list +client", "+xinfo|stream", "+acl|whoami -acl",
]


@pytest.mark.parametrize("rules", RULE_SETS)
def test_setuser_described_as_redis(p, rules):
    p.check("ACL", "SETUSER", "t", *rules.split())
    p.check("ACL", "LIST")
    p.check("ACL", "GETUSER", "t")
    p.check("ACL", "USERS")


def test_getuser_resp3(p):
    p.check("HELLO", "3", normalise=lambda raw: b"")
    p.check("ACL", "SETUSER", "t", "on", ">pw", "%R~r*", "(~a* +get)", "+@read")
    p.check("ACL", "GETUSER", "t")
    p.check("ACL", "GETUSER", "nobody")


BAD_RULES = [
    "+foo", "+@foo", "-@foo", "+acl|foo", "-get|foo", "%X~y", "%~y", "%R", "allkeys ~a",
    "allchannels &a", "#abc", "!abc", "<nothere", "(~a", "(~a +get", "bogus", "+config|get|x",
    "~a b", "&", "on +get ~a +foo", "%", "%RW", "%R~", "%Rx~a",
]


@pytest.mark.parametrize("rules", BAD_RULES)
def test_setuser_errors(p, rules):
    p.check("ACL", "SETUSER", "t", "on", "+ping")
    p.check("ACL", "SETUSER", "t", *rules.split())
    p.check("ACL", "LIST")  # nothing of a refused SETUSER applied


@pytest.mark.parametrize("rules", [
    ["on", "", "+get"], ["", "5"], [""], ["(", "~a)", ""], ["(~a", "", "+get)"],
])
def test_setuser_empty_rule_is_a_no_op(p, rules):
    """Found by the command fuzzer: Redis skips an empty rule."""
    p.check("ACL", "SETUSER", "t", *rules)
    p.check("ACL", "GETUSER", "t")


def test_setuser_errors_on_names(p):
    p.check("ACL", "SETUSER", "a b")
    p.check("ACL", "SETUSER", "a\0b")
    p.check("ACL", "SETUSER")
    p.check("ACL", "DELUSER", "default")
    p.check("ACL", "DELUSER", "nobody", "other")
    p.check("ACL", "SETUSER", "t")
    p.check("ACL", "DELUSER", "t", "t")


def test_misc_subcommands(p):
    ours, ref = p.both("ACL", "CAT")
    # Redis 8.8's "array" category (rillet's arrays) is the one Redis 8.2.3 lacks, last.
    assert ours == ref.replace(b"*21\r\n", b"*22\r\n", 1) + b"$5\r\narray\r\n"
    for category in ("stream", "read", "write", "keyspace", "admin", "dangerous", "fast", "slow",
                     "connection", "transaction", "blocking", "STREAM"):
        ours, ref = p.both("ACL", "CAT", category)
        # Redis has commands rillet does not: every command rillet lists must be in Redis's list.
        ours_names = set(re.findall(rb"\$\d+\r\n([^\r]+)\r\n", ours))
        ours_names -= {s.name.encode() for s in table.all_specs() if s.group == "array"}
        ref_names = set(re.findall(rb"\$\d+\r\n([^\r]+)\r\n", ref))
        assert ours_names and ours_names <= ref_names | {
            b"xnack", b"xcfgset", b"xidmprecord", b"digest", b"delex", b"msetex", b"increx", b"hotkeys",
            b"rillet.xretention", b"rillet.xdeadletter",  # rillet's own
            *(b"hotkeys|" + sub for sub in (b"start", b"stop", b"get", b"reset"))}
    p.check("ACL", "CAT", "nope")
    p.check("ACL", "CAT", "a", "b")
    p.check("ACL", "WHOAMI")
    p.check("ACL", "WHOAMI", "x")
    p.check("ACL", "HELP")
    p.check("ACL", "SAVE")
    p.check("ACL", "LOAD")
    p.check("ACL", "GENPASS", "0")
    p.check("ACL", "GENPASS", "4097")
    p.check("ACL", "GENPASS", "x")
    p.check("ACL", "GENPASS", "1", "2")
    p.check("ACL", "LOG", "x")
    p.check("ACL", "LOG", "-1")
    p.check("ACL", "LOG", "1", "2")
    p.check("ACL", "NOPE")
    for bits in ("1", "5", "64", "256", "4096"):
        ours, ref = p.both("ACL", "GENPASS", bits)
        assert len(ours) == len(ref)
    ours, ref = p.both("ACL", "GENPASS")
    assert len(ours) == len(ref)


def test_config_params(p):
    for name in ("aclfile", "acllog-max-len", "acl-pubsub-default"):  # Redis's glob order is its dict's
        p.check("CONFIG", "GET", name)
    p.check("CONFIG", "SET", "acl-pubsub-default", "x")
    p.check("CONFIG", "SET", "acllog-max-len", "-1")
    p.check("CONFIG", "SET", "aclfile", "x")


ALICE = ["on", ">pw", "resetkeys", "~k*", "%R~r*", "%W~w*", "-@all", "+@stream", "-xadd",
         "+get", "+set", "+config|get", "+select|0", "+client", "+acl|whoami", "+mset", "+incr",
         "+rename", "+exists", "+del"]


def test_noperm_texts(p, acl_servers):
    p.check("ACL", "SETUSER", "alice", *ALICE)
    a = _as(acl_servers, "alice")
    try:
        for args in (
            ("GET", "k1"), ("GET", "x"), ("GET", "r1"), ("SET", "r1", "v"), ("SET", "w1", "v"),
            ("SET", "w1", "v", "GET"), ("SET", "k1", "v", "GET"), ("GET", "w1"), ("DEL", "k1", "x"),
            ("DEL", "w1"), ("DEL", "r1"), ("EXISTS", "r1", "w1"), ("EXISTS", "x"),
            ("MSET", "k1", "a", "x", "b"), ("INCR", "w1"), ("INCR", "k2"),
            ("RENAME", "k1", "w2"), ("RENAME", "w1", "k1"), ("SELECT", "1"), ("SELECT", "0"),
            ("PING",), ("CONFIG", "SET", "x", "y"), ("CONFIG", "GET", "maxmemory"),
            ("XREAD", "STREAMS", "k1", "x1", "0", "0"), ("XREAD", "STREAMS", "k1", "r1", "0", "0"),
            ("XADD", "k1", "*", "f", "v"), ("XLEN", "r1"), ("XLEN", "x"),
            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "k1", "x", ">", ">"),
            ("XGROUP", "CREATE", "r1", "g", "$", "MKSTREAM"),
            ("ACL", "WHOAMI"), ("ACL", "LIST"), ("FOO",), ("GET",),
        ):
            a.check(*args)
        a.check("MULTI")
        a.check("EXEC")
    finally:
        a.close()


def test_selectors_and_transactions(p, acl_servers):
    p.check("ACL", "SETUSER", "sel", "on", ">pw", "~a*", "+get", "+multi", "+exec",
            "(~b* +set)", "(%R~c* +@read)")
    s = _as(acl_servers, "sel")
    try:
        for args in (("SET", "a1", "v"), ("SET", "b1", "v"), ("GET", "b1"), ("GET", "a1"),
                     ("GET", "c1"), ("XLEN", "c1"), ("XLEN", "d1"), ("SET", "c1", "x")):
            s.check(*args)
        s.check("MULTI")
        s.check("GET", "zz")
        s.check("GET", "a1")
        s.check("EXEC")
        s.check("MULTI")
        s.check("GET", "a1")
        s.check("EXEC")
    finally:
        s.close()
    p.check("ACL", "LOG", "3", normalise=mask_acl_log)  # context "multi" for those refused in MULTI
    p.check("ACL", "DRYRUN", "sel", "set", "a1", "v")
    p.check("ACL", "DRYRUN", "sel", "set", "b1", "v")
    p.check("ACL", "DRYRUN", "sel", "get", "b1")
    p.check("ACL", "DRYRUN", "sel", "get", "a1")


def test_dryrun(p):
    p.check("ACL", "SETUSER", "alice", *ALICE)
    for args in (
        ("alice", "get", "x"), ("alice", "get", "k"), ("alice", "del", "k"), ("alice", "GET", "k"),
        ("alice", "config", "get", "x"), ("alice", "config", "set", "x", "y"),
        ("alice", "xread", "streams", "k1", "x", "0", "0"), ("nobody", "get", "b1"),
        ("alice", "foo"), ("alice", "get"), ("alice", "config", "nope"),
        ("alice", "select", "0"), ("alice", "select", "1"), ("alice", "set", "r1", "v"),
    ):
        p.check("ACL", "DRYRUN", *args)


def test_acl_log_and_info(p, acl_servers):
    p.check("ACL", "LOG", "RESET")
    p.check("CONFIG", "RESETSTAT")
    p.check("ACL", "SETUSER", "alice", *ALICE)
    a = _as(acl_servers, "alice")
    try:
        for args in (("GET", "x"), ("GET", "x"), ("DEL", "k1"), ("SET", "r1", "v"), ("MULTI",),
                     ("XLEN", "zz")):
            a.check(*args)
        a.check("AUTH", "alice", "bad")
        a.check("AUTH", "nobody", "x")
    finally:
        a.close()
    p.check("ACL", "LOG", normalise=mask_acl_log)
    p.check("ACL", "LOG", "2", normalise=mask_acl_log)
    p.check("ACL", "LOG", "0")
    ours, ref = p.both("INFO", "stats")
    pick = re.compile(rb"acl_access_denied_(?!tls_cert)\w+:\d+")  # (tls_cert: Redis 8.6's)
    assert pick.findall(ours) == pick.findall(ref)
    p.check("ACL", "LOG", "RESET")
    p.check("ACL", "LOG")


def test_log_max_len(p, acl_servers):
    p.check("ACL", "LOG", "RESET")
    p.check("CONFIG", "SET", "acllog-max-len", "2")
    try:
        p.check("ACL", "SETUSER", "alice", *ALICE)
        a = _as(acl_servers, "alice")
        try:
            for key in ("x1", "x2", "x3"):
                a.check("GET", key)
        finally:
            a.close()
        p.check("ACL", "LOG", normalise=mask_acl_log)
    finally:
        p.check("CONFIG", "SET", "acllog-max-len", "128")


def test_auth_users_and_client_list(p, acl_servers):
    p.check("ACL", "SETUSER", "bob", "on", ">secret", "+@all", "~*")
    b = Pair(acl_servers[0].port, acl_servers[1].port)
    try:
        b.check("AUTH", "bob", "nope")
        b.check("AUTH", "bob", "secret")
        b.check("ACL", "WHOAMI")
        for wire in (b.ours, b.ref):
            info = wire.call("CLIENT", "INFO")
            assert b" user=bob " in info
        b.check("HELLO", "2", "AUTH", "default", "x", normalise=_hello_mask)
        b.check("ACL", "WHOAMI")
        b.check("HELLO", "2", "AUTH", "nobody", "x")
        b.check("RESET")
        b.check("ACL", "WHOAMI")
        p.check("ACL", "SETUSER", "bob", "off")
        b.check("AUTH", "bob", "secret")
        p.check("ACL", "SETUSER", "bob", "on", "nopass")
        b.check("AUTH", "bob", "anything")
        p.check("CLIENT", "KILL", "USER", "nobody")
    finally:
        b.close()


def _hello_mask(raw: bytes) -> bytes:
    # Redis 8.2.3 reports its vectorset module, and its own version and client id.
    if not raw.startswith(b"*14"):
        return raw
    return raw.split(b"$7\r\nversion")[0]


def test_deluser_disconnects_its_clients(p, acl_servers):
    p.check("ACL", "SETUSER", "bob", "on", ">secret", "+@all", "~*")
    for port in acl_servers[0].port, acl_servers[1].port:
        wire = Wire(port)
        try:
            assert wire.call("AUTH", "bob", "secret") == b"+OK\r\n"
            admin = Wire(port)
            assert admin.call("ACL", "DELUSER", "bob") == b":1\r\n"
            admin.close()
            with pytest.raises((ConnectionError, OSError)):
                wire.call("PING")
        finally:
            wire.close()


def test_requirepass_is_the_default_users_password(acl_servers):
    binary = servers.redis8_binary()
    ours = servers.start_rillet("--requirepass", "s3cret")
    ref = servers.start_redis(binary, "--requirepass", "s3cret", kind="redis8")
    pair = Pair(ours.port, ref.port)
    try:
        pair.check("AUTH", "s3cret")
        pair.check("ACL", "LIST")
        pair.check("ACL", "SETUSER", "default", "resetpass", ">other")
        pair.check("CONFIG", "GET", "requirepass")
        pair.check("CONFIG", "SET", "requirepass", "")
        pair.check("ACL", "LIST")
        pair.check("CONFIG", "SET", "requirepass", "again")
        pair.check("ACL", "LIST")
        fresh = Pair(ours.port, ref.port)
        fresh.check("GET", "x")
        fresh.check("AUTH", "default", "again")
        fresh.close()
    finally:
        pair.close()
        ours.stop()
        ref.stop()


def test_users_from_config_file_and_aclfile(tmp_path):
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    conf = tmp_path / "users.conf"
    conf.write_text("user alice on >pw ~k* +get\nuser default on nopass ~* &* +@all -debug\n")
    aclfile = tmp_path / "users.acl"
    aclfile.write_text("user carol on #" + "b" * 64 + " %R~r* +@read\n")
    started = []
    try:
        for conf_users in (True, False):
            extra = [str(conf)] if conf_users else []
            flags = [] if conf_users else ["--aclfile", str(aclfile)]
            ours = servers.start_rillet(*flags) if not extra else _start_rillet_with_conf(str(conf))
            ref = servers.start_redis(binary, *flags, kind="redis8") if not extra else \
                _start_redis_with_conf(binary, str(conf))
            started += [ours, ref]
            pair = Pair(ours.port, ref.port)
            pair.check("ACL", "LIST")
            pair.check("ACL", "SAVE" if not conf_users else "LOAD")
            if not conf_users:
                pair.check("ACL", "SETUSER", "dave", "on", "+ping")
                pair.check("ACL", "SAVE")
                pair.check("ACL", "SETUSER", "erin")
                pair.check("ACL", "LOAD")
                pair.check("ACL", "LIST")
            pair.close()
    finally:
        for handle in started:
            handle.stop()


def _start_rillet_with_conf(conf: str):
    import os
    import subprocess
    import sys
    import tempfile

    port = servers.free_port()
    workdir = tempfile.mkdtemp(prefix="rillet-test-")
    args = [sys.executable, "-m", "rillet", "server", conf, "--port", str(port), "--bind",
            "127.0.0.1", "--save", "", "--dir", workdir]
    log = open(os.path.join(workdir, "server.log"), "ab")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    handle = servers.ServerHandle("rillet", port, proc, workdir, args)
    servers.wait_ready(port, proc)
    return handle


def _start_redis_with_conf(binary: str, conf: str):
    import os
    import subprocess
    import tempfile

    port = servers.free_port()
    workdir = tempfile.mkdtemp(prefix="redis8-test-")
    args = [binary, conf, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--dir", workdir, "--logfile", os.path.join(workdir, "server.log")]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    handle = servers.ServerHandle("redis8", port, proc, workdir, args)
    servers.wait_ready(port, proc)
    return handle


def test_config_rewrite_writes_users(tmp_path):
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    texts = {}
    for kind in ("rillet", "redis8"):
        conf = tmp_path / f"{kind}.conf"
        conf.write_text("user alice on >pw ~k* +get\n# comment\nuser zed off\n")
        handle = (_start_rillet_with_conf(str(conf)) if kind == "rillet"
                  else _start_redis_with_conf(binary, str(conf)))
        try:
            wire = Wire(handle.port)
            assert wire.call("ACL", "SETUSER", "bob", "on", "nopass", "+ping") == b"+OK\r\n"
            assert wire.call("ACL", "DELUSER", "zed") == b":1\r\n"
            assert wire.call("CONFIG", "REWRITE") == b"+OK\r\n"
            wire.close()
        finally:
            handle.stop()
        lines = conf.read_text().splitlines()
        texts[kind] = [line for line in lines if line.startswith(("user ", "# comment"))]
    assert texts["rillet"] == texts["redis8"]


def test_rules_changed_before_exec(p, acl_servers):
    p.check("ACL", "SETUSER", "bob", "on", ">pw", "~*", "+@all")
    b = _as(acl_servers, "bob")
    try:
        for args in (("MULTI",), ("GET", "k"), ("SET", "k", "v"), ("PING",), ("SET", "x", "1")):
            b.check(*args)
        p.check("ACL", "SETUSER", "bob", "resetkeys", "~x", "-ping")
        b.check("EXEC")
        b.check("GET", "x")
    finally:
        b.close()
    p.check("ACL", "LOG", "3", normalise=mask_acl_log)


def test_acl_pubsub_default_allchannels(p):
    p.check("CONFIG", "SET", "acl-pubsub-default", "allchannels")
    try:
        p.check("ACL", "SETUSER", "t", "reset")
        p.check("ACL", "SETUSER", "bob", "(+get)", "resetchannels", "&x")
        p.check("ACL", "LIST")
    finally:
        p.check("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
