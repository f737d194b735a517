"""The run graph on LangGraph: plan (hierarchical squads), then the ready tasks, together.

``dispatch`` blocks what a failure doomed and sends every task that can run now (up to
``max_parallel``) to a ``task`` node of its own: they run at once, in one superstep, each on
a thread of LangGraph's pool; a lone ready task runs inside ``dispatch`` itself, so a chain
of tasks checkpoints once per task. Each task's writes reach the checkpointer (durable mode) the
moment it finishes, while its siblings still run, so a run killed mid-step resumes only the
unfinished tasks; the store's record of a finished task covers the instant between its end
and that write (:meth:`Executor.finished`), so no finished task is ever redone. A task that
needs approval waits while other tasks can run, then interrupts the graph before any of its
side effects; resuming re-enters that task, which then gets the person's decision.

The nodes here do the I/O (executor calls, the interrupt); :mod:`squad.runtime.steps` decides
what each outcome means for the task, the run and the state.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, replace
from typing import Annotated, Any, Protocol, TypedDict

from squad.errors import LimitReached, ModelError, PlanError
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
    step_update,
    stopped_reviewing,
    stopped_running,
    task_nodes,
)
from squad.runtime.tasks import TaskNode, TaskStatus

__all__ = ["Executor", "build_graph", "channels"]


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
    executor: Executor, *, hierarchical: bool, max_rounds: int, max_parallel: int = 1
) -> Any:
    """An uncompiled LangGraph ``StateGraph`` for one run (compile with a checkpointer)."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send, interrupt

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

    def chosen(state: RunState) -> list[TaskNode]:
        todo = schedule(task_nodes(state), raw_statuses(state))
        return batch(todo.ready, state.get("approvals") or {}, max_parallel)

    def dispatch(state: RunState) -> RunState:
        """Block what a failure doomed; a batch of one task runs right here, in this step
        (a chain costs one checkpointed step per task, not two)."""
        todo = schedule(task_nodes(state), raw_statuses(state))
        for change in todo.blocked:
            report(change)
        if todo.blocked or state.get("stopped"):
            return step_update(todo.blocked) if todo.blocked else {}
        alone = chosen(state)
        if len(alone) != 1:
            return {}
        return run_one(alone[0], _task_input(alone[0], state)["view"])

    def route(state: RunState) -> list[Any] | str:  # Sends, or a node name
        if not more_to_do(state):
            return END
        if schedule(task_nodes(state), raw_statuses(state)).blocked:
            return "dispatch"
        together = chosen(state)
        if len(together) <= 1:
            return "dispatch" if together else END
        return [Send("task", _task_input(t, state)) for t in together]

    def task(given: dict[str, Any]) -> RunState:
        """One task of a batch, on its own thread; it writes only its own keys."""
        node = TaskNode(**{**given["task"], "depends_on": tuple(given["task"]["depends_on"])})
        return run_one(node, given["view"])

    def run_one(node: TaskNode, view: RunState) -> RunState:
        output = executor.finished(node)
        if output is not None:  # done before a kill took its checkpoint write
            return step_update((), [TaskResult(node, Transition(node, TaskStatus.DONE), output)])
        return step_update((), [attempt(node, view)])

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
    graph.add_conditional_edges("dispatch", lambda s: route(s), ["dispatch", "task", END])
    graph.add_edge("task", "dispatch")
    return graph


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
