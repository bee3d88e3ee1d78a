"""Redis's RDB as rillet's snapshot: the keyspace writer and reader.

`dbfilename`, the AOF base (aof-use-rdb-preamble) and DEBUG RELOAD use it;
replication's full sync can use `dump_keyspace`/`load_keyspace` directly
(no persistence manager needed). Primitives are in rdb_format.py; each value
type registers one `RDBCodec` (strings here, streams in rdb_stream.py, lists,
sets, sorted sets and hashes in rdb_containers.py), so a new type adds a codec
and no change here.

Layout written (Redis 8.2.3's, RDB version 12):

    "REDIS0012"  AUX redis-ver, redis-bits, ctime, used-mem, [repl-stream-db,
    repl-id, repl-offset], aof-base;  per non-empty db: SELECTDB n, RESIZEDB
    keys expires, then [EXPIRETIME_MS t] type key value ...;  AUX rillet-idmp
    (streams' IDMP state, which Redis 8.2 does not have: ignored by Redis);
    EOF, CRC-64 (8 bytes LE; zeros with rdbchecksum no).

Loading verifies the checksum over the whole file first, so a damaged or
truncated file is refused before any key is loaded; when the checksum does
not match, a dry parse finds the first offset that is wrong to report it.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rillet import REDIS_COMPAT_VERSION
from rillet.persistence import disk
from rillet.persistence.rdb_format import (
    OP_AUX,
    OP_EOF,
    OP_EXPIRETIME,
    OP_EXPIRETIME_MS,
    OP_FREQ,
    OP_FUNCTION2,
    OP_FUNCTION_PRE_GA,
    OP_IDLE,
    OP_KEY_META,
    OP_MODULE_AUX,
    OP_RESIZEDB,
    OP_SELECTDB,
    OP_SLOT_INFO,
    RDB_READ_VERSION,
    RDB_VERSION,
    TYPE_NAMES,
    TYPE_STRING,
    RDBChecksumError,
    RDBError,
    RDBReader,
    RDBShortRead,
    crc64,
    encode_len,
    encode_millis,
    encode_string,
)

log = logging.getLogger("rillet")

MAGIC = b"REDIS"
_FLUSH_BYTES = 1 << 20


# --- codecs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class RDBCodec:
    """How one rillet value type is written to and read from RDB.

    `save(writer, value)` writes the payload after the type byte and key;
    `load(reader, rdb_type, context)` reads it back (the value, or a generator
    that yields now and then and returns the value; None for an empty
    container, which is skipped as Redis does). `save_type` is the RDB type
    written, or `type_of(value)` gives it when it depends on the value's
    encoding (sets, hashes, sorted sets); `load_types` every RDB type this
    codec reads.
    """

    name: str
    cls: type
    save_type: int
    load_types: tuple[int, ...]
    save: Callable[..., None]  # (writer, value), and the type with a dump_form
    load: Callable[[RDBReader, int, LoadContext], Any]
    type_of: Callable[[Any], int] | None = None
    # For DUMP: (rdb_type, rdb_version) of a newer form when the value holds state
    # that `save_type` cannot carry, else None; `save` then takes the type.
    dump_form: Callable[[Any], tuple[int, int] | None] | None = None


CODECS_BY_CLASS: dict[type, RDBCodec] = {}
CODECS_BY_TYPE: dict[int, RDBCodec] = {}


def register(codec: RDBCodec) -> None:
    CODECS_BY_CLASS[codec.cls] = codec
    for rdb_type in codec.load_types:
        CODECS_BY_TYPE[rdb_type] = codec


@dataclass
class LoadContext:
    """What a codec may need while loading: the server state (shared stream limits)."""

    state: Any
    version: int = RDB_VERSION


# --- writing -------------------------------------------------------------------------------

class RDBWriter:
    """Buffered RDB output with a running CRC-64; `emit` takes each chunk."""

    __slots__ = ("emit", "buf", "crc", "size", "compress", "checksum", "config")

    def __init__(self, emit: Callable[[bytes | bytearray], object], compress: bool = True,
                 checksum: bool = True, config: Any = None) -> None:
        self.config = config  # the server's Config when a codec's layout depends on it (lists)
        self.emit = emit
        self.buf = bytearray()
        self.crc = 0
        self.size = 0
        self.compress = compress
        self.checksum = checksum

    def u8(self, value: int) -> None:
        self.buf.append(value)

    def length(self, value: int) -> None:
        self.buf += encode_len(value)

    def string(self, value: bytes) -> None:
        self.buf += encode_string(value, self.compress)
        if len(self.buf) >= _FLUSH_BYTES:
            self.flush()

    def raw(self, data: bytes) -> None:
        self.buf += data

    def millis(self, ms: int) -> None:
        self.buf += encode_millis(ms)

    def maybe_flush(self) -> None:
        if len(self.buf) >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            if self.checksum:
                self.crc = crc64(self.crc, self.buf)
            self.emit(self.buf)
            self.size += len(self.buf)
            self.buf = bytearray()

    def finish(self) -> None:
        self.u8(OP_EOF)
        self.flush()
        trailer = (self.crc if self.checksum else 0).to_bytes(8, "little")
        self.emit(trailer)
        self.size += 8


def _aux(writer: RDBWriter, name: bytes, value: bytes) -> None:
    writer.u8(OP_AUX)
    writer.string(name)
    writer.string(value)


def write_value(writer: RDBWriter, value: Any) -> int:
    """Write one value's payload; returns its RDB type (the caller wrote or writes it)."""
    if value.__class__ is bytes:
        writer.string(value)
        return TYPE_STRING
    codec = CODECS_BY_CLASS.get(value.__class__)
    if codec is None:
        raise RDBError(f"no RDB codec for {value.__class__.__name__}")
    codec.save(writer, value)
    return codec.save_type if codec.type_of is None else codec.type_of(value)


