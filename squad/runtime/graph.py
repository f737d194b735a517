"""The run graph on LangGraph: plan (hierarchical squads), then one task per step.

Each step runs at most one task and returns, so the checkpointer (durable mode) records every
finished task before the next starts: a run killed mid-way resumes at the task it was on,
never redoing finished ones. A task that needs approval interrupts the graph before any of its
side effects; resuming re-enters the step, which then gets the person's decision.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal, Protocol, TypedDict

from squad.errors import ModelError
from squad.runtime.limits import LimitReached
from squad.runtime.plan import PlanError
from squad.runtime.tasks import (
    RunOutcome,
    TaskNode,
    TaskStatus,
    blocked_by_failures,
    outcome,
    ready_tasks,
)

__all__ = ["Executor", "RunState", "build_graph", "nodes_of", "state_outcome"]


class RunState(TypedDict, total=False):
    tasks: list[dict[str, Any]]
    status: dict[str, str]
    outputs: dict[str, str]
    rounds: dict[str, int]
    feedback: dict[str, str]
    approvals: dict[str, str]
    planned: bool
    stopped: str | None
    error: str | None


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


def nodes_of(state: RunState) -> list[TaskNode]:
    return [
        TaskNode(
            t["id"],
            t["agent"],
            tuple(t["depends_on"]),
            t.get("description", ""),
            bool(t.get("approval")),
            t.get("expected_output"),
        )
        for t in state["tasks"]
    ]


def _statuses(state: RunState) -> dict[str, TaskStatus]:
    return {k: TaskStatus(v) for k, v in (state.get("status") or {}).items()}


def state_outcome(state: RunState) -> RunOutcome:
    return outcome(nodes_of(state), _statuses(state))


def build_graph(executor: Executor, *, hierarchical: bool, max_rounds: int) -> Any:
    """An uncompiled LangGraph ``StateGraph`` for one run (compile with a checkpointer)."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def plan(state: RunState) -> RunState:
        if state.get("planned"):
            return {}
        try:
            tasks = executor.plan()
        except (PlanError, ModelError) as exc:
            return {"planned": True, "stopped": "plan_failed", "error": str(exc)}
        except LimitReached as exc:
            return {"planned": True, "stopped": exc.kind, "error": str(exc)}
        return {
            "planned": True,
            "tasks": [asdict(t) for t in tasks],
            "status": {t.id: TaskStatus.PENDING.value for t in tasks},
        }

    def step(state: RunState) -> RunState:
        tasks = nodes_of(state)
        status = _statuses(state)
        by_id = {t.id: t for t in tasks}
        changes: dict[str, str] = {}
        for tid in sorted(blocked_by_failures(tasks, status)):
            executor.task_status(by_id[tid], TaskStatus.BLOCKED, error="a dependency failed")
            changes[tid] = TaskStatus.BLOCKED.value
        status.update({k: TaskStatus(v) for k, v in changes.items()})
        ready = ready_tasks(tasks, status)
        if not ready:
            return {"status": {**state.get("status", {}), **changes}}
        task = by_id[ready[0]]
        update: RunState = {}
        approvals = dict(state.get("approvals") or {})
        if task.approval and task.id not in approvals:
            executor.task_status(task, TaskStatus.AWAITING_APPROVAL)
            decision = interrupt(
                {"task": task.id, "agent": task.agent, "description": task.description}
            )
            approved = bool(decision.get("approved")) if isinstance(decision, dict) else False
            reason = decision.get("reason", "") if isinstance(decision, dict) else ""
            approvals[task.id] = "approved" if approved else f"rejected: {reason}".strip()
            update["approvals"] = approvals
            if not approved:
                error = f"rejected by a person{': ' + reason if reason else ''}"
                executor.task_status(task, TaskStatus.FAILED, error=error)
                changes[task.id] = TaskStatus.FAILED.value
                return {**update, "status": {**state.get("status", {}), **changes}}
        rounds = dict(state.get("rounds") or {})
        feedback = dict(state.get("feedback") or {})
        executor.task_status(task, TaskStatus.RUNNING, rounds=rounds.get(task.id, 0))
        try:
            output = executor.execute(task, feedback.get(task.id))
        except ModelError as exc:
            executor.task_status(task, TaskStatus.FAILED, error=str(exc))
            changes[task.id] = TaskStatus.FAILED.value
            return {**update, "status": {**state.get("status", {}), **changes}}
        except LimitReached as exc:
            executor.task_status(task, TaskStatus.PENDING, error=str(exc))
            return {
                **update,
                "stopped": exc.kind,
                "error": str(exc),
                "status": {**state.get("status", {}), **changes},
            }
        outputs = {**(state.get("outputs") or {}), task.id: output}
        verdict: Literal["done", "again", "failed"] = "done"
        if hierarchical:
            try:
                approved, notes = executor.review(task, output)
            except ModelError as exc:
                approved, notes = False, f"the review failed: {exc}"
            except LimitReached as exc:
                return {
                    **update,
                    "outputs": outputs,
                    "stopped": exc.kind,
                    "error": str(exc),
                    "status": {**state.get("status", {}), **changes},
                }
            if not approved:
                done_rounds = rounds.get(task.id, 0) + 1
                rounds[task.id] = done_rounds
                feedback[task.id] = notes
                verdict = "again" if done_rounds < max_rounds else "failed"
        if verdict == "again":
            executor.task_status(task, TaskStatus.PENDING, output=output, rounds=rounds[task.id])
            changes[task.id] = TaskStatus.PENDING.value
        elif verdict == "failed":
            error = f"not approved after {max_rounds} review rounds"
            executor.task_status(
                task, TaskStatus.FAILED, error=error, output=output, rounds=rounds[task.id]
            )
            changes[task.id] = TaskStatus.FAILED.value
        else:
            executor.task_status(
                task, TaskStatus.DONE, output=output, rounds=rounds.get(task.id, 0)
            )
            changes[task.id] = TaskStatus.DONE.value
        if verdict != "done":  # only changed channels: each one returned is checkpointed
            update = {**update, "rounds": rounds, "feedback": feedback}
        return {
            **update,
            "outputs": outputs,
            "status": {**state.get("status", {}), **changes},
        }

    def route(state: RunState) -> str:
        if state.get("stopped"):
            return END
        tasks = nodes_of(state)
        status = _statuses(state)
        if ready_tasks(tasks, status) or blocked_by_failures(tasks, status):
            return "step"
        return END

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
