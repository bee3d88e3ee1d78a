"""The replica's stream application, in process: offsets, transactions cut by a lost link."""

from __future__ import annotations

from rillet.config import Config
from rillet.replication import attach
from rillet.replication.protocol import encode_command
from rillet.replication.replica import MasterLink
from rillet.server.server import Server
from tests.replication import support


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
    assert support.backlog_bytes(repl.backlog, 1) == tx


def _stream_with_transactions() -> list[bytes]:
    commands = []
    for n in range(1, 40):
        if n % 7 == 0:
            commands += [_cmd("MULTI"), _cmd("XADD", "s", f"{n}-1", "f", "v"),
                         _cmd("XADD", "s", f"{n}-2", "f", "v"), _cmd("EXEC")]
        elif n % 5 == 0:
            commands.append(_cmd("PING"))
        else:
            commands.append(_cmd("XADD", "s", f"{n}-1", "f", "v" * n))
    return commands


def test_any_cut_of_the_stream_counts_whole_commands_and_transactions():
    commands = _stream_with_transactions()
    stream = b"".join(commands)
    # Offsets a reader may stop at: what was counted must end on a command
    # boundary outside a transaction.
    boundaries, pos, depth = {0}, 0, 0
    for raw in commands:
        pos += len(raw)
        depth += raw.endswith(b"MULTI\r\n") - raw.endswith(b"EXEC\r\n")
        if depth == 0:
            boundaries.add(pos)
    for step in (1, 3, 17, 64, len(stream)):
        server, repl, link = _link()
        for begin in range(0, len(stream), step):
            link.parser.feed(stream[begin : begin + step])
            link.apply()
            assert repl.master_repl_offset in boundaries
            assert repl.master_repl_offset <= begin + step
        assert repl.master_repl_offset == len(stream)
        assert support.backlog_bytes(repl.backlog, 1) == stream
        assert server.state.keyspace[0].get(b"s").length == 28 + 2 * 5


def test_getack_answers_the_offset_before_it(monkeypatch):
    server, repl, link = _link()
    acks = []
    monkeypatch.setattr(link, "send_ack", acks.append)
    first = _cmd("XADD", "s", "1-1", "f", "v")
    tx = _cmd("MULTI") + _cmd("XADD", "s", "1-2", "f", "v") + _cmd("EXEC")
    link.parser.feed(first + tx + _cmd("REPLCONF", "GETACK", "*") + first[:5])
    link.apply()
    assert acks == [len(first) + len(tx)]


def test_keepalives_and_non_canonical_commands_take_the_parser():
    server, repl, link = _link()
    odd = b"*4\r\n$4\r\nXADD\r\n$1\r\ns\r\n$03\r\n1-1\r\n$1\r\nf\r\n"  # "$03": not canonical
    odd = odd.replace(b"*4", b"*5") + b"$1\r\nv\r\n"
    link.parser.feed(b"\n" + odd + _cmd("XADD", "s", "1-2", "f", "v"))
    link.apply()
    assert repl.master_repl_offset == len(odd) + len(_cmd("XADD", "s", "1-2", "f", "v"))
    assert server.state.keyspace[0].get(b"s").length == 2
