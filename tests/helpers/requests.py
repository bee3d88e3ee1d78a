"""Requests as bytes, and a RequestParser fed read by read (parser tests)."""

from __future__ import annotations

import hiredis

from rillet.resp.parser import RequestParser


def pack(*args: bytes | str) -> bytes:
    return hiredis.pack_command(tuple(args))


def feed_all(chunks, parser=None, **kwargs):
    """Feed chunks in order; returns (commands, error message or None)."""
    parser = parser or RequestParser(**kwargs)
    commands = []
    for chunk in chunks:
        got, error = parser.feed(chunk)
        commands += got
        if error is not None:
            return commands, error.message
    return commands, None
