"""File operations persistence uses, with injectable faults for tests.

Every write, fsync, rename and directory sync of the AOF and snapshots goes
through these functions, so a test (DEBUG PERSISTENCE-FAULT, or `FAULTS` set
directly in-process) can make the next N operations of one target fail with
ENOSPC or EIO, the way TigerBeetle's simulated storage does. A forked child
inherits the plan at fork time; the parent charges a snapshot fault when it
forks, so parent and child agree on what failed. Files are read through a
read-only map (`MappedFile`).
"""

from __future__ import annotations

import errno
import mmap
import os
from dataclasses import dataclass, field
from typing import Any

# "aof": incr files and the manifest; "snapshot": dump files and AOF base files.
TARGETS = ("aof", "snapshot")


@dataclass
class FaultPlan:
    """Operations left to fail per target, and the errno they fail with."""

    remaining: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TARGETS, 0))
    errnos: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TARGETS, errno.ENOSPC))
    # Which operations fail: "write", "fsync" or "any".
    ops: dict[str, str] = field(default_factory=lambda: dict.fromkeys(TARGETS, "any"))

    def set(self, target: str, count: int, err: int = errno.ENOSPC, op: str = "any") -> None:
        self.remaining[target] = count
        self.errnos[target] = err
        self.ops[target] = op

    def clear(self) -> None:
        for target in TARGETS:
            self.remaining[target] = 0

    def check(self, target: str, op: str) -> None:
        left = self.remaining[target]
        if left and self.ops[target] in ("any", op):
            if left > 0:  # -1 means "until cleared"
                self.remaining[target] = left - 1
            code = self.errnos[target]
            raise OSError(code, os.strerror(code))


FAULTS = FaultPlan()


def write_all(fd: int, data: bytes | bytearray | memoryview, target: str = "aof") -> int:
    """Write everything or raise; returns the byte count. EINTR is retried by Python."""
    FAULTS.check(target, "write")
    view = memoryview(data)
    total = len(view)
    done = 0
    while done < total:
        done += os.write(fd, view[done:])
    return total


def write_some(fd: int, data: bytes | bytearray | memoryview, target: str = "aof") -> int:
    """One write(2); returns how many bytes went out (may be fewer than asked)."""
    FAULTS.check(target, "write")
    return os.write(fd, data)


def fsync(fd: int, target: str = "aof") -> None:
    FAULTS.check(target, "fsync")
    # fdatasync skips the inode metadata that does not matter for reading the
    # file back (mtime); the size change is still made durable.
    os.fdatasync(fd)


def fsync_dir(path: str) -> None:
    """Make a rename or a new file durable: fsync the directory that holds it."""
    fd = os.open(path or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, target: str = "aof") -> None:
    """Write a small file (a manifest) so a reader sees the old or the new one."""
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, "temp_" + os.path.basename(path))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data, target)
        fsync(fd, target)
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(directory)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


unlink_quietly = _unlink_quietly


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
