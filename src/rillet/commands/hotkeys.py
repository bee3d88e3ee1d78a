"""HOTKEYS (Redis 8.6): START, STOP, GET, RESET of a hot-key tracking session.

Arguments, checks and error texts follow Redis's hotkeysCommand (hotkeys.c); the
session itself is rillet/hotkeys.py, fed by the dispatcher.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import command
from rillet.errors import ReplyError
from rillet.hotkeys import Hotkeys
from rillet.resp.types import OK, Map
from rillet.state import Client

_ADMIN = "admin noscript"
_METRICS = {b"CPU": "cpu", b"NET": "net"}


def _ranged(raw: bytes, low: int, high: int, error: str) -> int:
    """getRangeLongFromObjectOrReply: not a number or out of [low, high] gives `error`."""
    try:
        value = parse_int(raw)
    except ReplyError:
        raise ReplyError(error) from None
    if not low <= value <= high:
        raise ReplyError(error)
    return value


def _session(ctx: Client) -> Hotkeys | None:
    hotkeys = ctx.server.hotkeys
    if hotkeys is not None and hotkeys.active:
        hotkeys.expire(ctx.clock.now_ms())
        if not hotkeys.active:
            ctx.server.hotkeys_changed()
    return hotkeys


@command("hotkeys|start", -2, _ADMIN, group="server", since="8.6.0", complexity="O(1)",
         summary="Starts hotkeys tracking.")
def hotkeys_start(ctx: Client, argv: list[bytes]) -> object:
    """HOTKEYS START METRICS count [CPU] [NET] [COUNT k] [DURATION seconds] [SAMPLE ratio] [SLOTS count slot [slot ...]]

    Starts a session (rillet/hotkeys.py has what is simplified). As hotkeysCommand:
    METRICS first, its count, then that many metric names (unknown ones are
    skipped, for forward compatibility); SLOTS is refused outside a cluster.
    """
    current = _session(ctx)
    if current is not None and current.active:
        raise ReplyError(errors.HOTKEYS_IN_PROGRESS)
    if len(argv) < 4 or argv[2].upper() != b"METRICS":
        raise ReplyError(errors.HOTKEYS_METRICS_REQUIRED)
    count = _ranged(argv[3], 1, len(_METRICS), errors.HOTKEYS_METRICS_COUNT)
    chosen: set[str] = set()
    parsed = valid = 0
    j = 4
    while j < len(argv) and parsed < count:
        metric = _METRICS.get(argv[j].upper())
        if metric is not None:
            if metric in chosen:
                raise ReplyError(errors.HOTKEYS_METRIC_TWICE.format(metric.upper()))
            chosen.add(metric)
            valid += 1
        parsed += 1
        j += 1
    if parsed != count:
        raise ReplyError(errors.HOTKEYS_METRICS_MISMATCH)
    if not valid:
        raise ReplyError(errors.HOTKEYS_NO_VALID_METRICS)
    top, duration_ms, ratio = 10, 0, 1
    while j < len(argv):
        word = argv[j].upper()
        more = j + 1 < len(argv)
        if more and word == b"COUNT":
            top = _ranged(argv[j + 1], 1, 64, errors.HOTKEYS_COUNT_RANGE)
        elif more and word == b"DURATION":
            duration_ms = 1000 * _ranged(argv[j + 1], 1, 1000000, errors.HOTKEYS_DURATION_RANGE)
        elif more and word == b"SAMPLE":
            ratio = _ranged(argv[j + 1], 1, 2**31 - 1, errors.HOTKEYS_SAMPLE_RANGE)
        elif more and word == b"SLOTS":
            raise ReplyError(errors.HOTKEYS_SLOTS_NO_CLUSTER)
        else:
            raise ReplyError(errors.SYNTAX)
        j += 2
    ctx.server.hotkeys = Hotkeys(ctx.clock.now_ms(), top, duration_ms, ratio,
                                 "cpu" in chosen, "net" in chosen)
    ctx.server.hotkeys_changed()
    return OK


@command("hotkeys|stop", 2, _ADMIN, group="server", since="8.6.0", complexity="O(1)",
         summary="Stops hotkeys tracking.")
def hotkeys_stop(ctx: Client, argv: list[bytes]) -> object:
    """HOTKEYS STOP

    Stops the session, keeping its results for GET; nil when none is running.
    """
    hotkeys = _session(ctx)
    if hotkeys is None or not hotkeys.active:
        return None
    hotkeys.stop(ctx.clock.now_ms())
    ctx.server.hotkeys_changed()
    return OK


@command("hotkeys|get", 2, _ADMIN, group="server", since="8.6.0",
         complexity="O(K) where K is the number of hotkeys returned.",
         summary="Returns lists of top K hotkeys depending on metrics chosen in HOTKEYS START"
                 " command.")
def hotkeys_get(ctx: Client, argv: list[bytes]) -> object:
    """HOTKEYS GET

    The session's report (a map; pairs in RESP2) inside a one-element array, as
    Redis 8.6+ answers so that a cluster client can concatenate its nodes' replies;
    nil when there is none.
    """
    hotkeys = _session(ctx)
    if hotkeys is None:
        return None
    return [Map(hotkeys.report(ctx.clock.now_ms()))]


@command("hotkeys|reset", 2, _ADMIN, group="server", since="8.6.0", complexity="O(1)",
         summary="Release the resources used for hotkey tracking.")
def hotkeys_reset(ctx: Client, argv: list[bytes]) -> object:
    """HOTKEYS RESET

    Forgets a stopped session; refused while one runs.
    """
    hotkeys = _session(ctx)
    if hotkeys is not None and hotkeys.active:
        raise ReplyError(errors.HOTKEYS_RESET_IN_PROGRESS)
    ctx.server.hotkeys = None
    return OK
