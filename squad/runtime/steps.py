"""What a run step decides, pure: the graph's nodes do the I/O, these functions say what it means.

A step blocks the tasks a failure doomed, picks the ready tasks to run together
(:func:`batch`), and turns what happened to each (a person's decision, the executor's output or
error, a reviewer's verdict) into the transitions to report and the state update to
checkpoint. Nothing here calls the executor or LangGraph, so every rule is tested on plain
data, the way langgraph keeps ``pregel/_algo.py`` pure and ``pregel/_loop.py`` doing the I/O.

Tasks of one batch run at once and write the state at once, so every update is a delta: the
dict channels merge what each task wrote (:func:`merged`), and the first stop wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Annotated, Any, TypedDict

from squad.runtime.recent import RecentByIdentity
from squad.runtime.tasks import (
    RunOutcome,
    TaskNode,
    TaskStatus,
    blocked_by_failures,
    by_id,
    outcome,
    ready_tasks,
)

__all__ = [
    "Decision",
    "RunState",
    "Schedule",
    "SentBack",
    "Stop",
    "TaskResult",
    "Transition",
    "approval_request",
    "approves",
    "batch",
    "failed",
    "first",
    "last_written",
    "merged",
    "merged_all",
    "more_to_do",
    "needs_approval",
    "nodes_of",
    "plan_stop",
    "plan_update",
    "raw_statuses",
    "read_decision",
    "rejected",
    "reviewed",
    "schedule",
    "settled",
    "state_outcome",
    "statuses_of",
    "step_update",
    "stopped_reviewing",
    "stopped_running",
    "task_nodes",
]


def merged(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """A dict channel's reducer: each write adds or replaces its keys (tasks of one step each
    write their own)."""
    return {**(old or {}), **(new or {})}


def merged_all(
    old: dict[str, Any] | None, writes: Sequence[dict[str, Any] | None]
) -> dict[str, Any]:
    """:func:`merged` over a batch of writes, oldest first: the reducer of a dict channel that
    a checkpoint stores as its writes (LangGraph's ``DeltaChannel`` replays them in batches of
    any size, which merging in order does not mind)."""
    value = dict(old or {})
    for new in writes:
        value.update(new or {})
    return value


def last_written(old: Any, writes: Sequence[Any]) -> Any:
    """The reducer of a channel that keeps the last value written, over a batch of writes."""
    return writes[-1] if writes else old


def first(old: str | None, new: str | None) -> str | None:
    """The stop channels' reducer: the first stop of a step is the one the run reports."""
    return old if old else new


class RunState(TypedDict, total=False):
    """The run graph's state; each key is a LangGraph channel. ``tasks`` and ``planned`` keep
    the last value written; the dicts merge the keys each write brings; ``stopped`` and
    ``error`` keep the first stop.

    The graph declares these channels in :func:`squad.runtime.graph.channels`, where the task
    list and the per-task dicts are stored as their writes, not whole in every checkpoint."""

    tasks: list[dict[str, Any]]
    status: Annotated[dict[str, str], merged]
    outputs: Annotated[dict[str, str], merged]
    rounds: Annotated[dict[str, int], merged]
    feedback: Annotated[dict[str, str], merged]
    approvals: Annotated[dict[str, str], merged]
    planned: bool
    stopped: Annotated[str | None, first]
    error: Annotated[str | None, first]


_NODES: RecentByIdentity[list[dict[str, Any]], tuple[TaskNode, ...]] = RecentByIdentity()
"""The nodes made lately from a run's ``tasks`` list, by the list's identity."""


def nodes_of(state: RunState) -> list[TaskNode]:
    """The state's tasks as scheduling sees them."""
    return list(task_nodes(state))


def task_nodes(state: RunState) -> tuple[TaskNode, ...]:
    """:func:`nodes_of`, as a tuple the graph's steps share.

    A run's graph reads the same ``tasks`` list at every step (the channel keeps the value
    written; nothing changes it in place), so the nodes made from it are kept by its identity
    for the next step: a long plan's step does not make its 200 nodes again, nor hash them
    to find their order (:mod:`squad.runtime.tasks` knows a tuple again by its identity)."""
    tasks = state["tasks"]
    return _NODES.get(
        tasks,
        lambda: tuple(
            TaskNode(
                t["id"],
                t["agent"],
                tuple(t["depends_on"]),
                t.get("description", ""),
                bool(t.get("approval")),
                t.get("expected_output"),
            )
            for t in tasks
        ),
    )


def statuses_of(state: RunState) -> dict[str, TaskStatus]:
    """The state's task statuses, typed (the checkpoint keeps plain strings)."""
    return {k: TaskStatus(v) for k, v in (state.get("status") or {}).items()}


