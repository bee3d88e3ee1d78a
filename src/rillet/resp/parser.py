"""Request parsing: bytes from a client -> argument lists.

The fast path is hiredis, which parses well-formed multibulk requests in C.
Everything hiredis cannot judge the way Redis does (inline commands, protocol
errors with Redis's exact texts, limits, a command split across reads) goes
through `SlowParser`, an incremental port of Redis's processInlineBuffer and
processMultibulkBuffer. The two agree on every valid request; the slow one
decides every invalid one.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain

import hiredis

from rillet.compiled import compiled

# The compiled scan of canonical requests (see _multibulk.pyx and
# rillet/compiled.py); without it hiredis and SlowParser do it all.
_multibulk = compiled("rillet.resp._multibulk")
_scan = _multibulk.scan if _multibulk is not None else None
_scan_bulks = _multibulk.bulks if _multibulk is not None else None
_blank = _multibulk.blank if _multibulk is not None else None
_fill = _multibulk.fill if _multibulk is not None else None

# networking.c: PROTO_INLINE_MAX_SIZE bounds inline requests and count lines.
INLINE_MAX_SIZE = 64 * 1024
UNAUTH_MAX_MULTIBULK = 10
UNAUTH_MAX_BULK = 16384
# networking.c: PROTO_MBULK_BIG_ARG, the size from which an argument is read in place.
BIG_ARG = 32 * 1024
# A client whose half-read command holds more than this is read once per loop
# turn (ClientConnection.yield_reads): about one read of uvloop's.
YIELD_PENDING = 256 * 1024
INT_MAX = 2**31 - 1
_ARG_OVERHEAD = 64  # approximate bytes of a Python bytes object and its list slot

# (Callable[..., bytes]: hiredis's stub types the argument as a 1-tuple.)
_pack: Callable[..., bytes] = hiredis.pack_command
_BYTES_ONLY = frozenset({bytes})
_join = b"".join
# Reads up to this size have their argument types checked by joining them.
_JOIN_CHECK_MAX = 16 * 1024
# Translation table for the fast path's screening: digits become '0', and the
# RESP type bytes hiredis accepts besides '*' and '$' become '+'.
_SCREEN = bytes(
    48 if 48 <= b <= 57 else 43 if b in b"+=(%~>|" else b for b in range(256)
)


class RequestError(Exception):
    """A protocol error: the message (without '-') is sent, then the connection closes.

    An empty message closes the connection without a reply (query buffer
    limit); `log` is then what the server logs about it, as Redis does.
    """

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.log = log


def _string2ll(raw: bytes) -> int | None:
    """Redis's strict string2ll: no '+', no leading zeros, no spaces, fits in int64."""
    if not raw or len(raw) > 20:
        return None
    body = raw[1:] if raw[:1] == b"-" else raw
    if not body.isdigit() or (len(body) > 1 and body[:1] == b"0") or (
        raw[:1] == b"-" and body == b"0"
    ):
        return None
    value = int(raw)
    if value > 2**63 - 1 or value < -(2**63):
        return None
    return value


_SPACE = b" \t\n\r\x0b\x0c"  # C isspace()
_TOKEN_END = b" \t\n\r"  # what ends an unquoted word in sdssplitargs
_ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("a"): 7}
_HEX = b"0123456789abcdefABCDEF"


def split_args(line: bytes) -> list[bytes] | None:
    """Redis's sdssplitargs: shell-like splitting; None on unbalanced quotes.

    Like the C original, the line ends at its first NUL byte.
    """
    nul = line.find(b"\0")
    if nul >= 0:
        line = line[:nul]
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
                if ch in _TOKEN_END:
                    break
                if ch == 34:
                    in_dq = True
                elif ch == 39:
                    in_sq = True
                else:
                    current.append(ch)
            i += 1
        args.append(bytes(current))


def _query_buffer_error(head: bytes, pending: int | None = None) -> RequestError:
    """client-query-buffer-limit: the connection closes with no reply; the log says why."""
    size = "" if pending is None else f": {pending} bytes"
    return RequestError("", log=f"Closing client that reached max query buffer length{size}"
                                f" (qbuf initial bytes: {head!r})")


