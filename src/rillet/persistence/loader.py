"""Loading a dataset: snapshots, and AOF files replayed through the dispatcher.

Loaders are generators that yield every few hundred keys or commands, so the
server can run them as a task (clients get -LOADING meanwhile) and DEBUG
RELOAD / tests can run them straight through. AOF commands go through the
dispatcher with an internal client (`ServerState.replay_client`), in batches
through the compiled command loop when it is built: one code path for live
commands and replay. A log is cut into commands by the compiled request
scanner while they are canonical, then read with hiredis; only when something
looks wrong is it walked again exactly (aoflog.iter_commands) to name the offset:
a cut last command is dropped with a warning when `aof-load-truncated` allows
it and the file is the last one, anything else refuses to load.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import hiredis

from rillet import gcpolicy
from rillet.compiled import compiled
from rillet.persistence import aoflog, rdb
from rillet.persistence.aoflog import CORRUPT, LogDamage, Manifest
from rillet.persistence.disk import MappedFile
from rillet.persistence.rdb_format import RDBChecksumError, RDBError, RDBShortRead

log = logging.getLogger("rillet")

# hiredis compacts its buffer as it goes: big feeds make every gets() move
# megabytes (8 us a command at 4 MiB, 0.3 us at 64 KiB).
_CHUNK_BYTES = 64 << 10
_YIELD_EVERY = 512
# The compiled scan of canonical multibulk commands (the network parser's), or None.
_multibulk = compiled("rillet.resp._multibulk")
_scan = _multibulk.scan if _multibulk is not None else None
_MAX_BULK = 1 << 40  # (an AOF's values have no proto-max-bulk-len; the scan's own cap)


class LoadError(Exception):
    """Loading cannot go on. `lines` are what the server logs before refusing to start:
    rillet's account of where and why, then Redis's words for the failure; str() is
    all of them on one line."""

    def __init__(self, *lines: str) -> None:
        super().__init__(*lines)
        self.lines = lines

    def __str__(self) -> str:
        return " ".join(self.lines)


# What the server's checker is called in the messages where Redis names redis-check-aof.
CHECK_AOF = "rillet check-aof"


def _rdb_failure(error: RDBError) -> LoadError:
    """An RDB that cannot be loaded, told as Redis's rdbLoad tells it."""
    at = max(error.offset, 0)
    if isinstance(error, RDBChecksumError):
        return LoadError(
            f"Wrong RDB checksum expected: ({error.computed:x}) but got ({error.stored:x})."
            " Aborting now.",
            f"Internal error in RDB reading offset {at} -> RDB CRC error")
    if isinstance(error, RDBShortRead):
        return LoadError(
            str(error), "Short read or OOM loading DB. Unrecoverable error, aborting now.",
            f"Internal error in RDB reading offset {at} -> Unexpected EOF reading RDB file")
    return LoadError(str(error))


@dataclass
class LoadProgress:
    """What INFO reports while loading (loading_* fields)."""

    start_time: float = field(default_factory=time.time)
    total_bytes: int = 0
    loaded_bytes: int = 0
    keys_loaded: int = 0
    keys_expired: int = 0
    commands: int = 0
    truncated: bool = False
    # A snapshot's replication fields and the keys it skipped as expired (when
    # a list): see rdb.LoadStats.
    repl: tuple[str, int, int] | None = None
    expired_keys: list[tuple[int, bytes]] | None = None


class _NoExpiryClock:
    """Stands in for a database's clock while loading: no key is ever due.

    Replay must see keys as the writer saw them; a key whose TTL passed
    since is removed (and the DEL propagated) once loading is over, as Redis
    does by not expiring while `server.loading`.
    """

    def now_ms(self) -> int:
        return 0


@contextlib.contextmanager
def expiry_suspended(state: Any) -> Iterator[None]:
    dbs = state.keyspace.dbs
    clocks = [db.clock for db in dbs]
    frozen = _NoExpiryClock()
    for db in dbs:
        db.clock = frozen
    try:
        yield
    finally:
        for db, clock in zip(dbs, clocks, strict=True):
            db.clock = clock


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a dataset loads, then the loaded objects
    frozen out of its reach. A load makes millions of long-lived objects, and each
    collection on the way rescans them all: a third of a 1M-entry load's time. What
    a load discards is freed by reference counting."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()
        gcpolicy.rebase()  # loaded data is live: no sweep for the growth it brought


# --- snapshots ------------------------------------------------------------------------

