"""The append-only file writer: effects in, bytes on disk under an fsync policy.

Layout (Redis 7's multi-part AOF, in `dir/appenddirname/`):

    appendonly.aof.manifest        which files to load, in order (aoflog.py)
    appendonly.aof.<n>.base.rdb    an RDB made by a rewrite (.base.aof: commands, with
                                   aof-use-rdb-preamble no)
    appendonly.aof.<m>.incr.aof    RESP effects written since that base

`feed()` (an effect sink) encodes each command's effects into a buffer. The
buffer is written (write(2)) before any reply that may depend on it leaves
(see manager.py's durability gate); under `always` the replies also wait for
an fsync, which runs in the background thread once per event-loop turn while
the loop goes on with the next commands (group commit). Under `everysec` the
thread fsyncs once a second; under `no` the kernel decides. A rewrite
switches to a fresh incr file first and lets a forked child write the new
base, so nothing written meanwhile can be lost. Byte counters that never go
back (fed, written, synced) tell which replies may go.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from rillet import cpuaffinity
from rillet.compiled import compiled
from rillet.persistence import aoflog, disk
from rillet.persistence.aoflog import Manifest, ManifestError, parse_manifest

log = logging.getLogger("rillet")

# The effect sinks' encoder (the AOF's here, the replication stream's in
# replication/core.py): compiled when built (_aofenc.pyx, rillet/compiled.py),
# else the reference.
_aofenc = compiled("rillet.persistence._aofenc")
EffectStream = _aofenc.EffectStream if _aofenc is not None else aoflog.EffectStream

# How long a failed write waits before its warning is logged again (Redis: 30 s).
WRITE_ERROR_LOG_INTERVAL_S = 30


class BackgroundIO:
    """Redis's bio thread for the AOF: fsync and close jobs off the event loop, FIFO."""

    def __init__(self, cpulist: str = "") -> None:
        self.cpulist = cpulist  # bio-cpulist: the thread pins itself when it starts
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        # Counters written by one thread each, so no lock is needed to read them.
        self.fsyncs_submitted = 0
        self.fsyncs_done = 0
        self.fsync_errno = 0  # set by the worker: 0 after a good fsync

    @property
    def fsync_pending(self) -> int:
        return self.fsyncs_submitted - self.fsyncs_done

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rillet-bio", daemon=True)
            self._thread.start()

    def fsync(self, fd: int) -> None:
        self._start()
        self.fsyncs_submitted += 1
        self._jobs.put(("fsync", fd))

    def fsync_notify(self, fd: int, notify: Callable[[int], None]) -> None:
        """fsync `fd`, then call `notify(errno or 0)` from the worker thread."""
        self._start()
        self._jobs.put(("notify", fd, notify))

    def close(self, fd: int, sync: bool) -> None:
        self._start()
        self._jobs.put(("close", fd, sync))

    def drain(self, timeout_s: float = 30.0) -> None:
        """Wait until every job queued so far is done (shutdown, tests)."""
        if self._thread is None:
            return
        done = threading.Event()
        self._jobs.put(("mark", done))
        done.wait(timeout_s)

    def _run(self) -> None:
        cpuaffinity.pin(self.cpulist)
        while True:
            job = self._jobs.get()
            kind = job[0]
            if kind == "fsync":
                try:
                    disk.fsync(job[1])
                    self.fsync_errno = 0
                except OSError as error:
                    self.fsync_errno = error.errno or errno.EIO
                finally:
                    self.fsyncs_done += 1
            elif kind == "notify":
                code = 0
                try:
                    disk.fsync(job[1])
                except OSError as error:
                    code = error.errno or errno.EIO
                try:
                    job[2](code)
                except Exception:  # the loop is gone (shutdown): nothing to tell
                    pass
            elif kind == "close":
                try:
                    if job[2]:
                        disk.fsync(job[1])
                except OSError:
                    pass
                try:
                    os.close(job[1])
                except OSError:
                    pass
            elif kind == "mark":
                job[1].set()


