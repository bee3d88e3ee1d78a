"""The replica's stream application, in process: offsets, transactions cut by a lost link."""

from __future__ import annotations

from rillet.config import Config
from rillet.replication import attach
from rillet.replication.protocol import encode_command
from rillet.replication.replica import MasterLink
from rillet.server.server import Server


def _link():
    config = Config()
    config.set("replicaof", "127.0.0.1 1", startup=True)
    server = Server(config)
    repl = attach(server)
    repl.synced_full("a" * 40, 0)
    link = MasterLink(repl, "127.0.0.1", 1)
    link.client = link._new_client()
    return server, repl, link


def _cmd(*argv) -> bytes:
    return encode_command([a if isinstance(a, bytes) else str(a).encode() for a in argv])


def test_offset_counts_applied_commands_only():
    server, repl, link = _link()
    first = _cmd("XADD", "s", "1-1", "f", "v")
    link.parser.feed(first + _cmd("XADD", "s", "1-2", "f", "v")[:10])
    link.apply()
    assert repl.master_repl_offset == len(first)
    assert server.state.keyspace[0].get(b"s").length == 1


def test_transaction_cut_by_the_link_is_not_counted_and_comes_again():
    server, repl, link = _link()
    tx = _cmd("MULTI") + _cmd("XADD", "s", "1-1", "f", "v") + _cmd("XADD", "s", "1-2", "f", "v") \
        + _cmd("EXEC")
    cut = tx.index(b"*1\r\n$4\r\nEXEC")
    link.parser.feed(tx[:cut])
    link.apply()
    assert repl.master_repl_offset == 0  # nothing counted inside MULTI
    assert server.state.keyspace[0].get(b"s") is None
    link._discard_partial()  # the link broke; PSYNC resumes at offset 1, the MULTI
    link.parser = type(link.parser)()
    link.parser.feed(tx)
    link.apply()
    assert repl.master_repl_offset == len(tx)
    assert server.state.keyspace[0].get(b"s").length == 2
    assert repl.backlog.read_from(1) == tx
