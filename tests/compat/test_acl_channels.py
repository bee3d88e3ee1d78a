"""ACL channel rules on PUBLISH, SUBSCRIBE, SSUBSCRIBE and PSUBSCRIBE, and what revoking a
channel does to its subscribers (SETUSER, DELUSER, LOAD), against Redis 8.2.3."""

from __future__ import annotations

import pytest

from tests.helpers import servers
from tests.helpers.diff import mask_acl_log
from tests.helpers.wire import Wire, encode_command


@pytest.fixture
def users(rillet_server, redis8_server):
    ports = (rillet_server.port, redis8_server.port)
    for port in ports:
        with Wire(port) as admin:
            assert admin.call("ACL", "SETUSER", "chan", "on", ">pw", "~*", "+@all", "resetchannels",
                              "&news*", "&alerts") == b"+OK\r\n"
    yield ports
    for port in ports:
        with Wire(port) as admin:
            admin.call("ACL", "DELUSER", "chan")


@pytest.mark.parametrize("command", [
    ("PUBLISH", "news:1", "x"), ("PUBLISH", "other", "x"), ("SPUBLISH", "alerts", "x"),
    ("SPUBLISH", "alert", "x"), ("SUBSCRIBE", "news:2", "alerts"), ("SUBSCRIBE", "news", "nope"),
    ("SSUBSCRIBE", "nope"), ("PSUBSCRIBE", "news*"), ("PSUBSCRIBE", "news:*"),
    ("ACL", "DRYRUN", "chan", "PUBLISH", "nope", "x"), ("ACL", "DRYRUN", "chan", "PUBLISH", "news", "x"),
])
def test_channel_rules(users, command):
    replies = []
    for port in users:
        with Wire(port) as conn:
            assert conn.call("AUTH", "chan", "pw") == b"+OK\r\n"
            replies.append(conn.call(*command))
    assert replies[0] == replies[1], command


# --- SSUBSCRIBE and SPUBLISH: shard channels are channels, never keys ---------------------

@pytest.fixture
def keyless(rillet_server, redis8_server):
    """A user with no key pattern: Redis checks a shard channel only against the channel rules."""
    ports = (rillet_server.port, redis8_server.port)
    for port in ports:
        with Wire(port) as admin:
            assert admin.call("ACL", "SETUSER", "shard", "on", ">pw", "resetkeys", "+@all",
                              "resetchannels", "&news*") == b"+OK\r\n"
            admin.call("ACL", "LOG", "RESET")
    yield ports
    for port in ports:
        with Wire(port) as admin:
            admin.call("ACL", "DELUSER", "shard")


@pytest.mark.parametrize("command", [
    ("SSUBSCRIBE", "news.a"), ("SSUBSCRIBE", "nope"), ("SSUBSCRIBE", "news.a", "nope"),
    ("SPUBLISH", "news.a", "x"), ("SPUBLISH", "nope", "x"), ("SUNSUBSCRIBE", "nope"),
    ("ACL", "DRYRUN", "shard", "SPUBLISH", "nope", "x"), ("ACL", "DRYRUN", "shard", "SSUBSCRIBE", "news.a"),
    ("ACL", "DRYRUN", "shard", "SSUBSCRIBE", "news.a", "nope"),
])
def test_shard_channels_are_not_keys(keyless, command):
    seen = []
    for port in keyless:
        with Wire(port) as conn, Wire(port) as admin:
            before = _denials(admin)
            assert conn.call("AUTH", "shard", "pw") == b"+OK\r\n"
            reply = conn.call(*command)
            after = _denials(admin)
            seen.append((reply, mask_acl_log(admin.call("ACL", "LOG", "1")),
                         {kind: after[kind] - before[kind] for kind in after}))
    assert seen[0] == seen[1], command


def _denials(admin: Wire) -> dict[bytes, int]:
    """INFO's acl_access_denied_* counters (but Redis 8.6's tls_cert, which 8.2.3 lacks)."""
    lines = admin.call("INFO", "stats").split(b"\r\n")
    return {line.split(b":")[0]: int(line.split(b":")[1]) for line in lines
            if line.startswith(b"acl_access_denied") and b"tls_cert" not in line}


# --- a revoked channel permission disconnects the subscribers that relied on it --------------

_DEFAULT_LINE = "user default on nopass ~* &* +@all\n"


@pytest.fixture(scope="module")
def aclfile_pair(tmp_path_factory):
    """A rillet and a Redis 8.2.3 of this module's own, each with an aclfile (ACL LOAD)."""
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    files = [tmp_path_factory.mktemp(kind) / "users.acl" for kind in ("rillet", "redis")]
    for path in files:
        path.write_text(_DEFAULT_LINE)
    ours = servers.start_rillet("--aclfile", str(files[0]))
    try:
        ref = servers.start_redis(binary, "--aclfile", str(files[1]), kind="redis8")
    except Exception:
        ours.stop()
        raise
    try:
        yield [(ours.port, files[0]), (ref.port, files[1])]
    finally:
        ours.stop()
        ref.stop()


