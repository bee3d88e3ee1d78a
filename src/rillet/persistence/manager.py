"""`Persistence`: the AOF and snapshot policies of one server, and their bookkeeping.

It owns what Redis keeps in `server.aof_*` / `server.rdb_*`: the AOF state
(off, on, or waiting for the first rewrite after CONFIG SET appendonly yes),
the one background child (BGSAVE or BGREWRITEAOF), save rules and automatic
rewrites (checked on every cron tick), the MISCONF write guard, LASTSAVE,
INFO persistence, loading at start, and what SHUTDOWN does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from rillet import cpuaffinity, errors
from rillet.errors import ReplyError
from rillet.persistence import disk, fork, rewrite
from rillet.persistence.aof import AofWriter
from rillet.persistence.aoflog import Manifest, ManifestError
from rillet.persistence.digest import key_digest, keyspace_digest
from rillet.persistence.loader import (
    LoadError,
    LoadProgress,
    aof_total_bytes,
    collector_paused,
    expiry_suspended,
    load_aof,
    load_snapshot,
)
from rillet.persistence.rdb import save_to_path, write_file

log = logging.getLogger("rillet")

AOF_OFF = "off"
AOF_ON = "on"
AOF_WAIT_REWRITE = "wait_rewrite"

# Redis waits this long before retrying a failed BGSAVE triggered by save rules.
BGSAVE_RETRY_DELAY_S = 5
# A clean shutdown folds the incr files into a new base above this size (and
# when they are at least a quarter of the base), so a restart loads a snapshot.
COMPACT_MIN_BYTES = 1 << 20
# Slice of event-loop time the startup loader takes before letting clients in.
LOAD_SLICE_S = 0.02

def write_aof_base(state: Any, path: str) -> int:
    """Write an AOF base to exactly `path` and fsync it: an RDB with aof-use-rdb-preamble
    yes (Redis's default), else the keyspace as commands (what Redis 7 calls a .base.aof)."""
    if state.config["aof-use-rdb-preamble"]:
        return write_file(state, path, "snapshot", aof_base=True)
    return rewrite.write_file(state, path, "snapshot")


class Persistence:
    def __init__(self, state: Any, dispatcher: Any, server: Any = None) -> None:
        self.state = state
        self.dispatcher = dispatcher
        self.server = server
        self.config = state.config
        # How the process ends when the AOF cannot keep `appendfsync always`'s
        # promise (tests that run persistence in-process replace it).
        self.exit: Callable[[int], None] = os._exit
        self.aof_state = AOF_OFF
        self.aof = AofWriter(self.aof_dir(), str(self.config["appendfilename"]), self.config,
                             self._on_buffered)
        self.aof.child_active = lambda: self.child is not None  # type: ignore[method-assign]  # hook
        self.child: fork.Child | None = None
        # Snapshots (Redis's rdb_* fields).
        self.lastsave = int(time.time())
        self.last_bgsave_ok = True
        self.last_bgsave_time_s = -1
        self.last_bgsave_try = 0.0
        self.rdb_saves = 0
        self.dirty_at_fork = 0
        self.bgsave_scheduled = False
        # Rewrites.
        self.rewrite_scheduled = False
        self.last_rewrite_time_s = -1
        self.last_bgrewrite_ok = True
        self.aof_rewrites = 0
        self.rewrite_failures = 0
        self.last_rewrite_failure = 0.0
        # Loading.
        self.progress: LoadProgress | None = None
        self.last_load = LoadProgress()
        # Called with the start-up load's LoadProgress once the dataset is in,
        # before any client may write (replication takes back the history a
        # snapshot names: LoadProgress.repl).
        self.after_load: list[Callable[[LoadProgress], None]] = []
        self.load_failed = False
        self.last_fork_us = 0
        # Durability gate: sealed reply tickets and the AOF byte count each needs.
        self.waiting: deque[tuple[int, int]] = deque()
        self.fsync_inflight = False
        self.fsync_generation = 0  # bumped when the incr file changes

    # --- wiring ----------------------------------------------------------------------
    def install(self) -> None:
        state = self.state
        state.persistence = self
        state.info_providers["persistence"] = self.info
        self.config.watch("appendonly", self._appendonly_changed)
        self.config.watch("dir", lambda _value: self._paths_changed())
        self.config.watch("appenddirname", lambda _value: self._paths_changed())
        # MISCONF after a failed BGSAVE only while Redis's switch for it is on.
        self.config.watch("stop-writes-on-bgsave-error", lambda _value: self.update_guard())
        self.config.watch("save", lambda _value: self.update_guard())
        server = self.server
        if server is not None:
            server.durability = self
            server.cron_hooks.append(self.cron)
            server.on_shutdown.append(self.on_shutdown)
            server.load_dataset = self.startup
            # Until the dataset is loaded, clients get -LOADING (not when there is
            # nothing to load: a client accepted before the loading task first runs
            # would be told LOADING by an empty server).
            state.loading = self._has_dataset()

    def _has_dataset(self) -> bool:
        """An AOF or a snapshot for load_at_startup to load (a damaged manifest counts)."""
        try:
            manifest = self.aof.read_manifest() if self.config["appendonly"] else None
        except (ManifestError, OSError):
            return True
        if manifest is not None and manifest.files():
            return True
        return os.path.exists(self.snapshot_path())

    def _paths_changed(self) -> None:
        if self.aof_state == AOF_OFF:
            self.aof.directory = self.aof_dir()

    def aof_dir(self) -> str:
        return os.path.join(str(self.config["dir"]), str(self.config["appenddirname"]))

    def snapshot_path(self) -> str:
        return os.path.join(str(self.config["dir"]), str(self.config["dbfilename"]))

    def _on_buffered(self) -> None:
        """The AOF buffer got its first bytes: gate the replies that may depend on them."""
        server = self.server
        if server is None:
            self.aof.flush()
            return
        if self.aof.write_errno:
            return  # writes are refused; the cron retries what is buffered
        if self.config["appendfsync"] == "always":
            server.hold_replies = True
            server.schedule_flush()
        else:
            server.flush_before_send = True

    def _register_sink(self) -> None:
        # The AOF's EffectStream itself is the sink: no wrapper call per command,
        # and the compiled XADD writes into it directly. It is taken out while
        # loading, so replayed commands are not appended again.
        sink = self.aof.stream
        if sink not in self.state.effect_sinks:
            self.state.effect_sinks.append(sink)

    def _unregister_sink(self) -> None:
        sink = self.aof.stream
        if sink in self.state.effect_sinks:
            self.state.effect_sinks.remove(sink)

    # --- the durability gate (see Server.hold / flush_held) ------------------------------
    def flush_for_send(self) -> bool:
        """everysec/no: write the buffer before a reply leaves; False keeps that reply."""
        server = self.server
        server.flush_before_send = False
        return self.aof.write_buffer()

    def seal(self, ticket: int) -> bool:
        """Replies tagged `ticket` may go once every byte fed so far is durable."""
        if self.aof_state == AOF_OFF:
            self.waiting.clear()
            return True
        self.waiting.append((ticket, self.aof.fed_total))
        self._advance()
        return False  # _advance released what it could

    def _advance(self) -> None:
        """Write, fsync (in the background under `always`), release durable tickets."""
        aof = self.aof
        server = self.server
        if aof.buf and not aof.write_buffer():
            self._gate_after_error()
            return
        if self.config["appendfsync"] == "always" and not aof.skip_fsync():
            durable = aof.synced_total
            if durable < aof.written_total:
                if server is None or server.loop is None:
                    if not aof.fsync_now():
                        self._gate_after_error()
                        return
                    durable = aof.synced_total
                elif not self.fsync_inflight:
                    self._start_fsync()
        else:
            durable = aof.written_total
        released = 0
        waiting = self.waiting
        while waiting and waiting[0][1] <= durable:
            released = waiting.popleft()[0]
        if server is not None:
            if released:
                server.release_through(released)
            # Under `always`, a reply may depend on bytes not yet fsynced: hold it.
            pending = aof.synced_total < aof.fed_total
            server.hold_replies = bool(waiting) or (
                pending and self.config["appendfsync"] == "always")

    def _start_fsync(self) -> None:
        aof = self.aof
        loop = self.server.loop
        generation = self.fsync_generation
        target = aof.written_total
        self.fsync_inflight = True

        def notify(code: int) -> None:  # on the bio thread
            loop.call_soon_threadsafe(self._fsync_done, generation, target, code)

        aof.bio.fsync_notify(aof.fd, notify)

    def _fsync_done(self, generation: int, target: int, code: int) -> None:
        self.fsync_inflight = False
        aof = self.aof
        if generation == self.fsync_generation and self.aof_state != AOF_OFF:
            if code:
                aof.fsync_failed(code)
                self._gate_after_error()
                return
            if target > aof.synced_total:
                aof.synced_total = target
                aof.synced_size = aof.incr_size - (aof.written_total - target)
                aof.last_fsync = time.monotonic()
        self._advance()

    def _gate_after_error(self) -> None:
        if self.config["appendfsync"] == "always" and self.aof_state != AOF_OFF:
            # As Redis: the failed write is applied in memory and cannot be rolled
            # back, and replies that saw it are held; going on would let a later
            # save keep a write whose client was told nothing, or MISCONF on a
            # retry of it. Exit without saving: no reply ever acknowledged it.
            log.warning("Can't recover from AOF write error when the AOF fsync policy is"
                        " 'always': %s. Exiting...", os.strerror(self.aof.status_errno or 5))
            for handler in logging.getLogger().handlers + log.handlers:
                handler.flush()
            self.exit(1)
            return
        # Held replies stay held until a retry works; new replies go out (writes
        # are refused with MISCONF meanwhile), so reads keep working.
        self.update_guard()
        server = self.server
        if server is not None:
            server.hold_replies = False
            server.flush_before_send = False

    def _release_all(self) -> None:
        self.waiting.clear()
        server = self.server
        if server is not None:
            server.hold_replies = False
            server.flush_before_send = False
            server.release_through(server.reply_ticket)

    def write_guard(self) -> str | None:
        if self.aof_state != AOF_OFF:
            err = self.aof.status_errno
            if err:
                return errors.MISCONF_AOF.format(os.strerror(err))
        if (not self.last_bgsave_ok and self.config["save"]
                and self.config["stop-writes-on-bgsave-error"]):
            return errors.MISCONF_RDB
        return None

    def update_guard(self) -> None:
        """Install the MISCONF guard only while there is an error to report.

        The dispatcher skips `state.write_guard` when it is None, so writes
        cost nothing extra while the disk is fine. A guard someone else
        installed (a replica's READONLY) is kept and chained.
        """
        state = self.state
        current = state.write_guard
        if current is not None and getattr(current, "_rillet_persistence", False):
            current = current._previous
        if self.write_guard() is None:
            state.write_guard = current
            return
        previous = current

        def guard() -> str | None:
            return self.write_guard() or (previous() if previous is not None else None)

        guard._rillet_persistence = True  # type: ignore[attr-defined]  # marks our guard
        guard._previous = previous  # type: ignore[attr-defined]
        state.write_guard = guard

    # --- loading --------------------------------------------------------------------------
    async def startup(self) -> bool:
        """Load the dataset while serving -LOADING, then open the AOF; False if it failed
        (the server is exiting)."""
        deadline = time.perf_counter() + LOAD_SLICE_S
        try:
            for _ in self.load_at_startup():
                if time.perf_counter() >= deadline:
                    await asyncio.sleep(0)
                    deadline = time.perf_counter() + LOAD_SLICE_S
            self.open_aof_after_load()
            for hook in self.after_load:
                hook(self.last_load)
        except LoadError as error:
            self._fatal(*error.lines)
            return False
        except (ManifestError, OSError) as error:
            self._fatal(f"Fatal error loading the DB: {error}. Exiting.")
            return False
        except Exception as error:  # a bug: refuse to serve a half-loaded dataset
            log.exception("internal error while loading the dataset")
            self._fatal(f"Fatal error loading the DB: internal error while loading: {error!r}."
                        " Exiting.")
            return False
        self.state.loading = False
        return True

    def _fatal(self, *lines: str) -> None:
        """Exit as Redis does when its data cannot be loaded: at once, with status 1
        (no shutdown: nothing may be saved over the files it could not read)."""
        for line in lines:
            log.warning("%s", line)
        self.load_failed = True
        if self.server is not None:
            self.server.abort(1)

    def load_at_startup(self) -> Iterator[None]:
        """Generator: load the AOF if enabled and present, else the snapshot."""
        state = self.state
        progress = self.progress = LoadProgress()
        state.loading = True
        started = time.perf_counter()
        source = None
        try:
            with expiry_suspended(state), collector_paused():
                manifest = self.aof.read_manifest() if self.config["appendonly"] else None
                if manifest is not None and manifest.files():
                    progress.total_bytes = aof_total_bytes(self.aof.directory, manifest)
                    yield from load_aof(state, self.dispatcher, self.aof.directory, manifest,
                                        bool(self.config["aof-load-truncated"]), progress)
                    progress.repl = None  # (as Redis: an AOF names no replication history)
                    source = "append only file"
                elif os.path.exists(self.snapshot_path()):
                    # With appendonly yes but no AOF yet, Redis would start empty and
                    # write an empty base; loading the snapshot keeps the user's data.
                    progress.total_bytes = os.path.getsize(self.snapshot_path())
                    progress.expired_keys = []
                    yield from load_snapshot(state, self.snapshot_path(), progress)
                    source = "disk"
        finally:
            self.last_load = progress
            self.progress = None
        state.dirty = 0
        if source is not None:
            log.info("DB loaded from %s: %.3f seconds", source, time.perf_counter() - started)

    def open_aof_after_load(self) -> None:
        if not self.config["appendonly"]:
            return
        manifest = self.aof.read_manifest() or Manifest()
        self.aof.directory = self.aof_dir()
        self.aof.open_for_append(manifest, self._write_base_now)
        self.aof_state = AOF_ON
        self._register_sink()

    def _write_base_now(self, path: str) -> None:
        tmp = os.path.join(os.path.dirname(path), f"temp-rewriteaof-{os.getpid()}.aof")
        try:
            write_aof_base(self.state, tmp)
            os.replace(tmp, path)
        except BaseException:
            disk.unlink_quietly(tmp)
            raise
        log.info("Creating AOF base file %s on server start", os.path.basename(path))

    def run_sync(self, generator: Any) -> None:
        """Run a loader to the end inside one command (DEBUG RELOAD / LOADAOF)."""
        state = self.state
        was_loading = state.loading
        state.loading = True
        self._unregister_sink()
        try:
            with expiry_suspended(state):
                for _ in generator:
                    pass
        finally:
            state.loading = was_loading
            if self.aof_state != AOF_OFF:
                self._register_sink()

    def debug_reload(self, save: bool = True, flush: bool = True) -> None:
        if save:
            self.save()
        path = self.snapshot_path()
        if not os.path.exists(path):
            raise ReplyError(errors.RDB_RELOAD_FAILED)
        if flush:
            self._flush_everything()
        progress = LoadProgress(total_bytes=os.path.getsize(path))
        try:
            self.run_sync(load_snapshot(self.state, path, progress))
        except LoadError as error:
            log.warning("DEBUG RELOAD: %s", error)
            raise ReplyError(errors.RDB_RELOAD_FAILED) from None
        self.last_load = progress
        log.info("DB reloaded by DEBUG RELOAD")

    def debug_loadaof(self) -> None:
        if self.aof_state != AOF_OFF:
            if not self.aof.flush(force_fsync=True):
                raise ReplyError(errors.MISCONF_AOF.format(os.strerror(self.aof.status_errno)))
        manifest = self.aof.read_manifest()
        self._flush_everything()
        if manifest is None:
            return
        progress = LoadProgress(total_bytes=aof_total_bytes(self.aof.directory, manifest))
        try:
            self.run_sync(load_aof(self.state, self.dispatcher, self.aof.directory, manifest,
                                   bool(self.config["aof-load-truncated"]), progress))
        except LoadError as error:
            log.warning("DEBUG LOADAOF: %s", error)
            raise ReplyError(errors.AOF_LOAD_FAILED.format(error)) from None
        self.last_load = progress
        self.state.dirty = 0
        log.info("Append Only File loaded by DEBUG LOADAOF")

    # --- DEBUG's views of the persisted form (the commands layer reaches them here) ------
    def digest(self) -> str:
        """DEBUG DIGEST: the keyspace's hash, over each value's snapshot encoding."""
        return keyspace_digest(self.state)

    def key_digest(self, db: Any, key: bytes) -> str:
        return key_digest(self.state, db, key)

    fault_targets = disk.TARGETS

    def set_fault(self, target: str, count: int, code: int, op: str) -> None:
        """DEBUG PERSISTENCE-FAULT: make the next `count` file operations fail."""
        disk.FAULTS.set(target, count, code, op)

    def clear_faults(self) -> None:
        disk.FAULTS.clear()

    def set_aof_flush_sleep(self, usec: int) -> None:
        """DEBUG AOF-FLUSH-SLEEP: sleep before each write of the AOF buffer (tests)."""
        self.aof.flush_sleep_us = max(0, usec)

    def _flush_everything(self) -> None:
        state = self.state
        state.keyspace.flush_all()
        state.db_flushed(None)

    # --- snapshots ----------------------------------------------------------------------------
    def save(self) -> None:
        """SAVE: write the snapshot in the foreground."""
        if self.child is not None and self.child.kind == fork.KIND_RDB:
            raise ReplyError(errors.BGSAVE_IN_PROGRESS)
        try:
            save_to_path(self.state, self.snapshot_path(), repl=self._repl_info())
        except OSError as error:
            log.warning("Failed saving the DB: %s", error.strerror)
            raise ReplyError(errors.SAVE_FAILED) from None
        log.info("DB saved on disk")
        self.lastsave = int(time.time())
        self.state.dirty = 0
        self.last_bgsave_ok = True
        self.rdb_saves += 1
        self.update_guard()

    def bgsave(self, schedule: bool = False) -> bytes:
        if self.child is not None:
            if self.child.kind == fork.KIND_RDB:
                raise ReplyError(errors.BGSAVE_IN_PROGRESS)
            if schedule:
                self.bgsave_scheduled = True
                return b"Background saving scheduled"
            raise ReplyError(errors.BGSAVE_CHILD_ACTIVE)
        if not self.start_bgsave():
            raise ReplyError(errors.SAVE_FAILED)
        return b"Background saving started"

    def start_bgsave(self) -> bool:
        state = self.state
        path = self.snapshot_path()
        directory = os.path.dirname(path) or "."
        self.dirty_at_fork = state.dirty
        self.last_bgsave_try = time.time()
        self.bgsave_scheduled = False
        repl = self._repl_info()  # (the parent's, at the fork)

        def work(temp_path: str) -> None:
            cpuaffinity.pin(str(self.config["bgsave-cpulist"]))
            save_to_path(state, path, tmp=temp_path, repl=repl)
            log.info("DB saved on disk")  # (the child's line, as Redis's child logs it)

        try:
            child = fork.start(fork.KIND_RDB,
                               lambda pid: os.path.join(directory, f"temp-{pid}.rdb"), work)
        except OSError as error:
            self.last_bgsave_ok = False
            self.update_guard()
            log.warning("Can't save in background: fork: %s", error.strerror)
            return False
        self._charge_child_fault("snapshot")
        self.child = child
        self.last_fork_us = child.fork_us
        log.info("Background saving started by pid %d", child.pid)
        return True

    def _repl_info(self) -> tuple[int, str, int] | None:
        """The replication fields a snapshot carries (replication/core.py's save_info)."""
        replication = self.state.replication
        return replication.save_info() if replication is not None else None

    def _charge_child_fault(self, target: str) -> None:
        # The child fails its first operation if a fault is armed; count it here too.
        left = disk.FAULTS.remaining[target]
        if left > 0:
            disk.FAULTS.remaining[target] = left - 1

    def _bgsave_done(self, child: fork.Child, code: int) -> None:
        self.last_bgsave_time_s = int(time.time() - child.started)
        if code == 0:
            log.info("Background saving terminated with success")
            self.lastsave = int(time.time())
            self.state.dirty = max(0, self.state.dirty - self.dirty_at_fork)
            self.last_bgsave_ok = True
            self.rdb_saves += 1
        else:
            log.warning("Background saving error (child exit code %d)", code)
            disk.unlink_quietly(child.temp_path)
            self.last_bgsave_ok = False
        self.update_guard()

    # --- AOF rewrite -----------------------------------------------------------------------------
    def bgrewriteaof(self, in_exec: bool = False) -> bytes:
        if self.child is not None and self.child.kind == fork.KIND_AOF:
            raise ReplyError(errors.BGREWRITEAOF_IN_PROGRESS)
        if self.child is not None or in_exec:
            self.rewrite_scheduled = True
            return b"Background append only file rewriting scheduled"
        if not self.start_rewrite():
            raise ReplyError(errors.BGREWRITEAOF_FAILED)
        return b"Background append only file rewriting started"

    def start_rewrite(self) -> bool:
        state = self.state
        aof = self.aof
        self.rewrite_scheduled = False
        try:
            os.makedirs(aof.directory, exist_ok=True)
            if self.aof_state != AOF_OFF:
                aof.start_new_incr()  # fsyncs the old file: every sealed ticket is durable
                self.fsync_generation += 1
                self._advance()
            directory = aof.directory

            def work(temp_path: str) -> None:
                cpuaffinity.pin(str(self.config["aof-rewrite-cpulist"]))
                write_aof_base(state, temp_path)
                log.info("Successfully created the temporary AOF base file %s",
                         os.path.basename(temp_path))

            child = fork.start(
                fork.KIND_AOF,
                lambda pid: os.path.join(directory, f"temp-rewriteaof-bg-{pid}.aof"),
                work,
            )
        except OSError as error:
            self.last_bgrewrite_ok = False
            self._rewrite_failed()
            log.warning("Can't rewrite append only file in background: %s", error.strerror)
            return False
        self._charge_child_fault("snapshot")
        self.child = child
        self.last_fork_us = child.fork_us
        log.info("Background append only file rewriting started by pid %d", child.pid)
        return True

    def _rewrite_failed(self) -> None:
        self.rewrite_failures += 1
        self.last_rewrite_failure = time.time()

    def _rewrite_done(self, child: fork.Child, code: int) -> None:
        self.last_rewrite_time_s = int(time.time() - child.started)
        if code != 0:
            log.warning("Background AOF rewrite terminated with error (exit code %d)", code)
            disk.unlink_quietly(child.temp_path)
            self.last_bgrewrite_ok = False
            self._rewrite_failed()
            if self.aof_state == AOF_WAIT_REWRITE:
                self.rewrite_scheduled = True  # AOF stays off until a base exists
            return
        log.info("Background AOF rewrite terminated with success")
        aof = self.aof
        try:
            if self.aof_state == AOF_OFF:
                # BGREWRITEAOF with AOF off still leaves a loadable base (Redis 7 does too).
                manifest = aof.read_manifest() or Manifest()
                old = [i.name for i in manifest.files()] + [i.name for i in manifest.history]
                base = manifest.new_base(aof.filename, aof.base_suffix())
                manifest.history = []
                manifest.incr = []
                os.replace(child.temp_path, aof.path(base.name))
                aof.persist_manifest(manifest)
                obsolete = [name for name in old if name != base.name]
                base_name = base.name
            else:
                obsolete = aof.install_base(child.temp_path)
                base_name = aof.manifest.base.name if aof.manifest.base is not None else ""
        except OSError as error:
            log.warning("Error installing the rewritten AOF: %s", error.strerror)
            disk.unlink_quietly(child.temp_path)
            self.last_bgrewrite_ok = False
            self._rewrite_failed()
            return
        log.info("Successfully renamed the temporary AOF base file %s into %s",
                 os.path.basename(child.temp_path), base_name)
        aof.delete_files(obsolete)
        if self.aof_state == AOF_WAIT_REWRITE:
            self.aof_state = AOF_ON
        log.info("Background AOF rewrite finished successfully")
        self.last_bgrewrite_ok = True
        self.rewrite_failures = 0
        self.aof_rewrites += 1

    # --- CONFIG SET appendonly ---------------------------------------------------------------------
    def _appendonly_changed(self, value: object) -> None:
        if value and self.aof_state == AOF_OFF:
            self.start_aof()
        elif not value and self.aof_state != AOF_OFF:
            self.stop_aof()

    def start_aof(self) -> None:
        """Switch the AOF on at runtime: effects are kept from now; a rewrite makes the base."""
        aof = self.aof
        aof.directory = self.aof_dir()
        try:
            aof.manifest = aof.read_manifest() or Manifest()
        except (ManifestError, OSError):
            aof.manifest = Manifest()
        aof.waiting_rewrite = True
        aof.write_errno = 0
        aof.bio.fsync_errno = 0
        self.aof_state = AOF_WAIT_REWRITE
        self._register_sink()
        if self.child is not None:
            if self.child.kind == fork.KIND_AOF:
                self._kill_child()
            else:
                self.rewrite_scheduled = True
                return
        if not self.start_rewrite():
            self.rewrite_scheduled = True

    def stop_aof(self) -> None:
        self._unregister_sink()
        if self.child is not None and self.child.kind == fork.KIND_AOF:
            self._kill_child()
        self.aof.close(final_fsync=True)
        self.aof.buf = bytearray()
        self.aof.waiting_rewrite = False
        self.aof.write_errno = 0
        self.aof_state = AOF_OFF
        self.rewrite_scheduled = False
        self._release_all()

    def _kill_child(self) -> None:
        child, self.child = self.child, None
        if child is None:
            return
        log.info("Killing running %s child: %d", child.kind, child.pid)
        fork.kill(child)
        disk.unlink_quietly(child.temp_path)

    # --- the cron -------------------------------------------------------------------------------
    def cron(self) -> None:
        if self.state.loading or self.load_failed:
            return
        self.update_guard()  # picks up a background fsync error, or its recovery
        child = self.child
        if child is not None:
            code = fork.poll(child)
            if code is not None:
                self.child = None
                if child.kind == fork.KIND_RDB:
                    self._bgsave_done(child, code)
                else:
                    self._rewrite_done(child, code)
        aof = self.aof
        if self.aof_state != AOF_OFF:
            if aof.buf or self.waiting or aof.write_errno:
                # Effects no reply has flushed yet, or a failed write to retry.
                if self.server is None:
                    aof.flush()
                elif not self.fsync_inflight:
                    self._advance()
            aof.everysec_tick()
        if self.child is None:
            self._start_due_job()

    def _start_due_job(self) -> None:
        now = time.time()
        if self.bgsave_scheduled:
            self.start_bgsave()
            return
        if self.rewrite_scheduled and now - self.last_rewrite_failure >= self._retry_delay():
            self.start_rewrite()
            return
        state = self.state
        for seconds, changes in self.config["save"]:
            if (
                state.dirty >= changes
                and now - self.lastsave > seconds
                and (now - self.last_bgsave_try > BGSAVE_RETRY_DELAY_S or self.last_bgsave_ok)
            ):
                log.info("%d changes in %d seconds. Saving...", changes, seconds)
                self.start_bgsave()
                return
        if self.aof_state == AOF_ON:
            percentage = int(self.config["auto-aof-rewrite-percentage"])
            min_size = int(self.config["auto-aof-rewrite-min-size"])
            aof = self.aof
            if percentage and aof.current_size > min_size:
                if now - self.last_rewrite_failure < self._retry_delay():
                    return
                base = aof.base_size or 1
                growth = aof.current_size * 100 // base - 100
                if growth >= percentage:
                    log.info("Starting automatic rewriting of AOF on %d%% growth", growth)
                    self.start_rewrite()

    def _retry_delay(self) -> float:
        # Repeated failures back off (Redis limits them too), up to a minute.
        if not self.rewrite_failures:
            return 0.0
        return float(min(60, 2 ** min(self.rewrite_failures, 6)))

    # --- shutdown ---------------------------------------------------------------------------------
    def on_shutdown(self, save: bool | None) -> None:
        if self.state.loading or self.load_failed:
            # Saving now would replace good files with a partial dataset.
            if self.child is not None:
                self._kill_child()
            return
        if self.child is not None:
            self._kill_child()
        if self.aof_state != AOF_OFF:
            log.info("Calling fsync() on the AOF file.")
            self.aof.close(final_fsync=True)
            self._release_all()  # everything is durable now: held replies may go
            if self.aof_state == AOF_ON:
                self._compact_on_shutdown()
        if save is True or (save is None and self.config["save"]):
            log.info("Saving the final RDB snapshot before exiting.")
            try:
                self.save()
            except ReplyError:
                log.warning("Error trying to save the DB, can't exit cleanly.")

    def _compact_on_shutdown(self) -> None:
        """Fold a large incr file into a new base before exiting (a rillet addition).

        The next start then loads a snapshot instead of replaying commands.
        Nothing else runs now, so no fork is needed; the old files stay until
        the new manifest is in place, and any failure leaves them as they are.
        """
        aof = self.aof
        incr = sum(self._size(info.name) for info in aof.manifest.incr)
        base = self._size(aof.manifest.base.name) if aof.manifest.base is not None else 0
        if incr < COMPACT_MIN_BYTES or incr * 4 < base:
            return
        started = time.perf_counter()
        temp = aof.path(f"temp-rewriteaof-{os.getpid()}.aof")
        try:
            write_aof_base(self.state, temp)
            manifest = aof.manifest.copy()
            old = [info.name for info in manifest.files()] + [i.name for i in manifest.history]
            info = manifest.new_base(aof.filename, aof.base_suffix())
            manifest.history = []
            manifest.incr = []
            manifest.new_incr(aof.filename)
            empty = os.open(aof.path(manifest.incr[0].name),
                            os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.close(empty)
            os.replace(temp, aof.path(info.name))
            aof.persist_manifest(manifest)
        except OSError as error:
            log.warning("Could not compact the AOF on shutdown: %s", error.strerror)
            disk.unlink_quietly(temp)
            return
        keep = {i.name for i in manifest.files()}
        aof.delete_files([name for name in old if name not in keep])
        log.info("AOF compacted into %s on shutdown in %.3f seconds", info.name,
                 time.perf_counter() - started)

    def _size(self, name: str) -> int:
        try:
            return os.path.getsize(self.aof.path(name))
        except OSError:
            return 0

    # --- INFO ---------------------------------------------------------------------------------------
    def info(self) -> list[tuple[str, object]]:
        state = self.state
        now = time.time()
        child = self.child
        rdb_child = child is not None and child.kind == fork.KIND_RDB
        aof_child = child is not None and child.kind == fork.KIND_AOF
        aof = self.aof
        fields: list[tuple[str, object]] = [
            ("loading", 1 if state.loading and not self.load_failed else 0),
            ("async_loading", 0),
            ("current_cow_peak", 0),
            ("current_cow_size", 0),
            ("current_cow_size_age", 0),
            ("current_fork_perc", "0.00"),
            ("current_save_keys_processed", 0),
            ("current_save_keys_total", 0),
            ("rdb_changes_since_last_save", state.dirty),
            ("rdb_bgsave_in_progress", 1 if rdb_child else 0),
            ("rdb_last_save_time", self.lastsave),
            ("rdb_last_bgsave_status", "ok" if self.last_bgsave_ok else "err"),
            ("rdb_last_bgsave_time_sec", self.last_bgsave_time_s),
            ("rdb_current_bgsave_time_sec", int(now - child.started) if child and rdb_child else -1),
            ("rdb_saves", self.rdb_saves),
            ("rdb_last_cow_size", 0),
            ("rdb_last_load_keys_expired", self.last_load.keys_expired),
            ("rdb_last_load_keys_loaded", self.last_load.keys_loaded),
            ("aof_enabled", 0 if self.aof_state == AOF_OFF else 1),
            ("aof_rewrite_in_progress", 1 if aof_child else 0),
            ("aof_rewrite_scheduled", 1 if self.rewrite_scheduled else 0),
            ("aof_last_rewrite_time_sec", self.last_rewrite_time_s),
            ("aof_current_rewrite_time_sec", int(now - child.started) if child and aof_child else -1),
            ("aof_last_bgrewrite_status", "ok" if self.last_bgrewrite_ok else "err"),
            ("aof_rewrites", self.aof_rewrites),
            ("aof_rewrites_consecutive_failures", self.rewrite_failures),
            ("aof_last_write_status", "err" if aof.status_errno else "ok"),
            ("aof_last_cow_size", 0),
            ("module_fork_in_progress", 0),
            ("module_fork_last_cow_size", 0),
        ]
        if self.aof_state != AOF_OFF:
            fields += [
                ("aof_current_size", aof.current_size),
                ("aof_base_size", aof.base_size),
                ("aof_pending_rewrite", 1 if self.rewrite_scheduled else 0),
                ("aof_buffer_length", len(aof.buf)),
                ("aof_pending_bio_fsync", aof.bio.fsync_pending),
                ("aof_delayed_fsync", aof.delayed_fsync),
            ]
        progress = self.progress
        if state.loading and progress is not None:
            elapsed = max(1e-9, now - progress.start_time)
            total = progress.total_bytes or 1
            done = min(progress.loaded_bytes, total)
            rate = done / elapsed
            eta = int((total - done) / rate) if rate > 0 else 1
            fields += [
                ("loading_start_time", int(progress.start_time)),
                ("loading_total_bytes", progress.total_bytes),
                ("loading_rdb_used_mem", 0),
                ("loading_loaded_bytes", done),
                ("loading_loaded_perc", "%.2f" % (done * 100 / total)),
                ("loading_eta_seconds", eta),
            ]
        return fields
