"""An effect sink for tests: what the AOF and replicas would get, each argv as a list.

A compiled body may publish its effect already encoded (state.Effect's `bytes`
form); tests compare effects as argv lists whichever form they came in.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.persistence.aoflog import encode_command
from rillet.state import Effect, effect_argv


def as_list(argv: list[bytes] | bytes) -> list[bytes]:
    """effect_argv, checking that an encoded effect is exactly what the reference
    encoder (the AOF's, the replication stream's) makes of its list."""
    listed = effect_argv(argv)
    if argv.__class__ is bytes:
        assert encode_command(listed) == argv, argv
    return listed


def recorder(into: list) -> Callable[[list[Effect]], None]:
    """A sink that appends each effect to `into` as (db index, argv list)."""
    def sink(effects: list[Effect]) -> None:
        into.extend((db, as_list(argv)) for db, argv in effects)
    return sink
