"""ACL channel rules on PUBLISH, SUBSCRIBE, SSUBSCRIBE and PSUBSCRIBE, against Redis 8.2.3."""

from __future__ import annotations

import pytest

from tests.helpers.wire import Wire


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
