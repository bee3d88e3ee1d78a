"""The durability gate (Server.hold / flush_held): every held reply's ticket gets sealed."""

from __future__ import annotations

from tests.helpers.transport import FakeTransport, TurnLoop


class _Fsync:
    """A durability whose fsyncs finish when the test says (`appendfsync always`)."""

    def __init__(self) -> None:
        self.sealed: list[int] = []
        self.unsynced = False  # AOF bytes not fsynced yet

    def seal(self, ticket: int) -> bool:
        self.sealed.append(ticket)
        return not self.unsynced

    def flush_for_send(self) -> bool:
        return True


def test_bytes_added_behind_held_ones_are_sealed_in_their_own_turn():
    """A replica's stream is held behind the fsync; a GETACK queued in a later turn,
    while those bytes still wait, must not wait for some other client's write."""
    from rillet.server.connection import ClientConnection
    from rillet.server.server import Server

    server = Server()
    server.loop = loop = TurnLoop()
    server.durability = fsync = _Fsync()
    conn = ClientConnection(server)
    conn.connection_made(FakeTransport())
    server.hold_replies = fsync.unsynced = True
    conn.send(b"write")
    loop.end_turn()  # sealed; its fsync runs
    conn.send(b"getack")  # the next turn: the write is still held
    server.hold_replies = fsync.unsynced = False  # the fsync is done, nothing else written
    server.release_through(1)
    assert conn.transport.writes == [b"write"]
    loop.end_turn()
    assert fsync.sealed == [1, 2]
    assert conn.transport.writes == [b"write", b"getack"]
    server.loop = None
