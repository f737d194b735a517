"""Time, injected: the one clock type every component takes, its default, and a test double.

Nothing in squad reads the wall clock behind its caller's back: a component takes a
:data:`Clock` (default :func:`utc_now`), so tests and benchmarks freeze or move time with a
:class:`FrozenClock` and get exact timestamps back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = ["Clock", "FrozenClock", "utc_now"]

Clock = Callable[[], datetime]
"""Anything that tells the time as an aware UTC datetime."""


def utc_now() -> datetime:
    """The current time, aware, in UTC: the default :data:`Clock`."""
    return datetime.now(UTC)


class FrozenClock:
    """A clock that stands still until it is moved by hand (tests, benchmarks)."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float = 1.0) -> datetime:
        """Move the clock forward; returns the new time."""
        self.now += timedelta(seconds=seconds)
        return self.now
