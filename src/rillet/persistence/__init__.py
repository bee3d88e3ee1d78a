"""Persistence: append-only file, snapshots, rewrite and recovery.

`attach(server)` wires persistence into a server according to its config.
"""

from __future__ import annotations


def attach(server: object) -> None:
    """Wire AOF/snapshots into `server` (filled in by the persistence work)."""
