"""Task state transitions, pure: which tasks can run, which are blocked, how a run ends.

A task is ``pending`` until its dependencies are ``done``; then it runs (``running``), may
wait for a person (``awaiting_approval``), and ends ``done`` or ``failed``. A task whose
dependency failed (or was rejected) is ``blocked``: it will never run in this run. Tasks that
do not depend on a failure go on.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from squad.runtime.recent import RecentByIdentity
from squad.store.records import TaskStatus

__all__ = [
    "RunOutcome",
    "TaskNode",
    "TaskStatus",
    "blocked_by_failures",
    "by_id",
    "outcome",
    "ready_tasks",
    "topological_order",
]


class RunOutcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    AWAITING_APPROVAL = "awaiting_approval"
    IN_PROGRESS = "in_progress"


@dataclass(frozen=True)
class TaskNode:
    """What scheduling needs of a task: its id, its agent, what it waits for."""

    id: str
    agent: str
    depends_on: tuple[str, ...] = ()
    description: str = ""
    approval: bool = False
    expected_output: str | None = None


def topological_order(tasks: Sequence[TaskNode]) -> list[str]:
    """Ids in dependency order; among ready tasks, the order they were written in.

    The definition was validated (no cycles, no unknown ids), so every task is placed. The
    order of a task list is computed once: a run's graph asks for it at every step.
    """
    return list(_order_of(tasks))


_INDEXED: RecentByIdentity[Sequence[TaskNode], tuple[tuple[str, ...], dict[str, TaskNode]]] = (
    RecentByIdentity()
)
"""The order and tasks by id of the task lists seen lately (a run's graph passes the same
tuple at every step: hashing 200 tasks each time made a long plan's steps cost more)."""


def _indexed(tasks: Sequence[TaskNode]) -> tuple[tuple[str, ...], dict[str, TaskNode]]:
    """The order and the tasks by id of a task list; only a tuple, immutable, is known again
    by its identity."""
    return _INDEXED.get(
        tasks,
        lambda: (_ordered(tuple(tasks)), {t.id: t for t in tasks}),
        keep=isinstance(tasks, tuple),
    )


def _order_of(tasks: Sequence[TaskNode]) -> tuple[str, ...]:
    return _indexed(tasks)[0]


def by_id(tasks: Sequence[TaskNode]) -> Mapping[str, TaskNode]:
    """The tasks by id (kept with the list's order: not made again for a tuple seen lately)."""
    return _indexed(tasks)[1]


@functools.lru_cache(maxsize=32)
def _ordered(tasks: tuple[TaskNode, ...]) -> tuple[str, ...]:
    position = {t.id: i for i, t in enumerate(tasks)}
    waiting = {t.id: len(set(t.depends_on)) for t in tasks}
    dependents: dict[str, list[str]] = {t.id: [] for t in tasks}
    for t in tasks:
        for dep in set(t.depends_on):
            dependents[dep].append(t.id)
    wave = [tid for tid, count in waiting.items() if count == 0]
    order: list[str] = []
    while wave:  # every task whose dependencies are placed, in written order, then the next
        wave.sort(key=position.__getitem__)
        order += wave
        following: list[str] = []
        for tid in wave:
            for after in dependents[tid]:
                waiting[after] -= 1
                if waiting[after] == 0:
                    following.append(after)
        wave = following
    if len(order) < len(tasks):
        raise ValueError(f"dependency cycle among {sorted(set(position) - set(order))}")
    return tuple(order)


def ready_tasks(tasks: Sequence[TaskNode], status: Mapping[str, str]) -> list[str]:
    """Pending tasks whose dependencies are all done, in topological order."""
    order, by_id = _indexed(tasks)
    return [
        tid
        for tid in order
        if status.get(tid, TaskStatus.PENDING) == TaskStatus.PENDING
        and all(status.get(dep) == TaskStatus.DONE for dep in by_id[tid].depends_on)
    ]


def blocked_by_failures(tasks: Sequence[TaskNode], status: Mapping[str, str]) -> set[str]:
    """Pending tasks that can never run because a dependency (transitively) failed."""
    order, by_id = _indexed(tasks)
    doomed: set[str] = set()
    for tid in order:
        if status.get(tid, TaskStatus.PENDING) != TaskStatus.PENDING:
            continue
        for dep in by_id[tid].depends_on:
            if status.get(dep) in (TaskStatus.FAILED, TaskStatus.BLOCKED) or dep in doomed:
                doomed.add(tid)
                break
    return doomed


def outcome(tasks: Sequence[TaskNode], status: Mapping[str, TaskStatus]) -> RunOutcome:
    """How the run stands: still going, waiting for a person, or finished (and how)."""
    states = [status.get(t.id, TaskStatus.PENDING) for t in tasks]
    if any(s == TaskStatus.AWAITING_APPROVAL for s in states):
        return RunOutcome.AWAITING_APPROVAL
    if not all(s.finished for s in states):
        return RunOutcome.IN_PROGRESS
    if all(s == TaskStatus.DONE for s in states):
        return RunOutcome.SUCCEEDED
    return RunOutcome.FAILED