class SlowParser:
    """Redis's own request parser, in Python, incremental: exact for inline and invalid input.

    State mirrors Redis's client fields: `_args` is the multibulk being read
    (None between commands), `_remaining` its missing argument count
    (multibulklen) and `_bulk_len` the announced length of the next argument
    (bulklen, -1 while its `$` line is unread). `pos` is qb_pos.
    """

    __slots__ = (
        "buf", "pos", "max_bulk_len", "authenticated", "_args", "_remaining", "_bulk_len",
        "_args_size", "_big", "_filled", "last_size",
    )

    def __init__(self, max_bulk_len: int) -> None:
        self.buf = bytearray()
        self.pos = 0
        self.max_bulk_len = max_bulk_len
        self.authenticated = True
        self._args: list[bytes] | None = None
        self._remaining = 0
        self._bulk_len = -1
        self._args_size = 0
        # A big argument being read (see _bulks) and how much of it has arrived.
        self._big: bytes | None = None
        self._filled = 0
        # The last whole command's _args_size (its bytes and a bound of its overhead).
        self.last_size = 0

    @property
    def unparsed(self) -> int:
        return len(self.buf) - self.pos

    @property
    def pending_size(self) -> int:
        """Bytes held for unfinished work: unparsed input plus the half-read command.

        Each argument is counted with a rough Python object overhead so that a
        flood of tiny arguments is bounded like a flood of big ones.
        """
        return len(self.buf) - self.pos + self._args_size + self._filled

    @property
    def at_boundary(self) -> bool:
        """True between commands (no multibulk half read)."""
        return self._args is None

    def take_rest(self) -> bytes:
        rest = bytes(self.buf[self.pos :])
        self.buf = bytearray()
        self.pos = 0
        return rest

    def parse(self) -> tuple[list[list[bytes]], RequestError | None]:
        """All whole non-empty commands now in the buffer, and the error that stopped them."""
        commands: list[list[bytes]] = []
        while True:
            try:
                command = self.next_command()
            except RequestError as error:
                return commands, error
            if command is None:
                return commands, None
            if command:
                commands.append(command)

    def next_command(self) -> list[bytes] | None:
        """One whole command ([] for an empty one), or None until more bytes arrive."""
        if self._args is None:
            if self.pos >= len(self.buf):
                self._compact()
                return None
            if self.buf[self.pos] != 42:  # '*'
                return self._inline()
            if not self._multibulk_header():
                return None
            if self._args is None:
                return []
        return self._bulks()

    def _compact(self) -> None:
        if self.pos:
            del self.buf[: self.pos]
            self.pos = 0

    def _find(self, char: bytes, start: int) -> int:
        # Redis looks for line ends with strchr(), which stops at a NUL byte:
        # a NUL before the terminator means "no terminator yet".
        end = self.buf.find(char, start)
        if end < 0 or self.buf.find(b"\0", start, end) >= 0:
            return -1
        return end

    def _inline(self) -> list[bytes] | None:
        buf, start = self.buf, self.pos
        newline = self._find(b"\n", start)
        if newline < 0:
            if len(buf) - start > INLINE_MAX_SIZE:
                raise RequestError("ERR Protocol error: too big inline request")
            return None
        end = newline - 1 if newline > start and buf[newline - 1] == 13 else newline
        args = split_args(bytes(buf[start:end]))
        if args is None:
            raise RequestError("ERR Protocol error: unbalanced quotes in request")
        self.pos = newline + 1
        self._compact()
        return args

    def _multibulk_header(self) -> bool:
        buf, start = self.buf, self.pos
        cr = self._find(b"\r", start)
        if cr < 0:
            if len(buf) - start > INLINE_MAX_SIZE:
                raise RequestError("ERR Protocol error: too big mbulk count string")
            return False
        if cr + 1 >= len(buf):  # the byte after '\r' is skipped unread, but must be there
            return False
        count = _string2ll(bytes(buf[start + 1 : cr]))
        if count is None or count > INT_MAX:
            raise RequestError("ERR Protocol error: invalid multibulk length")
        if count > UNAUTH_MAX_MULTIBULK and not self.authenticated:
            raise RequestError("ERR Protocol error: unauthenticated multibulk length")
        self.pos = cr + 2
        if count > 0:
            self._args = []
            self._remaining = count
            self._bulk_len = -1
        else:
            self._compact()
        return True

    def _bulks(self) -> list[bytes] | None:
        buf = self.buf
        args = self._args
        assert args is not None
        while self._remaining:
            if self._bulk_len < 0 and _scan_bulks is not None:
                # The canonical arguments at C speed (a command of a million
                # arguments arrives over dozens of reads and all of it comes
                # here); the step below judges whatever the scan stops at.
                self.pos, taken, payload = _scan_bulks(
                    buf, self.pos, args, self._remaining,
                    self.max_bulk_len if self.authenticated
                    else min(self.max_bulk_len, UNAUTH_MAX_BULK))
                if taken:
                    self._remaining -= taken
                    self._args_size += payload + taken * _ARG_OVERHEAD
                    if not self._remaining:
                        break
            pos = self.pos
            if self._bulk_len < 0:
                cr = self._find(b"\r", pos)
                if cr < 0:
                    if len(buf) - pos > INLINE_MAX_SIZE:
                        raise RequestError("ERR Protocol error: too big bulk count string")
                    return None
                if cr + 1 >= len(buf):
                    return None
                if buf[pos] != 36:  # '$'
                    # The byte goes out raw, as Redis's %c, but never CR or LF:
                    # addReplyErrorFormat makes them spaces so the line holds.
                    got = buf[pos]
                    shown = " " if got in (10, 13) else bytes([got]).decode("utf-8", "surrogateescape")
                    raise RequestError(f"ERR Protocol error: expected '$', got '{shown}'")
                size = _string2ll(bytes(buf[pos + 1 : cr]))
                if size is None or size < 0 or size > self.max_bulk_len:
                    raise RequestError("ERR Protocol error: invalid bulk length")
                if size > UNAUTH_MAX_BULK and not self.authenticated:
                    raise RequestError("ERR Protocol error: unauthenticated bulk length")
                self._bulk_len = size
                self.pos = pos = cr + 2
            size = self._bulk_len
            if size >= BIG_ARG and _blank is not None and _fill is not None:
                # Redis's big-argument read: the bytes go into the argument as they
                # arrive, so a 512 MB value is one copy, not a buffer and a copy of it.
                big = self._big
                if big is None:
                    big = self._big = _blank(size)
                take = min(size - self._filled, len(buf) - pos)
                _fill(big, self._filled, buf, pos, take)
                self._filled += take
                self.pos = pos = pos + take
                if self._filled < size or len(buf) - pos < 2:
                    return None
                self._big = None
                self._filled = 0
                args.append(big)
            else:
                if len(buf) - pos < size + 2:
                    return None
                with memoryview(buf) as view:  # (a slice of the bytearray would be a copy more)
                    args.append(bytes(view[pos : pos + size]))
                pos += size
            self._args_size += size + _ARG_OVERHEAD
            # Like Redis, the two bytes after the payload are skipped, not checked.
            self.pos = pos + 2
            self._bulk_len = -1
            self._remaining -= 1
        self._args = None
        self.last_size = self._args_size
        self._args_size = 0
        self._compact()
        return args