def _frames_until_closed_or_pong(conn: Wire, connected: bool) -> list[bytes]:
    """What the subscriber got after the change: up to the EOF when it was disconnected,
    else up to the reply of a PING sent now, or its refusal (a bounded wait either way)."""
    frames = []
    try:
        if connected:
            conn.send_raw(b"*1\r\n$4\r\nPING\r\n")
        while True:
            frame = conn.read_reply()
            frames.append(frame)
            if frame in (b"*2\r\n$4\r\npong\r\n$0\r\n\r\n", b"+PONG\r\n") or frame[:1] == b"-":
                break
    except ConnectionError:
        frames.append(b"<closed>")
    return frames


def _connected(admin: Wire, client_id: bytes) -> bool:
    return b"id=" in admin.call("CLIENT", "LIST", "ID", client_id)


def _run_revocation(port, path, rules, subscribe, change, aclfile, self_change):
    with Wire(port) as admin:
        admin.call("ACL", "DELUSER", "u")
        path.write_text(_DEFAULT_LINE)
        admin.call("ACL", "LOAD")
        admin.call("ACL", "LOG", "RESET")
        denials = _denials(admin)
        assert admin.call("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all", "resetchannels",
                          *rules) == b"+OK\r\n"
        sub, bystander = Wire(port), Wire(port)
        try:
            if self_change:
                assert sub.call("HELLO", "3", "AUTH", "u", "pw").startswith(b"%")
            else:
                assert sub.call("AUTH", "u", "pw") == b"+OK\r\n"
            assert bystander.call("AUTH", "u", "pw") == b"+OK\r\n"
            ids = [conn.call("CLIENT", "ID")[1:-2] for conn in (sub, bystander)]
            record = [[sub.call(*command) for command in subscribe]]
            if aclfile is not None:
                path.write_text(_DEFAULT_LINE + aclfile)
            record.append((sub if self_change else admin).call(*change))
            if self_change:
                # Its own reply came first; a PING now finds the connection gone (or not).
                record.append(_frames_until_closed_or_pong(sub, True))
            record.append([_connected(admin, client_id) for client_id in ids])
            record.append([admin.call(*publish) for publish in (
                ("PUBLISH", "news.a", "x"), ("PUBLISH", "alerts", "x"), ("SPUBLISH", "news.a", "x"),
                ("PUBSUB", "NUMPAT"))])
            if not self_change:
                record.append(_frames_until_closed_or_pong(sub, record[-2][0]))
            record.append({kind: n - denials[kind] for kind, n in _denials(admin).items()})
            record.append(admin.call("ACL", "LOG"))
        finally:
            sub.close()
            bystander.close()
            admin.call("ACL", "DELUSER", "u")
    return record


# (rules before, the subscriber's commands, the change, the aclfile ACL LOAD reads)
REVOCATIONS = {
    "resetchannels": (["&news*"], [("SUBSCRIBE", "news.a")], ("ACL", "SETUSER", "u", "resetchannels"), None),
    "drop-relied-pattern": (["&news*", "&alerts"], [("SUBSCRIBE", "alerts")],
                            ("ACL", "SETUSER", "u", "resetchannels", "&news*"), None),
    "drop-other-pattern": (["&news*", "&alerts"], [("SUBSCRIBE", "news.a")],
                           ("ACL", "SETUSER", "u", "resetchannels", "&news*"), None),
    "narrower-still-matching": (["&news*"], [("SUBSCRIBE", "news.a")],
                                ("ACL", "SETUSER", "u", "resetchannels", "&news.a"), None),
    "added-pattern": (["&news*"], [("SUBSCRIBE", "news.a")], ("ACL", "SETUSER", "u", "&alerts"), None),
    "reset": (["&news*"], [("SUBSCRIBE", "news.a")], ("ACL", "SETUSER", "u", "reset"), None),
    "allchannels-to-other": (["allchannels"], [("SUBSCRIBE", "news.a")],
                             ("ACL", "SETUSER", "u", "resetchannels", "&news.b"), None),
    "allchannels-to-matching": (["allchannels"], [("SUBSCRIBE", "news.a")],
                                ("ACL", "SETUSER", "u", "resetchannels", "&news*"), None),
    "psubscribe-needs-same-pattern": (["&news.*"], [("PSUBSCRIBE", "news.*")],
                                      ("ACL", "SETUSER", "u", "resetchannels", "&news*"), None),
    "psubscribe-pattern-kept": (["&news*", "&alerts"], [("PSUBSCRIBE", "news*")],
                                ("ACL", "SETUSER", "u", "resetchannels", "&news*"), None),
    "ssubscribe": (["&news*"], [("SSUBSCRIBE", "news.a")], ("ACL", "SETUSER", "u", "resetchannels"), None),
    "ssubscribe-kept": (["&news*", "&alerts"], [("SSUBSCRIBE", "news.a")],
                        ("ACL", "SETUSER", "u", "resetchannels", "&news*"), None),
    "selector-grants": (["&news*"], [("SUBSCRIBE", "news.a")],
                        ("ACL", "SETUSER", "u", "resetchannels", "(&news.a +get)"), None),
    "unsubscribed-first": (["&news*"], [("SUBSCRIBE", "news.a"), ("UNSUBSCRIBE",)],
                           ("ACL", "SETUSER", "u", "resetchannels"), None),
    "failed-setuser": (["&news*"], [("SUBSCRIBE", "news.a")],
                       ("ACL", "SETUSER", "u", "resetchannels", "bogus"), None),
    "deluser": (["&news*"], [("SUBSCRIBE", "news.a")], ("ACL", "DELUSER", "u"), None),
    "acl-load-revokes": (["&news*"], [("SUBSCRIBE", "news.a")], ("ACL", "LOAD"),
                         "user u on >pw ~* +@all resetchannels &alerts\n"),
    "acl-load-keeps": (["&news*"], [("PSUBSCRIBE", "news*")], ("ACL", "LOAD"),
                       "user u on >pw ~* +@all resetchannels &alerts &news*\n"),
    "acl-load-drops-user": (["&news*"], [("SUBSCRIBE", "news.a")], ("ACL", "LOAD"), ""),
}


