"""Redis's protected mode, one rule for the RESP listener and the console's.

While `protected-mode` is on and the default user has no password, a peer off
loopback is refused. Loopback is Redis's connIsLocal (socket.c
`connSocketIsLocal`): an address starting "127." or exactly "::1", and any unix
socket; narrower `islocalClient` (127.0.0.1 and ::1 only) is not this rule. An
IPv4-mapped "::ffff:127.0.0.1" is not local either: Redis (and asyncio) bind IPv6
sockets IPV6_V6ONLY, so such a peer never reaches them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rillet.state import ServerState


def is_local(host: str) -> bool:
    """Redis's connIsLocal for a TCP peer's address."""
    return host.startswith("127.") or host == "::1"


def protecting(state: ServerState) -> bool:
    """Protected mode is in force: on, and no password for the default user."""
    return bool(state.config["protected-mode"]) and not state.acl.default_has_password


def refuses(state: ServerState, host: str, unix: bool = False) -> bool:
    """A peer protected mode turns away."""
    return not unix and protecting(state) and not is_local(host)
