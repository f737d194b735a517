"""Runs as the workspaces' histories record them: listed, shown and diffed.

A run's commit (made when it ends, or pauses for an approval) carries its figures in
trailers, so listing runs reads git, not the state database: it stays as quick with 10,000
runs behind it as with ten (the newest are read first), needs no store, and outlives any
pruning of the store. Runs that have no commit say so from where they are:

- a run going on now: its squad's run lock names it (``running``);
- a run killed before its commit: the history's run marker names it (``interrupted``; its
  partial commit is made before the squad's next run);
- a squad whose history is off or paused: its runs come from the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from squad import flock
from squad.errors import HistoryUnavailable, NotFound, UsageError
from squad.paths import run_lock
from squad.workspace.refs import WorkspaceRef, workspace_refs

if TYPE_CHECKING:
    import pygit2

    from squad.history.history import History
    from squad.history.log import FileChange, RunEntry
    from squad.settings import Settings
    from squad.store import Store
    from squad.store.records import RunRecord

__all__ = [
    "RunChanges",
    "RunChangesDict",
    "RunDiff",
    "RunView",
    "RunViewDict",
    "Runs",
    "WorkspaceRef",
]

Source = Literal["history", "store", "live", "marker"]


class TaskEntry(TypedDict):
    task: str
    agent: str
    status: str


class RunViewDict(TypedDict):
    """:meth:`RunView.to_dict`."""

    run_id: str
    squad: str
    status: str
    trigger: str
    started_at: str | None
    ended_at: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    commit: str | None
    source: Source
    tasks: list[TaskEntry]
    outputs: str
    duration_s: float | None


class FileChangeDict(TypedDict):
    path: str
    status: str
    added: int
    removed: int
    binary: bool


class RunChangesDict(RunViewDict):
    """:meth:`RunChanges.to_dict`: the run, and what changed since the previous one."""

    previous_run: str | None
    previous_commit: str | None
    changes: list[FileChangeDict]


@dataclass(frozen=True)
class RunView:
    """One run as ``squad runs list`` shows it."""

    run_id: str
    squad: str
    status: str
    trigger: str
    started_at: datetime | None
    ended_at: datetime | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    commit: str | None
    source: Source
    """Where the figures come from: its commit, the store, its live lock, the run marker."""
    tasks: tuple[tuple[str, str, str], ...] = ()
    outputs: str = "tasks"

    @property
    def duration_s(self) -> float | None:
        """:func:`~squad.store.records.run_duration_s`; None until the run has ended (a paused
        or interrupted run's commit time is not its end), as ``squad status`` shows it."""
        from squad.store.records import RunStatus, run_duration_s

        if self.status not in {s.value for s in RunStatus if s.is_terminal}:
            return None
        return run_duration_s(self.started_at, self.ended_at)

    @property
    def sort_key(self) -> datetime:
        return self.started_at or self.ended_at or datetime.min.replace(tzinfo=None)

    def to_dict(self) -> RunViewDict:
        """What ``squad runs list --json`` prints of it."""
        return {
            "run_id": self.run_id,
            "squad": self.squad,
            "status": self.status,
            "trigger": self.trigger,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "commit": self.commit,
            "source": self.source,
            "tasks": [{"task": t, "agent": a, "status": s} for t, a, s in self.tasks],
            "outputs": self.outputs,
            "duration_s": self.duration_s,
        }

    @classmethod
    def of_entry(cls, entry: RunEntry) -> RunView:
        return cls(
            entry.run_id,
            entry.squad,
            entry.status,
            entry.trigger,
            entry.started_at,
            entry.ended_at or entry.committed_at,
            entry.tokens_in,
            entry.tokens_out,
            entry.cost_usd,
            entry.commit,
            "history",
            entry.tasks,
            entry.outputs,
        )

    @classmethod
    def of_record(cls, record: RunRecord) -> RunView:
        tasks: tuple[tuple[str, str, str], ...] = ()
        summary = record.summary or {}
        if isinstance(summary.get("tasks"), dict):
            tasks = tuple((str(t), "", str(s)) for t, s in summary["tasks"].items())
        return cls(
            record.id,
            record.squad,
            str(record.status),
            record.trigger,
            record.started_at or record.created_at,
            record.ended_at,
            record.tokens_in,
            record.tokens_out,
            record.cost_usd,
            None,
            "store",
            tasks,
        )


@dataclass(frozen=True)
class RunChanges:
    """A run with what changed in its workspace since the squad's previous run."""

    run: RunView
    previous: str | None
    """The previous run's id (None: the run's commit is compared with history's start)."""
    previous_commit: str | None
    changes: tuple[FileChange, ...] = field(default=())

    def to_dict(self) -> RunChangesDict:
        """What ``squad runs show --json`` prints of it."""
        return {
            **self.run.to_dict(),
            "previous_run": self.previous,
            "previous_commit": self.previous_commit,
            "changes": [
                {
                    "path": c.path,
                    "status": c.status,
                    "added": c.added,
                    "removed": c.removed,
                    "binary": c.binary,
                }
                for c in self.changes
            ],
        }


@dataclass(frozen=True)
class RunDiff:
    squad: str
    old_run: str | None
    old_commit: str | None
    new_run: str
    new_commit: str
    stat: tuple[FileChange, ...]
    patch: str | None
    """The unified diff (None when only the stat was asked for)."""


class Runs:
    """The runs of one home's squads, read from their workspaces' histories."""

    def __init__(
        self,
        settings: Settings,
        history: Callable[[Path, str], History],
        *,
        store: Callable[[], Store | None] | None = None,
    ) -> None:
        """``store`` opens the state database when a squad's runs must come from it (history
        off or paused), or returns None when there is none."""
        self.settings = settings
        self._history = history
        self._store = store or (lambda: None)

    # -- finding workspaces --------------------------------------------------------------

    def workspaces(self, squad: str | None = None) -> list[WorkspaceRef]:
        """Workspaces under the root, by squad (:func:`~squad.workspace.refs.workspace_refs`)."""
        return workspace_refs(self.settings.workspaces, squad)

    def workspace(self, squad: str) -> WorkspaceRef:
        found = self.workspaces(squad)
        if found:
            return found[0]
        known = ", ".join(w.squad for w in self.workspaces()) or "none yet"
        raise NotFound(
            f"no squad named {squad!r} under {self.settings.workspaces} (known: {known})"
        )

    # -- listing -------------------------------------------------------------------------

    def recent(self, squad: str | None = None, *, limit: int = 20) -> list[RunView]:
        """The newest ``limit`` runs, of one squad or of all, newest first."""
        if limit < 1:
            raise UsageError(f"--limit must be at least 1, got {limit}")
        spaces = [self.workspace(squad)] if squad is not None else self.workspaces()
        views: list[RunView] = []
        for ref in spaces:
            views += self._of_workspace(ref, limit)
        views.sort(key=lambda v: _stamp(v), reverse=True)
        return views[:limit]

    def _of_workspace(self, ref: WorkspaceRef, limit: int) -> list[RunView]:
        from squad.history.log import find_run, run_entries

        history = self._history(ref.path, ref.squad)
        views: list[RunView] = []
        repo = self._repo(history)
        if repo is None:
            store = self._store()
            if store is not None:
                views = [RunView.of_record(r) for r in store.list_runs(ref.squad, limit=limit)]
            return views
        entries = run_entries(repo, limit=limit)
        views = [RunView.of_entry(e) for e in entries]
        known = {v.run_id for v in views}
        live = self._live(ref.squad)
        if live is not None and live.run_id not in known:
            views.insert(0, live)
            known.add(live.run_id)
        marker = _marker(ref.path)
        if marker is not None and marker not in known and find_run(repo, marker) is None:
            left = RunView(
                marker, ref.squad, "interrupted", "unknown", None, None, 0, 0, 0.0, None, "marker"
            )
            views.insert(0, left)
        return views

    def _live(self, squad: str) -> RunView | None:
        probe = flock.probe(run_lock(self.settings.locks_dir, squad))
        if not probe.held:
            return None
        try:
            note = json.loads(probe.note) if probe.note else {}
        except ValueError:
            return None
        run_id, since = note.get("run_id"), note.get("since")
        if not isinstance(run_id, str):
            return None
        started = None
        if isinstance(since, str):
            try:
                started = datetime.fromisoformat(since)
            except ValueError:
                started = None
        return RunView(run_id, squad, "running", "unknown", started, None, 0, 0, 0.0, None, "live")

    @staticmethod
    def _repo(history: History) -> pygit2.Repository | None:
        if not history.enabled:
            return None
        try:
            return history.open()
        except HistoryUnavailable:
            return None

    # -- one run -------------------------------------------------------------------------

    def find(self, run_id: str) -> tuple[WorkspaceRef, RunEntry]:
        """A run's workspace and latest commit, by its id (or a unique prefix of it)."""
        from squad.history.log import find_run, run_entries, run_ids

        run_id = run_id.strip()
        if len(run_id) < 4:
            raise UsageError(f"run id {run_id!r} is too short: give at least 4 characters")
        matches: list[tuple[WorkspaceRef, RunEntry]] = []
        for ref in self.workspaces():  # refs/runs/<id> first: no store, no walk
            repo = self._repo(self._history(ref.path, ref.squad))
            if repo is None:
                continue
            exact = find_run(repo, run_id) if len(run_id) >= 32 else None
            if exact is not None:  # a whole id: its ref, no listing of the others
                matches.append((ref, exact))
                continue
            named = run_ids(repo, run_id)
            for full in named:
                found = find_run(repo, full)
                if found is not None:
                    matches.append((ref, found))
            if not named and not run_ids(repo):  # a history made before runs had refs
                matches += [(ref, e) for e in run_entries(repo) if e.run_id.startswith(run_id)]
        ids = {entry.run_id for _, entry in matches}
        if len(ids) > 1:
            raise UsageError(
                f"run id {run_id!r} is ambiguous: {', '.join(sorted(ids)[:5])}; give more of it"
            )
        if not matches:
            store = self._store()
            record = store.get_run(run_id) if store is not None else None
            if record is not None:
                raise UsageError(
                    f"run {record.id} of {record.squad!r} has no commit in its workspace's "
                    f"history (status {record.status}; a run is committed when it ends or "
                    "pauses, and history may be off or paused for its workspace)"
                )
            raise NotFound(
                f"no run {run_id!r} in any workspace's history; `squad runs list` lists runs"
            )
        return matches[0]

    def show(self, run_id: str) -> RunChanges:
        from squad.history.log import diff_stat, previous_run

        ref, entry = self.find(run_id)
        repo = self._history(ref.path, ref.squad).open()
        before = previous_run(repo, entry)
        old = before.commit if before is not None else _root_commit(repo, entry.commit)
        changes = tuple(diff_stat(repo, old, entry.commit)) if old != entry.commit else ()
        view = RunView.of_entry(entry)
        store = self._store()
        record = store.get_run(entry.run_id) if store is not None else None
        if record is not None:  # the store's view is the live one (a run resumed since)
            view = RunView(
                view.run_id,
                view.squad,
                str(record.status),
                record.trigger,
                record.started_at or view.started_at,
                record.ended_at or view.ended_at,
                record.tokens_in,
                record.tokens_out,
                record.cost_usd,
                view.commit,
                "history",
                view.tasks,
                view.outputs,
            )
        return RunChanges(view, before.run_id if before else None, old, changes)

    def diff(
        self,
        run_id: str,
        other: str | None = None,
        *,
        paths: Sequence[str] = (),
        stat_only: bool = False,
    ) -> RunDiff:
        """What changed from ``other`` (default: the squad's previous run) to ``run_id``."""
        from squad.history.log import diff_both, previous_run

        ref, entry = self.find(run_id)
        repo = self._history(ref.path, ref.squad).open()
        if other is None:
            before = previous_run(repo, entry)
            old_run = before.run_id if before is not None else None
            old = before.commit if before is not None else _root_commit(repo, entry.commit)
        else:
            other_ref, other_entry = self.find(other)
            if other_ref.path != ref.path:
                raise UsageError(
                    f"runs {entry.run_id} ({ref.squad}) and {other_entry.run_id} "
                    f"({other_ref.squad}) are of different squads; diff runs of one squad"
                )
            old_run, old = other_entry.run_id, other_entry.commit
        stat, patch = diff_both(repo, old, entry.commit, paths, patch=not stat_only)
        return RunDiff(ref.squad, old_run, old, entry.run_id, entry.commit, tuple(stat), patch)


def _stamp(view: RunView) -> float:
    when = view.started_at or view.ended_at
    if view.source in ("live", "marker") and when is None:
        return float("inf")
    return when.timestamp() if when is not None else 0.0


def _root_commit(repo: pygit2.Repository, sha: str) -> str | None:
    """The first commit of the history (``history starts``), if it is not ``sha`` itself."""
    from squad.history.log import commits

    last = None
    for commit in commits(repo, start=sha):
        last = str(commit.id)
    return None if last == sha else last


def _marker(path: Path) -> str | None:
    from squad.history.history import RUN_MARKER

    try:
        data = json.loads((path / ".git" / RUN_MARKER).read_bytes())
    except (OSError, ValueError):
        return None
    run = data.get("run_id") if isinstance(data, dict) else None
    return run if isinstance(run, str) else None
