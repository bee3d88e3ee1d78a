"""Pauses by purpose (Redis's pause_purpose): CLIENT PAUSE and a cluster manual
failover's pause are held and ended each on its own; clients see their union."""

from __future__ import annotations

from rillet.clock import ManualClock
from rillet.config import Config
from rillet.state import PAUSE_BY_CLIENT, PAUSE_BY_MANUAL_FAILOVER, ServerState


def test_ending_a_manual_failover_pause_keeps_a_users_client_pause() -> None:
    clock = ManualClock()
    state = ServerState(Config(), clock)
    now = clock.now_ms()
    state.pause(now + 10_000, True, PAUSE_BY_CLIENT)
    state.pause(now + 5_000, False, PAUSE_BY_MANUAL_FAILOVER)
    assert (state.pause_end_ms, state.pause_all) == (now + 10_000, True)
    state.unpause(PAUSE_BY_MANUAL_FAILOVER)
    assert (state.pause_end_ms, state.pause_all) == (now + 10_000, True)
    state.unpause(PAUSE_BY_CLIENT)
    assert (state.pause_end_ms, state.pause_all) == (0, False)


def test_client_unpause_keeps_a_manual_failover_pause() -> None:
    clock = ManualClock()
    state = ServerState(Config(), clock)
    now = clock.now_ms()
    state.pause(now + 5_000, False, PAUSE_BY_MANUAL_FAILOVER)
    state.pause(now + 1_000, True, PAUSE_BY_CLIENT)
    assert (state.pause_end_ms, state.pause_all) == (now + 5_000, True)
    state.unpause(PAUSE_BY_CLIENT)
    assert (state.pause_end_ms, state.pause_all) == (now + 5_000, False)
    state.unpause()  # the time of every pause is up
    assert state.pause_end_ms == 0 and not state.pauses


def test_a_pause_is_never_shortened_by_its_own_purpose() -> None:
    clock = ManualClock()
    state = ServerState(Config(), clock)
    now = clock.now_ms()
    state.pause(now + 5_000, True)
    state.pause(now + 1_000, False)
    assert (state.pause_end_ms, state.pause_all) == (now + 5_000, True)