def load_snapshot(state: Any, path: str, progress: LoadProgress,
                  skip_expired: bool = True) -> Iterator[None]:
    """Load an RDB file."""
    name = os.path.basename(path)
    with MappedFile(path) as mapped:
        # Checked whole before any key is stored: a damaged file loads nothing.
        try:
            rdb.verify(mapped.data, name)
        except RDBError as error:
            raise _rdb_failure(error) from None
        stats = rdb.LoadStats(expired=progress.expired_keys)
        base = progress.loaded_bytes
        try:
            for _ in rdb.parse(state, mapped.data, stats, name, skip_expired):
                progress.loaded_bytes = base + stats.bytes_loaded
                yield
        except RDBError as error:
            # A sound file with something rillet cannot hold (a type it lacks):
            # drop what was loaded so far rather than leave half a dataset.
            state.keyspace.flush_all()
            raise _rdb_failure(error) from None
        finally:
            progress.keys_loaded += stats.keys_loaded
            progress.keys_expired += stats.keys_expired
        progress.loaded_bytes = base + len(mapped.data)
        progress.repl = stats.repl
        log.info("Done loading RDB, keys loaded: %d, keys expired: %d.", stats.keys_loaded,
                 stats.keys_expired)


# --- AOF --------------------------------------------------------------------------------

def aof_total_bytes(directory: str, manifest: Manifest) -> int:
    total = 0
    for info in manifest.files():
        with contextlib.suppress(OSError):
            total += os.path.getsize(os.path.join(directory, info.name))
    return total


def load_aof(state: Any, dispatcher: Any, directory: str, manifest: Manifest,
             allow_truncated: bool, progress: LoadProgress) -> Iterator[None]:
    """Load the base and the incr files of `manifest` in order."""
    files = manifest.files()
    for index, info in enumerate(files):
        path = os.path.join(directory, info.name)
        last = index == len(files) - 1
        if not os.path.exists(path):
            raise LoadError(f"The AOF file {info.name} listed in the manifest doesn't exist")
        if os.path.getsize(path) == 0:
            continue
        with open(path, "rb") as handle:
            head = handle.read(8)
        started = time.perf_counter()
        if rdb.is_rdb(head):
            # A base keeps keys whose TTL passed: the incr files were written against them.
            log.info("Reading RDB base file on AOF loading..." if info.type == aoflog.TYPE_BASE
                     else "Reading RDB preamble from AOF file...")
            try:
                yield from load_snapshot(state, path, progress, skip_expired=False)
            except LoadError as error:
                raise LoadError(*error.lines, f"Error reading the RDB base file {info.name},"
                                " AOF loading aborted") from None
        else:
            yield from replay_log(state, dispatcher, path, last and allow_truncated, progress,
                                  last)
        kind = "base" if info.type == aoflog.TYPE_BASE else "incr"
        log.info("DB loaded from %s file %s: %.3f seconds", kind, info.name,
                 time.perf_counter() - started)
    # The replayed keys are measured as a snapshot's are, in one pass when the
    # memory figure is next asked for (the memory cron skips them while loading).
    for db in state.keyspace.dbs:
        if db.pending:
            db.forget_sizes()


def replay_log(state: Any, dispatcher: Any, path: str, truncate_ok: bool,
               progress: LoadProgress, is_last: bool = True) -> Iterator[None]:
    """Replay one RESP log; cut a damaged tail if `truncate_ok`, else raise LoadError."""
    name = os.path.basename(path)
    client = state.replay_client()
    execute = dispatcher.execute
    apply = _applier(state, dispatcher, client)
    base_bytes = progress.loaded_bytes
    with MappedFile(path) as mapped:
        view = mapped.view
        size = len(view)
        pos = done = 0  # (done: the commands executed)
        if _scan is not None:
            pos, done = yield from _replay_canonical(view, _scan, apply, progress, base_bytes)
        # The rest (from the first command the scan did not take) through hiredis.
        reader = hiredis.Reader()
        suspect = False
        pending: list[list[bytes]] = []
        while pos < size and not suspect:
            n = min(_CHUNK_BYTES, size - pos)
            reader.feed(view, pos, n)  # type: ignore[arg-type]  # (hiredis takes any buffer; its stub says bytes)
            pos += n
            while True:
                try:
                    argv = reader.gets()
                except hiredis.ProtocolError:
                    suspect = True
                    break
                if argv is False:
                    break
                if argv.__class__ is not list or not argv:
                    suspect = True
                    break
                for arg in argv:
                    if arg.__class__ is not bytes:
                        suspect = True
                        break
                if suspect:
                    break
                pending.append(argv)
                if len(pending) >= _YIELD_EVERY:
                    apply(pending)
                    done += len(pending)
                    progress.commands += len(pending)
                    pending = []
                    progress.loaded_bytes = base_bytes + pos
                    yield
        apply(pending)
        done += len(pending)
        progress.commands += len(pending)
        if not suspect and (client.multi is not None or not _reader_idle(reader)):
            suspect = True
        if suspect:
            # Walk the file exactly: find the damage, and run what hiredis could not.
            keep = yield from _replay_exactly(client, execute, view, name, done, truncate_ok,
                                              is_last, progress)
        else:
            keep = size
        progress.loaded_bytes = base_bytes + size
    if keep < size:
        progress.truncated = True
        log.warning("!!! Warning: short read while loading the AOF file %s!!!", name)
        log.warning("!!! Truncating the AOF %s at offset %d !!!", name, keep)
        os.truncate(path, keep)
        log.warning("AOF %s loaded anyway because aof-load-truncated is enabled", name)