def type_of(value: Any) -> int:
    if value.__class__ is bytes:
        return TYPE_STRING
    codec = CODECS_BY_CLASS.get(value.__class__)
    if codec is None:
        raise RDBError(f"no RDB codec for {value.__class__.__name__}")
    return codec.save_type if codec.type_of is None else codec.type_of(value)


# Extra state saved in AUX fields after the keys (Redis ignores AUX fields it
# does not know): name -> (collect(state) -> [values], apply(state, value)).
AuxExtension = tuple[Callable[[Any], list[bytes]], Callable[[Any, bytes], None]]
AUX_EXTENSIONS: dict[bytes, AuxExtension] = {}

# Extra state a DUMP payload carries after its value, before the footer (Redis's
# RESTORE ignores such bytes): class -> (trailer(value) -> bytes | None,
# restore(value, trailer) -> whether the trailer was one and read to its end).
DumpTrailer = tuple[Callable[[Any], "bytes | None"], Callable[[Any, bytes], bool]]
DUMP_TRAILERS: dict[type, DumpTrailer] = {}


def write_keyspace(writer: RDBWriter, state: Any, *, aof_base: bool = False,
                   repl: tuple[int, str, int] | None = None) -> int:
    """Write every database of `state` as an RDB; returns the number of keys written.

    `repl` is (repl-stream-db, repl-id, repl-offset) for a replication payload.
    """
    if writer.config is None:
        writer.config = state.config
    writer.raw(MAGIC + b"%04d" % RDB_VERSION)
    _aux(writer, b"redis-ver", REDIS_COMPAT_VERSION.encode())
    _aux(writer, b"redis-bits", b"64")
    _aux(writer, b"ctime", b"%d" % int(time.time()))
    _aux(writer, b"used-mem", b"%d" % _used_memory())
    if repl is not None:
        _aux(writer, b"repl-stream-db", b"%d" % repl[0])
        _aux(writer, b"repl-id", repl[1].encode())
        _aux(writer, b"repl-offset", b"%d" % repl[2])
    _aux(writer, b"aof-base", b"1" if aof_base else b"0")
    # Function libraries (FUNCTION LOAD) as their code, before the keys, as Redis writes them.
    for code in _function_libraries(state):
        writer.u8(OP_FUNCTION2)
        writer.string(code)
    written = 0
    delay_us = _delay_us(writer.config, "rdb-key-save-delay", "RILLET_KEY_SAVE_DELAY_US")
    for db in state.keyspace.dbs:
        data = db.data
        if not data:
            continue
        expires = db.expires
        writer.u8(OP_SELECTDB)
        writer.length(db.index)
        writer.u8(OP_RESIZEDB)
        writer.length(len(data))
        writer.length(len(expires))
        string = writer.string
        for key, value in data.items():
            if expires:
                deadline = expires.get(key)
                if deadline is not None:
                    writer.u8(OP_EXPIRETIME_MS)
                    writer.millis(deadline)
            if value.__class__ is bytes:
                writer.buf.append(TYPE_STRING)
                string(key)
                string(value)
            else:
                codec = CODECS_BY_CLASS.get(value.__class__)
                if codec is None:
                    raise RDBError(f"no RDB codec for {value.__class__.__name__}")
                writer.u8(codec.save_type if codec.type_of is None else codec.type_of(value))
                string(key)
                codec.save(writer, value)
            written += 1
            if delay_us:
                debug_delay(delay_us)
    for name, (collect, _apply) in AUX_EXTENSIONS.items():
        for value in collect(state):
            _aux(writer, name, value)
    writer.finish()
    return written


