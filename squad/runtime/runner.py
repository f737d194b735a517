"""Runs of squads: start, resume after a crash, approve or reject a paused task.

A run is a LangGraph thread (thread id = run id) checkpointed durably through
:mod:`squad.checkpoints` (beside a SQLite store, or in the Postgres store's database), so
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from squad.clock import Clock, utc_now
from squad.errors import NotFound, RunFenced, StoreError, UsageError, WorkspaceError
from squad.memory.decisions import DecisionLog
from squad.model.factory import ModelFactory, model_for
from squad.model.types import Usage
from squad.runtime.executor import RunExecutor, RunInterrupted
from squad.runtime.graph import build_graph
from squad.runtime.limits import RunBudget
from squad.runtime.mcp_tools import McpTools
from squad.runtime.prices import require_prices
from squad.runtime.runlock import run_slot, settle_dead_runs
from squad.runtime.runlog import RunLog
from squad.runtime.steps import RunState, nodes_of, state_outcome
from squad.runtime.tasks import RunOutcome, TaskNode
from squad.runtime.tracing import run_attributes, run_ended, run_span_name
from squad.spec.models import SquadSpec
from squad.telemetry import NO_TELEMETRY, Span, Telemetry
from squad.text.secrets import SeenSecrets, redact

if TYPE_CHECKING:
    from squad.checkpoints import Checkpoints
    from squad.checkpoints.base import Fence
    from squad.extraction.background import BackgroundExtractor
    from squad.history.history import History
    from squad.memory.service import HistoryFactory, MemoryService
    from squad.settings import Settings
    from squad.store import SpendTotals, Store

__all__ = ["RunResult", "SquadRunner"]

FindSquad = Callable[[str], tuple[SquadSpec, Path]]
"""A squad's definition and workspace folder by name (``SquadManager.definition``)."""