@pytest.mark.parametrize("name", list(REVOCATIONS))
def test_revoked_channels_disconnect_subscribers(aclfile_pair, name):
    rules, subscribe, change, aclfile = REVOCATIONS[name]
    ours, ref = (_run_revocation(port, path, rules, subscribe, change, aclfile, False)
                 for port, path in aclfile_pair)
    assert ours == ref


@pytest.mark.parametrize("change", [("ACL", "SETUSER", "u", "resetchannels"), ("ACL", "SETUSER", "u", "&more"),
                                    ("ACL", "DELUSER", "u")])
def test_subscriber_revoking_its_own_channels_gets_the_reply_then_goes(aclfile_pair, change):
    ours, ref = (_run_revocation(port, path, ["&news*"], [("SUBSCRIBE", "news.a")], change, None, True)
                 for port, path in aclfile_pair)
    assert ours == ref


def test_acl_load_without_default_line_gives_a_fresh_default(aclfile_pair):
    """Redis makes the default user anew (+@all ~* &* on nopass) when the file does not
    name it: its subscribers keep their channels, whatever its rules were."""
    seen = []
    for port, path in aclfile_pair:
        with Wire(port) as admin, Wire(port) as sub:
            path.write_text(_DEFAULT_LINE)
            admin.call("ACL", "LOAD")
            admin.call("ACL", "SETUSER", "default", "resetchannels", "&news*", "-get")
            record = [sub.call("SUBSCRIBE", "news.a")]
            path.write_text("user bob on nopass +@all\n")
            record.append(admin.call("ACL", "LOAD"))
            record.append(admin.call("ACL", "LIST"))
            record.append(admin.call("PUBLISH", "news.a", "x"))
            path.write_text(_DEFAULT_LINE)
            record.append(admin.call("ACL", "LOAD"))
            seen.append(record)
    assert seen[0] == seen[1]


def test_subscribers_are_client_type_pubsub(aclfile_pair):
    """A subscribed client (RESP2 or RESP3) is CLIENT LIST/KILL's TYPE pubsub, flag P,
    until its last subscription goes."""
    seen = []
    for port, _ in aclfile_pair:
        with Wire(port) as admin:
            clients = [Wire(port) for _ in range(4)]
            try:
                clients[0].call("SUBSCRIBE", "x")
                clients[1].call("HELLO", "3")
                clients[1].call("SSUBSCRIBE", "y")
                clients[2].call("PSUBSCRIBE", "z*")
                clients[2].call("PUNSUBSCRIBE")
                clients[3].call("MULTI")
                clients[3].call("SUBSCRIBE", "q")
                listing = admin.call("CLIENT", "LIST")
                flags = [field for field in listing.split() if field.startswith(b"flags=")]
                record = [sorted(flags),
                          admin.call("CLIENT", "LIST", "TYPE", "pubsub").count(b"id="),
                          admin.call("CLIENT", "KILL", "TYPE", "pubsub"),
                          admin.call("CLIENT", "KILL", "TYPE", "normal")]
                seen.append(record)
            finally:
                for conn in clients:
                    conn.close()
    assert seen[0] == seen[1]


def test_revoked_subscriber_gets_nothing_more(aclfile_pair):
    """A message published just before the revocation, in the same pipeline, does not reach
    the subscriber: Redis frees it with its output unsent."""
    seen = []
    for port, _ in aclfile_pair:
        with Wire(port) as admin, Wire(port) as sub:
            admin.call("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all", "resetchannels", "&news*")
            sub.call("AUTH", "u", "pw")
            sub.call("SUBSCRIBE", "news.a")
            admin.send_raw(encode_command("PUBLISH", "news.a", "m") +
                           encode_command("ACL", "SETUSER", "u", "resetchannels"))
            seen.append([admin.read_reply(), admin.read_reply(), _frames_until_closed_or_pong(sub, False)])
            admin.call("ACL", "DELUSER", "u")
    assert seen[0] == seen[1] == [b":1\r\n", b"+OK\r\n", [b"<closed>"]]
