"""Where pipelines keep their output and checkpoints: any Hadoop-compatible location.

A location with a scheme (`file:`, `hdfs:`, `s3a:`, `abfss:` ...) is passed to Spark as
is; a plain path is made absolute against the current directory and then resolved by
Spark against `fs.defaultFS` (the local filesystem on local masters, usually HDFS on a
YARN cluster). The driver reads checkpoints through Hadoop's FileSystem API in the
session's JVM, so it sees exactly what the executors wrote, wherever that is.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Protocol

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def has_scheme(text: str) -> bool:
    # A single letter before ':' is a Windows drive, not a scheme.
    match = _SCHEME.match(text)
    return match is not None and len(match.group(0)) > 2


def location(text: str | os.PathLike[str]) -> str:
    """A location as Spark takes it: URIs unchanged, plain paths made absolute."""
    text = os.fspath(text)
    if has_scheme(text):
        return text.rstrip("/") or text
    return str(Path(text).resolve())


def join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts)])


class FileSystem(Protocol):
    def list_names(self, directory: str) -> list[str] | None: ...
    def read_text(self, path: str) -> str: ...
    def size(self, path: str) -> int | None: ...


class LocalFS:
    """The driver's own filesystem (tests, and tools that run without Spark)."""

    @staticmethod
    def _path(text: str) -> Path:
        return Path(_strip(text))

    def list_names(self, directory: str) -> list[str] | None:
        path = self._path(directory)
        return [p.name for p in path.iterdir()] if path.is_dir() else None

    def read_text(self, path: str) -> str:
        return self._path(path).read_text()

    def size(self, path: str) -> int | None:
        local = self._path(path)
        return local.stat().st_size if local.is_file() else None


def _strip(text: str) -> str:
    """`file:///a/b` or `file:/a/b` -> `/a/b`; other text unchanged."""
    if text.startswith("file:"):
        rest = text[len("file:") :]
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[rest.index("/") :] if "/" in rest else "/"
        return rest
    return text


class HadoopFS:
    """Hadoop's FileSystem API through the session's JVM (any scheme Spark can write)."""

    def __init__(self, spark: Any) -> None:
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _resolve(self, text: str) -> tuple[Any, Any]:
        path = self._jvm.org.apache.hadoop.fs.Path(text)
        return path.getFileSystem(self._conf), path

    def list_names(self, directory: str) -> list[str] | None:
        fs, path = self._resolve(directory)
        if not fs.exists(path) or not fs.getFileStatus(path).isDirectory():
            return None
        return [status.getPath().getName() for status in fs.listStatus(path)]

    def read_text(self, path: str) -> str:
        fs, jpath = self._resolve(path)
        stream = fs.open(jpath)
        try:
            reader = self._jvm.java.io.BufferedReader(
                self._jvm.java.io.InputStreamReader(stream, "UTF-8")
            )
            lines = []
            while True:
                line = reader.readLine()
                if line is None:
                    break
                lines.append(line)
            return "\n".join(lines)
        finally:
            stream.close()

    def size(self, path: str) -> int | None:
        fs, jpath = self._resolve(path)
        if not fs.exists(jpath):
            return None
        return int(fs.getFileStatus(jpath).getLen())

    def scheme(self, path: str) -> str:
        fs, jpath = self._resolve(path)
        return str(fs.makeQualified(jpath).toUri().getScheme() or "")
