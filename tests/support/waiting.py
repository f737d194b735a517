"""One way for a test to wait on something another thread or process does."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    check: Callable[[], T],
    what: str,
    *,
    timeout: float = 60.0,
    interval: float = 0.05,
    gone: Callable[[], str | None] | None = None,
) -> T:
    """Call ``check`` every ``interval`` seconds until it returns something truthy, and return
    that; AssertionError naming ``what`` after ``timeout`` seconds, or at once when ``gone``
    (asked between checks) says why it can never come (a process that exited)."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if gone is not None and (reason := gone()):
            raise AssertionError(f"{reason} before {what}")
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)
    return found
