"""The run executor: what a graph step does to the world (model turns, files, store, log).

It implements :class:`squad.runtime.graph.Executor` for one run of one squad: task prompts,
the plan of a hierarchical squad, reviews, task status in the store and in
``tasks/<task-id>/status.json``, the run log and the spend ledger.

A turn costs one store transaction: its messages, spend and outcome land together at its end,
with its ``running`` record unless the turn lasted long enough for that to be written on its
own (:mod:`squad.runtime.running_notice`). Its ``output.md`` is written before that
transaction (so a kill at any moment leaves the output of every task the store says is done:
the page cache survives a process) and fsynced on a thread of its own while the transaction
commits; the turn waits for both before the graph checkpoints it.

Credentials: every message of the run (task prompts, replies, tool results) is stored
redacted (:class:`~squad.store.conversation.ConversationStore`), and the run keeps in memory
(:attr:`RunExecutor.seen`, never written) the values its messages carried, so a reply that
repeats one is redacted too wherever it lands: the stored conversation, the run log, a task's
``output.md``, the plan file, the tasks, review feedback and errors the checkpoints keep,
working memory, and the memory tools (which refuse the write). Files an agent writes with its
file tool are its deliverables and are kept as written; the workspace's history leaves out any
that holds a credential (:mod:`squad.history.staging`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.clock import Clock, utc_now
from squad.errors import LimitReached, ModelError, SquadError
from squad.fsutil import durable_later, new_file_over, rewrite_in_place
from squad.memory.agent import AgentContext
from squad.memory.decisions.log import DecisionLog
from squad.memory.service import MemoryService
from squad.model.factory import ModelFactory
from squad.model.types import ChatModel, ModelEvent
from squad.paths import contained
from squad.runtime.agent import run_turn
from squad.runtime.builtin_tools import builtin_tools
from squad.runtime.files_tool import WorkspaceFiles
from squad.runtime.lead_plan import LeadPlanner
from squad.runtime.limits import RunBudget
from squad.runtime.mcp_client.journal import turn_identity
from squad.runtime.mcp_client.tools import McpTools
from squad.runtime.recorder import TurnRecorder
from squad.runtime.runlog import RunLog
from squad.runtime.running_notice import RunningNotices, StoreWrite
from squad.runtime.step_journal import StepJournal
from squad.runtime.steps import approves
from squad.runtime.tasks import TaskNode, TaskStatus
from squad.runtime.tools import Tool
from squad.runtime.tracing import NO_TRACE, TurnTrace, model_attributes
from squad.runtime.working import RunWorkingMemory
from squad.spec.models import ModelSpec, SquadSpec
from squad.store.records import RunStatus as StoreRunStatus
from squad.store.records import TaskStatus as StoreTaskStatus
from squad.telemetry import NO_TELEMETRY, Span, Telemetry
from squad.text.secrets import SeenSecrets, redact

if TYPE_CHECKING:
    from squad.runtime.graph import HeadStart
    from squad.store import Store

__all__ = ["RunExecutor", "RunInterrupted"]
CONTEXT_CHARS = 4000
DEFAULT_CALL_TIMEOUT_S = 120.0


class RunInterrupted(BaseException):
    """A stop was requested (SIGTERM, Ctrl-C): leave at a checkpoint, resumable."""


class RunExecutor:
    """Side effects of one run; built by the runner, handed to the graph."""

    def __init__(
        self,
        *,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        goal: str,
        store: Store,
        memory: MemoryService,
        log: RunLog,
        budget: RunBudget,
        model_factory: ModelFactory,
        model_override: str | None = None,
        stop: threading.Event | None = None,
        progress: Callable[[str], None] | None = None,
        clock: Clock = utc_now,
        on_replies: Callable[[AgentContext, int], None] | None = None,
        mcp: McpTools | None = None,
        decisions: DecisionLog | None = None,
        task_slots: threading.BoundedSemaphore | None = None,
        telemetry: Telemetry = NO_TELEMETRY,
        trace_parent: Span | None = None,
        outputs: str = "tasks",
        epoch: int | None = None,
        seen: SeenSecrets | None = None,
        ahead: Callable[[Path], None] | None = None,
    ) -> None:
        self.spec = spec
        self._ahead = ahead
        """Given a task's folder once it holds the task's outcome: the run's commit's work
        on it done ahead, in the background (:meth:`RunCommits.ahead`); None: no history."""
        self.seen = seen if seen is not None else SeenSecrets()
        """The credential values the run's messages (and goal) carried, in memory only:
        redacted wherever the run writes them again (see the module docstring)."""
        self.epoch = epoch
        """The cluster node's claim of the run (None outside a cluster): every step's store
        writes carry it, and the database refuses them once another node has claimed the run."""
        self.outputs = outputs
        """Where the run's task outputs go: ``tasks``, or ``runs/<run-id>/tasks`` for a run
        approved after newer runs of its squad finished (theirs are kept)."""
        self.workspace = workspace
        self.run_id = run_id
        self.goal = goal
        self.store = store
        self.memory = memory
        self.log = log
        self.budget = budget
        self._factory = model_factory
        self._override = model_override
        self._models: dict[str, ChatModel] = {}
        self._stop = stop or threading.Event()
        self._progress = progress or (lambda _: None)
        self._clock = clock
        self._started = time.monotonic()
        self._last_status: dict[str, TaskStatus] = {}
        self._statuses: dict[str, str] | None = None
        """What the store says of the run's tasks: read once, then kept with each status this
        executor records (the run's only writer while it holds the run)."""
        self._outputs: dict[str, str] = {}
        """The output the store records for each task, read and kept with ``_statuses``."""
        self._running = RunningNotices[StoreWrite]()
        """Each working task's ``running`` record until it is written."""
        self._syncing: dict[str, Callable[[], None]] = {}
        """The wait for each task's ``output.md`` fsync, under way while its outcome commits."""
        self._statuses_lock = threading.Lock()
        self._steps = StepJournal(
            spec,
            workspace,
            run_id,
            store,
            epoch=epoch,
            seen=self.seen,
            on_replies=on_replies or (lambda ctx, replies: None),
        )
        """Each thread's store writes waiting for the end of its step."""
        self._models_lock = threading.Lock()
        self._mcp = mcp
        """The run's MCP servers (None without any): their tools join the built-in ones."""
        self._decisions = decisions or DecisionLog(store, clock=clock)
        self._slots = task_slots
        self._telemetry = telemetry
        self._trace_parent = trace_parent
        """The run's span: every turn's span is its child, on whichever thread it runs."""
        self._planner = LeadPlanner(
            spec=spec,
            goal=goal,
            workspace=workspace,
            log=log,
            turn=self._turn,
            redacted=self.redacted,
            progress=self._progress,
        )
        """The plan of a hierarchical run, asked of the lead (:mod:`squad.runtime.lead_plan`)."""
        self.tasks: list[TaskNode] = []
        """The run's tasks, as far as known: the runner's (from the state it starts or resumes
        from), else the plan's once written. What remains of an agent's work comes from it."""
        self.head_start: HeadStart | None = None
        """Set by :func:`~squad.runtime.run_graph.run_graph`: starts a new run's first tasks
        as its graph writes its first checkpoints; taken by the first invoke."""
        self.working = RunWorkingMemory(
            memory,
            spec,
            workspace,
            run_id,
            log,
            waiting=self._waiting_for_approval,
            known=self.seen,
        )
        """The agents' working memory in this run (:mod:`squad.runtime.working`)."""

    # -- the step's store writes -----------------------------------------------------------

    def journal(self, write: Callable[[Store], object], *, keep_on_abort: bool = False) -> None:
        """Keep a store write for the end of the step (see :meth:`flush`)."""
        self._steps.write(write, keep_on_abort=keep_on_abort)

    def journal_message(self, agent: str, role: str, content: str, tool_name: str | None) -> None:
        """Keep one of the agent's messages for the end of the step; they land in order."""
        self._steps.message(agent, role, content, tool_name)

    def flush(self, action: str = "record a step", *, aborted: bool = False) -> None:
        """Write the step's journal in one transaction (:meth:`StepJournal.flush`)."""
        self._steps.flush(action, aborted=aborted)

    # -- graph protocol --------------------------------------------------------------------

    def plan(self) -> list[TaskNode]:
        self._check_running()
        try:
            self.tasks = self._planner.plan()
            return list(self.tasks)
        finally:
            self.flush("record the plan")

    def execute(self, task: TaskNode, feedback: str | None) -> str:
        with self._slot(), self._aborting(f"task {task.id!r}", task):
            return self._execute(task, feedback)

    def _execute(self, task: TaskNode, feedback: str | None) -> str:
        self._check_running()
        self.log.emit("node_start", node=task.id, agent=task.agent)
        self._progress(f"{task.id}: {task.agent} working")
        self.working.task_started(task, self.tasks or [task], self._stored_statuses())
        text = self._turn(task.agent, self._task_prompt(task, feedback), task_id=task.id)
        text = self.redacted(text)  # the answer is stored so; so is the output read again
        output = self._task_file(task.id, "output.md")
        output.parent.mkdir(parents=True, exist_ok=True)
        # A new file (no rename over the last run's: costly on a busy disk), made durable
        # while the outcome commits (task_status waits for it); the store says done after.
        new_file_over(output, (text.rstrip() + "\n").encode())
        self._syncing[task.id] = durable_later(output)
        relative = f"{self.outputs}/{task.id}/output.md"
        self.log.emit("node_end", node=task.id, agent=task.agent, output=relative)
        return relative

    def review(self, task: TaskNode, output: str) -> tuple[bool, str]:
        with self._slot(), self._aborting(f"the review of {task.id!r}", task):
            try:
                return self._review(task, output)
            except LimitReached:
                # Nothing more is reported of the task: the store says running, as before.
                started = self._running.take(task.id)
                if started is not None:
                    self._show_running(task.id, started)
                self.working.settle(task)
                raise

    def _review(self, task: TaskNode, output: str) -> tuple[bool, str]:
        reviewer = self._reviewer_for(task)
        if reviewer is None:
            return True, ""
        self._check_running()
        if self.outputs != "tasks" and output.startswith("tasks/"):
            output = f"{self.outputs}/{output.removeprefix('tasks/')}"  # its own, not newer runs'
        work = contained(self.workspace, *output.split("/")).read_text(
            encoding="utf-8",
            errors="replace",  # a hand-edited output may hold any bytes
        )
        prompt = (
            f"Review the work for this task.\nTask: {task.description}\n\nWork:\n"
            f"{work[:CONTEXT_CHARS]}\n\nAnswer with 'APPROVED: <why>' or "
            "'CHANGES REQUESTED: <what to fix>'."
        )
        verdict = self.redacted(self._turn(reviewer, prompt, tools=False, task_id=task.id))
        approved = approves(verdict)
        self.log.emit(
            "review", node=task.id, reviewer=reviewer, approved=approved, verdict=verdict[:300]
        )
        self._progress(f"{task.id}: {reviewer} {'approved' if approved else 'sent it back'}")
        return approved, verdict

    def task_status(
        self,
        task: TaskNode,
        status: TaskStatus,
        *,
        error: str | None = None,
        output: str | None = None,
        rounds: int = 0,
    ) -> None:
        unchanged = self._last_status.get(task.id) == status
        self._last_status[task.id] = status
        error = None if error is None else self.redacted(error)

        def write(store: Store) -> object:
            return store.run_state.set_task(
                self.run_id,
                task.id,
                squad=self.spec.name,
                agent=task.agent,
                status=status.value,
                error=error,
                output=output,
                rounds=rounds,
                epoch=self.epoch,
            )

        record = {
            "run_id": self.run_id,
            "task": task.id,
            "agent": task.agent,
            "status": status.value,
            "error": error,
            "output": output,
            "rounds": rounds,
            "updated_at": self._clock().isoformat(),
        }
        if status is TaskStatus.RUNNING:
            self._running.wait(task.id, write, lambda: self._show_running(task.id, write))
        else:
            started = self._running.take(task.id)
            if started is not None:
                self.journal(started)
            self.journal(write)
            synced = self._syncing.pop(task.id, None)
            try:
                self.flush(f"record task {task.id!r}")
            finally:
                if synced is not None:
                    synced()  # output.md durable before the graph checkpoints the task
        # Written at once for ``running`` too: the folder shows a turn under way from its start.
        self._write_status_file(task.id, record)
        with self._statuses_lock:
            if self._statuses is not None:
                self._statuses[task.id] = status.value
                if output is not None:
                    self._outputs[task.id] = output
        self.log.emit("task_status", node=task.id, status=status.value, error=error)
        if not unchanged and status in (
            TaskStatus.DONE,
            TaskStatus.FAILED,
            TaskStatus.BLOCKED,
            TaskStatus.AWAITING_APPROVAL,
        ):
            note = f" ({error})" if error else ""
            self._progress(f"{task.id}: {status.value}{note}")
        if not unchanged:
            self.working.task_ended(task, status, error)

    def finished(self, task: TaskNode) -> str | None:
        with self._statuses_lock:
            status, output = self._load_statuses().get(task.id), self._outputs.get(task.id)
        if status != StoreTaskStatus.DONE or not output or not self._written(output):
            return None
        self.log.emit("node_skip", node=task.id, agent=task.agent, reason="done before a kill")
        return output

    def _written(self, output: str) -> bool:
        """Whether a done task's output file is there: a kill leaves it (it is written before
        the store says done), but a power loss between the store's commit and the file's fsync
        may not, and then the task is done again rather than reported with no output."""
        try:
            return contained(self.workspace, *output.split("/")).stat().st_size > 0
        except (OSError, ValueError):
            return False

    def _show_running(self, task_id: str, write: StoreWrite) -> None:
        """A lasting turn's ``running`` record, written from its notice's thread: a failure
        (a full disk, a run claimed elsewhere) is the turn's own to meet at its end."""
        try:
            with self.store.batch(f"record task {task_id!r} running of run {self.run_id!r}"):
                self.store.run_state.check_fence(self.run_id, self.epoch)
                write(self.store)
        except (SquadError, OSError) as exc:
            self.log.emit("task_status_deferred", node=task_id, error=str(exc))

    def _write_status_file(self, task_id: str, record: dict[str, Any]) -> None:
        path = self._task_file(task_id, "status.json")
        # A view of the store's task state, rewritten at every change: not worth an fsync,
        # a rename or even a new file (fsutil.rewrite_in_place).
        rewrite_in_place(path, (json.dumps(record, indent=2) + "\n").encode())
        if self._ahead is not None and record["status"] != TaskStatus.RUNNING.value:
            self._ahead(path.parent)

    # -- internals -------------------------------------------------------------------------

    def _stored_statuses(self) -> dict[str, str]:
        """The store's status of each task of the run, read from it only the first time (a
        read of every task at each task's start made a long plan's tasks cost more)."""
        with self._statuses_lock:
            return dict(self._load_statuses())

    def _load_statuses(self) -> dict[str, str]:
        """``_statuses``, read from the store the first time (the caller holds the lock)."""
        if self._statuses is None:
            rows = self.store.run_state.tasks(self.run_id)
            self._statuses = {r.task_id: str(r.status) for r in rows}
            self._outputs = {r.task_id: r.output for r in rows if r.output}
        return self._statuses

    def redacted(self, text: str) -> str:
        """``text`` with credentials redacted, and every value the run has found so far."""
        return redact(text, known=self.seen)[0]

    def _waiting_for_approval(self, run_id: str) -> bool:
        run = self.store.get_run(run_id)
        return run is not None and run.status is StoreRunStatus.AWAITING_APPROVAL

    @contextmanager
    def _slot(self) -> Iterator[None]:
        """One of the process's task slots while a task or its review works (a stop asked
        for while waiting for one is honoured)."""
        if self._slots is None:
            yield
            return
        while not self._slots.acquire(timeout=0.2):
            self._check_running()
        try:
            yield
        finally:
            self._slots.release()

    @contextmanager
    def _aborting(self, what: str, task: TaskNode) -> Iterator[None]:
        """Around a task's work on its thread: a step that ends by anything but a model error
        or a limit (a stop, a full disk, a bug) keeps the spend of the calls it made, and
        nothing else, for the redo on resume (which reports the task running again)."""
        try:
            yield
        except (ModelError, LimitReached):
            raise  # the graph turns these into the task's status, messages and all
        except BaseException:
            self.working.settle(task)  # the file says it was at work, as it did before
            started = self._running.take(task.id)
            if started is not None:  # the store says it was running, as it did before
                self.journal(started, keep_on_abort=True)
            synced = self._syncing.pop(task.id, None)
            if synced is not None:
                synced()
            self.flush(f"record the spend of {what}, unfinished", aborted=True)
            raise

    def _check_running(self) -> None:
        if self._stop.is_set():
            raise RunInterrupted
        elapsed = time.monotonic() - self._started
        if elapsed > self.spec.limits.timeout_s:
            raise LimitReached(
                "timeout_s", f"the run passed its {self.spec.limits.timeout_s:.0f}s time limit"
            )

    def model_for(self, agent_id: str) -> tuple[ChatModel, ModelSpec]:
        agent = self.spec.agent(agent_id)
        spec = agent.model or self.spec.model
        if self._override:
            spec = ModelSpec(name=self._override)
        key = spec.model_dump_json()
        with self._models_lock:
            if key not in self._models:
                self._models[key] = self._factory(spec, self._on_event)
            return self._models[key], spec

    def _on_event(self, event: ModelEvent) -> None:
        if event.kind == "load":
            self.log.emit("model_client_wait", model=event.model, wait_s=round(event.latency_s, 3))
        elif event.kind != "call":
            self.log.emit(
                f"model_{event.kind}",
                model=event.model,
                attempt=event.attempt,
                error=event.error,
                status=event.status,
                delay_s=event.delay_s,
            )

    def _turn(
        self,
        agent_id: str,
        prompt: str,
        *,
        tools: bool = True,
        task_id: str | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> str:
        ctx = AgentContext.of(self.spec, agent_id, self.workspace, run_id=self.run_id)
        model, spec = self.model_for(agent_id)
        offered: list[Tool] = []
        if tools:
            files = WorkspaceFiles(
                self.workspace,
                task_id or "notes",
                outputs=self.outputs,
                touched=lambda path: self.working.touched(agent_id, path),
            )
            offered = builtin_tools(self.memory, self._decisions, ctx, files=files, known=self.seen)
        mcp = None
        if tools and self._mcp is not None:
            mcp = self._mcp.for_turn(agent_id, turn_identity(task_id or "-", agent_id, prompt))
            offered += mcp.tools
        system = self.memory.system_prompt(ctx, message=prompt, model=spec)
        result = run_turn(
            model=model,
            system_prompt=system,
            user_message=prompt,
            tools=offered,
            recorder=TurnRecorder(self, agent_id, mcp, task=task_id),
            budget=self.budget,
            timeout_s=spec.timeout_s or DEFAULT_CALL_TIMEOUT_S,
            response_format=response_format,
            trace=self._trace(agent_id, spec, task_id),
        )
        return result.text

    def _trace(self, agent_id: str, spec: ModelSpec, task_id: str | None) -> TurnTrace:
        """Where the turn's spans go: under the run's span, whichever thread the turn is on."""
        if not self._telemetry.enabled:
            return NO_TRACE
        return TurnTrace(
            self._telemetry,
            agent_id,
            model_attributes(spec),
            self._trace_parent,
            {"gen_ai.conversation.id": self.run_id, "squad.task": task_id},
        )

    def _task_prompt(self, task: TaskNode, feedback: str | None) -> str:
        parts = [f"Task: {task.description}"]
        if task.expected_output:
            parts.append(f"Expected output: {task.expected_output}")
        if self.goal:
            parts.append(f"Goal: {self.goal.strip()}")
        for dep in task.depends_on:
            path = self._task_file(dep, "output.md")
            if path.is_file():
                parts.append(
                    f"Work from task {dep} ({self.outputs}/{dep}/output.md):\n"
                    f"{path.read_text(encoding='utf-8', errors='replace')[:CONTEXT_CHARS]}"
                )
        if feedback:
            parts.append(f"Review feedback on your previous attempt: {feedback}")
        parts.append(
            f"Your answer is saved as {self.outputs}/{task.id}/output.md; write the deliverable "
            "itself. Use write_file for extra files."
        )
        return "\n\n".join(parts)

    def _reviewer_for(self, task: TaskNode) -> str | None:
        for agent in self.spec.agents:
            if agent.id == task.agent or agent is self.spec.lead:
                continue
            if "review" in agent.id or "review" in agent.role.lower():
                return agent.id
        return None

    def _task_file(self, task_id: str, name: str) -> Path:
        return contained(self.workspace, *self.outputs.split("/"), task_id, name)