def raw_statuses(state: RunState) -> Mapping[str, str]:
    """The state's task statuses as the checkpoint keeps them, plain strings, which compare
    equal to their :class:`TaskStatus` (a ``StrEnum``): what a step schedules from, without
    typing every task's status at every step."""
    return state.get("status") or {}


def state_outcome(state: RunState) -> RunOutcome:
    """How the run stands, read from its state."""
    return outcome(nodes_of(state), statuses_of(state))


@dataclass(frozen=True)
class Transition:
    """A task's new status and what the store records with it; the executor is told each one."""

    task: TaskNode
    status: TaskStatus
    error: str | None = None
    output: str | None = None
    rounds: int = 0


@dataclass(frozen=True)
class Stop:
    """Why the run stops here: ``kind`` becomes its status reason, ``error`` its message."""

    kind: str
    error: str


@dataclass(frozen=True)
class Decision:
    """A person's answer to an approval request."""

    approved: bool
    reason: str = ""

    @property
    def record(self) -> str:
        """What ``approvals`` keeps, so a re-entered step does not ask again."""
        return "approved" if self.approved else f"rejected: {self.reason}".strip()


@dataclass(frozen=True)
class SentBack:
    """A reviewer's rejection: the review rounds used so far and the notes the redo sees."""

    rounds: int
    notes: str


@dataclass(frozen=True)
class TaskResult:
    """How one task's turn in a step ended: what to report last and what the state keeps.

    ``report`` is the last transition the executor is told (None: nothing more). Its status
    goes into the state unless the run stopped: then the task stays pending, to run on resume.
    """

    task: TaskNode
    report: Transition | None
    output: str | None = None
    sent_back: SentBack | None = None
    stop: Stop | None = None
    decision: Decision | None = None
    """The person's decision when this step asked for one."""


@dataclass(frozen=True)
class Schedule:
    """What a step starts from: the tasks a failure just doomed, then those ready to run."""

    blocked: tuple[Transition, ...]
    ready: tuple[TaskNode, ...]


def schedule(tasks: Sequence[TaskNode], status: Mapping[str, str]) -> Schedule:
    """Block what a failure doomed (by id), then the ready tasks in topological order."""
    named = by_id(tasks)
    doomed = sorted(blocked_by_failures(tasks, status))
    after = {**status, **dict.fromkeys(doomed, TaskStatus.BLOCKED)} if doomed else status
    return Schedule(
        tuple(
            Transition(named[tid], TaskStatus.BLOCKED, error="a dependency failed")
            for tid in doomed
        ),
        tuple(named[tid] for tid in ready_tasks(tasks, after)),
    )


def batch(ready: Sequence[TaskNode], approvals: Mapping[str, str], limit: int) -> list[TaskNode]:
    """The ready tasks to run together, at most ``limit``, in topological order.

    A task that waits for a person waits alone: while other tasks are ready they run and it
    stays pending (its branch pauses, the others go on); only when nothing else is ready does
    the run ask, for one task at a time.
    """
    free = [t for t in ready if not needs_approval(t, approvals)]
    return free[: max(limit, 1)] if free else list(ready[:1])


def more_to_do(state: RunState) -> bool:
    """Whether the graph steps again: not stopped, and a step would block or run a task."""
    if state.get("stopped"):
        return False
    plan = schedule(task_nodes(state), raw_statuses(state))
    return bool(plan.ready or plan.blocked)


def needs_approval(task: TaskNode, approvals: Mapping[str, str]) -> bool:
    """Whether to ask a person first: the task wants it and no decision is recorded yet."""
    return task.approval and task.id not in approvals


def approval_request(task: TaskNode) -> dict[str, str]:
    """What the person is shown; ``task`` also tells the runner which task the run waits on."""
    return {"task": task.id, "agent": task.agent, "description": task.description}


def read_decision(value: object) -> Decision:
    """A resume value read leniently: only a dict with a truthy ``approved`` approves."""
    if not isinstance(value, dict):
        return Decision(approved=False)
    return Decision(bool(value.get("approved")), value.get("reason", ""))


def rejected(task: TaskNode, decision: Decision) -> TaskResult:
    """A rejected task fails before any of its side effects, quoting the person's reason."""
    error = f"rejected by a person{': ' + decision.reason if decision.reason else ''}"
    return TaskResult(task, Transition(task, TaskStatus.FAILED, error=error))


def failed(task: TaskNode, error: str) -> TaskResult:
    """A task whose model failed for good fails alone; the next step blocks its dependents."""
    return TaskResult(task, Transition(task, TaskStatus.FAILED, error=error))


