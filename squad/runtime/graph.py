"""The run graph on LangGraph: plan (hierarchical squads), then each task the moment it can run.

``dispatch`` blocks what a failure doomed, starts every task that can run now (up to
``max_parallel``) on a thread of its own (:class:`~squad.runtime.pool.TaskPool`), and returns
as soon as a task that ended lets another start (or leaves the state something to carry: a
failure, a send-back, a stop): the step checkpoints what ended, and the next step starts what
that made ready while the others go on working. A task so waits for its dependencies, never for a
slow sibling to end a LangGraph superstep (LangGraph's ``Send`` fan-out is bulk-synchronous).
A lone task, or one that waits for a person, runs inside ``dispatch`` itself, so a chain of
tasks checkpoints once per task. Each task's result reaches the checkpointer (durable mode) the
step after it ends; the store's record of a finished task covers the instant between its end
and that write (:meth:`Executor.finished`), so a run killed at any moment resumes only the
unfinished tasks and no finished task is ever redone. A task that needs approval is asked for
only when no other task runs or can run, and interrupts the graph before any of its side
effects; resuming re-enters that task, which then gets the person's decision.

The nodes here do the I/O (executor calls, threads, the interrupt); :mod:`squad.runtime.steps`
decides what each outcome means for the task, the run and the state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from typing import Annotated, Any, Protocol, TypedDict

from squad.errors import LimitReached, ModelError, PlanError
from squad.runtime.pool import TaskPool
from squad.runtime.steps import (
    RunState,
    Stop,
    TaskResult,
    Transition,
    approval_request,
    batch,
    failed,
    first,
    last_written,
    merged_all,
    more_to_do,
    needs_approval,
    plan_stop,
    plan_update,
    raw_statuses,
    read_decision,
    rejected,
    reviewed,
    schedule,
    settled,
    step_update,
    stopped_reviewing,
    stopped_running,
    task_nodes,
)
from squad.runtime.tasks import TaskNode, TaskStatus

__all__ = ["Executor", "HeadStart", "build_graph", "channels", "graph_and_head_start"]


class Executor(Protocol):
    """What the graph asks of the runtime; all side effects live behind it."""

    def plan(self) -> list[TaskNode]: ...

    def execute(self, task: TaskNode, feedback: str | None) -> str:
        """Do the task; return the workspace path of its output."""
        ...

    def review(self, task: TaskNode, output: str) -> tuple[bool, str]:
        """(approved, feedback) from the reviewer, or (True, '') when there is none."""
        ...

    def task_status(
        self,
        task: TaskNode,
        status: TaskStatus,
        *,
        error: str | None = None,
        output: str | None = None,
        rounds: int = 0,
    ) -> None: ...

    def finished(self, task: TaskNode) -> str | None:
        """The output of ``task`` when the store already records it done in this run (its
        checkpoint write was lost to a kill), else None."""
        ...

    def redacted(self, text: str) -> str:
        """``text`` with credentials redacted, the values the run has found included."""
        ...


def build_graph(
    executor: Executor,
    *,
    hierarchical: bool,
    max_rounds: int,
    max_parallel: int = 1,
    pool: TaskPool[TaskResult] | None = None,
) -> Any:
    """An uncompiled LangGraph ``StateGraph`` for one run (compile with a checkpointer).

    ``pool`` holds the run's tasks at work between steps: whoever drives the graph closes it
    (:meth:`TaskPool.close`) when the graph stops by an error, so no task outlives the run."""
    graph, _ = graph_and_head_start(
        executor,
        hierarchical=hierarchical,
        max_rounds=max_rounds,
        max_parallel=max_parallel,
        pool=pool,
    )
    return graph


HeadStart = Callable[[RunState], None]
"""Starts the tasks a new run's state can run at once on the run's pool, before the graph
writes its first checkpoints; its first step finds them at work and waits for them."""


def graph_and_head_start(
    executor: Executor,
    *,
    hierarchical: bool,
    max_rounds: int,
    max_parallel: int = 1,
    pool: TaskPool[TaskResult] | None = None,
) -> tuple[Any, HeadStart]:
    """:func:`build_graph`, and its :data:`HeadStart`: a new run's first model calls need
    not wait for the graph's first checkpoints (the input and the first step's), since a
    task's ``done`` is the store's to tell until its step is checkpointed, as for any task at
    work (:meth:`Executor.finished`); a run killed before its first checkpoint is started over
    (``SquadRunner.start_over``), which takes the same record."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    at_work: TaskPool[TaskResult] = pool if pool is not None else TaskPool()

    def said(exc: BaseException) -> str:
        """An error's message as the state keeps it: a provider's message can quote what the
        run was told, credentials the run found included."""
        return executor.redacted(str(exc))

    def report(change: Transition) -> None:
        executor.task_status(
            change.task,
            change.status,
            error=change.error,
            output=change.output,
            rounds=change.rounds,
        )

    def plan(state: RunState) -> RunState:
        if state.get("planned"):
            return {}
        try:
            return plan_update(executor.plan())
        except (PlanError, ModelError) as exc:
            return plan_stop(Stop("plan_failed", said(exc)))
        except LimitReached as exc:
            return plan_stop(Stop(exc.kind, str(exc)))

    def dispatch(state: RunState) -> RunState:
        """Block what a failure doomed; start what can run; return what ended first."""
        todo = schedule(task_nodes(state), raw_statuses(state))
        for change in todo.blocked:
            report(change)
        if todo.blocked:
            return step_update(todo.blocked)
        if state.get("stopped"):  # nothing is left at work: a stop waits for every task
            return step_update((), [result for _, result in at_work.rest()])
        approvals = state.get("approvals") or {}
        waiting = [t for t in todo.ready if t.id not in at_work.running]
        results: list[TaskResult] = []
        if not at_work.running:
            alone = batch(waiting, approvals, max_parallel)
            if not alone:
                return {}
            if len(alone) == 1:  # nothing can become ready meanwhile: run it right here
                results.append(run_task(alone[0], state))
                start_next(state, results)
                return step_update((), results)
        start(state, waiting)
        while True:
            results += [result for _, result in at_work.next()]
            if any(result.stop is not None for result in results):
                results += [result for _, result in at_work.rest()]  # the run stops: let them end
                break
            if not keep_waiting(state, results):
                break
        start_next(state, results)
        return step_update((), results)

    def start(state: RunState, ready: Sequence[TaskNode]) -> None:
        """Start on the pool the ready tasks that need no person, up to ``max_parallel``."""
        approvals = state.get("approvals") or {}
        free = [
            t for t in ready if t.id not in at_work.running and not needs_approval(t, approvals)
        ]
        for node in free[: max(max_parallel, 1) - len(at_work.running)]:
            view = _task_input(node, state)["view"]
            at_work.start(node.id, functools.partial(run_task, node, view))

    def start_next(state: RunState, ended: list[TaskResult]) -> None:
        """Start what the tasks that just ended made ready, before their step checkpoints:
        the next task's model call overlaps that write instead of waiting for it. Only when
        every one ended done with nothing else for the state (no failure to block from, no
        send-back, no stop, no decision): its ``done`` is in the store already, which is what
        a resume takes (:meth:`Executor.finished`) if a kill comes before the checkpoint."""
        if not ended or not all(settled(result) for result in ended):
            return
        now = {**raw_statuses(state), **{r.task.id: TaskStatus.DONE.value for r in ended}}
        start(state, schedule(task_nodes(state), now).ready)

    def keep_waiting(state: RunState, ended: list[TaskResult]) -> bool:
        """Whether the step may wait for the next task to end before it checkpoints these:
        only while others work, every one that ended is done (nothing to block, nothing sent
        back) and what they made ready could not start now anyway. A wide fan-out so ends in
        one checkpoint, not one per task; a done task waiting here is the store's to tell on
        resume (:meth:`Executor.finished`), as in the instant before any checkpoint."""
        if not at_work.running or not all(settled(result) for result in ended):
            return False
        if len(at_work.running) >= max(max_parallel, 1):
            return True
        now = {**raw_statuses(state), **{r.task.id: TaskStatus.DONE.value for r in ended}}
        approvals = state.get("approvals") or {}
        ready = schedule(task_nodes(state), now).ready
        return not any(
            t.id not in at_work.running and not needs_approval(t, approvals) for t in ready
        )

    def route(state: RunState) -> str:
        return "dispatch" if at_work.running or more_to_do(state) else END

    def task(given: dict[str, Any]) -> RunState:
        """A task a checkpoint of the earlier, bulk-synchronous graph sent (``Send``) and that
        had not ended: it runs as it would have then."""
        node = TaskNode(**{**given["task"], "depends_on": tuple(given["task"]["depends_on"])})
        return step_update((), [run_task(node, given["view"])])

    def run_task(node: TaskNode, view: RunState) -> TaskResult:
        output = executor.finished(node)
        if output is not None:  # done before a kill took its checkpoint write
            return TaskResult(node, Transition(node, TaskStatus.DONE), output)
        return attempt(node, view)

    def attempt(task: TaskNode, state: RunState) -> TaskResult:
        """One task's turn: a person's decision when it needs one, then the work, reported."""
        decision = None
        if needs_approval(task, state.get("approvals") or {}):
            report(Transition(task, TaskStatus.AWAITING_APPROVAL))
            decision = read_decision(interrupt(approval_request(task)))
        if decision is not None and not decision.approved:
            result = rejected(task, decision)
        else:
            result = work(task, state)
        if result.report is not None:
            report(result.report)
        return replace(result, decision=decision)

    def work(task: TaskNode, state: RunState) -> TaskResult:
        rounds = (state.get("rounds") or {}).get(task.id, 0)
        report(Transition(task, TaskStatus.RUNNING, rounds=rounds))
        try:
            output = executor.execute(task, (state.get("feedback") or {}).get(task.id))
        except ModelError as exc:
            return failed(task, said(exc))
        except LimitReached as exc:
            return stopped_running(task, Stop(exc.kind, str(exc)))
        try:
            verdict = executor.review(task, output) if hierarchical else (True, "")
        except ModelError as exc:
            verdict = (False, f"the review failed: {said(exc)}")
        except LimitReached as exc:
            return stopped_reviewing(task, output, Stop(exc.kind, str(exc)))
        return reviewed(task, output, verdict, rounds=rounds, max_rounds=max_rounds)

    schema = channels()
    graph = StateGraph(schema)
    graph.add_node("plan", plan, input_schema=schema)  # not RunState, their annotation
    graph.add_node("dispatch", dispatch, input_schema=schema)
    graph.add_node("task", task)  # type: ignore[arg-type]  # its input is the Send's, not the state
    if hierarchical:
        graph.add_edge(START, "plan")
        graph.add_conditional_edges("plan", lambda s: END if s.get("stopped") else "dispatch")
    else:
        graph.add_edge(START, "dispatch")
    # a lambda: LangGraph would read route's RunState annotation as channels of another kind
    graph.add_conditional_edges("dispatch", lambda s: route(s), ["dispatch", END])
    graph.add_edge("task", "dispatch")

    def head_start(state: RunState) -> None:
        if state.get("tasks") and not state.get("stopped"):
            start(state, schedule(task_nodes(state), raw_statuses(state)).ready)

    return graph, head_start


