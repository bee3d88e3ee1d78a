"""Request parsing: bytes from a client -> argument lists.

The fast path is hiredis, which parses well-formed multibulk requests in C.
Everything hiredis cannot judge the way Redis does (inline commands, protocol
errors with Redis's exact texts, limits) goes through `SlowParser`, a direct
port of Redis's processInlineBuffer/processMultibulkBuffer. The two agree on
every valid request; the slow one decides every invalid one.
"""

from __future__ import annotations

import hiredis

# networking.c: PROTO_INLINE_MAX_SIZE bounds inline requests and count lines.
INLINE_MAX_SIZE = 64 * 1024
UNAUTH_MAX_MULTIBULK = 10
UNAUTH_MAX_BULK = 16384
INT_MAX = 2**31 - 1


class RequestError(Exception):
    """A protocol error: the message (without '-') is sent, then the connection closes."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _string2ll(raw: bytes) -> int | None:
    """Redis's strict string2ll: no '+', no leading zeros, no spaces, fits in int64."""
    if not raw or len(raw) > 20:
        return None
    body = raw[1:] if raw[:1] == b"-" else raw
    if not body.isdigit() or (len(body) > 1 and body[:1] == b"0") or body == b"" or (
        raw[:1] == b"-" and body == b"0"
    ):
        return None
    value = int(raw)
    if value > 2**63 - 1 or value < -(2**63):
        return None
    return value


_SPACE = b" \t\n\r\x0b\x0c"
_ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("a"): 7}
_HEX = b"0123456789abcdefABCDEF"


def split_args(line: bytes) -> list[bytes] | None:
    """Redis's sdssplitargs: shell-like splitting; None on unbalanced quotes."""
    args: list[bytes] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in _SPACE:
            i += 1
        if i >= n:
            return args
        current = bytearray()
        in_dq = in_sq = False
        while True:
            if in_dq:
                if i >= n:
                    return None
                ch = line[i]
                if (
                    ch == 92
                    and i + 3 < n
                    and line[i + 1] == ord("x")
                    and line[i + 2] in _HEX
                    and line[i + 3] in _HEX
                ):
                    current.append(int(line[i + 2 : i + 4], 16))
                    i += 3
                elif ch == 92 and i + 1 < n:
                    i += 1
                    current.append(_ESCAPES.get(line[i], line[i]))
                elif ch == 34:
                    # A closing quote must be followed by a space or the end.
                    if i + 1 < n and line[i + 1] not in _SPACE:
                        return None
                    in_dq = False
                    i += 1
                    break
                else:
                    current.append(ch)
            elif in_sq:
                if i >= n:
                    return None
                ch = line[i]
                if ch == 92 and i + 1 < n and line[i + 1] == 39:
                    i += 1
                    current.append(39)
                elif ch == 39:
                    if i + 1 < n and line[i + 1] not in _SPACE:
                        return None
                    in_sq = False
                    i += 1
                    break
                else:
                    current.append(ch)
            else:
                if i >= n:
                    break
                ch = line[i]
                if ch in _SPACE:
                    break
                if ch == 34:
                    in_dq = True
                elif ch == 39:
                    in_sq = True
                else:
                    current.append(ch)
            i += 1
        args.append(bytes(current))


class SlowParser:
    """Redis's own request parser, in Python: exact for inline and invalid input."""

    def __init__(self, max_bulk_len: int) -> None:
        self.buf = bytearray()
        self.max_bulk_len = max_bulk_len
        self.authenticated = True

    def parse(self, keep_empty: bool = False) -> tuple[list[list[bytes]], RequestError | None]:
        """Consume whole commands from the buffer; stop at an error or a partial one.

        Empty commands (`*0`, `*-1`, blank inline lines) are dropped unless
        `keep_empty`, which lets the caller line them up with hiredis's output.
        """
        commands: list[list[bytes]] = []
        while self.buf:
            try:
                command = self._multibulk() if self.buf[0] == 42 else self._inline()
            except RequestError as error:
                return commands, error
            if command is None:
                break
            if command or keep_empty:
                commands.append(command)
        return commands, None

    def _inline(self) -> list[bytes] | None:
        buf = self.buf
        newline = buf.find(b"\n")
        if newline < 0:
            if len(buf) > INLINE_MAX_SIZE:
                raise RequestError("ERR Protocol error: too big inline request")
            return None
        end = newline - 1 if newline and buf[newline - 1] == 13 else newline
        args = split_args(bytes(buf[:end]))
        if args is None:
            raise RequestError("ERR Protocol error: unbalanced quotes in request")
        del buf[: newline + 1]
        return args

    def _line(self, start: int, too_big: str) -> tuple[bytes, int] | None:
        buf = self.buf
        cr = buf.find(b"\r", start)
        if cr < 0:
            if len(buf) - start > INLINE_MAX_SIZE:
                raise RequestError(too_big)
            return None
        if cr + 1 >= len(buf):
            return None
        return bytes(buf[start:cr]), cr + 2

    def _multibulk(self) -> list[bytes] | None:
        line = self._line(1, "ERR Protocol error: too big mbulk count string")
        if line is None:
            return None
        count = _string2ll(line[0])
        if count is None or count > INT_MAX:
            raise RequestError("ERR Protocol error: invalid multibulk length")
        if not self.authenticated and count > UNAUTH_MAX_MULTIBULK:
            raise RequestError("ERR Protocol error: unauthenticated multibulk length")
        pos = line[1]
        if count <= 0:
            del self.buf[:pos]
            return []
        args: list[bytes] = []
        buf = self.buf
        while len(args) < count:
            if pos >= len(buf):
                return None
            if buf[pos] != 36:
                raise RequestError(f"ERR Protocol error: expected '$', got '{chr(buf[pos])}'")
            line = self._line(pos + 1, "ERR Protocol error: too big bulk count string")
            if line is None:
                return None
            size = _string2ll(line[0])
            if size is None or size < 0 or size > self.max_bulk_len:
                raise RequestError("ERR Protocol error: invalid bulk length")
            if not self.authenticated and size > UNAUTH_MAX_BULK:
                raise RequestError("ERR Protocol error: unauthenticated bulk length")
            start = line[1]
            if len(buf) < start + size + 2:
                return None
            args.append(bytes(buf[start : start + size]))
            pos = start + size + 2
        del buf[:pos]
        return args


