"""The daemon's heartbeat, one row per squad home; reached as ``store.daemon``.

``squad daemon`` writes its row every few seconds with what it is doing (squads, next fire
times, running runs, queue length, files that failed to load) as JSON; ``squad status``
reads it, and calls the daemon down when the beat is older than a few intervals or the
process is gone. The row outlives the daemon: ``stopped_at`` says it stopped cleanly.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, select, update
from sqlalchemy.engine import Engine

from squad.clock import Clock
from squad.store.engine import transaction
from squad.store.row_records import HeartbeatRecord, heartbeat_record
from squad.store.tables import metadata
from squad.store.upsert import upsert

__all__ = ["DaemonStateStore", "HeartbeatRecord"]

HEARTBEATS: Table = metadata.tables["daemon_heartbeats"]


class DaemonStateStore:
    """Daemon heartbeats; get one as ``Store.daemon``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC)."""
        self._engine = engine
        self._now = now

    def beat(
        self,
        home: str,
        *,
        pid: int,
        host: str,
        started_at: datetime,
        state: dict[str, Any] | None = None,
    ) -> HeartbeatRecord:
        """Record that the daemon of ``home`` is alive now (one atomic upsert).

        ``state`` must be JSON-serialisable; it replaces the last one. A beat clears
        ``stopped_at``: the home has a running daemon again.
        """
        if started_at.utcoffset() is None:
            raise ValueError(f"naive started_at {started_at!r}; pass a timezone-aware datetime")
        values: dict[str, Any] = {
            "home": home,
            "pid": pid,
            "host": host,
            "started_at": started_at,
            "beat_at": self._now(),
            "stopped_at": None,
            "state": state,
        }
        changes = {k: v for k, v in values.items() if k != "home"}
        with transaction(self._engine, f"record the heartbeat of the daemon of {home!r}") as conn:
            upsert(conn, HEARTBEATS, values, key=("home",), set_=changes)
            return heartbeat_record(conn.execute(select(HEARTBEATS).where(_key(home))).one())

    def touch(self, home: str, *, pid: int) -> bool:
        """Move the beat of daemon ``pid`` of ``home`` to now, keeping its state (cheaper
        than :meth:`beat` when nothing changed); False if it has no row to move."""
        where = (_key(home), HEARTBEATS.c.pid == pid, HEARTBEATS.c.stopped_at.is_(None))
        with transaction(self._engine, f"record the heartbeat of the daemon of {home!r}") as conn:
            changed = conn.execute(
                update(HEARTBEATS).where(*where).values(beat_at=self._now())
            ).rowcount
        return bool(changed)

    def mark_stopped(self, home: str, *, pid: int) -> bool:
        """Record a clean stop of the daemon ``pid`` of ``home``; False if another one beat
        since (its row is left alone)."""
        where = (_key(home), HEARTBEATS.c.pid == pid)
        with transaction(self._engine, f"record the stop of the daemon of {home!r}") as conn:
            changed = conn.execute(
                update(HEARTBEATS).where(*where).values(stopped_at=self._now())
            ).rowcount
        return bool(changed)

    def get(self, home: str) -> HeartbeatRecord | None:
        """The last heartbeat of the daemon of ``home``; None if none ever beat."""
        with transaction(self._engine, f"read the heartbeat of the daemon of {home!r}") as conn:
            row = conn.execute(select(HEARTBEATS).where(_key(home))).first()
        return None if row is None else heartbeat_record(row)


def _key(home: str) -> ColumnElement[bool]:
    return HEARTBEATS.c.home == home