@functools.cache
def channels() -> Any:
    """The graph's state schema: :class:`~squad.runtime.steps.RunState`'s keys as LangGraph
    channels, each checkpoint costing the same however long the plan.

    The task list and the per-task dicts are ``DeltaChannel``s: a checkpoint stores only what
    its step wrote to them (the step's pending writes, saved anyway), and every
    ``SNAPSHOT_EVERY`` writes their whole value; LangGraph rebuilds them on load from the last
    snapshot and the writes after it. Before, every checkpoint carried every task's record
    (27 KB a step at 200 tasks). A checkpoint written before keeps them whole in its values,
    which a ``DeltaChannel`` reads as they are, so a run paused or interrupted then resumes."""
    from langgraph.channels import DeltaChannel

    def delta(reducer: Any, every: int = SNAPSHOT_EVERY) -> Any:
        return DeltaChannel(reducer, snapshot_frequency=every)

    schema: Any = TypedDict  # built here: the channels' annotations are objects, not types
    return schema(
        "RunChannels",
        {
            "tasks": Annotated[list[dict[str, Any]], delta(last_written, 1)],
            "status": Annotated[dict[str, str], delta(merged_all)],
            "outputs": Annotated[dict[str, str], delta(merged_all)],
            "rounds": Annotated[dict[str, int], delta(merged_all)],
            "feedback": Annotated[dict[str, str], delta(merged_all)],
            "approvals": Annotated[dict[str, str], delta(merged_all)],
            "planned": bool,
            "stopped": Annotated[str | None, first],
            "error": Annotated[str | None, first],
        },
        total=False,
    )


SNAPSHOT_EVERY = 100
"""Writes to a per-task channel between two checkpoints that store its whole value: a load
replays at most this many steps' writes."""


def _task_input(task: TaskNode, state: RunState) -> dict[str, Any]:
    """What a task's node is sent: the task, and its own part of the state."""
    view: dict[str, Any] = {}
    parts: dict[str, Any] = {
        "approvals": state.get("approvals"),
        "rounds": state.get("rounds"),
        "feedback": state.get("feedback"),
    }
    for key, values in parts.items():
        if values and task.id in values:
            view[key] = {task.id: values[task.id]}
    return {"task": asdict(task), "view": view}