def _replay_canonical(view: memoryview, scan: Callable[[bytes, int], tuple[list[list[bytes]], int]],
                      apply: Callable[[list[list[bytes]]], None], progress: LoadProgress,
                      base_bytes: int):
    """Replay the log from its start while its commands are canonical multibulk (all
    that rillet and Redis write), cut out by the compiled request scanner a chunk at a
    time; one it does not take (bigger than a chunk, say) is read exactly. Returns
    (offset, commands run): where the general reader must go on, at a command's start."""
    size = len(view)
    pos = done = 0
    while pos < size:
        commands, used = scan(bytes(view[pos:pos + _CHUNK_BYTES]), _MAX_BULK)
        if not used:
            if view[pos] != 42:  # not '*': an annotation, or damage (hiredis and then
                break            # the exact walk judge it)
            whole = aoflog.try_read_command(view, pos, size)
            if whole is None:
                break
            commands, used = [whole[0]], whole[1] - pos
        for first in range(0, len(commands), _YIELD_EVERY):
            part = commands[first:first + _YIELD_EVERY] if len(commands) > _YIELD_EVERY \
                else commands
            apply(part)
            done += len(part)
            progress.commands += len(part)
            progress.loaded_bytes = base_bytes + pos
            yield
        pos += used
    return pos, done


def _applier(state: Any, dispatcher: Any, client: Any) -> Callable[[list[list[bytes]]], None]:
    """Run replayed commands in order: stream entries through the XADD shortcut where
    it applies (`_entry_appender`), the rest in batches (`_runner`)."""
    run = _runner(state, dispatcher, client)
    append_entry = _entry_appender(client)

    def apply(commands: list[list[bytes]]) -> None:
        start = 0
        for index, argv in enumerate(commands):
            if argv[0] == b"XADD":
                if start < index:  # (in order: the shortcut must see what came before)
                    run(commands[start:index])
                start = index + 1 if append_entry(argv) else index
        if start < len(commands):
            run(commands[start:] if start else commands)

    return apply


def _runner(state: Any, dispatcher: Any, client: Any) -> Callable[[list[list[bytes]]], None]:
    """Run a batch of replayed commands in order, replies dropped (Redis ignores a
    failed one too): through the compiled command loop when it is built (the one a
    replica runs its master's stream with, `Dispatcher.run_replicated`), so a plain
    write costs its body, not the dispatcher's Python; else command by command."""
    execute = dispatcher.execute
    run_replicated = dispatcher.run_replicated
    if run_replicated is None:
        def run_each(commands: list[list[bytes]]) -> None:
            for argv in commands:
                execute(client, argv)
        return run_each

    def ignore(argv: list[bytes], reply: object) -> None:
        pass

    def run_compiled(commands: list[list[bytes]]) -> None:
        index, count = 0, len(commands)
        while index < count:
            # It returns where MULTI or EXEC changed the client's state (run), or
            # at a PING or REPLCONF (not run: a master link answers those itself).
            index = run_replicated(dispatcher, state, client, commands, index,
                                   client.multi is not None, ignore)
            if index < count and commands[index][0].lower() in (b"ping", b"replconf"):
                execute(client, commands[index])
                index += 1

    return run_compiled


