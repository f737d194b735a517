"""The background extractor's record of its runs; reached as ``store.extraction``.

One row per pass over an agent's messages: when, which messages (seq range and message ids),
which extractor, what was written where and what was dropped and why, or why the pass was
skipped or failed. ``squad memory extractions`` and ``squad status`` read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Table, insert, select
from sqlalchemy.engine import Engine

from squad.clock import Clock
from squad.store.engine import transaction
from squad.store.tables import metadata

__all__ = ["ExtractionRunRecord", "ExtractionStore"]

RUNS: Table = metadata.tables["extraction_runs"]


@dataclass(frozen=True)
class ExtractionRunRecord:
    id: int
    squad: str
    agent: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    """``done``, ``skipped`` or ``failed``."""
    reason: str | None
    extractor: str
    """``offline``, ``model``, ``gate`` (no call was worth making) or ``none``."""
    from_seq: int
    to_seq: int
    message_ids: list[str] = field(default_factory=list, hash=False)
    written: list[dict[str, Any]] = field(default_factory=list, hash=False)
    dropped: list[dict[str, Any]] = field(default_factory=list, hash=False)


class ExtractionStore:
    """Extraction runs; get one as ``Store.extraction``. Safe to share between threads."""

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        self._engine = engine
        self._now = now

    def record(
        self,
        squad: str,
        agent: str,
        *,
        started_at: datetime,
        status: str,
        extractor: str,
        from_seq: int,
        to_seq: int,
        message_ids: Sequence[str] = (),
        written: Sequence[dict[str, Any]] = (),
        dropped: Sequence[dict[str, Any]] = (),
        reason: str | None = None,
    ) -> ExtractionRunRecord:
        """Record one finished (or skipped, or failed) pass, stamped now."""
        if status not in ("done", "skipped", "failed"):
            raise ValueError(f"status must be done, skipped or failed, got {status!r}")
        values: dict[str, Any] = {
            "squad": squad,
            "agent": agent,
            "started_at": started_at,
            "finished_at": self._now(),
            "status": status,
            "reason": reason,
            "extractor": extractor,
            "from_seq": from_seq,
            "to_seq": to_seq,
            "message_ids": list(message_ids),
            "written": list(written),
            "dropped": list(dropped),
        }
        with transaction(self._engine, f"record an extraction of agent {agent!r}") as conn:
            key = conn.execute(insert(RUNS).values(values)).inserted_primary_key
            assert key is not None
        return ExtractionRunRecord(id=int(key[0]), **values)

    def runs(
        self, squad: str | None = None, agent: str | None = None, *, limit: int = 50
    ) -> list[ExtractionRunRecord]:
        """The newest passes first, of one squad (and agent) or of all."""
        query = select(RUNS)
        if squad is not None:
            query = query.where(RUNS.c.squad == squad)
        if agent is not None:
            query = query.where(RUNS.c.agent == agent)
        query = query.order_by(RUNS.c.started_at.desc(), RUNS.c.id.desc()).limit(limit)
        with transaction(self._engine, "read extraction runs") as conn:
            return [_record(row) for row in conn.execute(query)]


def _record(row: Row[Any]) -> ExtractionRunRecord:
    return ExtractionRunRecord(
        id=row.id,
        squad=row.squad,
        agent=row.agent,
        started_at=row.started_at,
        finished_at=row.finished_at,
        status=row.status,
        reason=row.reason,
        extractor=row.extractor,
        from_seq=row.from_seq,
        to_seq=row.to_seq,
        message_ids=list(row.message_ids or []),
        written=list(row.written or []),
        dropped=list(row.dropped or []),
    )
