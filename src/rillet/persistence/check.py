"""`rillet check-aof [--fix] FILE`: check and repair AOF files, like redis-check-aof.

FILE is an incr/legacy AOF (RESP commands), an RDB base file, or a
manifest (every file it lists is checked; only the last may be fixed, since
cutting an earlier one would drop what later files build on). A RESP log is
cut back to its last whole command (or to before an unfinished MULTI) with
--fix; an RDB is all or nothing (its CRC covers the whole file).
Exit status: 0 valid or fixed, 1 not valid, 2 usage error.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rillet.persistence import aoflog, rdb
from rillet.persistence.aoflog import ManifestError, parse_manifest
from rillet.persistence.disk import MappedFile
from rillet.persistence.rdb_format import RDBError

USAGE = "Usage: rillet check-aof [--fix] <file.manifest|file.aof|file.rdb>"


def _long_line(buf: Any, pos: int, prefix: int) -> tuple[int, int] | None:
    """A `<prefix><integer>\r\n` line at `pos` as redis-check-aof's readLong takes it:
    (value, the position after it), or None where its read fails."""
    end = bytes(buf[pos : pos + 128]).find(b"\r\n")
    if end < 0 or buf[pos] != prefix:
        return None
    try:
        return int(bytes(buf[pos + 1 : pos + end])), pos + end + 2
    except ValueError:
        return None


def _lines_into(buf: Any, pos: int) -> int:
    """The lines redis-check-aof reads of the damaged command at `pos` before it stops."""
    size = len(buf)
    header = _long_line(buf, pos, ord("*")) if pos < size else None
    if header is None:
        return 0
    argc, pos = header
    count = 1
    for _ in range(argc):
        length = _long_line(buf, pos, ord("$")) if pos < size else None
        if length is None:
            return count
        count += 1
        end = length[1] + length[0]
        if end + 2 > size or bytes(buf[end : end + 2]) != b"\r\n":
            return count
        pos = end + 2
        count += 1
    return count


def ok_up_to_line(buf: Any, name: str, last: int = -1) -> int:
    """redis-check-aof's `ok_up_to_line`: 1 + the lines its reader consumed before it
    stopped, at the end of the file, inside the command it could not read, or after
    the command at `last` (an unexpected MULTI or EXEC)."""
    line = 1
    try:
        for argv, start, _end in aoflog.iter_commands(buf, name):
            if 0 <= last < start:
                break
            line += 1 + 2 * len(argv)
    except aoflog.LogDamage as damage:
        line += _lines_into(buf, damage.offset)
    return line


def _check_log(path: str, fix: bool, can_fix: bool, name: str) -> bool:
    with MappedFile(path) as mapped:
        result = aoflog.scan(mapped.view, os.path.basename(path), strict_transactions=True)
        line = ok_up_to_line(mapped.view, name,
                             result.error_offset if result.status == aoflog.CORRUPT else -1)
    size = result.size
    print(f"AOF analyzed: filename={name}, size={size}, ok_up_to={result.ok_up_to}, "
          f"ok_up_to_line={line}, diff={size - result.ok_up_to}")
    if result.valid:
        print(f"AOF {name} is valid")
        return True
    print(result.message)
    if result.open_multi_at >= 0:
        print(f"Revert incomplete MULTI/EXEC transaction starting at offset {result.open_multi_at}")
    if not fix:
        print(f"AOF {name} is not valid. Use the --fix option to try fixing it.")
        return False
    if not can_fix:
        print(f"AOF {name} is not the last file of its manifest: it cannot be truncated safely.")
        return False
    os.truncate(path, result.ok_up_to)
    print(f"Successfully truncated AOF {name} to {result.ok_up_to} bytes"
          f" ({size - result.ok_up_to} bytes removed)")
    return True


def _check_rdb(path: str) -> bool:
    name = os.path.basename(path)
    with MappedFile(path) as mapped:
        try:
            rdb.verify(mapped.data, name)
        except RDBError as error:
            print(f"RDB preamble of {name} is not valid: {error}")
            return False
    print(f"RDB preamble {name} is valid ({os.path.getsize(path)} bytes, checksum ok)")
    return True


def check_file(path: str, fix: bool, can_fix: bool = True, name: str = "") -> bool:
    """`name`: how the file is named in the report (redis-check-aof: the path as given,
    or a manifest's file name)."""
    with open(path, "rb") as handle:
        head = handle.read(8)
    if rdb.is_rdb(head):
        return _check_rdb(path)
    return _check_log(path, fix, can_fix, name or path)


def check_manifest(path: str, fix: bool) -> bool:
    directory = os.path.dirname(path)
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        manifest = parse_manifest(handle.read(), os.path.basename(path))
    files = manifest.files()
    print(f"Start checking Multi Part AOF ({len(files)} files)")
    ok = True
    for index, info in enumerate(files):
        file_path = os.path.join(directory, info.name)
        if not os.path.exists(file_path):
            print(f"AOF {info.name} listed in the manifest does not exist")
            ok = False
            continue
        if not check_file(file_path, fix, can_fix=index == len(files) - 1, name=info.name):
            ok = False
            break
    print("All AOF files and manifest are valid" if ok else "AOF is not valid")
    return ok


def main(argv: list[str]) -> int:
    args = list(argv)
    fix = False
    if args and args[0] == "--fix":
        fix = True
        args.pop(0)
    if len(args) != 1 or args[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    path = args[0]
    if not os.path.isfile(path):
        print(f"Cannot open file {path}", file=sys.stderr)
        return 1
    try:
        if path.endswith(".manifest"):
            return 0 if check_manifest(path, fix) else 1
        print("Start checking Old-Style AOF")
        return 0 if check_file(path, fix) else 1
    except ManifestError as error:
        print(f"Invalid AOF manifest: {error}")
        return 1
