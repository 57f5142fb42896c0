"""Waiting for the real stack: poll until something holds (generous timeouts: the tests
must hold on a fully loaded machine)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(check: Callable[[], object], timeout: float = 120, what: str = "") -> object:
    """Poll `check` until it answers something true; that answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answer := check():
            return answer
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what or check}")
