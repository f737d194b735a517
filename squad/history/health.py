"""How a squad's workspace history is doing (``squad ws health``): its state, head, size."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

__all__ = ["HistoryHealth", "HistoryHealthDict"]


class HistoryHealthDict(TypedDict):
    """:meth:`HistoryHealth.to_dict`: a squad's history in ``squad ws health --json``."""

    state: str
    detail: str | None
    head: str | None
    commits: int
    size_bytes: int
    last_commit_at: str | None
    paused: bool


@dataclass(frozen=True)
class HistoryHealth:
    state: str
    """``ok``, ``absent`` (starts at the next run), ``off``, ``foreign`` or ``broken``
    (both paused: the work goes on, nothing is committed)."""
    detail: str | None = None
    head: str | None = None
    commits: int = 0
    size_bytes: int = 0
    last_commit_at: datetime | None = None

    @property
    def paused(self) -> bool:
        return self.state in ("foreign", "broken")

    def to_dict(self) -> HistoryHealthDict:
        return {
            "state": self.state,
            "detail": self.detail,
            "head": self.head,
            "commits": self.commits,
            "size_bytes": self.size_bytes,
            "last_commit_at": self.last_commit_at.isoformat() if self.last_commit_at else None,
            "paused": self.paused,
        }