@dataclass(frozen=True)
class RunResult:
    run_id: str
    squad: str
    status: str
    workspace: Path
    tasks: dict[str, str] = field(default_factory=dict)
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    awaiting: str | None = None
    """The task waiting for approval, when the run is paused."""

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["workspace"] = str(self.workspace)
        return data


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
        self._histories = history
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
        """Set it (from a signal handler) to stop after the current step's checkpoint."""
        self.telemetry = telemetry
        """Where the spans of runs and their turns go (the app's; off by default)."""
        self.owner: str | None = None
        """The cluster node this runner works for (None outside a cluster): the runs it
        starts are claimed for it (:meth:`claim`), and their writes are fenced."""
        self.job: str | None = None
        """The cluster job this runner works for: a run it claims names that job."""
        self.fence: Fence | None = None
        """This runner's claim of a run: the store and checkpoint writes of that run carry
        its epoch and are refused once another node claims the run."""

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
        epoch = self.store.runs.claim(run_id, self.owner, job=self.job)
        self.fence = Fence(run_id, epoch)
        return epoch

    def _epoch(self, run_id: str) -> int | None:
        fence = self.fence
        return fence.epoch if fence is not None and fence.run_id == run_id else None

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
            with self._graph_for(run_id) as (app, config):
                if app.get_state(config).values:
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
        self._begin(spec.name, workspace, run_id)
        state: RunState = {"tasks": [], "status": {}}
        if spec.process == "sequential":
            nodes = [
                TaskNode(
                    t.id, t.agent, tuple(t.depends_on), t.description, t.approval, t.expected_output
                )
                for t in spec.tasks
            ]
            state = {
                "tasks": [asdict(n) for n in nodes],
                "status": {n.id: "pending" for n in nodes},
            }
        seen = SeenSecrets()
        if goal or spec.goal:
            seen.learn(goal or spec.goal)
        with RunLog(workspace, run_id, clock=self._clock, known=seen) as log:
            log.emit(
                "run_start",
                squad=spec.name,
                process=spec.process,
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
            with self._graph_for(run_id) as (app, config):
                if not app.get_state(config).values:
                    raise UsageError(self._no_checkpoint(run_id))
            command: Any = Command(resume=decision) if decision is not None else None
            self._begin(run.squad, workspace, run_id)
            seen = SeenSecrets()  # those of the run before the resume are gone with it
            with RunLog(workspace, run_id, clock=self._clock, known=seen) as log:
                outputs = self._outputs(run, workspace, log)
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
            snapshot = app.get_state(config)
            for item in snapshot.interrupts:
                if isinstance(item.value, dict):
                    return str(item.value.get("task"))
        return None

    def approve(self, run_id: str, task: str, *, approved: bool, reason: str = "") -> RunResult:
        waiting = self.pending_approval(run_id)
        if waiting is None:
            raise UsageError(f"run {run_id!r} is not waiting for an approval")
        if waiting != task:
            raise UsageError(f"run {run_id!r} waits for task {waiting!r}, not {task!r}")
        kept = redact(reason)[0]  # the checkpoint keeps it, and a rejection's feedback
        return self.resume(run_id, decision={"approved": approved, "reason": kept})

    # -- internals -------------------------------------------------------------------------

    def squad_of(self, squad: str) -> tuple[SquadSpec, Path]:
        """A squad's definition (from its workspace manifest) and workspace folder."""
        return self._find_squad(squad)

    def _no_checkpoint(self, run_id: str) -> str:
        from squad.checkpoints import left_behind

        kept = left_behind(self.settings.home, self.checkpoints)
        if kept is not None and run_id in kept.runs:
            return (
                f"run {run_id!r} has no checkpoint in {self.checkpoints.where}: {kept.describe()}; "
                "point database_url back at SQLite to resume it, or start a new run"
            )
        return (
            f"run {run_id!r} has no checkpoint (it stopped before its first step); "
            "start a new one with `squad run`"
        )

    @contextmanager
    def _graph_for(
        self, run_id: str, executor: RunExecutor | None = None, spec: SquadSpec | None = None
    ) -> Iterator[tuple[Any, dict[str, Any]]]:
        hierarchical = spec is not None and spec.process == "hierarchical"
        rounds = spec.limits.max_rounds if spec is not None else 1
        parallel = spec.limits.max_parallel if spec is not None else 1
        graph = build_graph(
            executor or _NoExecutor(),
            hierarchical=hierarchical,
            max_rounds=rounds,
            max_parallel=parallel,
        )
        with self.checkpoints.saver(self._fence_of(run_id)) as saver:
            app = graph.compile(checkpointer=saver)
            config = {
                "configurable": {"thread_id": run_id},
                "recursion_limit": 10_000,
                "max_concurrency": parallel,
            }
            yield app, config

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

        self.stop.clear()
        spent = self.store.runs.spent(spec.name).cost_usd
        budget = RunBudget(spec.limits.max_turns, spec.limits.max_cost_usd, spent)
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
        )
        self.store.update_run(run_id, status=RunStatus.RUNNING, epoch=self._epoch(run_id))
        with self._graph_for(run_id, executor, spec) as (app, config):
            executor.tasks = _known_tasks(app, config, payload)
            executor.working.begin()
            try:
                result = self._invoke(app, payload, config, executor)
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
                self.store.runs.check_fence(run_id, self._epoch(run_id))
                commit = self._commit(
                    spec,
                    workspace,
                    run_id,
                    outputs,
                    log,
                    status=RunStatus.INTERRUPTED.value,
                    spend=self.store.runs.run_spend(run_id),
                )
                self.store.update_run(
                    run_id,
                    status=RunStatus.INTERRUPTED,
                    error="interrupted; `squad resume` continues it",
                    epoch=self._epoch(run_id),
                )
                log.emit("run_end", status="interrupted", commit=commit)
                self._progress("interrupted: the run stops at its last checkpoint")
                return self._result(run_id, spec, workspace, "interrupted", budget)
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

    @staticmethod
    def _invoke(app: Any, payload: Any, config: dict[str, Any], executor: RunExecutor) -> Any:
        try:
            return app.invoke(payload, config, durability="sync")
        except BaseException:
            executor.flush("record the spend of an unfinished step", aborted=True)
            raise

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

        awaiting = None
        error = result.get("error")
        tasks = dict(result.get("status", {}))
        if result.get("__interrupt__"):
            status = RunStatus.AWAITING_APPROVAL
            awaiting = str(result["__interrupt__"][0].value.get("task"))
            # The interrupted step never returned, so the state still says pending.
            tasks[awaiting] = "awaiting_approval"
            error = None
        elif result.get("stopped") == "plan_failed":
            status = RunStatus.FAILED
        elif result.get("stopped"):
            status = RunStatus.STOPPED
        else:
            outcome = (
                state_outcome(cast(RunState, result))
                if result.get("tasks")
                else RunOutcome.SUCCEEDED
            )
            status = RunStatus.SUCCEEDED if outcome == RunOutcome.SUCCEEDED else RunStatus.FAILED
            if status == RunStatus.FAILED and not error:
                failed = [k for k, v in result.get("status", {}).items() if v == "failed"]
                error = f"failed tasks: {', '.join(failed)}"
        totals = self.store.runs.run_spend(run_id)
        summary = {
            "tasks": tasks,
            "awaiting": awaiting,
            "stopped": result.get("stopped"),
        }
        # Committed before the store says how the run ended: whoever sees it ended finds its
        # commit. A kill in between leaves the run `running`, settled `interrupted`; its
        # resume finds the graph done and ends it again, with a second commit. A node whose
        # claim was superseded commits nothing (the store would refuse its end anyway).
        self.store.runs.check_fence(run_id, self._epoch(run_id))
        if status is not RunStatus.AWAITING_APPROVAL:
            executor.working.end(status.value)  # in the daily log before the run's commit
        commit = self._commit(
            spec, workspace, run_id, outputs, log, status=status.value, spend=totals, tasks=tasks
        )
        self.store.update_run(
            run_id,
            status=status,
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
        return self._result(
            run_id,
            spec,
            workspace,
            status.value,
            budget,
            tasks=tasks,
            error=error,
            awaiting=awaiting,
        )

    # -- history ---------------------------------------------------------------------------

    def _history(self, squad: str, workspace: Path) -> History | None:
        if self._histories is None:
            return None
        history = self._histories(workspace, squad)
        return history if history.enabled else None

    def _begin(self, squad: str, workspace: Path, run_id: str) -> None:
        """Before the run works: earlier changes committed by whoever made them (a person's
        edits as ``unattributed``), and the run marked as the one writing."""
        history = self._history(squad, workspace)
        if history is not None:
            history.begin_run(run_id)

    def _commit(
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
    ) -> str | None:
        """The run's commit as it ends with ``status`` (made before the store records it);
        None when history is off or paused (the run log then says why)."""
        history = self._history(spec.name, workspace)
        if history is None:
            return None
        from squad.history.message import RunNote, TaskNote

        run = self.store.get_run(run_id)
        if run is None:
            return None
        records = {t.task_id: t for t in self.store.runs.tasks(run_id)}
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
            ended_at=self._clock(),
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

    def _outputs(self, run: Any, workspace: Path, log: RunLog) -> str:
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
        history = self._history(run.squad, workspace)
        commit = history.run_commit(run.id) if history is not None else None
        copied = history.restore_tasks(commit, own) if history is not None and commit else []
        log.emit("outputs_redirected", outputs=own, newer_runs=len(newer), restored=copied)
        self._progress(f"newer runs of {run.squad} have finished: this run's outputs go to {own}/")
        (workspace / own).mkdir(parents=True, exist_ok=True)
        return own

    def _result(
        self,
        run_id: str,
        spec: SquadSpec,
        workspace: Path,
        status: str,
        budget: RunBudget,
        *,
        tasks: dict[str, str] | None = None,
        error: str | None = None,
        awaiting: str | None = None,
    ) -> RunResult:
        """The run's result; ``tasks`` default to their states in the store."""
        totals = self.store.runs.run_spend(run_id)
        if tasks is None:
            tasks = {t.task_id: str(t.status) for t in self.store.runs.tasks(run_id)}
        return RunResult(
            run_id,
            spec.name,
            status,
            workspace,
            tasks,
            budget.turns,
            totals.prompt_tokens,
            totals.completion_tokens,
            totals.cost_usd,
            error,
            awaiting,
        )


def _known_tasks(app: Any, config: dict[str, Any], payload: Any) -> list[TaskNode]:
    """The run's tasks as the graph starts: those of the state a new run starts from, else
    of the checkpoint a resume continues (none yet for a squad whose lead has still to plan)."""
    state = payload if isinstance(payload, dict) else app.get_state(config).values
    return nodes_of(cast(RunState, state or {}))


class _NoExecutor:
    """Stands in when the graph is built only to read its state."""

    def plan(self) -> list[Any]:
        raise RuntimeError("read-only graph")

    def execute(self, task: Any, feedback: str | None) -> str:
        raise RuntimeError("read-only graph")

    def review(self, task: Any, output: str) -> tuple[bool, str]:
        raise RuntimeError("read-only graph")

    def task_status(self, task: Any, status: Any, **_: Any) -> None:
        raise RuntimeError("read-only graph")

    def finished(self, task: Any) -> str | None:
        raise RuntimeError("read-only graph")

    def redacted(self, text: str) -> str:
        raise RuntimeError("read-only graph")
