"""Streams through save and load: entries, tombstones, metadata, groups, the PEL, IDMP.

One fill touches everything a stream persists; then DEBUG RELOAD, a restart
from the AOF, a restart after a rewrite and a restart from a snapshot must
each give back the same DEBUG DIGEST and the same XINFO STREAM ... FULL
(consumer seen/active times excepted after an AOF replay, which resets them
in Redis too), and the streams must keep working afterwards.
"""

from __future__ import annotations

import hiredis
import pytest

from tests.helpers.wire import Wire
from tests.persistence.support import digest
from tests.persistence.test_roundtrip import wait_rewrite_done

FAR_MS = 4_000_000_000_000


def _has_streams(port: int) -> bool:
    with Wire(port) as wire:
        return all(name.encode() in wire.call("COMMAND", "INFO", name).lower()
                   for name in ("xadd", "xreadgroup", "xnack", "xcfgset"))


class Raw:
    """Commands over a raw connection, replies parsed by hiredis (no redis-py callbacks)."""

    def __init__(self, client) -> None:
        self.wire = Wire(client.connection_pool.connection_kwargs["port"])

    def __call__(self, *args):
        reader = hiredis.Reader()
        reader.feed(self.wire.call(*args))
        reply = reader.gets()
        if isinstance(reply, hiredis.ReplyError):
            raise AssertionError(f"{args[:3]}: {reply}")
        return reply


