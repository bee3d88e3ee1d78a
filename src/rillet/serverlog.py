"""The server's log in redis-server's format, for the tools and harnesses that read it.

Each line is `pid:role dd Mon yyyy hh:mm:ss.mmm <level> message`: role `C` for a
child process (and before the server is set up, as Redis's log shows it), `M`
master, `S` replica; level `.` debug, `-` verbose, `*` notice, `#` warning. With
`logfile ""` the log goes to standard output, as redis-server's does.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

VERBOSE = 15  # Redis's level between debug and notice
logging.addLevelName(VERBOSE, "VERBOSE")

LEVELS = {
    "debug": logging.DEBUG, "verbose": VERBOSE, "notice": logging.INFO,
    "warning": logging.WARNING, "nothing": logging.CRITICAL + 10,
}

# `log.info(text, extra=RAW)`: the text alone, without the prefix (Redis's LL_RAW: the logo).
RAW = {"raw": True}

log = logging.getLogger("rillet")


class _Process:
    """Whose lines carry M or S: the server's process, once it is set up."""

    pid = 0
    is_replica: Callable[[], bool] = staticmethod(lambda: False)


def server_started(is_replica: Callable[[], bool]) -> None:
    """From here on this process logs as the server (`M`, or `S` while `is_replica()`)."""
    _Process.pid = os.getpid()
    _Process.is_replica = staticmethod(is_replica)


def _level_char(levelno: int) -> str:
    if levelno < VERBOSE:
        return "."
    if levelno < logging.INFO:
        return "-"
    if levelno < logging.WARNING:
        return "*"
    return "#"


class RedisFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if getattr(record, "raw", False):
            return message
        if record.exc_info:
            message = f"{message}\n{self.formatException(record.exc_info)}"
        pid = record.process or 0
        if pid != _Process.pid:
            role = "C"
        else:
            role = "S" if _Process.is_replica() else "M"
        created = record.created
        stamp = time.strftime("%d %b %Y %H:%M:%S", time.localtime(created))
        return f"{pid}:{role} {stamp}.{int(created * 1000) % 1000:03d} {_level_char(record.levelno)} {message}"


def setup(config: Any) -> None:
    """Log where `logfile` says (standard output when empty) at `loglevel`, which
    CONFIG SET may change later."""
    logfile = str(config["logfile"])
    handler: logging.Handler = (logging.FileHandler(logfile) if logfile
                                else logging.StreamHandler(sys.stdout))
    handler.setFormatter(RedisFormatter())
    log.handlers[:] = [handler]
    log.setLevel(LEVELS[str(config["loglevel"])])
    log.propagate = False
    config.watch("loglevel", lambda value: log.setLevel(LEVELS[str(value)]))


def log_signal(name: str) -> None:
    """The line Redis's signal handler writes (its own prefix, no role or date)."""
    log.warning("%d:signal-handler (%d) Received %s scheduling shutdown...",
                os.getpid(), int(time.time()), name, extra=RAW)


# Redis's start-up logo: its art, and the text beside it at column 40 (rillet's words).
_ART = (
    "                _._",
    "           _.-``__ ''-._",
    "      _.-``    `.  `_.  ''-._",
    "  .-`` .-```.  ```\\/    _.,_ ''-._",
    " (    '      ,       .-`  | `,    )",
    " |`-._`-...-` __...-.``-._|'` _.-'|",
    " |    `-._   `._    /     _.-'    |",
    "  `-._    `-._  `-./  _.-'    _.-'",
    " |`-._`-._    `-.__.-'    _.-'_.-'|",
    " |    `-._`-._        _.-'_.-'    |",
    "  `-._    `-._`-.__.-'_.-'    _.-'",
    " |`-._`-._    `-.__.-'    _.-'_.-'|",
    " |    `-._`-._        _.-'_.-'    |",
    "  `-._    `-._`-.__.-'_.-'    _.-'",
    "      `-._    `-.__.-'    _.-'",
    "          `-._        _.-'",
    "              `-.__.-'",
)


def logo(version: str, port: int, pid: int, mode: str = "standalone") -> str:
    text = ["", "", "rillet", f"{version} 64 bit", f"Running in {mode} mode",
            f"Port: {port}", f"PID: {pid}"]
    lines = [art.ljust(40) + words if words else art
             for art, words in zip(_ART, text + [""] * (len(_ART) - len(text)), strict=True)]
    return "\n".join(lines) + "\n"


def announce_mode(config: Any, port: int, version: str) -> None:
    """The logo (`always-show-logo`, or a terminal on standard output), else the
    one line Redis logs in its place."""
    show = bool(config["always-show-logo"]) or (
        not config["logfile"] and not config["syslog-enabled"] and sys.stdout.isatty())
    mode = "cluster" if config["cluster-enabled"] else "standalone"
    if not show:
        log.info("Running mode=%s, port=%d.", mode, port)
        return
    log.info("%s", logo(version, port, os.getpid(), mode), extra=RAW)
