"""The web console and Prometheus metrics (`http-port`): what an HTTP request gets.

`Console.handle` turns one request (method, path, headers) into a `Response`; the
listener (server/http.py) owns the sockets and calls it on the event loop. It only
reads the server's state: streams come from the databases' index of stream keys
(no keyspace scan), server-wide figures from the same INFO text clients get.

Access: when the default user has a password (or is off), or other ACL users
exist, every request needs HTTP Basic credentials, checked as AUTH checks them (a
failure is an ACL LOG entry, reason `auth`). The user then sees the streams it may
read with XINFO STREAM, and the server's figures only if it may run INFO.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from rillet import errors
from rillet.console import metrics
from rillet.console.history import PERIOD_MS, History
from rillet.console.streams import StreamView, live_streams, view_stream
from rillet.engine.ids import format_id
from rillet.engine.memory import key_size
from rillet.engine.stream import Stream

if TYPE_CHECKING:
    from rillet.acl import User
    from rillet.state import ServerState

# Streams rendered per step of an answer (see Response.steps): ~1.5 ms of the loop.
STEP_STREAMS = 100
# INFO's sections the metrics come from: not keysizes, which counts every key.
METRIC_SECTIONS = ["server", "clients", "memory", "persistence", "stats", "replication",
                   "cpu", "commandstats", "errorstats", "keyspace"]
OVERVIEW_SECTIONS = ["server", "clients", "memory", "stats", "replication"]
REALM = 'Basic realm="rillet", charset="UTF-8"'
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/console.js": ("console.js", "text/javascript; charset=utf-8"),
    "/console.css": ("console.css", "text/css; charset=utf-8"),
}
METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# The page runs only rillet's own script and talks only to rillet; no framing.
PAGE_HEADERS = [
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
]
# Placeholder in the page for the initial data, so the first view needs no fetch.
INITIAL_MARK = b"/*INITIAL*/null"


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)
    # A body made in steps: each next() does a slice of the work, and the generator
    # returns the body. The listener runs one step per event-loop turn, so RESP
    # clients are served between the slices of a large answer.
    steps: Generator[None, None, bytes] | None = None

    def finish(self) -> Response:
        """Run the remaining steps at once (tests, and callers without a loop)."""
        if self.steps is not None:
            self.body = run_steps(self.steps)
            self.steps = None
        return self


def run_steps(steps: Generator[None, None, Any]) -> Any:
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def _then(steps: Generator[None, None, Any], finish: Callable[[Any], bytes]
          ) -> Generator[None, None, bytes]:
    return finish((yield from steps))


def _body(text: str) -> bytes:
    return text.encode() + b"\n"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _id(sid: tuple[int, int] | None) -> str | None:
    return None if sid is None else format_id(sid).decode()


def info_fields(text: str) -> dict[str, str]:
    fields = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon and not line.startswith("#"):
            fields[key] = value
    return fields


class Console:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.last_render_us = 0
        self.history = History()
        self._static: dict[str, bytes] = {}
        from rillet.commands import table  # the specs ACL checks are made against

        self._info_spec = table.lookup(b"info")
        self._xinfo_spec = table.lookup(b"xinfo").subcommands[b"stream"]  # type: ignore[union-attr]

    def tick(self) -> None:
        """One throughput sample at once (tests, and callers without a loop)."""
        run_steps(self.tick_steps())

    def tick_steps(self) -> Generator[None, None, None]:
        """The listener's timer (every PERIOD_MS): one throughput sample, a slice of
        the streams a step (`History.sample_steps`)."""
        from rillet.commands.server import total_calls

        now = self.state.clock.now_ms()
        yield from self.history.sample_steps(now, total_calls(), (
            ((db, key), stream.entries_added)
            for db, key, stream in live_streams(self.state.keyspace, now)))

    # --- a request ---------------------------------------------------------------
    def handle(self, method: str, path: str, authorization: str | None,
               client_info: str) -> Response:
        if method not in ("GET", "HEAD"):
            return Response(405, _body(errors.HTTP_METHOD), headers=[("Allow", "GET, HEAD")])
        user = self.authenticate(authorization, client_info)
        if user is None:
            return Response(401, _body(errors.HTTP_AUTH_REQUIRED),
                            headers=[("WWW-Authenticate", REALM)])
        path = path.split("?", 1)[0]
        if path == "/metrics":
            return Response(200, content_type=METRICS_TYPE, steps=self.metrics_steps(user))
        if path == "/api/overview":
            return Response(200, content_type="application/json", steps=_then(
                self.overview_steps(user), lambda data: json.dumps(data).encode()))
        static = STATIC.get(path)
        if static is not None:
            page = Response(200, self._asset(static[0]), static[1],
                            [("Cache-Control", "no-store"), *PAGE_HEADERS])
            if path == "/":
                body = page.body
                page.steps = _then(self.overview_steps(user), lambda data: body.replace(
                    INITIAL_MARK, _script_json(data)))
            return page
        return Response(404, _body(errors.HTTP_NOT_FOUND))

    def _asset(self, name: str) -> bytes:
        body = self._static.get(name)
        if body is None:
            body = self._static[name] = (
                resources.files("rillet.console").joinpath("static", name).read_bytes())
        return body

    def auth_required(self) -> bool:
        acl = self.state.acl
        return not acl.default_open or len(acl.users) > 1

    def authenticate(self, authorization: str | None, client_info: str) -> User | None:
        acl = self.state.acl
        if not self.auth_required():
            return acl.default
        if not authorization:
            return None  # a browser's first request: no credentials yet, nothing to log
        scheme, _, encoded = authorization.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            name, colon, password = base64.b64decode(encoded.strip(), validate=True).partition(b":")
        except (binascii.Error, ValueError):
            return None
        if not colon:
            return None
        user = acl.authenticate(name, password)
        if user is None:
            now = self.state.clock.now_ms()
            acl.add_log("auth", "toplevel", b"AUTH", name, client_info, now,
                        self.state.config["acllog-max-len"])
        return user

    # --- what a user may see ------------------------------------------------------
    def _may(self, user: User, spec, argv: list[bytes]) -> bool:
        from rillet.acl import OK
        from rillet.commands.acl import check

        return user.unrestricted or check(user, spec, argv)[0] == OK

    def visible(self, user: User, now_ms: int) -> Iterator[tuple[int, bytes, Stream]]:
        """(db index, key, stream) of each stream `user` may read with XINFO STREAM."""
        for chunk in self.visible_chunks(user, now_ms):
            yield from chunk

    def visible_chunks(self, user: User, now_ms: int
                       ) -> Iterator[list[tuple[int, bytes, Stream]]]:
        """`visible` in slices of STEP_STREAMS streams looked at (ACL checks included:
        a user who may read few of many streams still gets bounded slices)."""
        everything = user.unrestricted
        chunk: list[tuple[int, bytes, Stream]] = []
        looked = 0
        for db, key, stream in live_streams(self.state.keyspace, now_ms):
            if everything or self._may(user, self._xinfo_spec, [b"xinfo", b"stream", key]):
                chunk.append((db, key, stream))
            looked += 1
            if looked == STEP_STREAMS:
                yield chunk
                chunk, looked = [], 0
        if chunk:
            yield chunk

    def _info(self, user: User, sections: list[str]) -> str | None:
        if not self._may(user, self._info_spec, [b"info"]):
            return None
        from rillet.commands.server import render_info

        return render_info(self.state, sections)

    # --- the two answers -----------------------------------------------------------
    def metrics(self, user: User) -> bytes:
        return run_steps(self.metrics_steps(user))

    def overview(self, user: User) -> dict:
        return run_steps(self.overview_steps(user))

    def metrics_steps(self, user: User) -> Generator[None, None, bytes]:
        """/metrics: INFO in the first step, then STEP_STREAMS streams a step;
        `last_render_us` is what the steps took."""
        clock = self.state.clock
        began = clock.now_us()
        info = self._info(user, METRIC_SECTIONS)
        held = clock.now_us() - began
        lines = metrics.StreamLines()
        now = clock.now_ms()
        for chunk in self.visible_chunks(user, now):
            yield
            began = clock.now_us()
            lines.add(chunk, clock.now_ms())
            held += clock.now_us() - began
        began = clock.now_us()
        body = metrics.render(info, len(self.state.keyspace), lines, self.last_render_us / 1e6)
        self.last_render_us = held + clock.now_us() - began
        return body

    def overview_steps(self, user: User) -> Generator[None, None, dict]:
        """What the page shows, as JSON: INFO in the first step, then STEP_STREAMS
        streams a step."""
        clock = self.state.clock
        now = clock.now_ms()
        text = self._info(user, OVERVIEW_SECTIONS)
        fields = info_fields(text) if text is not None else {}
        rates = self.history.streams
        streams = []
        for chunk in self.visible_chunks(user, now):
            yield
            now = clock.now_ms()
            for db, key, stream in chunk:
                each = _stream_json(view_stream(db, key, stream, now), key_size(key, stream), now)
                each["rates"] = list(rates.get((db, key), ()))
                streams.append(each)
        return {
            "time_ms": now,
            "period_ms": PERIOD_MS,
            "server": _server(fields),
            "ops_rates": list(self.history.ops) if fields else [],
            "replication": _replication(fields),
            "streams": streams,
            # Streams that receive what a group gave up on: none until rillet keeps
            # dead letters (the page shows the section empty meanwhile).
            "dead_letters": [],
        }


def _number(fields: dict[str, str], name: str) -> int | float | None:
    value = fields.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return None


def _server(fields: dict[str, str]) -> dict:
    if not fields:
        return {}
    return {
        "version": fields.get("redis_version"),
        "rillet_version": fields.get("rillet_version"),
        "port": _number(fields, "tcp_port"),
        "uptime_s": _number(fields, "uptime_in_seconds"),
        "connected_clients": _number(fields, "connected_clients"),
        "blocked_clients": _number(fields, "blocked_clients"),
        "used_memory": _number(fields, "used_memory"),
        "used_memory_human": fields.get("used_memory_human"),
        "commands_processed": _number(fields, "total_commands_processed"),
        "ops_per_sec": _number(fields, "instantaneous_ops_per_sec"),
        "net_input_bytes": _number(fields, "total_net_input_bytes"),
        "net_output_bytes": _number(fields, "total_net_output_bytes"),
    }


def _replication(fields: dict[str, str]) -> dict:
    if not fields:
        return {}
    role = fields.get("role")
    out: dict = {"role": role, "offset": _number(fields, "master_repl_offset")}
    if role == "slave":
        out["master"] = {
            "host": fields.get("master_host"), "port": _number(fields, "master_port"),
            "link": fields.get("master_link_status"),
            "last_io_s": _number(fields, "master_last_io_seconds_ago"),
            "offset": _number(fields, "slave_repl_offset"),
        }
    replicas = []
    master_offset = out["offset"] or 0
    for key, value in fields.items():
        if key.startswith("slave") and key[5:].isdigit():
            each = dict(part.split("=", 1) for part in value.split(",") if "=" in part)
            offset = int(each.get("offset", 0))
            replicas.append({"addr": f"{each.get('ip', '')}:{each.get('port', '')}",
                             "state": each.get("state"), "offset": offset,
                             "behind_bytes": max(0, master_offset - offset),
                             "lag_s": int(each["lag"]) if "lag" in each else None})
    out["replicas"] = replicas
    return out


def _stream_json(view: StreamView, size: int, now_ms: int) -> dict:
    return {
        "db": view.db,
        "key": _text(view.key),
        "length": view.length,
        "memory": size,
        "first_id": _id(view.first),
        "last_id": _id(view.last),
        "oldest_age_ms": max(0, now_ms - view.first[0]) if view.first else None,
        "entries_added": view.entries_added,
        "groups": [{
            "name": _text(group.name),
            "lag": group.lag,
            "pending": group.pending,
            "entries_read": group.entries_read,
            "last_delivered_id": _id(group.last_delivered),
            "oldest_pending_id": _id(group.oldest_pending),
            "oldest_pending_idle_ms": group.oldest_pending_idle_ms,
            "consumers": [{"name": _text(c.name), "pending": c.pending, "idle_ms": c.idle_ms}
                          for c in group.consumers],
        } for group in view.groups],
    }


def _script_json(value: object) -> bytes:
    """JSON to sit inside a <script> element: no '<' to end it early."""
    return json.dumps(value).replace("<", "\\u003c").encode()
