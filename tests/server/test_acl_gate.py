"""The ACL check's place in the dispatcher: only a restricted user's client is gated.

`Client.gated` is the one flag the hot path reads; an unrestricted user (the
default +@all ~* &*) keeps it False, a user with any limit sets it, and an
ACL change to a user moves the gates of its clients.
"""

from __future__ import annotations

from rillet.clock import ManualClock
from rillet.config import Config
from rillet.dispatch import Dispatcher
from rillet.errors import ReplyError
from rillet.state import ServerState


def _setup():
    state = ServerState(Config(), ManualClock())
    dispatcher = Dispatcher(state)
    return state, dispatcher


def _run(dispatcher, client, *args: bytes):
    return dispatcher.execute(client, list(args))


def test_default_user_is_ungated():
    state, dispatcher = _setup()
    client = state.new_client(None)
    assert client.authenticated and not client.gated and not client.restricted


def test_restricted_user_is_gated_and_checked():
    state, dispatcher = _setup()
    admin = state.new_client(None)
    assert _run(dispatcher, admin, b"ACL", b"SETUSER", b"u", b"on", b">pw", b"~k*",
                b"+get") == b"OK"
    client = state.new_client(None)
    assert _run(dispatcher, client, b"AUTH", b"u", b"pw") == b"OK"
    assert client.gated and client.restricted
    assert _run(dispatcher, client, b"GET", b"k1") is None
    denied = _run(dispatcher, client, b"GET", b"x")
    assert isinstance(denied, ReplyError) and denied.message == "NOPERM No permissions to access a key"
    denied = _run(dispatcher, client, b"SET", b"k1", b"v")
    assert denied.message == "NOPERM User u has no permissions to run the 'set' command"
    # Widening the user to everything takes its clients off the gated path.
    assert _run(dispatcher, admin, b"ACL", b"SETUSER", b"u", b"+@all", b"allkeys",
                b"allchannels") == b"OK"
    assert not client.gated
    assert _run(dispatcher, client, b"SET", b"x", b"v") == b"OK"
    # And narrowing it puts them back.
    _run(dispatcher, admin, b"ACL", b"SETUSER", b"u", b"-set")
    assert client.gated
    assert state.acl.denied == {"auth": 0, "cmd": 1, "key": 1, "channel": 0, "tls_cert": 0}


def test_default_user_restricted_gates_new_clients():
    state, dispatcher = _setup()
    admin = state.new_client(None)
    _run(dispatcher, admin, b"ACL", b"SETUSER", b"default", b"-debug")
    assert admin.gated
    assert state.new_client(None).gated


def test_rename_command_keeps_original_names_for_loading():
    from rillet.commands import table

    saved = dict(table.TABLE)
    try:
        assert table.rename(b"nope", b"x") == "No such command in rename-command"
        assert table.rename(b"get", b"set") == "Target command name already exists"
        assert table.rename(b"get", b"fetch") is None
        state, dispatcher = _setup()
        client = state.new_client(None)
        unknown = _run(dispatcher, client, b"GET", b"k")
        assert isinstance(unknown, ReplyError) and unknown.message.startswith("ERR unknown command 'GET'")
        assert _run(dispatcher, client, b"FETCH", b"k") is None
        assert _run(dispatcher, state.internal_client(), b"GET", b"k") is None
    finally:
        table.TABLE.clear()
        table.TABLE.update(saved)


def test_internal_client_never_checked():
    state, dispatcher = _setup()
    admin = state.new_client(None)
    _run(dispatcher, admin, b"ACL", b"SETUSER", b"default", b"resetkeys", b"-set")
    loader = state.internal_client()
    assert not loader.restricted
    assert _run(dispatcher, loader, b"SET", b"k", b"v") == b"OK"


def test_acl_pubsub_default_applies_to_new_users():
    state, dispatcher = _setup()
    admin = state.new_client(None)
    _run(dispatcher, admin, b"CONFIG", b"SET", b"acl-pubsub-default", b"allchannels")
    _run(dispatcher, admin, b"ACL", b"SETUSER", b"n")
    assert state.acl.users[b"n"].root.allchannels
