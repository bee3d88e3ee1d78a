"""Serving other clients while a script runs past busy-reply-threshold.

The event loop is blocked inside the script, so the script's hook calls
`serve_others` now and then: it reads what other clients have sent (a poll
with no wait, then a non-blocking read of each readable socket) and feeds it
to their connections as a normal read. The state is gated meanwhile, so they
get BUSY for everything but SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE and
the other `allow_busy` commands. New connections wait until the script ends.
"""

from __future__ import annotations

import os
import select
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rillet.server.server import Server
    from rillet.state import Client

# At most this much is read from one client per pass.
READ_CHUNK = 64 * 1024


def serve_others(server: Server, running: Client) -> None:
    by_fd = {}
    for conn in server.connections:
        if conn.client is not None and conn.client is not running and conn.fd >= 0 \
                and not conn._closed:
            by_fd[conn.fd] = conn
    if not by_fd:
        return
    try:
        readable, _, _ = select.select(list(by_fd), [], [], 0)
    except (OSError, ValueError):
        return
    for fd in readable:
        conn = by_fd[fd]
        try:
            data = os.read(fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            continue
        if data:  # an empty read (EOF) is left for the event loop to see later
            conn.data_received(data)
