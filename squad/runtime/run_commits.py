"""A run in its workspace's history: marked as the one writing, committed as it ends.

A run's commit is made before the store records how the run ended, so whoever sees it ended
finds its commit (see :meth:`RunCommits.commit`). A resumed run whose squad has had newer runs
since writes its outputs apart (:meth:`RunCommits.outputs`), so it never writes over theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.clock import Clock
from squad.runtime.runlog import RunLog
from squad.spec.models import SquadSpec

if TYPE_CHECKING:
    from datetime import datetime

    from squad.history.history import History
    from squad.memory.layers import HistoryFactory
    from squad.store import SpendTotals, Store

__all__ = ["RunCommits"]


class RunCommits:
    """The history side of a runner's runs (``history`` None: no history, nothing commits)."""

    def __init__(
        self,
        store: Store,
        histories: HistoryFactory | None,
        *,
        clock: Clock,
        progress: Callable[[str], None],
    ) -> None:
        self.store = store
        self._histories = histories
        self._clock = clock
        self._progress = progress

    def history(self, squad: str, workspace: Path) -> History | None:
        """The workspace's history, None when there is none or it is off."""
        if self._histories is None:
            return None
        history = self._histories(workspace, squad)
        return history if history.enabled else None

    def begin(self, squad: str, workspace: Path, run_id: str) -> None:
        """Before the run works: earlier changes committed by whoever made them (a person's
        edits as ``unattributed``), and the run marked as the one writing."""
        history = self.history(squad, workspace)
        if history is not None:
            history.begin_run(run_id)

    def ahead(self, squad: str, workspace: Path) -> Callable[[Path], None] | None:
        """What a task's end hands over for the run's commit: its folder, whose tree and
        ``status.json`` blob are written into the history's objects in the background
        (:mod:`squad.history.loose`), so the commit finds them there; None when there is
        no history to commit to."""
        history = self.history(squad, workspace)
        if history is None:
            return None
        from squad.fsutil import in_background
        from squad.history.loose import write_ahead, writes_ahead

        git_dir = history.repository.git_dir
        usable: list[bool] = []

        def write(folder: Path) -> None:
            if not usable:  # asked once a run, on the background thread
                usable.append(writes_ahead(git_dir))
            if usable[0]:
                write_ahead(git_dir, folder)

        def ahead(folder: Path) -> None:
            in_background(lambda: write(folder))  # nothing waits: the commit redoes a miss

        return ahead

    def commit(
        self,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        outputs: str,
        log: RunLog,
        *,
        status: str,
        spend: SpendTotals,
        tasks: dict[str, str] | None = None,
        ended_at: datetime | None = None,
    ) -> str | None:
        """The run's commit as it ends with ``status`` (made before the store records it),
        ``ended_at`` the end the store is given too (default: now); None when history is off
        or paused (the run log then says why)."""
        history = self.history(spec.name, workspace)
        if history is None:
            return None
        from squad.history.message import RunNote, TaskNote

        run = self.store.get_run(run_id)
        if run is None:
            return None
        records = {t.task_id: t for t in self.store.run_state.tasks(run_id)}
        agents = {t.id: t.agent for t in spec.tasks}
        statuses = tasks if tasks is not None else {k: str(v.status) for k, v in records.items()}
        notes = tuple(
            TaskNote(
                task,
                records[task].agent if task in records else agents.get(task, "?"),
                str(state),
                records[task].error if task in records else None,
            )
            for task, state in statuses.items()
        )
        note = RunNote(
            run_id=run_id,
            squad=spec.name,
            status=status,
            trigger=run.trigger,
            started_at=run.started_at,
            ended_at=ended_at or self._clock(),
            tasks=notes,
            tokens_in=spend.prompt_tokens,
            tokens_out=spend.completion_tokens,
            cost_usd=spend.cost_usd,
            outputs=outputs,
        )
        result = history.commit_run(note)
        if result is None:
            log.emit("history_paused", reason="the run's commit could not be made")
            self._progress("history paused for this workspace: the run is not committed")
            return None
        if result.left_out:
            log.emit("history_left_out", files=list(result.left_out))
        return result.sha

    def outputs(self, run: Any, workspace: Path, log: RunLog) -> str:
        """Where a resumed run's task outputs go: ``tasks``, unless a newer run of its squad
        has got past its start meanwhile; then ``runs/<run-id>/tasks``, so this run never
        writes over theirs, with what it wrote before it paused copied there from its own
        commit (its later tasks read them as their inputs)."""
        from squad.store.records import RunStatus

        own = f"runs/{run.id}/tasks"
        if (workspace / "runs" / run.id).is_dir():
            return own
        newer = [
            other
            for other in self.store.list_runs(run.squad, limit=100)
            if other.created_at > run.created_at and other.status is not RunStatus.PENDING
        ]
        if not newer:
            return "tasks"
        history = self.history(run.squad, workspace)
        commit = history.run_commit(run.id) if history is not None else None
        copied = history.restore_tasks(commit, own) if history is not None and commit else []
        log.emit("outputs_redirected", outputs=own, newer_runs=len(newer), restored=copied)
        self._progress(f"newer runs of {run.squad} have finished: this run's outputs go to {own}/")
        (workspace / own).mkdir(parents=True, exist_ok=True)
        return own