def _function_libraries(state: Any) -> list[bytes]:
    scripting = state.scripting
    if scripting is None:
        return []
    return [library.code for library in scripting.functions.libraries.values()]


def _used_memory() -> int:
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except Exception:  # pragma: no cover - not on every platform
        return 0


def dump_keyspace(state: Any, out: Any = None, *, compress: bool | None = None,
                  checksum: bool | None = None, aof_base: bool = False,
                  repl: tuple[int, str, int] | None = None) -> bytes | int:
    """The whole keyspace as RDB: written to the binary file object `out`
    (returns bytes written), or returned as bytes when `out` is None.

    `compress`/`checksum` default to the server's rdbcompression/rdbchecksum.
    """
    config = state.config
    if compress is None:
        compress = bool(config["rdbcompression"])
    if checksum is None:
        checksum = bool(config["rdbchecksum"])
    chunks: list[bytes] = []
    emit = chunks.append if out is None else out.write
    writer = RDBWriter(lambda data: emit(bytes(data)), compress, checksum)
    write_keyspace(writer, state, aof_base=aof_base, repl=repl)
    if out is None:
        return b"".join(chunks)
    return writer.size


def write_file(state: Any, path: str, target: str = "snapshot", aof_base: bool = False) -> int:
    """Write an RDB to exactly `path` and fsync it; returns its size (the AOF base:
    no replication fields, as Redis's preamble has none)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        config = state.config
        writer = RDBWriter(lambda data: disk.write_all(fd, data, target),
                           bool(config["rdbcompression"]), bool(config["rdbchecksum"]))
        write_keyspace(writer, state, aof_base=aof_base)
        disk.fsync(fd, target)
    finally:
        os.close(fd)
    return writer.size


def save_to_path(state: Any, path: str, target: str = "snapshot",
                 tmp: str | None = None, repl: tuple[int, str, int] | None = None,
                 ) -> tuple[int, int]:
    """Write an RDB to `path` through a temp file, fsync, rename, fsync the dir.

    `repl`: the replication fields, as write_keyspace takes them (Redis's
    rdbPopulateSaveInfo: a restart continues that history, see LoadStats.repl).

    Returns (keys, bytes). On error the temp file is removed and the old file
    at `path` is untouched.
    """
    directory = os.path.dirname(path) or "."
    tmp = tmp or os.path.join(directory, f"temp-{os.getpid()}.rdb")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        config = state.config
        writer = RDBWriter(lambda data: disk.write_all(fd, data, target),
                           bool(config["rdbcompression"]), bool(config["rdbchecksum"]))
        keys = write_keyspace(writer, state, repl=repl)
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


# --- reading -------------------------------------------------------------------------------

def is_rdb(head: bytes) -> bool:
    return head.startswith(MAGIC)


def read_version(data: Any, name: str = "RDB") -> int:
    if len(data) < 9 or bytes(data[:5]) != MAGIC:
        raise RDBError(f"{name}: wrong signature trying to load DB from file (offset 0)")
    digits = bytes(data[5:9])
    if not digits.isdigit():
        raise RDBError(f"{name}: bad RDB version field at offset 5")
    version = int(digits)
    if version < 1 or version > RDB_READ_VERSION:
        raise RDBError(f"{name}: Can't handle RDB format version {version}")
    return version


@dataclass
class LoadStats:
    keys_loaded: int = 0
    keys_expired: int = 0
    bytes_total: int = 0
    bytes_loaded: int = 0
    version: int = 0
    keys_read: int = 0  # every key parsed (a dry run counts here only)
    expires: int = 0  # keys read with a TTL
    aux: list[tuple[int, bytes, bytes]] | None = None  # (offset, name, value) when a list
    # The file's repl-id, repl-offset and repl-stream-db, when it has all three:
    # the replication history its data is the state of.
    repl: tuple[str, int, int] | None = None
    # Keys skipped for a passed TTL, as (db, key), when a list: a master that
    # continues the file's history sends their DELs (Redis's RDBFLAGS_FEED_REPL).
    expired: list[tuple[int, bytes]] | None = None


def verify(data: Any, name: str = "RDB") -> int:
    """Check signature, version and the CRC-64 trailer; returns the version.

    On a checksum mismatch, a dry parse names the first offset that is wrong
    (truncation, a bad length...) or, if the structure parses, the checksum.
    """
    version = read_version(data, name)
    size = len(data)
    if version < 5:
        return version
    if size < 9 + 1 + 8:
        short = RDBShortRead(f"{name}: unexpected end of file at offset {size}"
                             " (expected EOF and checksum)")
        short.offset = size
        raise short
    expected = int.from_bytes(bytes(data[size - 8 :]), "little")
    if expected == 0:
        return version  # rdbchecksum no
    actual = crc64(0, memoryview(data)[: size - 8])
    if actual == expected:
        return version
    message = (f"{name}: wrong checksum (the file says {expected:#x} at offset {size - 8},"
               f" bytes 0-{size - 9} give {actual:#x}); the file is truncated or damaged")
    try:
        for _ in parse(None, data, LoadStats(), name, dry=True):
            pass
    except RDBError as error:
        # What reading in order (as Redis does) meets first: a short read, a bad value.
        detail = str(error).removeprefix(f"{name}: ")
        found = type(error)(f"{message}: expected {detail}")
        found.offset = error.offset
        raise found from None
    raise RDBChecksumError(message, size - 8, actual, expected)


def parse(state: Any, data: Any, stats: LoadStats, name: str = "RDB",
          skip_expired: bool = True, dry: bool = False) -> Iterator[None]:
    """Load an RDB (bytes or mmap) into `state`'s databases; yields now and then.

    With `dry`, everything is parsed and checked and nothing is stored. With
    `skip_expired` (a plain snapshot), keys whose TTL has passed are not
    loaded, as a Redis primary does; an AOF base keeps them.
    """
    version = read_version(data, name)
    stats.version = version
    stats.bytes_total = len(data)
    reader = RDBReader(data, 9, len(data), name)
    context = LoadContext(state, version)
    dbs = state.keyspace.dbs if state is not None else None
    db = dbs[0] if dbs is not None else None
    now = state.clock.now_ms() if state is not None else 0
    deadline: int | None = None
    since_yield = 0
    delay_us = _delay_us(state.config if state is not None else None, "key-load-delay",
                         "RILLET_KEY_LOAD_DELAY_US")
    aux_pending: list[tuple[bytes, bytes]] = []
    repl_fields: dict[bytes, bytes] = {}
    u8 = reader.u8
    while True:
        at = reader.pos
        op = u8("an opcode or value type")
        if op == OP_EOF:
            break
        if op == OP_EXPIRETIME_MS:
            deadline = reader.millis()
            continue
        if op == OP_EXPIRETIME:
            deadline = reader.le32() * 1000
            continue
        if op == OP_SELECTDB:
            index = reader.length("a database number")
            if dbs is not None and index >= len(dbs):
                raise reader.fail(f"a database number below {len(dbs)} (got {index})", at + 1)
            if dbs is not None:
                db = dbs[index]
            continue
        if op == OP_RESIZEDB:
            reader.length("a RESIZEDB size")
            reader.length("a RESIZEDB size")
            continue
        if op == OP_AUX:
            aux_name = reader.string("an AUX field name")
            aux_value = reader.string("an AUX field value")
            if stats.aux is not None:
                stats.aux.append((at, aux_name, aux_value))
            if not dry:
                _log_aux(aux_name, aux_value, now)
            if aux_name in AUX_EXTENSIONS:
                aux_pending.append((aux_name, aux_value))
            elif aux_name in _REPL_FIELDS:
                repl_fields[aux_name] = aux_value
            continue
        if op == OP_IDLE:
            reader.length("an LRU idle time")
            continue
        if op == OP_FREQ:
            u8("an LFU frequency")
            continue
        if op == OP_SLOT_INFO:
            reader.length("a slot id")
            reader.length("a slot size")
            reader.length("a slot expires size")
            continue
        if op == OP_FUNCTION2:
            code = reader.string("a function library")
            if state is not None:
                if state.library_loader is None:
                    raise reader.fail("no function libraries (this server cannot load them)", at)
                try:
                    state.library_loader(code)
                except Exception as error:  # a library that does not load is a bad file
                    raise reader.fail(f"a function library that loads ({error})", at) from None
            continue
        if op in (OP_FUNCTION_PRE_GA, OP_MODULE_AUX, OP_KEY_META):
            raise reader.fail(f"no module or function data (opcode {op})", at)
        # A key/value pair of RDB type `op`.
        key = reader.string("a key")
        if op == TYPE_STRING:
            value: Any = reader.string("a string value")
        else:
            codec = CODECS_BY_TYPE.get(op)
            if codec is None:
                kind = TYPE_NAMES.get(op)
                what = f"type {op} ({kind})" if kind else f"unknown type {op}"
                raise RDBError(f"{name}: key {key!r} has {what}, which rillet cannot load yet"
                               f" (offset {at})")
            value = codec.load(reader, op, context)
            if hasattr(value, "send"):  # a generator: drive it, yielding as it does
                value = yield from value
        stats.keys_read += 1
        if deadline is not None:
            stats.expires += 1
        if value is None:  # an empty container: Redis skips it with a warning
            deadline = None
            continue
        if not dry:
            assert db is not None  # (only a dry parse has no databases)
            if deadline is not None and skip_expired and deadline <= now:
                stats.keys_expired += 1
                if stats.expired is not None:
                    stats.expired.append((db.index, key))
            else:
                db.set(key, value)
                if deadline is not None:
                    db.set_expire(key, deadline)
                stats.keys_loaded += 1
        deadline = None
        since_yield += 1
        if delay_us:
            debug_delay(delay_us)
            since_yield = 1 << 30
        if since_yield >= 1024:
            since_yield = 0
            stats.bytes_loaded = reader.pos
            yield
    if version >= 5 and reader.pos + 8 > len(data):
        raise reader.fail("an 8-byte checksum after EOF", short=True)
    stats.repl = _repl_of(repl_fields)
    if not dry:
        for aux_name, aux_value in aux_pending:
            try:
                AUX_EXTENSIONS[aux_name][1](state, aux_value)
            except (ValueError, IndexError, KeyError) as exc:
                raise RDBError(f"{name}: bad AUX field {aux_name!r}: {exc}") from None
    stats.bytes_loaded = len(data)


_REPL_FIELDS = (b"repl-id", b"repl-offset", b"repl-stream-db")


def _repl_of(fields: dict[bytes, bytes]) -> tuple[str, int, int] | None:
    """(repl-id, repl-offset, repl-stream-db) if the file has them all, sound (as
    Redis's rsi checks: an ID of 40 characters, neither number -1)."""
    try:
        replid = fields[b"repl-id"].decode("ascii")
        offset = int(fields[b"repl-offset"])
        stream_db = int(fields[b"repl-stream-db"])
    except (KeyError, ValueError):
        return None
    if len(replid) != 40 or offset < 0 or stream_db < 0:
        return None
    return replid, offset, stream_db


def load_keyspace(state: Any, data: bytes | Any, name: str = "RDB",
                  skip_expired: bool = True) -> LoadStats:
    """Verify and load a whole RDB (bytes, mmap, or a binary file object) into `state`."""
    if hasattr(data, "read"):
        data = data.read()
    verify(data, name)
    stats = LoadStats()
    for _ in parse(state, data, stats, name, skip_expired):
        pass
    return stats


# --- DUMP / RESTORE payloads -------------------------------------------------------------

def dump_value(value: Any, compress: bool = True, config: Any = None) -> bytes:
    """DUMP's payload: type, value, 2-byte RDB version, CRC-64 of all that (LE)."""
    chunks: list[bytes] = []
    writer = RDBWriter(lambda data: chunks.append(bytes(data)), compress, checksum=False,
                       config=config)
    codec = CODECS_BY_CLASS.get(value.__class__)
    form = codec.dump_form(value) if codec is not None and codec.dump_form else None
    version = RDB_VERSION
    if form is None or codec is None:  # (no codec, no form)
        writer.u8(type_of(value))
        write_value(writer, value)
    else:
        # Only such values leave in the newer form, so every other payload still
        # restores into Redis 8.2 (which refuses a footer version above 12).
        rdb_type, version = form
        writer.u8(rdb_type)
        codec.save(writer, value, rdb_type)
    writer.flush()
    trailer = DUMP_TRAILERS.get(value.__class__)
    if trailer is not None:
        extra = trailer[0](value)
        if extra is not None:
            chunks.append(extra)
    body = b"".join(chunks) + version.to_bytes(2, "little")
    return body + crc64(0, body).to_bytes(8, "little")


def verify_payload(payload: bytes) -> bool:
    """verifyDumpPayload: a footer with a known RDB version and a matching CRC-64."""
    if len(payload) < 10:
        return False
    version = int.from_bytes(payload[-10:-8], "little")
    if version > RDB_READ_VERSION:
        return False
    return crc64(0, payload[:-8]) == int.from_bytes(payload[-8:], "little")


def dump_functions(codes: list[bytes]) -> bytes:
    """FUNCTION DUMP's payload: each library's code after its RDB opcode, as in an RDB
    file, then DUMP's footer, so that Redis's FUNCTION RESTORE takes it (redis-cli's
    --cluster add-node copies the functions to the new node so)."""
    chunks: list[bytes] = []
    writer = RDBWriter(lambda data: chunks.append(bytes(data)), checksum=False)
    for code in codes:
        writer.u8(OP_FUNCTION2)
        writer.string(code)
    writer.flush()
    body = b"".join(chunks) + RDB_VERSION.to_bytes(2, "little")
    return body + crc64(0, body).to_bytes(8, "little")


def restore_functions(payload: bytes) -> list[bytes]:
    """The libraries' code in a verified FUNCTION DUMP payload; ValueError with Redis's
    message (functionRestoreCommand's) if it holds anything else."""
    reader = RDBReader(payload, 0, len(payload) - 10, "FUNCTION DUMP payload")
    codes = []
    try:
        while reader.pos < reader.end:
            op = reader.u8("a function opcode")
            if op == OP_FUNCTION_PRE_GA:
                raise ValueError("Pre-GA function format not supported")
            if op != OP_FUNCTION2:
                raise ValueError("given type is not a function")
            codes.append(reader.string("a function library"))
    except RDBError:
        raise ValueError("Failed loading library payload") from None  # rdbFunctionLoad's
    return codes


def restore_value(payload: bytes, state: Any) -> Any:
    """The value in a verified DUMP payload; RDBError if it is not one value of a known type."""
    reader = RDBReader(payload, 0, len(payload) - 10, "DUMP payload")
    rdb_type = reader.u8("a value type")
    if rdb_type == TYPE_STRING:
        value: Any = reader.string("a string value")
    else:
        codec = CODECS_BY_TYPE.get(rdb_type)
        if codec is None:
            raise reader.fail(f"a value type rillet knows (got {rdb_type})", 0)
        value = codec.load(reader, rdb_type, LoadContext(state))
        if hasattr(value, "send"):
            try:
                while True:
                    next(value)
            except StopIteration as done:
                value = done.value
        if value is None:
            raise reader.fail("a non-empty value", 0)
    if reader.pos != reader.end:
        trailer = DUMP_TRAILERS.get(value.__class__)
        if trailer is None or not trailer[1](value, bytes(reader.data[reader.pos:reader.end])):
            raise reader.fail("the end of the value")
    return value


def _log_aux(name: bytes, value: bytes, now_ms: int) -> None:
    """The lines Redis logs for the AUX fields it reads (rdbLoadRioWithLoadingCtx)."""
    try:
        if name == b"redis-ver":
            log.info("Loading RDB produced by version %s", value.decode("utf-8", "replace"))
        elif name == b"ctime":
            log.info("RDB age %d seconds", max(0, now_ms // 1000 - int(value)))
        elif name == b"used-mem":
            log.info("RDB memory usage when created %.2f Mb", int(value) / (1024 * 1024))
        elif name == b"aof-preamble" and int(value):
            log.info("RDB has an AOF tail")
        elif name == b"aof-base" and int(value):
            log.info("RDB is base AOF")
    except ValueError:
        pass  # Redis's strtol reads what it can; a line is all that is lost here


def _delay_us(config: Any, name: str, env: str) -> int:
    """Redis's test delays per key, `key-load-delay` / `rdb-key-save-delay` (microseconds),
    else the environment's (a hook for servers started by tests)."""
    try:
        return int(config[name]) if config is not None and config[name] else int(os.environ.get(env, "0"))
    except (ValueError, KeyError):
        return 0


def debug_delay(usec: int) -> None:
    """Redis's debugDelay: a negative value sleeps 1 us once in -usec times on average."""
    if usec < 0:
        usec = 1 if random.randrange(-usec) == 0 else 0
    if usec:
        time.sleep(usec / 1e6)
