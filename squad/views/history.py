"""The workspaces' history as the front ends show it: runs with their commit and what changed
since the previous run, diffs, an agent's memory changes and their revert."""

from __future__ import annotations

from typing import Literal

from squad.views._base import View
from squad.views.runs import FileChanged

__all__ = [
    "FactChange",
    "HistoryRun",
    "MemoryChange",
    "MemoryHistory",
    "MemoryRevert",
    "RunChangesView",
    "RunDiffView",
]


class HistoryRun(View):
    """A run as ``squad runs list`` shows it."""

    run_id: str
    squad: str
    status: str
    trigger: str
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    commit: str | None
    source: Literal["history", "store", "live", "marker"]
    outputs: str


class RunChangesView(View):
    """A run's commit and the files it changed since the squad's previous run."""

    run: HistoryRun
    previous_run: str | None
    previous_commit: str | None
    changes: list[FileChanged]


class RunDiffView(View):
    squad: str
    old_run: str | None
    old_commit: str | None
    new_run: str
    new_commit: str
    stat: list[FileChanged]
    patch: str | None
    truncated: bool


class FactChange(View):
    op: str
    fact_id: int
    text: str


class MemoryChange(View):
    """One change to an agent's memory, with its id for a revert."""

    id: str
    commit: str
    time: str
    who: str
    kind: str
    subject: str
    run: str | None
    pass_id: str | None
    reverts: str | None
    removed: list[str]
    added: list[str]
    facts: list[FactChange]


class MemoryRevert(View):
    reverted: MemoryChange
    removed: list[str]
    restored: list[str]
    facts: list[FactChange]


class MemoryHistory(View):
    """Every change to an agent's memory, newest first (MCP's ``memory_history``)."""

    squad: str
    agent: str
    changes: list[MemoryChange]
