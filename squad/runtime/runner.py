"""Runs of squads: start, resume after a crash, approve or reject a paused task.

A run is a LangGraph thread checkpointed durably (:mod:`squad.runtime.run_graph`), so
``squad resume RUN_ID`` continues from the last completed step without redoing finished tasks
or repeating their side effects. Runners are made by :meth:`squad.app.App.runner`.

A goal is stored with its credentials redacted, as chat messages are: the run that was given
it works with it as given, and keeps its values in memory (:class:`~squad.text.secrets.
SeenSecrets`) to redact their echoes; a resume works with the stored goal. An approval's
reason is kept (in the checkpoint) redacted too.
"""

from __future__ import annotations

import threading
from asyncio import CancelledError
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.clock import Clock, utc_now
from squad.errors import NotFound, RunFenced, StoreError, UsageError, WorkspaceError
from squad.memory.decisions.log import DecisionLog
from squad.model.factory import ModelFactory, model_for
from squad.model.types import Usage
from squad.runtime.executor import RunExecutor, RunInterrupted
from squad.runtime.limits import RunBudget
from squad.runtime.mcp_client.tools import McpTools
from squad.runtime.prices import require_prices
from squad.runtime.run_commits import RunCommits
from squad.runtime.run_graph import (
    awaited_task,
    initial_state,
    invoke,
    known_tasks,
    no_checkpoint,
    run_graph,
)
from squad.runtime.run_result import RunResult, result_of, run_end, turns_so_far
from squad.runtime.runlock import run_slot, settle_dead_runs
from squad.runtime.runlog import RunLog
from squad.runtime.tracing import run_attributes, run_ended, run_span_name
from squad.spec.models import SquadSpec
from squad.telemetry import NO_TELEMETRY, Span, Telemetry
from squad.text.secrets import SeenSecrets, redact

if TYPE_CHECKING:
    from squad.checkpoints import Checkpoints
    from squad.checkpoints.base import Fence
    from squad.extraction.background import BackgroundExtractor
    from squad.memory.layers import HistoryFactory
    from squad.memory.service import MemoryService
    from squad.settings import Settings
    from squad.store import Store

__all__ = ["SquadRunner"]

FindSquad = Callable[[str], tuple[SquadSpec, Path]]
"""A squad's definition and workspace folder by name (``SquadManager.definition``)."""


