"""Fixtures shared by the in-process server tests."""

from __future__ import annotations

import gc

import pytest


@pytest.fixture
def no_collector():
    """Automatic collection off, and nothing frozen, restored afterwards: what a
    test that counts objects freed by reference counting alone needs."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
