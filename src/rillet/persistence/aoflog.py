"""The append-only file formats: RESP command logs and the multi-part manifest.

An incr file (and a legacy single AOF) is what Redis writes: each effect as a
RESP array of bulk strings, a `SELECT db` whenever the database changes, and
transactions wrapped in MULTI ... EXEC. Lines starting with `#` (Redis's
timestamp annotations) are skipped. `scan()` walks a log exactly, giving the
offset of the last whole command and the nature of any problem: a truncated
tail (cut mid-command at end of file), an unfinished MULTI at the end, or
corruption (bytes that are not a command with more data after them).

The manifest (`<appendfilename>.manifest` in `appenddirname`) is Redis 7's:
one line per file, `file <name> seq <n> type <b|h|i>`, base first, then
history, then incr files in replay order; it is replaced atomically.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

# --- encoding ----------------------------------------------------------------------

_SELECT_PREFIX = b"*2\r\n$6\r\nSELECT\r\n"


def encode_select(db_index: int) -> bytes:
    digits = b"%d" % db_index
    return _SELECT_PREFIX + b"$%d\r\n%s\r\n" % (len(digits), digits)


def encode_command(argv: list[bytes] | bytes) -> bytes:
    if argv.__class__ is bytes:
        return argv  # an effect already encoded (state.Effect)
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        if arg.__class__ is not bytes:
            arg = _as_bytes(arg)
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def _as_bytes(arg: object) -> bytes:
    if isinstance(arg, (bytes, bytearray, memoryview)):
        return bytes(arg)
    if isinstance(arg, int):
        return b"%d" % arg
    return str(arg).encode()


class EffectStream:
    """An effect sink that encodes as it is called: the RESP of every (db, argv) it
    is given, a SELECT before each change of db, kept as one stream until
    `take()`. The AOF's and the replication stream's sink (persistence/aof.py,
    replication/core.py). Compiled in _aofenc.pyx, where a compiled body may
    also write its effect straight in. `on_buffered`, if set, is called before
    the first bytes after a `take` go in (the AOF holds replies from then on)."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.selected_db = -1  # the db the stream's reader is in after the last byte
        self.on_buffered: Callable[[], None] | None = None

    def __call__(self, effects: list[tuple[int, list[bytes] | bytes]]) -> None:
        out = bytearray()
        for db_index, argv in effects:
            # A negative db (state.ANY_DB, a transaction's MULTI) selects nothing.
            if db_index != self.selected_db and db_index >= 0:
                out += encode_select(db_index)
                self.selected_db = db_index
            out += encode_command(argv)
        if out and not self._buf and self.on_buffered is not None:
            self.on_buffered()
        self._buf += out

    def __len__(self) -> int:
        return len(self._buf)

    def take(self) -> bytes:
        """The bytes so far; the stream is empty after."""
        out = bytes(self._buf)
        self._buf.clear()
        return out


# --- scanning ----------------------------------------------------------------------

OK = "ok"
TRUNCATED = "truncated"
CORRUPT = "corrupt"


@dataclass
class ScanResult:
    size: int
    status: str = OK
    commands: int = 0
    ok_up_to: int = 0  # end of the last whole command (or of the last whole transaction)
    error_offset: int = -1
    message: str = ""
    # Start of a MULTI whose EXEC is missing at end of file (it cannot be replayed).
    open_multi_at: int = -1

    @property
    def valid(self) -> bool:
        return self.status == OK


class _Incomplete(Exception):
    pass