class SquadRunner:
    """Starts, resumes and approves runs on the services it is given (see ``App.runner``)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        memory: MemoryService,
        checkpoints: Checkpoints,
        extraction: BackgroundExtractor,
        find_squad: FindSquad,
        model_factory: ModelFactory = model_for,
        progress: Callable[[str], None] | None = None,
        clock: Clock = utc_now,
        decisions: DecisionLog | None = None,
        task_slots: threading.BoundedSemaphore | None = None,
        telemetry: Telemetry = NO_TELEMETRY,
        history: HistoryFactory | None = None,
    ) -> None:
        """``history`` gives each workspace's history (a commit per run); None: none."""
        self.settings = settings
        self.store = store
        self.memory = memory
        self.decisions = decisions or DecisionLog(store, clock=clock)
        """Where agents record and look up their squad's decisions (decision_* tools)."""
        self.task_slots = task_slots
        """Shared by every runner of an app: tasks working at once across all their runs."""
        self.checkpoints = checkpoints
        self.extraction = extraction
        """Background fact extraction every ``trigger_interval`` replies (shared by every
        runner of an app; its owner drains it)."""
        self.model_factory = model_factory
        self._find_squad = find_squad
        self._progress = progress or (lambda _: None)
        self._clock = clock
        self.stop = threading.Event()
        """Set it (from a signal handler) to stop after the current step's checkpoint: the
        run going on, or the one about to start; cleared as that run returns."""
        self.telemetry = telemetry
        """Where the spans of runs and their turns go (the app's; off by default)."""
        self.owner: str | None = None
        """The cluster node this runner works for (None outside a cluster): the runs it
        starts are claimed for it (:meth:`claim`), and their writes are fenced."""
        self.job: str | None = None
        """The cluster job this runner works for: a run it claims names that job."""
        self.commits = RunCommits(store, history, clock=clock, progress=self._progress)
        """Each run marked in its workspace's history, and committed as it ends."""
        self.fence: Fence | None = None
        """This runner's claim of a run: the store and checkpoint writes of that run carry
        its epoch and are refused once another node claims the run."""
        self.on_run: Callable[[str], None] | None = None
        """Told a new run's id as the run starts (a daemon passes it to whoever handed the
        run over: :mod:`squad.daemon.handoff`)."""

    def run(
        self,
        spec: SquadSpec,
        workspace: Path,
        *,
        goal: str | None = None,
        model: str | None = None,
        trigger: str = "manual",
        job: str | None = None,
    ) -> RunResult:
        """A new run; ``job`` is the cluster job it belongs to (see :meth:`start_over`)."""
        require_prices(spec, self.model_factory, override=model)
        with run_slot(self.settings.locks_dir, spec.name, clock=self._clock) as slot:
            settle_dead_runs(self.store, self.settings.locks_dir, squad=spec.name, holding=True)
            given = goal or spec.goal
            run = self.store.create_run(
                spec.name,
                trigger=trigger,
                goal=redact(given)[0] if given else given,
                model=model,
                job=job,
            )
            slot.claim(run.id)
            if self.owner is not None:
                self.claim(run.id)
            return self._start(spec, workspace, run.id, goal, model, trigger)

    def claim(self, run_id: str) -> int:
        """Claim run ``run_id`` for :attr:`owner` (a cluster node) and :attr:`job`: its
        epoch goes up, so whoever held it before can write to it no more, and this runner's
        writes carry the new epoch. Done once the squad's run lock is held (the lock's last
        holder has let go of the run); a node that finds the lock held by a node lost for
        long claims the run without the lock, to fence that node off it."""
        from squad.checkpoints.base import Fence

        if self.owner is None:
            raise UsageError("only a cluster node's runner claims runs")
        epoch = self.store.run_state.claim(run_id, self.owner, job=self.job)
        self.fence = Fence(run_id, epoch)
        return epoch

    def _epoch(self, run_id: str) -> int | None:
        fence = self._fence_of(run_id)
        return None if fence is None else fence.epoch

    def _fence_of(self, run_id: str) -> Fence | None:
        fence = self.fence
        return fence if fence is not None and fence.run_id == run_id else None

    def start_over(self, run_id: str) -> RunResult:
        """Run again from the start a run that never reached its first checkpoint (its node
        was lost while it started): the same record, so the run is not counted twice."""
        run = self.store.get_run(run_id)
        if run is None:
            raise NotFound(f"no run {run_id!r}; `squad runs list` lists recent runs")
        spec, workspace = self.squad_of(run.squad)
        require_prices(spec, self.model_factory, override=run.model)
        with run_slot(self.settings.locks_dir, run.squad, run_id, clock=self._clock):
            if self.owner is not None:
                self.claim(run_id)
            if self.has_checkpoint(run_id):
                raise UsageError(f"run {run_id!r} has a checkpoint; resume it instead")
            return self._start(spec, workspace, run_id, run.goal, run.model, run.trigger)

    def _start(
        self,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        goal: str | None,
        model: str | None,
        trigger: str,
    ) -> RunResult:
        if self.on_run is not None:
            self.on_run(run_id)
        self.commits.begin(spec.name, workspace, run_id)
        state = initial_state(spec)
        seen = SeenSecrets()
        if goal or spec.goal:
            seen.learn(goal or spec.goal)
        with RunLog(workspace, run_id, clock=self._clock, known=seen) as log:
            log.emit(
                "run_start",
                squad=spec.name,
                process=spec.process.type,
                trigger=trigger,
                goal=goal or spec.goal,
                model=model,
            )
            return self._drive(
                spec,
                workspace,
                run_id,
                goal or spec.goal,
                model,
                log,
                state,
                trigger=trigger,
                seen=seen,
            )

    def resume(self, run_id: str, *, decision: dict[str, Any] | None = None) -> RunResult:
        from langgraph.types import Command

        run = self.store.get_run(run_id)
        if run is None:
            raise NotFound(f"no run {run_id!r}; `squad runs list` lists recent runs")
        if str(run.status) in ("succeeded", "failed", "stopped"):
            raise UsageError(
                f"run {run_id!r} already ended ({run.status}); start a new one with `squad run`"
            )
        spec, workspace = self.squad_of(run.squad)
        require_prices(spec, self.model_factory, override=run.model)
        locks = self.settings.locks_dir
        with run_slot(locks, run.squad, run_id, clock=self._clock):
            if self.owner is not None:
                self.claim(run_id)
            settle_dead_runs(self.store, locks, squad=run.squad, holding=True)
            if not self.has_checkpoint(run_id):
                raise UsageError(no_checkpoint(run_id, self.settings.home, self.checkpoints))
            command: Any = Command(resume=decision) if decision is not None else None
            self.commits.begin(run.squad, workspace, run_id)
            seen = SeenSecrets()  # those of the run before the resume are gone with it
            with RunLog(workspace, run_id, clock=self._clock, known=seen) as log:
                outputs = self.commits.outputs(run, workspace, log)
                log.emit("run_resume", decision=decision)
                return self._drive(
                    spec,
                    workspace,
                    run_id,
                    run.goal or spec.goal,
                    run.model,
                    log,
                    command,
                    trigger=run.trigger,
                    resumed=True,
                    outputs=outputs,
                    seen=seen,
                )

    def has_checkpoint(self, run_id: str) -> bool:
        """Whether the run reached its first checkpoint (a resume then has something to do)."""
        with self._graph_for(run_id) as (app, config):
            return bool(app.get_state(config).values)

    def pending_approval(self, run_id: str) -> str | None:
        """The task a paused run waits on, if any."""
        with self._graph_for(run_id) as (app, config):
            return awaited_task(app, config)

    def approve(self, run_id: str, task: str, *, approved: bool, reason: str = "") -> RunResult:
        waiting = self.pending_approval(run_id)
        if waiting is None:
            raise UsageError(f"run {run_id!r} is not waiting for an approval")
        if waiting != task:
            raise UsageError(f"run {run_id!r} waits for task {waiting!r}, not {task!r}")
        kept = redact(reason)[0]  # the checkpoint keeps it, and a rejection's feedback
        return self.resume(run_id, decision={"approved": approved, "reason": kept})

    def squad_of(self, squad: str) -> tuple[SquadSpec, Path]:
        """A squad's definition (from its workspace manifest) and workspace folder."""
        return self._find_squad(squad)

    def _graph_for(
        self, run_id: str, executor: RunExecutor | None = None, spec: SquadSpec | None = None
    ) -> AbstractContextManager[tuple[Any, dict[str, Any]]]:
        return run_graph(self.checkpoints, self._fence_of(run_id), run_id, executor, spec)

    def _drive(
        self,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        goal: str,
        model: str | None,
        log: RunLog,
        payload: Any,
        *,
        trigger: str,
        resumed: bool = False,
        outputs: str = "tasks",
        seen: SeenSecrets | None = None,
    ) -> RunResult:
        """Run the graph with the squad's MCP servers up (when it has any) until it stops,
        in the run's span (``invoke_workflow {squad}``); the run's task outputs go to the
        folder ``outputs``."""
        seen = seen if seen is not None else SeenSecrets()
        attributes = run_attributes(spec, run_id, trigger=trigger, resumed=resumed)
        with self.telemetry.span(run_span_name(spec), attributes) as span:
            try:
                mcp = McpTools.start(
                    spec,
                    workspace,
                    run_id,
                    log.emit,
                    progress=self._progress,
                    known=seen,
                )
            except BaseException as exc:  # Ctrl-C while servers start: resumable, like a step
                self._record_broken(run_id, log, exc)
                raise
            try:
                result = self._drive_graph(
                    spec, workspace, run_id, goal, model, log, payload, mcp, span, outputs, seen
                )
            finally:
                # The stop belonged to this run: asked at any moment before or during it,
                # it stopped it; the runner's next run (an approval's) starts clean.
                self.stop.clear()
                if mcp is not None:
                    mcp.close()
            usage = Usage(result.prompt_tokens, result.completion_tokens, result.cost_usd)
            run_ended(span, result.status, result.error, turns=result.turns, usage=usage)
            return result

    def _drive_graph(
        self,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        goal: str,
        model: str | None,
        log: RunLog,
        payload: Any,
        mcp: McpTools | None,
        span: Span,
        outputs: str = "tasks",
        seen: SeenSecrets | None = None,
    ) -> RunResult:
        from squad.store.records import RunStatus

        spent = self.store.spend.of_squad(spec.name).cost_usd
        record = self.store.get_run(run_id)
        budget = RunBudget(
            spec.limits.max_turns, spec.limits.max_cost_usd, spent, turns=turns_so_far(record)
        )
        executor = RunExecutor(
            spec=spec,
            workspace=workspace,
            run_id=run_id,
            goal=goal,
            store=self.store,
            memory=self.memory,
            log=log,
            budget=budget,
            model_factory=self.model_factory,
            model_override=model,
            stop=self.stop,
            progress=self._progress,
            clock=self._clock,
            on_replies=self.extraction.notify,
            mcp=mcp,
            decisions=self.decisions,
            task_slots=self.task_slots,
            telemetry=self.telemetry,
            trace_parent=span,
            outputs=outputs,
            epoch=self._epoch(run_id),
            seen=seen,
            ahead=self.commits.ahead(spec.name, workspace),
        )
        self.store.update_run(run_id, status=RunStatus.RUNNING, epoch=self._epoch(run_id))
        with self._graph_for(run_id, executor, spec) as (app, config):
            executor.tasks = known_tasks(app, config, payload)
            executor.working.begin()
            try:
                result = invoke(app, payload, config, executor)
            except OSError as exc:
                # A full disk or a vanished folder: the step did not finish, so its
                # checkpoint was not written and a resume redoes exactly that step.
                reason = exc.strerror or str(exc)
                self.store.update_run(
                    run_id,
                    status=RunStatus.INTERRUPTED,
                    error=f"cannot write: {reason}",
                    epoch=self._epoch(run_id),
                )
                raise WorkspaceError(
                    f"run {run_id} stopped: cannot write to the workspace ({reason}); "
                    f"fix that, then `squad resume {run_id}`"
                ) from None
            except RunFenced as exc:
                # Another node claimed the run: it is theirs now. Nothing is marked here,
                # neither the store (it would refuse) nor the history; the log says why.
                log.emit("run_fenced", epoch=exc.epoch, error=str(exc))
                raise
            except (RunInterrupted, KeyboardInterrupt, CancelledError):
                self.store.run_state.check_fence(run_id, self._epoch(run_id))
                commit = self.commits.commit(
                    spec,
                    workspace,
                    run_id,
                    outputs,
                    log,
                    status=RunStatus.INTERRUPTED.value,
                    spend=self.store.spend.of_run(run_id),
                )
                earlier = self.store.get_run(run_id)
                self.store.update_run(
                    run_id,
                    status=RunStatus.INTERRUPTED,
                    error="interrupted; `squad resume` continues it",
                    summary={**((earlier and earlier.summary) or {}), "turns": budget.turns},
                    epoch=self._epoch(run_id),
                )
                log.emit("run_end", status="interrupted", commit=commit)
                self._progress("interrupted: the run stops at its last checkpoint")
                return result_of(self.store, run_id, spec, workspace, "interrupted", budget)
            except self.checkpoints.backend_errors() as exc:
                self._record_broken(run_id, log, exc)
                reason = (
                    str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                )
                raise StoreError(
                    f"run {run_id} stopped: its checkpoint could not be written to "
                    f"{self.checkpoints.where} ({reason}); when the database is back, "
                    f"`squad resume {run_id}` continues it"
                ) from None
            except BaseException as exc:
                # Whatever ends this process or thread mid-step (a store that went away, a
                # bug, SystemExit) must not leave the run `running` behind it: the step's
                # checkpoint was not written, so a resume redoes exactly that step.
                self._record_broken(run_id, log, exc)
                raise
        return self._finish(run_id, spec, workspace, result, budget, log, outputs, executor)

    def _record_broken(self, run_id: str, log: RunLog, exc: BaseException) -> None:
        from squad.store.records import RunStatus

        reason = str(exc) or type(exc).__name__
        error = f"stopped by an error: {reason}; fix it, then `squad resume {run_id}`"
        try:
            log.emit("run_end", status="interrupted", error=error)
            self.store.update_run(
                run_id, status=RunStatus.INTERRUPTED, error=error, epoch=self._epoch(run_id)
            )
        except Exception:  # noqa: BLE001 - the original error is the one to report
            pass  # still `running` in a store we cannot reach: settle_dead_runs fixes it

    def _finish(
        self,
        run_id: str,
        spec: SquadSpec,
        workspace: Path,
        result: dict[str, Any],
        budget: RunBudget,
        log: RunLog,
        outputs: str,
        executor: RunExecutor,
    ) -> RunResult:
        from squad.store.records import RunStatus

        end = run_end(result)
        status, error, awaiting, tasks = end.status, end.error, end.awaiting, end.tasks
        totals = self.store.spend.of_run(run_id)
        summary = {
            "tasks": tasks,
            "awaiting": awaiting,
            "stopped": result.get("stopped"),
            "turns": budget.turns,
        }
        # Committed before the store says how the run ended: whoever sees it ended finds its
        # commit. A kill in between leaves the run `running`, settled `interrupted`; its
        # resume finds the graph done and ends it again, with a second commit. A node whose
        # claim was superseded commits nothing (the store would refuse its end anyway).
        self.store.run_state.check_fence(run_id, self._epoch(run_id))
        if status is not RunStatus.AWAITING_APPROVAL:
            executor.working.end(status.value)  # in the daily log before the run's commit
        # One end time for the commit and the store: `squad runs` (from the history) and
        # `squad status` (from the store) then show the same duration.
        ended = self._clock() if status.is_terminal else None
        commit = self.commits.commit(
            spec,
            workspace,
            run_id,
            outputs,
            log,
            status=status.value,
            spend=totals,
            tasks=tasks,
            ended_at=ended,
        )
        record = self.store.update_run(
            run_id,
            status=status,
            ended_at=ended,
            error=error,
            tokens_in=totals.prompt_tokens,
            tokens_out=totals.completion_tokens,
            cost_usd=totals.cost_usd,
            summary=summary,
            epoch=self._epoch(run_id),
        )
        log.emit(
            "run_end",
            status=status.value,
            error=error,
            tasks=tasks,
            prompt_tokens=totals.prompt_tokens,
            completion_tokens=totals.completion_tokens,
            cost_usd=totals.cost_usd,
            commit=commit,
        )
        return result_of(
            self.store,
            run_id,
            spec,
            workspace,
            status.value,
            budget,
            tasks=tasks,
            error=error,
            awaiting=awaiting,
            totals=totals,
            record=record,
        )
