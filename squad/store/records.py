"""What the store hands out: frozen dataclasses, so callers never hold a live database row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = ["RunRecord", "RunStatus", "SquadRecord"]


class RunStatus(StrEnum):
    """Where a run is in its life; stored as its string value."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"
    """The process died or was killed mid-run; the run may be resumed."""
    AWAITING_APPROVAL = "awaiting_approval"
    """Paused until a human approves; not finished."""

    @property
    def is_terminal(self) -> bool:
        """True for statuses that end a run and stamp ``ended_at``."""
        return self in _TERMINAL


_TERMINAL = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.STOPPED})


@dataclass(frozen=True)
class SquadRecord:
    """A squad the store knows, keyed by name; timestamps are timezone-aware UTC."""

    name: str
    workspace: str
    source: str | None
    """Where the definition came from (usually the YAML path); None when built in code."""
    definition_sha256: str
    """Hash of the definition text, so a changed file is noticed without storing it."""
    created_at: datetime
    updated_at: datetime
    """Last time workspace, source or definition hash changed."""


@dataclass(frozen=True)
class RunRecord:
    """One run of a squad; timestamps are timezone-aware UTC, unset ones None."""

    id: str
    squad: str
    status: RunStatus
    trigger: str
    """What started the run: ``manual``, ``schedule``, ``on_start``..."""
    created_at: datetime
    started_at: datetime | None
    """First time the run entered ``running``."""
    ended_at: datetime | None
    """First time the run reached a terminal status."""
    error: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
