"""When a pooled connection to a database server is checked before it is handed out.

A connection the server dropped (a restart, an idle timeout) must be replaced when it is
taken from its pool, not handed out to fail the work. Checking costs a round trip, and the
pools' defaults check every time: a run on Postgres took connections some 40 times (store,
checkpoints, queue), and the checks were a quarter of its round trips, under load the
dearest part of its writes. Only a connection idle for :data:`PING_IDLE_S` is checked.

A connection used within that time was alive then. A server that restarts in between
refuses it no sooner than it would refuse a fresh one (it is down while it restarts), and
the first statement that finds it dropped fails (the work's usual error for a lost
database: a run's node hands it over) and has its pool replace it.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

__all__ = ["PING_IDLE_S", "idle_checked_async_pool", "idle_checked_pool"]

PING_IDLE_S = 1.0
"""A pooled connection idle at least this long is checked before it is handed out."""


def is_fresh(idle_since: float | None) -> bool:
    """Whether a connection returned at ``idle_since`` (None: never used) needs no check."""
    return idle_since is not None and time.monotonic() - idle_since < PING_IDLE_S


def idle_checked_pool(base: Any) -> Any:
    """A subclass of ``psycopg_pool.ConnectionPool`` ``base`` whose ``check`` (its default:
    ``base.check_connection``) runs only on connections idle for :data:`PING_IDLE_S`."""

    class IdleChecked(base):  # type: ignore[misc]
        def __init__(self, *args: Any, check: Any = None, **kwargs: Any) -> None:
            self._idle_since: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
            self._full_check = check or base.check_connection
            super().__init__(*args, check=self._check_if_idle, **kwargs)

        def putconn(self, conn: Any) -> None:
            self._idle_since[conn] = time.monotonic()
            super().putconn(conn)

        def _check_if_idle(self, conn: Any) -> None:
            if not is_fresh(self._idle_since.get(conn)):
                self._full_check(conn)

    return IdleChecked


def idle_checked_async_pool(base: Any) -> Any:
    """:func:`idle_checked_pool` for ``psycopg_pool.AsyncConnectionPool``."""

    class IdleChecked(base):  # type: ignore[misc]
        def __init__(self, *args: Any, check: Any = None, **kwargs: Any) -> None:
            self._idle_since: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
            self._full_check = check or base.check_connection
            super().__init__(*args, check=self._check_if_idle, **kwargs)

        async def putconn(self, conn: Any) -> None:
            self._idle_since[conn] = time.monotonic()
            await super().putconn(conn)

        async def _check_if_idle(self, conn: Any) -> None:
            if not is_fresh(self._idle_since.get(conn)):
                await self._full_check(conn)

    return IdleChecked
