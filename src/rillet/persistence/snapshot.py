"""rillet's old private snapshot format ("RILLETDB"), kept so old files load once.

The server now writes Redis's RDB (persistence/rdb.py) for `dbfilename` and
AOF bases, and loads this format only to upgrade: the next save is an RDB.
The writer below stays for the upgrade tests; the server never calls it.
The `ValueType` registry (digest, command form) is still used by DEBUG
DIGEST and the AOF command rewrite. Value types serialise themselves through a
`ValueType` registered here (strings below; streams in persistence/streams.py),
so a new type adds one codec and no change to this module.

Format, version 1 (all integers little-endian; `blob` = u32 length + bytes):

    header   b"RILLETDB" b"0001"                       12 bytes: magic, version
    record*  one opcode byte, then:
      0xFA AUX         blob name, blob value           (rillet-ver, ctime-ms, ...)
      0xFE SELECTDB    u32 db index                     keys that follow live there
      0xFB RESIZEDB    u64 keys, u64 keys with a TTL    a hint for the loader
      0xFC EXPIRETIME  u64 unix ms                      TTL of the next key only
      0x00..0x7F       value-type tag: blob key, then the type's payload
                       (0 = string: blob value; 1 = stream: see streams.py)
      0xFF EOF
    trailer  u32 CRC-32 (zlib) of every byte before it

The loader checks the CRC over the whole file (mmap, one C call) before it
parses anything, so a damaged file is refused before any key is loaded.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rillet import __version__
from rillet.persistence import disk

MAGIC = b"RILLETDB"
VERSION = 1
HEADER = MAGIC + b"%04d" % VERSION

OP_AUX = 0xFA
AUX_LUA_LIBRARY = b"lua-library"
OP_SELECTDB = 0xFE
OP_RESIZEDB = 0xFB
OP_EXPIRETIME = 0xFC
OP_EOF = 0xFF

_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_FLUSH_BYTES = 1 << 20


class SnapshotError(Exception):
    """The file is not a valid snapshot; the message says where and why."""


# --- value types -------------------------------------------------------------------

@dataclass(frozen=True)
class ValueType:
    """How one value type is saved, loaded, digested and rewritten as commands.

    Each function also gets a `CodecContext` (the server state: shared stream
    limits, state kept beside the value such as a stream's IDMP map). `load`
    may return the value, or a generator that yields None now and then (so a
    huge value does not hold the loop) and returns the value.
    """

    tag: int
    name: str
    cls: type
    dump: Callable[[SnapshotWriter, Any, CodecContext], None]
    load: Callable[[SnapshotReader, CodecContext], Any]
    digest: Callable[[Any, CodecContext], bytes]
    # Commands that rebuild the value under `key` (replication full sync, tools).
    commands: Callable[[bytes, Any, CodecContext], Iterator[list[bytes]]]


TYPES_BY_TAG: dict[int, ValueType] = {}
TYPES_BY_CLASS: dict[type, ValueType] = {}


def register(value_type: ValueType) -> None:
    assert 0 <= value_type.tag < 0x80, "tags above 0x7f are opcodes"
    TYPES_BY_TAG[value_type.tag] = value_type
    TYPES_BY_CLASS[value_type.cls] = value_type


def type_of(value: object) -> ValueType:
    found = TYPES_BY_CLASS.get(value.__class__)
    if found is None:
        raise SnapshotError(f"no snapshot codec for {value.__class__.__name__}")
    return found


@dataclass
class CodecContext:
    """What a type's codec may need from the server: its `ServerState`."""

    state: Any



# --- writing ------------------------------------------------------------------------

class SnapshotWriter:
    """Buffered writes to a file descriptor with a running CRC-32."""

    __slots__ = ("fd", "buf", "crc", "size", "target")

    def __init__(self, fd: int, target: str = "snapshot") -> None:
        self.fd = fd
        self.buf = bytearray()
        self.crc = 0
        self.size = 0
        self.target = target

    def u8(self, value: int) -> None:
        self.buf.append(value)

    def u32(self, value: int) -> None:
        self.buf += _U32.pack(value)

    def u64(self, value: int) -> None:
        self.buf += _U64.pack(value)

    def i64(self, value: int) -> None:
        self.buf += _I64.pack(value)

    def blob(self, data: bytes | bytearray | memoryview) -> None:
        n = len(data)
        self.buf += _U32.pack(n)
        if n >= _FLUSH_BYTES:
            self.flush()
            self._emit(data)
        else:
            self.buf += data
            if len(self.buf) >= _FLUSH_BYTES:
                self.flush()

    def blobs(self, items: list[bytes]) -> None:
        """u32 count, then each as a blob."""
        self.u32(len(items))
        for item in items:
            self.blob(item)

    def maybe_flush(self) -> None:
        if len(self.buf) >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self._emit(self.buf)
            self.buf = bytearray()

    def _emit(self, data: bytes | bytearray | memoryview) -> None:
        self.crc = zlib.crc32(data, self.crc)
        disk.write_all(self.fd, data, self.target)
        self.size += len(data)

    def finish(self) -> None:
        self.u8(OP_EOF)
        self.flush()
        trailer = _U32.pack(self.crc)
        disk.write_all(self.fd, trailer, self.target)
        self.size += len(trailer)


def write_keyspace(writer: SnapshotWriter, state: Any) -> int:
    """Write every database of `state`; returns the number of keys written."""
    writer.buf += HEADER
    for name, value in (
        (b"rillet-ver", __version__.encode()),
        (b"ctime-ms", b"%d" % int(time.time() * 1000)),
        (b"format", b"rillet snapshot v%d" % VERSION),
    ):
        writer.u8(OP_AUX)
        writer.blob(name)
        writer.blob(value)
    # Function libraries (FUNCTION LOAD) as their code, as Redis keeps them in the RDB.
    scripting = getattr(state, "scripting", None)
    if scripting is not None:
        for library in scripting.functions.libraries.values():
            writer.u8(OP_AUX)
            writer.blob(AUX_LUA_LIBRARY)
            writer.blob(library.code)
    written = 0
    context = CodecContext(state)
    delay_us = _env_int("RILLET_KEY_SAVE_DELAY_US")
    for db in state.keyspace.dbs:
        data = db.data
        if not data:
            continue
        expires = db.expires
        writer.u8(OP_SELECTDB)
        writer.u32(db.index)
        writer.u8(OP_RESIZEDB)
        writer.u64(len(data))
        writer.u64(len(expires))
        for key, value in data.items():
            deadline = expires.get(key) if expires else None
            if deadline is not None:
                writer.u8(OP_EXPIRETIME)
                writer.u64(deadline)
            if value.__class__ is bytes:
                # Strings inline: the common small case costs no codec lookup.
                writer.u8(0)
                writer.blob(key)
                writer.blob(value)
            else:
                codec = type_of(value)
                writer.u8(codec.tag)
                writer.blob(key)
                codec.dump(writer, value, context)
            if len(writer.buf) >= _FLUSH_BYTES:
                writer.flush()
            written += 1
            if delay_us:
                time.sleep(delay_us / 1e6)
    writer.finish()
    return written


def save_to_path(state: Any, path: str, target: str = "snapshot",
                 tmp: str | None = None) -> tuple[int, int]:
    """Write a snapshot to `path` through a temp file, fsync, rename, fsync the dir.

    Returns (keys, bytes). On error the temp file is removed and the old file
    at `path` is untouched.
    """
    directory = os.path.dirname(path) or "."
    tmp = tmp or os.path.join(directory, f"temp-{os.getpid()}.rdb")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        writer = SnapshotWriter(fd, target)
        keys = write_keyspace(writer, state)
        disk.fsync(fd, target)
    except BaseException:
        os.close(fd)
        disk.unlink_quietly(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
        disk.fsync_dir(directory)
    except BaseException:
        disk.unlink_quietly(tmp)
        raise
    return keys, writer.size


# --- reading ------------------------------------------------------------------------

class SnapshotReader:
    """A cursor over the bytes of a snapshot: an mmap or bytes (slices give bytes)."""

    __slots__ = ("view", "pos", "end")

    def __init__(self, view: Any, pos: int = 0, end: int | None = None) -> None:
        self.view = view
        self.pos = pos
        self.end = len(view) if end is None else end

    def _need(self, n: int) -> int:
        pos = self.pos
        if pos + n > self.end:
            raise SnapshotError(f"unexpected end of snapshot at offset {pos}")
        self.pos = pos + n
        return pos

    def u8(self) -> int:
        pos = self._need(1)
        return self.view[pos]

    def u32(self) -> int:
        return _U32.unpack_from(self.view, self._need(4))[0]

    def u64(self) -> int:
        return _U64.unpack_from(self.view, self._need(8))[0]

    def i64(self) -> int:
        return _I64.unpack_from(self.view, self._need(8))[0]

    def blob(self) -> bytes:
        n = _U32.unpack_from(self.view, self._need(4))[0]
        pos = self._need(n)
        return bytes(self.view[pos : pos + n])

    def raw(self, n: int) -> bytes:
        pos = self._need(n)
        return self.view[pos : pos + n]

    def blobs(self) -> list[bytes]:
        return [self.blob() for _ in range(self.u32())]


def is_snapshot(head: bytes) -> bool:
    return head.startswith(MAGIC)


def verify(view: memoryview | bytes, name: str = "snapshot") -> None:
    """Check magic, version and CRC; raise SnapshotError naming the problem."""
    size = len(view)
    if size < len(HEADER) + 5:
        raise SnapshotError(f"{name}: truncated snapshot ({size} bytes)")
    if bytes(view[: len(MAGIC)]) != MAGIC:
        raise SnapshotError(f"{name}: not a rillet snapshot (bad magic at offset 0)")
    try:
        version = int(bytes(view[len(MAGIC) : len(HEADER)]))
    except ValueError:
        raise SnapshotError(f"{name}: bad version field at offset {len(MAGIC)}") from None
    if version > VERSION or version < 1:
        raise SnapshotError(f"{name}: can't handle snapshot format version {version}")
    expected = _U32.unpack_from(view, size - 4)[0]
    actual = zlib.crc32(view[: size - 4])
    if expected != actual:
        raise SnapshotError(
            f"{name}: wrong checksum (file says {expected:#010x}, content gives {actual:#010x});"
            f" the file is truncated or damaged ({size} bytes)"
        )


@dataclass
class LoadStats:
    keys_loaded: int = 0
    keys_expired: int = 0
    bytes_total: int = 0
    bytes_loaded: int = 0


def load_records(
    state: Any,
    data: Any,
    stats: LoadStats,
    name: str = "snapshot",
    skip_expired: bool = True,
) -> Iterator[None]:
    """Parse a verified snapshot (mmap or bytes) into `state`'s databases; yields now and then.

    With `skip_expired` (a plain snapshot), keys whose TTL has passed are not
    loaded, as Redis does on a primary; an AOF base keeps them so the AOF tail
    that follows replays against the same keys it was written against.
    """
    end = len(data) - 4
    reader = SnapshotReader(data, len(HEADER), end)
    context = CodecContext(state)
    stats.bytes_total = len(data)
    db = state.keyspace[0]
    db_set = db.set
    deadline: int | None = None
    now = state.clock.now_ms()
    delay_us = _key_load_delay_us()
    dbs = state.keyspace.dbs
    types = TYPES_BY_TAG
    unpack_u32 = _U32.unpack_from
    since_yield = 0
    pos = reader.pos
    try:
        while True:
            if pos >= end:
                raise SnapshotError(f"{name}: unexpected end of snapshot at offset {pos}")
            op = data[pos]
            pos += 1
            if op < 0x80:
                if op == 0:
                    # Strings inline: one record is a handful of slices, no calls.
                    n = unpack_u32(data, pos)[0]
                    pos += 4
                    key = data[pos : pos + n]
                    pos += n
                    n = unpack_u32(data, pos)[0]
                    pos += 4
                    value: Any = data[pos : pos + n]
                    pos += n
                    if pos > end:
                        raise SnapshotError(f"{name}: unexpected end of snapshot at offset {pos}")
                else:
                    reader.pos = pos
                    key = reader.blob()
                    codec = types.get(op)
                    if codec is None:
                        raise SnapshotError(f"{name}: unknown value type {op} at offset {pos - 1}")
                    value = codec.load(reader, context)
                    if hasattr(value, "send"):  # a generator: drive it, yielding as it does
                        value = yield from value
                    pos = reader.pos
                if deadline is None:
                    db_set(key, value)
                    stats.keys_loaded += 1
                elif skip_expired and deadline <= now:
                    stats.keys_expired += 1
                    deadline = None
                else:
                    db_set(key, value)
                    db.set_expire(key, deadline)
                    stats.keys_loaded += 1
                    deadline = None
                since_yield += 1
                if delay_us:
                    time.sleep(delay_us / 1e6)
                    since_yield = 1 << 30
                if since_yield >= 1024:
                    since_yield = 0
                    stats.bytes_loaded = pos
                    yield
                continue
            reader.pos = pos
            if op == OP_EXPIRETIME:
                deadline = reader.u64()
            elif op == OP_SELECTDB:
                index = reader.u32()
                if index >= len(dbs):
                    raise SnapshotError(
                        f"{name}: database {index} out of range (databases {len(dbs)})"
                        f" at offset {reader.pos - 4}"
                    )
                db = dbs[index]
                db_set = db.set
            elif op == OP_RESIZEDB:
                reader.u64()
                reader.u64()
            elif op == OP_AUX:
                aux_name = bytes(reader.blob())
                aux_value = bytes(reader.blob())
                if aux_name == AUX_LUA_LIBRARY and state.library_loader is not None:
                    state.library_loader(aux_value)
            elif op == OP_EOF:
                break
            else:
                raise SnapshotError(f"{name}: unknown opcode {op:#04x} at offset {pos - 1}")
            pos = reader.pos
    except struct.error:
        raise SnapshotError(f"{name}: short record at offset {pos}") from None
    stats.bytes_loaded = len(data)


def _key_load_delay_us() -> int:
    # Test hook like Redis's key-load-delay: slow loading so LOADING is observable.
    return _env_int("RILLET_KEY_LOAD_DELAY_US")


def _env_int(name: str) -> int:
    # Test hooks (like Redis's key-load-delay / rdb-key-save-delay), in microseconds.
    try:
        return int(os.environ.get(name, "0"))
    except ValueError:
        return 0


class MappedFile:
    """A read-only mmap of a file (or empty bytes for an empty file), as a context."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file = open(path, "rb")  # noqa: SIM115 - closed in close()
        size = os.fstat(self._file.fileno()).st_size
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        # `data` slices into bytes (parsing); `view` is zero-copy (CRC, hiredis).
        self.data: Any = self._map if self._map is not None else b""
        self.view = memoryview(self._map) if self._map is not None else memoryview(b"")

    def close(self) -> None:
        try:
            self.view.release()
        except BufferError:  # a slice is still alive somewhere (an exception's frame)
            pass
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a slice still refers to it; the GC closes it later
                pass
        self._file.close()

    def __enter__(self) -> MappedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the string type ------------------------------------------------------------------

def _string_commands(key: bytes, value: bytes, context: CodecContext) -> Iterator[list[bytes]]:
    yield [b"SET", key, value]


def _string_dump(writer: SnapshotWriter, value: bytes, context: CodecContext) -> None:
    writer.blob(value)


def _string_load(reader: SnapshotReader, context: CodecContext) -> bytes:
    return reader.blob()


register(ValueType(0, "string", bytes, _string_dump, _string_load, lambda value, _: value,
                   _string_commands))
