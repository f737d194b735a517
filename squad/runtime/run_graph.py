"""A run's LangGraph graph, compiled on the run's checkpointer: to drive it, or to read it.

A run is a LangGraph thread whose id is the run id; :func:`run_graph` builds the graph for a
squad's process and limits and compiles it on the checkpoints (beside a SQLite store, or in the
Postgres store's database), its writes fenced by the runner's claim of the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from squad.runtime.graph import graph_and_head_start
from squad.runtime.pool import TaskPool
from squad.runtime.steps import RunState, TaskResult, nodes_of
from squad.runtime.tasks import TaskNode

if TYPE_CHECKING:
    from squad.checkpoints import Checkpoints
    from squad.checkpoints.base import Fence
    from squad.runtime.executor import RunExecutor
    from squad.spec.models import SquadSpec

__all__ = [
    "NoExecutor",
    "awaited_task",
    "initial_state",
    "invoke",
    "known_tasks",
    "no_checkpoint",
    "run_graph",
]


@contextmanager
def run_graph(
    checkpoints: Checkpoints,
    fence: Fence | None,
    run_id: str,
    executor: RunExecutor | None = None,
    spec: SquadSpec | None = None,
) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The run's graph compiled on its checkpointer (writes fenced by ``fence``) and its
    config; without an executor, only to read the run's state."""
    hierarchical = spec is not None and spec.process.type == "hierarchical"
    rounds = spec.limits.max_rounds if spec is not None else 1
    parallel = spec.limits.max_parallel if spec is not None else 1
    at_work: TaskPool[TaskResult] = TaskPool()
    graph, head_start = graph_and_head_start(
        executor or NoExecutor(),
        hierarchical=hierarchical,
        max_rounds=rounds,
        max_parallel=parallel,
        pool=at_work,
    )
    with checkpoints.saver(fence) as saver:
        app = graph.compile(checkpointer=saver)
        if executor is not None:
            executor.head_start = head_start
        config = {
            "configurable": {"thread_id": run_id},
            "recursion_limit": 10_000,
            "max_concurrency": parallel,
        }
        try:
            yield app, config
        finally:
            at_work.close()  # a step that failed may have left tasks at work: they end first


def known_tasks(app: Any, config: dict[str, Any], payload: Any) -> list[TaskNode]:
    """The run's tasks as the graph starts: those of the state a new run starts from, else
    of the checkpoint a resume continues (none yet for a squad whose lead has still to plan)."""
    state = payload if isinstance(payload, dict) else app.get_state(config).values
    return nodes_of(cast(RunState, state or {}))


class NoExecutor:
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


def initial_state(spec: SquadSpec) -> RunState:
    """The state a new run's graph starts from: a sequential squad's tasks, all pending; none
    for a hierarchical one (its lead plans them)."""
    if spec.process.type != "sequential":
        return {"tasks": [], "status": {}}
    nodes = [
        TaskNode(t.id, t.agent, tuple(t.depends_on), t.description, t.approval, t.expected_output)
        for t in spec.tasks
    ]
    return {"tasks": [asdict(n) for n in nodes], "status": {n.id: "pending" for n in nodes}}


def no_checkpoint(run_id: str, home: Path, checkpoints: Checkpoints) -> str:
    """Why run ``run_id`` cannot be resumed: no checkpoint, and where one may have been left."""
    from squad.checkpoints import left_behind

    kept = left_behind(home, checkpoints)
    if kept is not None and run_id in kept.runs:
        return (
            f"run {run_id!r} has no checkpoint in {checkpoints.where}: {kept.describe()}; "
            "point database_url back at SQLite to resume it, or start a new run"
        )
    return (
        f"run {run_id!r} has no checkpoint (it stopped before its first step); "
        "start a new one with `squad run`"
    )


def invoke(app: Any, payload: Any, config: dict[str, Any], executor: RunExecutor) -> Any:
    """Drive the graph until it stops; a step that ends by an error still records the spend
    of the model calls it made. A new run (``payload`` its first state) starts the tasks it
    can run at once as the graph writes its first checkpoints (:data:`HeadStart`)."""
    try:
        head_start, executor.head_start = executor.head_start, None  # a new run's, once
        if head_start is not None and isinstance(payload, dict):
            head_start(cast(RunState, payload))
        return app.invoke(payload, config, durability="sync")
    except BaseException:
        executor.flush("record the spend of an unfinished step", aborted=True)
        raise


def awaited_task(app: Any, config: dict[str, Any]) -> str | None:
    """The task a paused run's graph waits on for approval, if any."""
    for item in app.get_state(config).interrupts:
        if isinstance(item.value, dict):
            return str(item.value.get("task"))
    return None