def _entry_appender(client: Any):
    """A replay shortcut for the XADD effects that make up most of a stream AOF.

    `XADD key ms-seq field value ...` and `XADD key MAXLEN = n ms-seq ...` (the
    forms XADD's effects take) on an existing stream, outside a transaction,
    become one append, with no argument parsing, reply or effect; anything
    else, or anything the command would refuse, returns False and goes
    through the dispatcher (which queues a transaction's commands until EXEC).
    """
    try:
        from rillet.engine.ids import StreamID
        from rillet.engine.stream import Stream
    except ImportError:  # pragma: no cover
        return lambda argv: False
    new_id = tuple.__new__
    limit = 1 << 64

    def append(argv: list[bytes]) -> bool:
        if client.multi is not None:
            return False  # queued until its EXEC is read: a torn transaction applies nothing
        argc = len(argv)
        if not argc & 1 or argc < 5:
            return False
        maxlen = -1
        id_at = 2
        if argv[2] == b"MAXLEN":
            if argc < 9 or argv[3] != b"=" or not argv[4].isdigit():
                return False
            maxlen = int(argv[4])
            id_at = 5
        ms_text, dash, seq_text = argv[id_at].partition(b"-")
        if not dash or not ms_text.isdigit() or not seq_text.isdigit():
            return False
        stream = client.db.data.get(argv[1])
        if stream.__class__ is not Stream:
            return False
        ms = int(ms_text)
        seq = int(seq_text)
        last_ms, last_seq = stream.last_id
        if ms >= limit or seq >= limit or ms < last_ms or (ms == last_ms and seq <= last_seq) \
                or not (ms or seq):
            return False
        stream.append(new_id(StreamID, (ms, seq)), argv[id_at + 1 :])
        if 0 <= maxlen < stream.length:
            stream.trim_maxlen(maxlen)
        return True

    return append


_PROBE_ARG = b"rillet-end-of-file-probe"
_PROBE = b"*1\r\n$%d\r\n%b\r\n" % (len(_PROBE_ARG), _PROBE_ARG)


def _reader_idle(reader: hiredis.Reader) -> bool:
    """True if the reader holds no partial command (hiredis does not say so itself).

    A complete probe command comes back as itself only when nothing was left
    over; after a partial command it is absorbed into it or fails to parse.
    """
    reader.feed(_PROBE)
    try:
        return reader.gets() == [_PROBE_ARG]
    except hiredis.ProtocolError:
        return False


def _replay_exactly(client: Any, execute: Any, view: memoryview, name: str, skip: int,
                    truncate_ok: bool, is_last: bool, progress: LoadProgress):
    """Run the commands after the first `skip`; return the offset to keep."""
    index = 0
    multi_at = -1
    ok_up_to = 0
    try:
        for argv, start, end in aoflog.iter_commands(view, name):
            if index >= skip:
                execute(client, argv)
                progress.commands += 1
                if index % _YIELD_EVERY == 0:
                    yield
            index += 1
            word = argv[0].upper()
            if word == b"MULTI":
                multi_at = start
            elif word == b"EXEC":
                multi_at = -1
            if multi_at < 0:
                ok_up_to = end
    except LogDamage as damage:
        if damage.kind == CORRUPT:
            raise LoadError(
                damage.message,
                f"Bad file format reading the append only file {name}: make a backup of your"
                f" AOF file, then use {CHECK_AOF} --fix <filename.manifest>") from None
        _refuse_unless(truncate_ok, is_last, name, damage.message)
    else:
        if multi_at < 0:
            return len(view)
        _refuse_unless(truncate_ok, is_last, name,
                       f"{name}: MULTI at offset {multi_at} has no EXEC before end of file")
    if multi_at >= 0:
        # Its commands were only queued. Redis cuts a torn command back to the
        # last whole one, leaving the MULTI to be reverted at the next load
        # (with whatever was appended since): the file is cut at the MULTI here.
        log.warning("Revert incomplete MULTI/EXEC transaction in AOF file %s", name)
    client.multi = None
    return ok_up_to


def _refuse_unless(truncate_ok: bool, is_last: bool, name: str, message: str) -> None:
    if truncate_ok:
        return
    if not is_last:
        raise LoadError(
            message, f"The AOF file {name} is not the last one in the manifest, so it cannot"
            f" be truncated: restore it or use {CHECK_AOF} --fix <filename.manifest>")
    raise LoadError(
        message,
        f"Unexpected end of file reading the append only file {name}. You can: 1) Make a"
        f" backup of your AOF file, then use {CHECK_AOF} --fix <filename.manifest>."
        " 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes"
        " and restart the server.")
