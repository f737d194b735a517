"""The workspaces' history as the API, the dashboard and MCP show it: runs with their commit
and what changed since the previous run, diffs, an agent's memory changes and their revert.

One view per thing (:mod:`squad.views.history`), built here once for every front end; text
that leaves (diffs, memory lines) has credentials redacted on the way out, as every other
answer does, although squad never commits a file that holds one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from squad.text.secrets import redact
from squad.views import (
    FactChange,
    FileChanged,
    HistoryRun,
    MemoryChange,
    MemoryRevert,
    RunChangesView,
    RunDiffView,
)

if TYPE_CHECKING:
    from squad.app import App
    from squad.history.log import FileChange, MemoryEntry
    from squad.history.message import FactChange as HistoryFact
    from squad.memory.service import Reverted
    from squad.run_history import RunChanges, RunDiff, RunView

__all__ = [
    "memory_history",
    "memory_revert",
    "recent_runs",
    "run_changes",
    "run_diff",
]

MAX_PATCH_CHARS = 200_000
"""The longest diff an answer carries (the rest is cut, and ``truncated`` says so)."""


def history_run(view: RunView) -> HistoryRun:
    return HistoryRun(
        run_id=view.run_id,
        squad=view.squad,
        status=view.status,
        trigger=view.trigger,
        started_at=view.started_at.isoformat() if view.started_at else None,
        ended_at=view.ended_at.isoformat() if view.ended_at else None,
        duration_s=view.duration_s,
        tokens_in=view.tokens_in,
        tokens_out=view.tokens_out,
        cost_usd=view.cost_usd,
        commit=view.commit,
        source=view.source,
        outputs=view.outputs,
    )


def _file(change: FileChange) -> FileChanged:
    return FileChanged(
        path=change.path,
        status=change.status,
        added=change.added,
        removed=change.removed,
        binary=change.binary,
    )


def recent_runs(app: App, squad: str | None = None, *, limit: int = 20) -> list[HistoryRun]:
    return [history_run(v) for v in app.runs.recent(squad, limit=limit)]


def changes_view(changes: RunChanges) -> RunChangesView:
    return RunChangesView(
        run=history_run(changes.run),
        previous_run=changes.previous,
        previous_commit=changes.previous_commit,
        changes=[_file(c) for c in changes.changes],
    )


def run_changes(app: App, run_id: str) -> RunChangesView:
    return changes_view(app.runs.show(run_id))


def diff_view(diff: RunDiff) -> RunDiffView:
    patch = None if diff.patch is None else redact(diff.patch)[0]
    truncated = patch is not None and len(patch) > MAX_PATCH_CHARS
    return RunDiffView(
        squad=diff.squad,
        old_run=diff.old_run,
        old_commit=diff.old_commit,
        new_run=diff.new_run,
        new_commit=diff.new_commit,
        stat=[_file(c) for c in diff.stat],
        patch=patch[:MAX_PATCH_CHARS] if patch is not None else None,
        truncated=truncated,
    )


def run_diff(
    app: App,
    run_id: str,
    other: str | None = None,
    *,
    paths: list[str] | None = None,
    stat_only: bool = False,
) -> RunDiffView:
    from squad.paths import refuse_nul

    for path in paths or []:
        refuse_nul(path)  # it would match no file: say so rather than show "no difference"
    return diff_view(app.runs.diff(run_id, other, paths=paths or [], stat_only=stat_only))


def _fact(change: HistoryFact) -> FactChange:
    return FactChange(op=change.op.value, fact_id=change.fact_id, text=redact(change.text)[0])


def memory_change(entry: MemoryEntry) -> MemoryChange:
    return MemoryChange(
        id=entry.id,
        commit=entry.commit,
        time=entry.time.isoformat(),
        who=entry.who,
        kind=entry.kind,
        subject=redact(entry.subject)[0],
        run=entry.run_id,
        pass_id=entry.pass_id,
        reverts=entry.reverts,
        removed=[redact(line)[0] for line in entry.removed],
        added=[redact(line)[0] for line in entry.added],
        facts=[_fact(f) for f in entry.facts],
    )


def memory_history(
    app: App, squad: str, agent: str, *, limit: int | None = 50
) -> list[MemoryChange]:
    ctx = app.agent(squad, agent)
    return [memory_change(e) for e in app.memory.history_of(ctx, limit=limit)]


def revert_view(done: Reverted) -> MemoryRevert:
    return MemoryRevert(
        reverted=memory_change(done.change),
        removed=[redact(line)[0] for line in done.removed],
        restored=[redact(line)[0] for line in done.restored],
        facts=[_fact(f) for f in done.facts],
    )


def memory_revert(app: App, squad: str, agent: str, change: str, *, actor: str) -> MemoryRevert:
    return revert_view(app.memory.revert(app.agent(squad, agent), change, actor=actor))