def fill(client) -> None:
    x = Raw(client)
    # A long stream with two field layouts (mixed nodes), tombstones, a trim.
    for i in range(1, 700):
        if i % 5:
            x("XADD", "s1", f"{1000 + i // 3}-{i}", "sensor", "t1", "value", str(i))
        else:
            x("XADD", "s1", f"{1000 + i // 3}-{i}", "other", "x" * (i % 40))
    for i in range(3, 700, 17):
        x("XDEL", "s1", f"{1000 + i // 3}-{i}")
    x("XTRIM", "s1", "MAXLEN", "~", "600")
    x("XTRIM", "s1", "MINID", "1010-30")
    # Groups: deliveries, acks, claims with explicit time and count, a NACK, idle consumers.
    x("XGROUP", "CREATE", "s1", "g1", "0")
    x("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "120", "STREAMS", "s1", ">")
    x("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "60", "STREAMS", "s1", ">")
    pending = x("XPENDING", "s1", "g1", "-", "+", "200")
    ids = [entry[0] for entry in pending]
    x("XACK", "s1", "g1", *ids[:40])
    x("XCLAIM", "s1", "g1", "carol", "0", *ids[50:60], "TIME", "1700000000123",
      "RETRYCOUNT", "7")
    x("XNACK", "s1", "g1", "SILENT", "IDS", "2", ids[70], ids[71])
    x("XGROUP", "CREATECONSUMER", "s1", "g1", "dave")
    x("XGROUP", "CREATE", "s1", "g2", "$", "ENTRIESREAD", "5")
    x("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "s1", "0")
    # Metadata set by hand, an empty stream that keeps its metadata, MKSTREAM.
    x("XADD", "s2", "5-1", "a", "1")
    x("XADD", "s2", "5-2", "a", "2")
    x("XDEL", "s2", "5-1", "5-2")
    x("XSETID", "s2", "9-9", "ENTRIESADDED", "40", "MAXDELETEDID", "8-8")
    x("XGROUP", "CREATE", "s3", "g", "$", "MKSTREAM")
    # IDMP: a producer's remembered ids and changed settings.
    x("XADD", "s4", "*", "f", "v")
    x("XCFGSET", "s4", "IDMP-DURATION", "600", "IDMP-MAXSIZE", "50")
    for i in range(5):
        x("XADD", "s4", "IDMP", "producer", f"iid-{i}", "*", "n", str(i))
    x("XADD", "s4", "IDMP", "producer", "iid-1", "*", "n", "again")
    # Strings with TTLs beside them, in another database too.
    x("SET", "plain", "v", "PXAT", str(FAR_MS))
    x("SELECT", "3")
    x("XADD", "s5", "1-1", "in", "db3")
    x("SELECT", "0")


def snapshot_of(client, strip_times: bool) -> dict:
    """Digest and raw XINFO / XRANGE / XPENDING replies (parsed by hiredis, not redis-py)."""
    port = client.connection_pool.connection_kwargs["port"]
    out = {"digest": digest(client)}
    with Wire(port) as wire:
        def call(*args):
            reader = hiredis.Reader()
            reader.feed(wire.call(*args))
            return reader.gets()

        for key in ("s1", "s2", "s3", "s4"):
            out[key] = _strip(call("XINFO", "STREAM", key, "FULL"), strip_times)
            out[key + ":info"] = _strip(call("XINFO", "STREAM", key), strip_times)
            out[key + ":range"] = call("XRANGE", key, "-", "+")
        # Without the idle time, which moves on by itself.
        out["pending"] = [entry[:2] + entry[3:]
                          for entry in call("XPENDING", "s1", "g1", "-", "+", "1000")]
    return out


_REPLAY_RESETS = (b"seen-time", b"active-time", b"iids-duplicates")


def _strip(reply, strip_times: bool):
    """Drop what an AOF replay resets: consumer times, IDMP's duplicate counter."""
    if isinstance(reply, dict):
        return {k: (None if strip_times and k in _REPLAY_RESETS
                    else _strip(v, strip_times)) for k, v in reply.items()}
    if isinstance(reply, list):
        out = []
        skip = False
        for item in reply:
            if skip:
                out.append(None)
                skip = False
                continue
            if strip_times and item in _REPLAY_RESETS:
                skip = True
            out.append(_strip(item, strip_times))
        return out
    return reply


def still_works(client) -> None:
    x = Raw(client)
    x("XADD", "s1", "*", "sensor", "t9", "value", "new")
    assert x("XREADGROUP", "GROUP", "g1", "erin", "COUNT", "3", "STREAMS", "s1", ">")
    before = x("XLEN", "s4")
    x("XADD", "s4", "IDMP", "producer", "iid-2", "*", "n", "dup")  # remembered: not added
    assert x("XLEN", "s4") == before


@pytest.fixture
def streams_node(node_factory):
    def make(*args):
        node = node_factory(*args).start()
        if not _has_streams(node.port):
            pytest.skip("stream commands are not available")
        return node

    return make


def test_debug_reload(streams_node):
    node = streams_node()
    client = node.client()
    fill(client)
    before = snapshot_of(client, strip_times=False)
    client.execute_command("DEBUG", "RELOAD")
    assert snapshot_of(client, strip_times=False) == before
    still_works(client)


def test_restart_from_a_snapshot(streams_node):
    node = streams_node()
    client = node.client()
    fill(client)
    before = snapshot_of(client, strip_times=False)
    client.save()
    node.kill()
    node.start()
    client = node.client()
    assert snapshot_of(client, strip_times=False) == before
    still_works(client)


def test_restart_from_the_aof(streams_node):
    node = streams_node("--appendonly", "yes", "--appendfsync", "always")
    client = node.client()
    fill(client)
    before = snapshot_of(client, strip_times=True)
    node.kill()
    node.start()
    client = node.client()
    assert snapshot_of(client, strip_times=True) == before
    client.execute_command("DEBUG", "LOADAOF")
    assert snapshot_of(client, strip_times=True) == before
    still_works(client)


def test_restart_after_a_rewrite(streams_node):
    node = streams_node("--appendonly", "yes")
    client = node.client()
    fill(client)
    client.bgrewriteaof()
    wait_rewrite_done(client)
    client.execute_command("XADD", "s1", "*", "after", "rewrite")
    client.execute_command("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "s1",
                           ">")
    before = snapshot_of(client, strip_times=True)
    node.kill()
    node.start()
    client = node.client()
    assert snapshot_of(client, strip_times=True) == before
    still_works(client)