class AofWriter:
    """The open AOF: its manifest, the incr file being appended, the unwritten buffer."""

    def __init__(self, directory: str, filename: str, config: Any,
                 on_buffered: Callable[[], None]) -> None:
        self.directory = directory
        self.filename = filename
        self.config = config
        # The effect sink: effects encoded as they are published (the compiled
        # XADD writes its own straight in); `buf` takes them when read. Its
        # first bytes after each take call on_buffered (server: hold replies).
        self.stream = EffectStream()
        self.stream.on_buffered = on_buffered
        self.manifest = Manifest()
        self.fd = -1
        self.incr_name = ""
        self._buf = bytearray()
        self.incr_size = 0  # bytes of the current incr file written so far
        self.synced_size = 0  # of those, known durable (always) / handed to fsync (everysec)
        self.current_size = 0  # base + incr files (aof_current_size)
        self.base_size = 0  # current_size after the last load or rewrite (aof_base_size)
        # Bytes ever written / known durable, over all files (`fed_total` adds the
        # buffer). Only a failed fsync moves `written` back: those bytes go to
        # the buffer again.
        self.written_total = 0
        self.synced_total = 0
        self.write_errno = 0  # last write(2) failure, 0 once a write succeeds again
        self.last_error_log = 0.0
        self.bio = BackgroundIO(str(config["bio-cpulist"]))
        self.last_fsync = time.monotonic()
        self.delayed_fsync = 0
        # While AOF is being switched on at runtime, effects go to a temp incr file
        # until the first rewrite gives the base they apply to (Redis WAIT_REWRITE).
        self.waiting_rewrite = False
        self.flush_sleep_us = 0  # DEBUG AOF-FLUSH-SLEEP: a pause before each write of the buffer
        # Time the loop spent writing and fsyncing the AOF (INFO debug's
        # eventloop_duration_aof_sum; the fsync thread's time is not the loop's).
        self.flush_ns = 0

    # --- paths and manifest ---------------------------------------------------------
    @property
    def manifest_name(self) -> str:
        return self.filename + ".manifest"

    def path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    @property
    def temp_incr_name(self) -> str:
        return "temp-" + self.filename + ".incr"

    def read_manifest(self) -> Manifest | None:
        """The manifest on disk, None if there is none; ManifestError if it is bad."""
        path = self.path(self.manifest_name)
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return parse_manifest(handle.read(), self.manifest_name)

    def persist_manifest(self, manifest: Manifest) -> None:
        disk.atomic_write(self.path(self.manifest_name), manifest.render(), "aof")

    def file_sizes(self, manifest: Manifest) -> int:
        total = 0
        for info in manifest.files():
            try:
                total += os.path.getsize(self.path(info.name))
            except OSError:
                pass
        return total

    def base_suffix(self) -> str:
        """A new base's file name ends as Redis's: .rdb for an RDB preamble, else .aof."""
        return ".rdb" if self.config["aof-use-rdb-preamble"] else ".aof"

    # --- opening -----------------------------------------------------------------------
    def open_for_append(self, manifest: Manifest, write_base: Callable[[str], None]) -> None:
        """Start appending after a load: create a base if there is none, open the last incr."""
        os.makedirs(self.directory, exist_ok=True)
        for name in os.listdir(self.directory):
            # Left by a rewrite or an AOF switch-on that a crash interrupted.
            if name.startswith("temp-"):
                disk.unlink_quietly(self.path(name))
        manifest = manifest.copy()
        if manifest.base is None and not manifest.incr:
            info = manifest.new_base(self.filename, self.base_suffix())
            write_base(self.path(info.name))
        created = not manifest.incr
        if created:
            manifest.new_incr(self.filename)
        info = manifest.incr[-1]
        fd = os.open(self.path(info.name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        log.info("%s AOF incr file %s on server start", "Creating" if created else "Opening",
                 info.name)
        try:
            self.persist_manifest(manifest)
        except OSError:
            os.close(fd)
            raise
        self.manifest = manifest
        self.fd = fd
        self.incr_name = info.name
        self.incr_size = self.synced_size = os.fstat(fd).st_size
        self.current_size = self.base_size = self.file_sizes(manifest)
        self.selected_db = -1
        self.synced_total = self.written_total

    def start_new_incr(self) -> None:
        """Switch appends to a new incr file (before a rewrite forks).

        The old file's buffer is written first, so the child's snapshot (taken
        right after this) covers exactly the files before the new one. Under
        `always` it is fsynced here (little is pending); otherwise the
        background thread fsyncs and closes it, off the event loop.
        """
        always = self.config["appendfsync"] == "always"
        if not self.flush(force_fsync=always):
            raise OSError(self.write_errno or errno.EIO, os.strerror(self.write_errno or errno.EIO))
        if always:
            self.synced_total = self.written_total
        os.makedirs(self.directory, exist_ok=True)
        if self.waiting_rewrite:
            name = self.temp_incr_name
            fd = os.open(self.path(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC,
                         0o644)
            manifest = self.manifest
        else:
            manifest = self.manifest.copy()
            info = manifest.new_incr(self.filename)
            name = info.name
            fd = os.open(self.path(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC,
                         0o644)
            try:
                self.persist_manifest(manifest)
            except OSError:
                os.close(fd)
                disk.unlink_quietly(self.path(name))
                raise
            log.info("Creating AOF incr file %s on background rewrite", name)
        if self.fd >= 0:
            self.bio.close(self.fd, sync=self.config["appendfsync"] != "always")
        self.fd = fd
        self.incr_name = name
        self.manifest = manifest
        self.incr_size = self.synced_size = 0
        self.selected_db = -1

    def install_base(self, temp_path: str) -> list[str]:
        """A rewrite finished: its file becomes the base, older files become history.

        Returns the names of files that can now be deleted.
        """
        manifest = self.manifest.copy()
        old = [info.name for info in manifest.files()] + [info.name for info in manifest.history]
        base = manifest.new_base(self.filename, self.base_suffix())
        manifest.history = []
        if self.waiting_rewrite:
            info = manifest.new_incr(self.filename)
            os.replace(self.path(self.incr_name), self.path(info.name))
            self.incr_name = info.name
        current = self.incr_name
        manifest.incr = [i for i in manifest.incr if i.name == current]
        os.replace(temp_path, self.path(base.name))
        self.persist_manifest(manifest)
        self.manifest = manifest
        self.waiting_rewrite = False
        self.current_size = self.base_size = self.file_sizes(manifest) + len(self.buf)
        keep = {info.name for info in manifest.files()}
        return [name for name in old if name not in keep]

    def delete_files(self, names: list[str]) -> None:
        for name in names:
            log.info("Removing the history file %s in the background", name)
            disk.unlink_quietly(self.path(name))

    # --- the write path ----------------------------------------------------------------
    @property
    def fed_total(self) -> int:
        return self.written_total + len(self.buf)

    @property
    def buf(self) -> bytearray:
        """The bytes not yet written: the buffer, after what the stream encoded since."""
        if self.stream:
            self._buf += self.stream.take()
        return self._buf

    @buf.setter
    def buf(self, value: bytearray) -> None:
        """Replaces every unwritten byte (the stream's too)."""
        self.stream.take()
        self._buf = value

    @property
    def selected_db(self) -> int:
        return self.stream.selected_db

    @selected_db.setter
    def selected_db(self, value: int) -> None:
        self.stream.selected_db = value

    def flush(self, force_fsync: bool = False) -> bool:
        """Write the buffer, and fsync it in the foreground under `always` or if forced.

        Returns False if the bytes are not where the policy wants them. On
        failure the file is cut back to what was there before, the buffer is
        kept, and the next call tries again: replies that depend on it stay
        held and writes are refused (MISCONF) meanwhile.
        """
        if not self.write_buffer():
            return False
        fd = self.fd
        if fd < 0:
            return True
        if (self.config["appendfsync"] == "always" or force_fsync) and \
                self.synced_size != self.incr_size:
            if not force_fsync and self.skip_fsync():
                return True
            return self.fsync_now()
        return True

    def fsync_now(self) -> bool:
        started = time.perf_counter_ns()
        try:
            disk.fsync(self.fd, "aof")
        except OSError as error:
            self.fsync_failed(error.errno or errno.EIO)
            return False
        finally:
            self.flush_ns += time.perf_counter_ns() - started
        self.synced_size = self.incr_size
        self.synced_total = self.written_total
        self.last_fsync = time.monotonic()
        return True

    def write_buffer(self) -> bool:
        """write(2) the buffer to the current incr file; False (and buffer kept) on error."""
        fd = self.fd
        if fd < 0:
            # AOF being switched on: nothing to append to until the first base
            # exists, and that base (a snapshot taken later) covers these effects.
            self.written_total += len(self.buf)
            self.synced_total = self.written_total
            self.buf = bytearray()
            return True
        buf = self.buf
        if buf:
            started = time.perf_counter_ns()
            if self.flush_sleep_us:
                time.sleep(self.flush_sleep_us / 1e6)
            start = self.incr_size
            view = memoryview(buf)
            done = 0
            try:
                while done < len(view):
                    done += disk.write_some(fd, view[done:], "aof")
            except OSError as error:
                view.release()
                self._write_failed(error, fd, start, done)
                return False
            view.release()
            self.incr_size = start + done
            self.current_size += done
            self.written_total += done
            self.buf = bytearray()
            self.flush_ns += time.perf_counter_ns() - started
            if self.write_errno:
                log.warning("AOF write error looks solved, rillet can write again.")
                self.write_errno = 0
        return True

    def skip_fsync(self) -> bool:
        return bool(self.config["no-appendfsync-on-rewrite"]) and self.child_active()

    def child_active(self) -> bool:  # replaced by the manager
        return False

    def _write_failed(self, error: OSError, fd: int, start: int, done: int) -> None:
        self.write_errno = error.errno or errno.EIO
        self._log_error("Error writing to the AOF file: %s", os.strerror(self.write_errno))
        if done:
            try:
                os.ftruncate(fd, start)
            except OSError as trunc_error:
                # Keep what reached the file and continue after it, so the
                # file never holds half a command followed by a whole one.
                self._log_error("Could not remove short write from the append-only file: %s",
                                trunc_error.strerror)
                del self.buf[:done]
                self.incr_size = start + done
                self.current_size += done
                self.written_total += done

    def fsync_failed(self, code: int) -> None:
        """An fsync failed: the bytes since the last good one are written again later.

        Pages that failed to sync may be dropped by the kernel and then look
        clean, so a second fsync proves nothing: cut the file back and keep
        those bytes in the buffer.
        """
        self.write_errno = code
        self._log_error("Can't persist AOF for fsync error: %s", os.strerror(code))
        unsynced = self.incr_size - self.synced_size
        if unsynced <= 0:
            return
        try:
            with open(self.path(self.incr_name), "rb") as handle:
                handle.seek(self.synced_size)
                pending = handle.read(unsynced)
            os.ftruncate(self.fd, self.synced_size)
        except OSError:
            return
        self.buf[:0] = pending
        self.current_size -= unsynced
        self.incr_size = self.synced_size
        self.written_total -= unsynced

    def _log_error(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self.last_error_log >= WRITE_ERROR_LOG_INTERVAL_S or not self.last_error_log:
            self.last_error_log = now
            log.warning(message, *args)

    def everysec_tick(self) -> None:
        """Called from the cron: hand an fsync to the background thread once a second."""
        if self.fd < 0 or self.config["appendfsync"] != "everysec":
            return
        if self.synced_size == self.incr_size and not self.bio.fsync_errno:
            return  # nothing new, and no failed fsync to retry
        now = time.monotonic()
        if now - self.last_fsync < 1.0:
            return
        if self.bio.fsync_pending:
            self.delayed_fsync += 1
            return
        if self.skip_fsync():
            return
        self.bio.fsync(self.fd)
        self.synced_size = self.incr_size
        self.last_fsync = now

    @property
    def status_errno(self) -> int:
        """The error that makes writes unsafe now (write, or background fsync), or 0."""
        return self.write_errno or self.bio.fsync_errno

    def close(self, final_fsync: bool = True) -> None:
        if self.fd < 0:
            return
        self.flush()
        fd, self.fd = self.fd, -1
        try:
            if final_fsync:
                disk.fsync(fd, "aof")
        except OSError as error:
            log.warning("Fail to fsync the AOF file: %s", error.strerror)
        self.bio.drain()
        os.close(fd)


__all__ = ["AofWriter", "BackgroundIO", "ManifestError"]