class _Bad(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


def _line_int(buf: bytes | memoryview, pos: int, size: int, kind: str) -> tuple[int, int]:
    """Parse `<kind><digits>\\r\\n` at pos; returns (value, position after the line)."""
    if pos >= size:
        raise _Incomplete
    if buf[pos] != ord(kind):
        raise _Bad(pos, f"expected '{kind}', got {bytes(buf[pos:pos + 1])!r}")
    nl = _find_crlf(buf, pos, size)
    if nl < 0:
        # No line end: a digit run up to end of file is a cut, anything else is damage.
        if size - pos <= 32:
            tail = bytes(buf[pos + 1 : size])
            if not tail or tail.rstrip(b"\r").isdigit():
                raise _Incomplete
        raise _Bad(pos, f"malformed '{kind}' line")
    digits = bytes(buf[pos + 1 : nl])
    if not digits.isdigit():
        raise _Bad(pos, f"malformed '{kind}' count {digits[:20]!r}")
    return int(digits), nl + 2


def _find_crlf(buf: bytes | memoryview, pos: int, size: int) -> int:
    # Lines here are short; looking 32 bytes ahead bounds the work on garbage.
    window = bytes(buf[pos : min(size, pos + 32)])
    i = window.find(b"\r\n")
    return pos + i if i >= 0 else -1


def read_command(buf: bytes | memoryview, pos: int, size: int) -> tuple[list[bytes], int]:
    """One command at `pos`: (argv, end). Raises _Incomplete or _Bad."""
    argc, p = _line_int(buf, pos, size, "*")
    if argc < 1:
        raise _Bad(pos, "command with no arguments")
    argv = []
    for _ in range(argc):
        length, p = _line_int(buf, p, size, "$")
        end = p + length
        if end + 2 > size:
            raise _Incomplete
        if bytes(buf[end : end + 2]) != b"\r\n":
            raise _Bad(end, "bulk string not terminated by CRLF")
        argv.append(bytes(buf[p:end]))
        p = end + 2
    return argv, p


class LogDamage(Exception):
    """Where and how a log stops being readable: TRUNCATED (at end of file) or CORRUPT."""

    def __init__(self, kind: str, offset: int, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.offset = offset
        self.message = message


def try_read_command(buf: bytes | memoryview, pos: int, size: int) -> tuple[list[bytes], int] | None:
    """read_command, or None where it would raise (a cut or damaged command)."""
    try:
        return read_command(buf, pos, size)
    except (_Incomplete, _Bad):
        return None


def iter_commands(buf: bytes | memoryview, name: str = "AOF"):
    """Yield (argv, start, end) for each command; raise LogDamage where reading stops."""
    size = len(buf)
    pos = 0
    while pos < size:
        if buf[pos] == 35:  # '#': an annotation line
            nl = bytes(buf[pos : min(size, pos + 1024)]).find(b"\n")
            if nl < 0:
                if size - pos < 1024:
                    raise LogDamage(TRUNCATED, pos, f"{name}: unexpected end of file in the"
                                    f" annotation at offset {pos}")
                raise LogDamage(CORRUPT, pos, f"{name}: bad file format at offset {pos}:"
                                " annotation line too long")
            pos += nl + 1
            continue
        try:
            argv, end = read_command(buf, pos, size)
        except _Incomplete:
            raise LogDamage(TRUNCATED, pos, f"{name}: unexpected end of file: the command at"
                            f" offset {pos} is incomplete ({size - pos} bytes)") from None
        except _Bad as bad:
            raise LogDamage(CORRUPT, pos, f"{name}: bad file format at offset {pos}:"
                            f" {bad.message} (at byte {bad.offset})") from None
        yield argv, pos, end
        pos = end


def scan(buf: bytes | memoryview, name: str = "AOF",
         strict_transactions: bool = False) -> ScanResult:
    """Walk a whole RESP log exactly; never raises for bad content.

    `ok_up_to` is what can be kept: the end of the last whole command outside
    an unfinished transaction (what Redis's loader and --fix keep). With
    `strict_transactions` an EXEC without MULTI or a MULTI inside one is damage
    there, as redis-check-aof has it (Redis's loader lets them pass).
    """
    result = ScanResult(size=len(buf))
    multi_at = -1
    ok_up_to = 0
    try:
        for argv, start, end in iter_commands(buf, name):
            word = argv[0].upper()
            if word == b"MULTI":
                if strict_transactions and multi_at >= 0:
                    raise LogDamage(CORRUPT, start, f"{name}: unexpected MULTI at offset {start}"
                                    f" (inside the MULTI at offset {multi_at})")
                multi_at = start
            elif word == b"EXEC":
                if strict_transactions and multi_at < 0:
                    raise LogDamage(CORRUPT, start, f"{name}: unexpected EXEC at offset {start}"
                                    " (no MULTI before it)")
                multi_at = -1
            result.commands += 1
            if multi_at < 0:
                ok_up_to = end
    except LogDamage as damage:
        result.status = damage.kind
        result.error_offset = damage.offset
        result.message = damage.message
        result.ok_up_to = ok_up_to if damage.kind == TRUNCATED else min(ok_up_to, damage.offset)
        result.open_multi_at = multi_at
        return result
    result.ok_up_to = ok_up_to if multi_at >= 0 else result.size
    if multi_at >= 0:
        result.status = TRUNCATED
        result.open_multi_at = multi_at
        result.error_offset = multi_at
        result.message = f"{name}: MULTI at offset {multi_at} has no EXEC before end of file"
    return result


# --- manifest ----------------------------------------------------------------------

TYPE_BASE = "b"
TYPE_HIST = "h"
TYPE_INCR = "i"


class ManifestError(Exception):
    pass


@dataclass
class AofFileInfo:
    name: str
    seq: int
    type: str

    def line(self) -> str:
        name = self.name
        if re.search(r"[\s\"'\\]", name) or not name:
            name = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return f"file {name} seq {self.seq} type {self.type}\n"


@dataclass
class Manifest:
    base: AofFileInfo | None = None
    history: list[AofFileInfo] = field(default_factory=list)
    incr: list[AofFileInfo] = field(default_factory=list)
    base_seq: int = 0
    incr_seq: int = 0

    def render(self) -> bytes:
        lines = []
        if self.base is not None:
            lines.append(self.base.line())
        lines += [info.line() for info in self.history]
        lines += [info.line() for info in self.incr]
        return "".join(lines).encode()

    def files(self) -> list[AofFileInfo]:
        """Files to load, in order: the base, then the incr files."""
        return ([self.base] if self.base is not None else []) + list(self.incr)

    def copy(self) -> Manifest:
        return Manifest(
            self.base, list(self.history), list(self.incr), self.base_seq, self.incr_seq
        )

    def new_incr(self, filename: str) -> AofFileInfo:
        self.incr_seq += 1
        info = AofFileInfo(f"{filename}.{self.incr_seq}.incr.aof", self.incr_seq, TYPE_INCR)
        self.incr.append(info)
        return info

    def new_base(self, filename: str, suffix: str = ".rdb") -> AofFileInfo:
        if self.base is not None:
            self.history.insert(0, AofFileInfo(self.base.name, self.base.seq, TYPE_HIST))
        self.base_seq += 1
        self.base = AofFileInfo(f"{filename}.{self.base_seq}.base{suffix}", self.base_seq, TYPE_BASE)
        return self.base


def parse_manifest(text: str, name: str = "manifest") -> Manifest:
    manifest = Manifest()
    max_seq = 0
    lines = text.splitlines()
    if not any(line.strip() and not line.startswith("#") for line in lines):
        raise ManifestError(f"{name}: Found an empty AOF manifest")
    for number, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        stripped = line.strip()
        if not stripped:
            raise ManifestError(f"{name}:{number}: The AOF manifest file is invalid format")
        try:
            words = shlex.split(stripped)
        except ValueError:
            raise ManifestError(f"{name}:{number}: The AOF manifest file is invalid format") from None
        if len(words) < 6 or len(words) % 2:
            raise ManifestError(f"{name}:{number}: The AOF manifest file is invalid format")
        fields = {words[i].lower(): words[i + 1] for i in range(0, len(words), 2)}
        try:
            info = AofFileInfo(fields["file"], int(fields["seq"]), fields["type"][:1])
        except (KeyError, ValueError):
            raise ManifestError(f"{name}:{number}: The AOF manifest file is invalid format") from None
        if os.path.basename(info.name) != info.name:
            raise ManifestError(f"{name}:{number}: File can't be a path, just a filename")
        if info.type == TYPE_BASE:
            if manifest.base is not None:
                raise ManifestError(f"{name}:{number}: Found duplicate base file information")
            manifest.base = info
            manifest.base_seq = info.seq
        elif info.type == TYPE_HIST:
            manifest.history.append(info)
        elif info.type == TYPE_INCR:
            if info.seq <= max_seq:
                raise ManifestError(f"{name}:{number}: Found a non-monotonic sequence number")
            manifest.incr.append(info)
            manifest.incr_seq = max_seq = info.seq
        else:
            raise ManifestError(f"{name}:{number}: Unknown AOF file type")
    return manifest