class RequestParser:
    """hiredis for whole well-formed multibulk requests, `SlowParser` for the rest.

    Between calls hiredis is always at a command boundary: a read that ends
    inside a command hands that command's bytes to the slow parser, which
    finishes it and gives the stream back to hiredis at the next boundary.
    """

    __slots__ = ("_reader", "_slow", "max_bulk_len", "max_query_buffer", "authenticated")

    def __init__(self, max_bulk_len: int = 512 * 1024 * 1024,
                 max_query_buffer: int = 1024 * 1024 * 1024) -> None:
        self._reader = hiredis.Reader()
        self._slow: SlowParser | None = None
        self.max_bulk_len = max_bulk_len
        self.max_query_buffer = max_query_buffer
        self.authenticated = True

    @property
    def pending_size(self) -> int:
        """Bytes of a request received and not yet complete (CLIENT LIST qbuf)."""
        return self._slow.pending_size if self._slow is not None else 0

    def feed(self, data: bytes) -> tuple[list[list[bytes]], RequestError | None]:
        """Return the whole commands in `data` and, if the stream broke, the error.

        server/_fastpath.pyx `data_received` repeats the compiled-scan case
        inline (keep in step).
        """
        if self._slow is not None or data[:1] != b"*" or not self.authenticated:
            return self._feed_slow(data, True)
        if _scan is not None:
            commands, used = _scan(data, self.max_bulk_len)
            if used == len(data):
                return commands, None
            if used:
                # The rest starts on a command boundary: parsed as a read of its own.
                more, error = self.feed(data[used:])
                return commands + more, error
        # The hiredis path is inline, not a method of its own: one Python call
        # less on every read, which at one command per read is ~5% of its cost.
        # One pass maps digits to '0' and the RESP type bytes other than '*' and
        # '$' to '+', so the checks below are plain substring searches. They use
        # bytes.find, not `in`: `needle in data` first tries the needle as an
        # integer and pays for a raised-and-cleared TypeError (~100 ns a test,
        # a tenth of a whole one-command read).
        screened = data.translate(_SCREEN)
        # Most reads hold no run of seven digits at all: one search rules both out.
        if screened.find(b"0000000") >= 0 and (
            screened.find(b"*0000000") >= 0 or screened.find(b"+0000000") >= 0
        ):
            # hiredis allocates an announced array up front: "*2000000000" would
            # stall the server for seconds. Huge counts take the slow parser,
            # which grows argument lists as arguments arrive, as Redis does.
            return self._reparse(data)
        reader = self._reader
        reader.feed(data)
        commands = []
        append = commands.append
        gets = reader.gets
        try:
            command = gets()
            while command is not False:
                append(command)
                command = gets()
            # Every command must be a list of bytes: checked for the whole read at
            # C speed. b"".join raises TypeError for any item that is not
            # bytes-like (hiredis returns no bytes-like type but bytes), and for
            # a non-list command (chain() over an int or None raises too). The
            # join copies the arguments, so big reads use a set of types instead;
            # for a small read it is far cheaper than building that set.
            if len(data) <= _JOIN_CHECK_MAX:
                _join(commands[0] if len(commands) == 1 else chain.from_iterable(commands))
            elif not set(map(type, chain.from_iterable(commands))) <= _BYTES_ONLY:
                return self._reparse(data)
        except Exception:  # ProtocolError, TypeError (a RESP3 map keyed by an array, `*-1`...)
            return self._reparse(data)
        # hiredis also returns +simple, =verbatim and (bignum elements as bytes and
        # does not say whether it stopped between two commands or inside one.
        # Any byte that could start a non-bulk RESP3 type sends the read through
        # the exact byte-for-byte check. Otherwise the read ended between commands
        # if each '*' in it started a command (a command cut short has its own
        # '*'), or, failing that, if it ends with the canonical encoding of its
        # last command: only a crafted argument can fake that, and the price is
        # this one client's own stream being misread.
        if (
            commands
            and screened.find(b"+") < 0
            # has_data() misses one thing: a read ending in a lone type byte
            # ("$", ":"...) that hiredis has consumed to start a reply it waits
            # for. A read of whole commands ends with their "\r\n".
            and data[-1] == 10
            and not reader.has_data()
            and (
                (stars := screened.count(b"*")) == len(commands)
                # XADD's '*' ID arrives as "$1\r\n*\r\n"; no command header looks so.
                or stars - screened.count(b"\n*\r") == len(commands)
                or data.endswith(_pack(tuple(commands[-1])))
            )
        ):
            return (commands if all(commands) else [c for c in commands if c]), None
        return self._split(data, commands)

    def _split(
        self, data: bytes, commands: list[list[bytes]]
    ) -> tuple[list[list[bytes]], RequestError | None]:
        """Keep the commands whose bytes are canonical; the slow parser takes the rest."""
        prefix = b"".join([_pack(tuple(c)) for c in commands])
        if not data.startswith(prefix):
            return self._reparse(data)
        self._reader = hiredis.Reader()
        commands = [c for c in commands if c]
        if len(prefix) == len(data):
            return commands, None
        more, error = self._feed_slow(data[len(prefix) :], True)
        return commands + more, error

    def _reparse(self, data: bytes) -> tuple[list[list[bytes]], RequestError | None]:
        """hiredis balked somewhere in `data`: the slow parser judges all of it."""
        self._reader = hiredis.Reader()
        # No hand-back to hiredis inside this read: it would only balk again.
        return self._feed_slow(data, False)

    def _feed_slow(
        self, data: bytes, handoff: bool
    ) -> tuple[list[list[bytes]], RequestError | None]:
        slow = self._slow
        if slow is None:
            slow = self._slow = SlowParser(self.max_bulk_len)
        slow.authenticated = self.authenticated
        # What the parser has taken is dead: the buffer keeps only the unparsed
        # tail, so a command of many reads is not one growing buffer that each
        # read reallocates (and copies) whole.
        slow._compact()
        slow.buf += data
        commands: list[list[bytes]] = []
        while True:
            try:
                command = slow.next_command()
            except RequestError as error:
                self._slow = None
                return commands, error
            if command is None:
                break
            if command:
                if slow.last_size > self.max_query_buffer and (
                        sum(map(len, command)) + 2 > self.max_query_buffer):
                    # Whole, but Redis's buffer held all of it at once (its big
                    # arguments are read each in one piece): past the limit all the same.
                    self._slow = None
                    return commands, _query_buffer_error(command[0][:32])
                commands.append(command)
            if (
                handoff
                and self.authenticated
                and slow.at_boundary
                and slow.unparsed
                and slow.buf[slow.pos] == 42
            ):
                self._slow = None
                # feed() takes the hiredis path: it is at a boundary, on a '*'.
                more, problem = self.feed(slow.take_rest())
                return commands + more, problem
        # The limit is on what is still unparsed after the whole commands are
        # taken: one request too big, never a pipeline of complete ones (Redis
        # reads 16 kB at a time, so its buffer holds no more than that).
        pending = slow.pending_size
        if pending > self.max_query_buffer:
            head = bytes(slow.buf[slow.pos : slow.pos + 32])
            self._slow = None
            return commands, _query_buffer_error(head, pending)
        if slow.at_boundary and not slow.unparsed:
            self._slow = None
        return commands, None