def stopped_running(task: TaskNode, stop: Stop) -> TaskResult:
    """A limit hit while the task ran: the run stops, the task is pending again, with why."""
    return TaskResult(task, Transition(task, TaskStatus.PENDING, error=stop.error), stop=stop)


def stopped_reviewing(task: TaskNode, output: str, stop: Stop) -> TaskResult:
    """A limit hit during the review: the run stops and keeps the output; the task runs again.

    Nothing is reported, so the store says ``running`` until a resumed step reports the task.
    """
    return TaskResult(task, None, output=output, stop=stop)


_VERDICT = re.compile(
    r"^(?:(?:verdict|decision|review|result|status|answer)\b[^:\n]{0,20}:\s*)?"
    r"(?P<word>approved|changes[ _-]requested|not approved|rejected)\b",
    re.IGNORECASE,
)
_MARKUP = str.maketrans("", "", "*_`#>\"'[]")


def approves(verdict: str) -> bool:
    """Whether a reviewer's answer approves the work: its first line, else its last, starts
    with ``APPROVED`` (after markdown emphasis, a heading's ``#`` and a label such as
    ``Verdict:``, in any case). A small model writes ``**Approved**: ...`` or reasons first
    and concludes on the last line; ``CHANGES REQUESTED``, ``NOT APPROVED``, ``REJECTED`` and
    an answer with no verdict at either end approve nothing."""
    lines = [ln.translate(_MARKUP).strip() for ln in verdict.splitlines()]
    lines = [ln for ln in lines if ln]
    for line in lines[:1] + lines[-1:]:
        found = _VERDICT.match(line)
        if found:
            return found["word"].lower() == "approved"
    return False


def reviewed(
    task: TaskNode, output: str, verdict: tuple[bool, str], *, rounds: int, max_rounds: int
) -> TaskResult:
    """Approved work is done; work sent back runs again, and fails once ``max_rounds`` reviews
    have sent it back. ``verdict`` is (approved, notes); ``rounds`` counts earlier send-backs."""
    approved, notes = verdict
    if approved:
        return TaskResult(
            task, Transition(task, TaskStatus.DONE, output=output, rounds=rounds), output
        )
    back = SentBack(rounds + 1, notes)
    if back.rounds < max_rounds:
        report = Transition(task, TaskStatus.PENDING, output=output, rounds=back.rounds)
    else:
        error = f"not approved after {max_rounds} review rounds"
        report = Transition(task, TaskStatus.FAILED, error=error, output=output, rounds=back.rounds)
    return TaskResult(task, report, output, sent_back=back)


def settled(result: TaskResult) -> bool:
    """Whether a task's turn ended done with nothing but its output for the state: no stop,
    no send-back, no person's decision (its checkpoint may wait for a sibling's)."""
    return (
        result.report is not None
        and result.report.status is TaskStatus.DONE
        and result.stop is None
        and result.sent_back is None
        and result.decision is None
    )


def step_update(blocked: Sequence[Transition], results: Sequence[TaskResult] = ()) -> RunState:
    """The update a step (or one task of it) returns: only the keys it changed, since tasks
    that run together write at once and the channels merge their writes."""
    update: RunState = {}
    decided = {r.task.id: r.decision.record for r in results if r.decision is not None}
    if decided:
        update["approvals"] = decided
    rounds = {r.task.id: r.sent_back.rounds for r in results if r.sent_back is not None}
    if rounds:
        update["rounds"] = rounds
        update["feedback"] = {r.task.id: r.sent_back.notes for r in results if r.sent_back}
    outputs = {r.task.id: r.output for r in results if r.output is not None}
    if outputs:
        update["outputs"] = outputs
    stop = next((r.stop for r in results if r.stop is not None), None)
    if stop is not None:
        update["stopped"], update["error"] = stop.kind, stop.error
    changes = {t.task.id: t.status.value for t in blocked}
    for r in results:
        if r.report is not None and r.stop is None:
            changes[r.task.id] = r.report.status.value
    if changes or not update:
        update["status"] = changes
    return update


def plan_update(tasks: Sequence[TaskNode]) -> RunState:
    """The plan as state, every task pending; ``planned`` keeps a resumed run from replanning."""
    return {
        "planned": True,
        "tasks": [asdict(t) for t in tasks],
        "status": {t.id: TaskStatus.PENDING.value for t in tasks},
    }


def plan_stop(stop: Stop) -> RunState:
    """A plan that could not be made ends the run before any task runs."""
    return {"planned": True, "stopped": stop.kind, "error": stop.error}
