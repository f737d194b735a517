"""Fixtures of the store tests: a clock with microseconds, a store per backend."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from squad.clock import FrozenClock
from squad.store import Store

START = datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


@pytest.fixture
def clock() -> FrozenClock:
    """Overrides the suite-wide clock: starts at an instant with microseconds, so round trips
    through each backend are checked to the microsecond, and ``advance`` returns the new time."""
    return FrozenClock(START)


@pytest.fixture
def store(store_url: str, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(store_url, clock=clock) as opened:
        yield opened