class RequestParser:
    """hiredis for the common case, `SlowParser` for inline and suspect input.

    `pending` keeps the raw bytes fed since hiredis last had an empty buffer,
    so when hiredis balks the slow parser can re-read exactly those bytes,
    skip the commands hiredis already returned, and judge the rest.
    """

    __slots__ = (
        "_reader",
        "_pending",
        "_returned",
        "_slow",
        "max_bulk_len",
        "max_query_buffer",
        "authenticated",
    )

    def __init__(self, max_bulk_len: int = 512 * 1024 * 1024,
                 max_query_buffer: int = 1024 * 1024 * 1024) -> None:
        self._reader = hiredis.Reader()
        self._pending: list[bytes] = []
        self._returned = 0
        self._slow: SlowParser | None = None
        self.max_bulk_len = max_bulk_len
        self.max_query_buffer = max_query_buffer
        self.authenticated = True

    def feed(self, data: bytes) -> tuple[list[list[bytes]], RequestError | None]:
        """Return the whole commands in `data` and, if the stream broke, the error."""
        reader = self._reader
        if self._slow is None:
            if reader.has_data():
                self._pending.append(data)
            elif data[:1] == b"*" and self.authenticated:
                self._pending = [data]
                self._returned = 0
            else:
                return self._feed_slow(data)
            reader.feed(data)
            commands: list[list[bytes]] = []
            try:
                while True:
                    command = reader.gets()
                    if command is False:
                        break
                    self._returned += 1
                    if command.__class__ is not list:
                        return self._fallback(commands, True)
                    for arg in command:
                        if arg.__class__ is not bytes:
                            return self._fallback(commands, True)
                    if command:
                        commands.append(command)
            except hiredis.ProtocolError:
                return self._fallback(commands, False)
            if reader.has_data():
                # A partial command: let the slow parser vet its headers now, so
                # an oversized or malformed length fails at once, as in Redis.
                return self._check_partial(commands)
            self._pending = []
            return commands, None
        return self._feed_slow(data)

    def _fallback(
        self, commands: list[list[bytes]], counted_bad: bool
    ) -> tuple[list[list[bytes]], RequestError | None]:
        """hiredis rejected or mis-typed something: re-judge the pending bytes in Python."""
        # Items hiredis handed out from `pending` before the bad one, in this
        # call and earlier ones, are skipped: they were already dispatched or
        # are in `commands`.
        skip = self._returned - (1 if counted_bad else 0) - len(commands)
        slow = SlowParser(self.max_bulk_len)
        slow.authenticated = self.authenticated
        slow.buf += b"".join(self._pending)
        self._reset_fast()
        parsed, error = slow.parse(keep_empty=True)
        out = commands + [c for c in parsed[skip + len(commands):] if c]
        self._slow = slow if slow.buf and error is None else None
        return out, error

    def _check_partial(self, commands: list[list[bytes]]) -> tuple[list[list[bytes]], RequestError | None]:
        pending_size = self._reader.len()
        if pending_size > self.max_query_buffer:
            return commands, RequestError("")  # Redis closes without a reply.
        slow = SlowParser(self.max_bulk_len)
        slow.authenticated = self.authenticated
        # Only the tail after the last whole command matters; the reader holds
        # exactly that many bytes.
        slow.buf += b"".join(self._pending)[-pending_size:]
        parsed, error = slow.parse()
        if error is not None:
            self._reset_fast()
            return commands, error
        return commands, None

    def _reset_fast(self) -> None:
        self._reader = hiredis.Reader()
        self._pending = []
        self._returned = 0

    def _feed_slow(self, data: bytes) -> tuple[list[list[bytes]], RequestError | None]:
        slow = self._slow
        if slow is None:
            slow = self._slow = SlowParser(self.max_bulk_len)
        slow.authenticated = self.authenticated
        slow.buf += data
        if len(slow.buf) > self.max_query_buffer:
            self._slow = None
            return [], RequestError("")
        commands, error = slow.parse()
        if error is not None or not slow.buf:
            self._slow = None
        return commands, error
