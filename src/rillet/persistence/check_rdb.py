"""`rillet check-rdb FILE`: check an RDB file and report like redis-check-rdb.

Reads the whole file (signature, version, every record and value, the
CRC-64 trailer) without loading anything, and prints what it found or the
offset of the first problem. Exit status: 0 valid, 1 not valid, 2 usage error.
"""

from __future__ import annotations

import os
import sys

from rillet.persistence import rdb
from rillet.persistence.disk import MappedFile
from rillet.persistence.rdb_format import RDBError, crc64

USAGE = "Usage: rillet check-rdb <rdb-file-name>"


def check(path: str, out=sys.stdout) -> bool:
    name = os.path.basename(path)
    print(f"[offset 0] Checking RDB file {name}", file=out)
    with MappedFile(path) as mapped:
        data = mapped.data
        stats = rdb.LoadStats(aux=[])
        try:
            version = rdb.read_version(data, name)
            for _ in rdb.parse(None, data, stats, name, dry=True):
                pass
        except RDBError as error:
            _report(out, stats, str(error))
            return False
        for offset, aux_name, aux_value in stats.aux or []:
            print(f"[offset {offset}] AUX FIELD {aux_name.decode(errors='replace')} = "
                  f"'{aux_value.decode(errors='replace')}'", file=out)
        size = len(data)
        if version >= 5:
            expected = int.from_bytes(bytes(data[size - 8 :]), "little")
            if expected == 0:
                print(f"[offset {size}] RDB file was saved with checksum disabled: no check"
                      " performed.", file=out)
            else:
                actual = crc64(0, memoryview(data)[: size - 8])
                if actual != expected:
                    _report(out, stats, f"RDB CRC error: expected {expected:#x}, got {actual:#x}")
                    return False
                print(f"[offset {size}] Checksum OK", file=out)
    print(f"[offset {size}] \\o/ RDB looks OK! \\o/", file=out)
    print(f"[info] {stats.keys_read} keys read", file=out)
    print(f"[info] {stats.expires} expires", file=out)
    print(f"[info] {stats.keys_expired} already expired", file=out)
    return True


def _report(out, stats: rdb.LoadStats, message: str) -> None:
    print("--- RDB ERROR DETECTED ---", file=out)
    print(message, file=out)
    print(f"[additional info] {stats.keys_read} keys read before the error", file=out)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    path = argv[0]
    if not os.path.isfile(path):
        print(f"Cannot open file {path}", file=sys.stderr)
        return 1
    return 0 if check(path) else 1
