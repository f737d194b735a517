"""Task scheduling and state propagation, pure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squad.runtime.tasks import (
    RunOutcome,
    TaskNode,
    TaskStatus,
    blocked_by_failures,
    outcome,
    ready_tasks,
    topological_order,
)

S = TaskStatus
DIAMOND = [
    TaskNode("outline", "planner"),
    TaskNode("draft", "writer", ("outline",)),
    TaskNode("images", "writer", ("outline",)),
    TaskNode("review", "reviewer", ("draft", "images")),
    TaskNode("notes", "writer"),
]


def test_topological_order_keeps_written_order_among_ready_tasks() -> None:
    assert topological_order(DIAMOND) == ["outline", "notes", "draft", "images", "review"]


def test_dependencies_written_after_their_dependents_still_come_first() -> None:
    tasks = [TaskNode("b", "x", ("a",)), TaskNode("a", "x")]
    assert topological_order(tasks) == ["a", "b"]


def test_ready_tasks_wait_for_every_dependency() -> None:
    assert ready_tasks(DIAMOND, {}) == ["outline", "notes"]
    assert ready_tasks(DIAMOND, {"outline": S.DONE, "notes": S.DONE}) == ["draft", "images"]
    assert (
        ready_tasks(
            DIAMOND, {"outline": S.DONE, "draft": S.DONE, "images": S.RUNNING, "notes": S.DONE}
        )
        == []
    )


def test_a_failure_blocks_only_what_depends_on_it() -> None:
    status = {"outline": S.DONE, "draft": S.FAILED}
    assert blocked_by_failures(DIAMOND, status) == {"review"}
    assert "images" in ready_tasks(DIAMOND, status)
    assert "notes" in ready_tasks(DIAMOND, status)


def test_blocking_is_transitive() -> None:
    assert blocked_by_failures(DIAMOND, {"outline": S.FAILED}) == {"draft", "images", "review"}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({}, RunOutcome.IN_PROGRESS),
        ({t.id: S.DONE for t in DIAMOND}, RunOutcome.SUCCEEDED),
        (
            {**{t.id: S.DONE for t in DIAMOND}, "review": S.AWAITING_APPROVAL},
            RunOutcome.AWAITING_APPROVAL,
        ),
        (
            {**{t.id: S.DONE for t in DIAMOND}, "draft": S.FAILED, "review": S.BLOCKED},
            RunOutcome.FAILED,
        ),
    ],
)
def test_outcome(status: dict[str, TaskStatus], expected: RunOutcome) -> None:
    assert outcome(DIAMOND, status) == expected


@given(st.lists(st.lists(st.integers(0, 9), max_size=3), min_size=1, max_size=10))
def test_topological_order_respects_every_edge(edges: list[list[int]]) -> None:
    tasks = [
        TaskNode(f"t{i}", "a", tuple(sorted({f"t{d}" for d in deps if d < i})))
        for i, deps in enumerate(edges)
    ]
    order = topological_order(tasks)
    assert sorted(order) == sorted(t.id for t in tasks)
    for task in tasks:
        for dep in task.depends_on:
            assert order.index(dep) < order.index(task.id)
