"""A stand-in for asyncio's transport, for driving a ClientConnection in-process."""

from __future__ import annotations


class FakeTransport:
    """Keeps what was written; `protocol` may hold the connection, as asyncio's and
    uvloop's transports do (the cycle a closed connection must not be caught in)."""

    def __init__(self) -> None:
        self.protocol: object = None
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def get_extra_info(self, key: str, default: object = None) -> object:
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(key)

    def set_write_buffer_limits(self, high: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


class TurnLoop:
    """An event loop with call_soon only: the test runs the end of the loop turn itself."""

    def __init__(self) -> None:
        self.soon: list = []

    def call_soon(self, callback, *args):
        self.soon.append((callback, args))

    def end_turn(self) -> None:
        soon, self.soon = self.soon, []
        for callback, args in soon:
            callback(*args)
