"""What a row of the squads, runs, run_tasks and daemon_heartbeats tables becomes: a frozen
record. No SQLAlchemy here: the store's ORM side and the reading commands' sqlite3 path
(:mod:`squad.store.sqlite_reader`) build their records with the same functions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from squad.store.records import RunRecord, RunStatus, SquadRecord, TaskRecord, TaskStatus

__all__ = [
    "RESUMABLE",
    "HeartbeatRecord",
    "heartbeat_record",
    "run_record",
    "squad_record",
    "task_record",
]

RESUMABLE = (RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL, RunStatus.INTERRUPTED)
"""Runs that stopped without finishing and may be resumed (``interrupted_runs``)."""


@dataclass(frozen=True)
class HeartbeatRecord:
    """The last heartbeat of the daemon of one squad home; timestamps are timezone-aware UTC."""

    home: str
    pid: int
    host: str
    started_at: datetime
    beat_at: datetime
    stopped_at: datetime | None
    """When the daemon stopped cleanly; None while it runs (or after it crashed)."""
    state: dict[str, Any] | None = field(default=None, hash=False)
    """What the daemon reported with its last beat."""


def heartbeat_record(row: Any) -> HeartbeatRecord:
    return HeartbeatRecord(
        home=row.home,
        pid=row.pid,
        host=row.host,
        started_at=row.started_at,
        beat_at=row.beat_at,
        stopped_at=row.stopped_at,
        state=row.state,
    )


def run_record(row: Any) -> RunRecord:
    return RunRecord(
        id=row.id,
        squad=row.squad,
        status=RunStatus(row.status),
        trigger=row.trigger,
        created_at=row.created_at,
        started_at=row.started_at,
        ended_at=row.ended_at,
        error=row.error,
        tokens_in=row.tokens_in,
        tokens_out=row.tokens_out,
        cost_usd=row.cost_usd,
        goal=row.goal,
        model=row.model,
        summary=row.summary,
        job=row.job,
        epoch=row.epoch,
        owner=row.owner,
    )


def task_record(row: Any) -> TaskRecord:
    return TaskRecord(
        run_id=row.run_id,
        task_id=row.task_id,
        squad=row.squad,
        agent=row.agent,
        status=TaskStatus(row.status),
        attempts=row.attempts,
        rounds=row.rounds,
        error=row.error,
        output=row.output,
        started_at=row.started_at,
        ended_at=row.ended_at,
        updated_at=row.updated_at,
    )


def squad_record(row: Any) -> SquadRecord:
    return SquadRecord(
        name=row.name,
        workspace=row.workspace,
        source=row.source,
        definition_sha256=row.definition_sha256,
        created_at=row.created_at,
        updated_at=row.updated_at,
        definition=row.definition,
    )
