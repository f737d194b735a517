"""The run graph on LangGraph: plan (hierarchical squads), then one task per step.

Each step runs at most one task and returns, so the checkpointer (durable mode) records every
finished task before the next starts: a run killed mid-way resumes at the task it was on,
never redoing finished ones. A task that needs approval interrupts the graph before any of its
side effects; resuming re-enters the step, which then gets the person's decision.

The nodes here do the I/O (executor calls, the interrupt); :mod:`squad.runtime.steps` decides
what each outcome means for the task, the run and the state.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from squad.errors import LimitReached, ModelError, PlanError
from squad.runtime.steps import (
    RunState,
    Stop,
    TaskResult,
    Transition,
    approval_request,
    failed,
    more_to_do,
    needs_approval,
    nodes_of,
    plan_stop,
    plan_update,
    read_decision,
    rejected,
    reviewed,
    schedule,
    statuses_of,
    step_update,
    stopped_reviewing,
    stopped_running,
)
from squad.runtime.tasks import TaskNode, TaskStatus

__all__ = ["Executor", "build_graph"]


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


def build_graph(executor: Executor, *, hierarchical: bool, max_rounds: int) -> Any:
    """An uncompiled LangGraph ``StateGraph`` for one run (compile with a checkpointer)."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

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
            return plan_stop(Stop("plan_failed", str(exc)))
        except LimitReached as exc:
            return plan_stop(Stop(exc.kind, str(exc)))

    def step(state: RunState) -> RunState:
        todo = schedule(nodes_of(state), statuses_of(state))
        for change in todo.blocked:
            report(change)
        # One ready task per step, so each finished task is checkpointed before the next starts.
        return step_update(state, todo.blocked, [attempt(t, state) for t in todo.ready[:1]])

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
            return failed(task, str(exc))
        except LimitReached as exc:
            return stopped_running(task, Stop(exc.kind, str(exc)))
        try:
            verdict = executor.review(task, output) if hierarchical else (True, "")
        except ModelError as exc:
            verdict = (False, f"the review failed: {exc}")
        except LimitReached as exc:
            return stopped_reviewing(task, output, Stop(exc.kind, str(exc)))
        return reviewed(task, output, verdict, rounds=rounds, max_rounds=max_rounds)

    def route(state: RunState) -> str:
        return "step" if more_to_do(state) else END

    graph = StateGraph(RunState)
    graph.add_node("plan", plan)
    graph.add_node("step", step)
    if hierarchical:
        graph.add_edge(START, "plan")
        graph.add_conditional_edges("plan", route, ["step", END])
    else:
        graph.add_edge(START, "step")
    graph.add_conditional_edges("step", route, ["step", END])
    return graph
