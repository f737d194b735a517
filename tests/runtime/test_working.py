"""The runtime's working memory: in a long plan a task's start looks only at the agent's last
remaining tasks, and shows exactly what looking at all of them would; a start is held back
until its turn lasts, is written with its end when the turn ends sooner, and at once when the
turn ends by an error."""

from __future__ import annotations

import time
from pathlib import Path

from squad.app import App
from squad.memory.agent import AgentContext
from squad.memory.working import LIMITS, WorkingMemory, start_task
from squad.memory.working_file import WorkingMemoryFile
from squad.runtime.runlog import RunLog
from squad.runtime.tasks import TaskNode, TaskStatus
from squad.runtime.working import RunWorkingMemory, task_item
from squad.spec.loader import squad_from_text

TASKS = 60
YAML = """\
name: long
agents:
  - {id: writer, role: Writes}
  - {id: editor, role: Edits}
tasks:
"""


def _spec_and_nodes() -> tuple[str, list[TaskNode]]:
    nodes = [
        TaskNode(f"t{i}", "writer" if i % 3 else "editor", description=f"Step {i} of the work.")
        for i in range(TASKS)
    ]
    lines = [f"  - {{id: {n.id}, description: {n.description}, agent: {n.agent}}}" for n in nodes]
    return YAML + "\n".join(lines) + "\n", nodes


def test_a_start_in_a_long_plan_shows_what_all_remaining_tasks_would(app: App) -> None:
    text, nodes = _spec_and_nodes()
    spec = squad_from_text(text)
    workspace = app.squads.create(spec).path
    statuses = {n.id: "done" for n in nodes[:20]} | {"t45": "failed", "t58": "blocked"}
    with RunLog(workspace, "run-1") as log:
        working = RunWorkingMemory(
            app.memory, spec, workspace, "run-1", log, waiting=lambda _: False
        )
        ctx = AgentContext.of(spec, "writer", workspace, run_id="run-1")
        file = app.memory.working_file(ctx)
        expected = WorkingMemory()
        for started in (nodes[20], nodes[22], nodes[40]):
            others = [
                task_item(n)
                for n in nodes
                if n.agent == "writer"
                and n.id != started.id
                and statuses.get(n.id) not in ("done", "failed", "blocked")
            ]
            assert len(others) > 2 * LIMITS["remaining"]  # the long plan the shortcut is for
            expected = start_task(expected, task_item(started), others)
            working.task_started(started, nodes, statuses)
            record = file.read()
            assert record is not None
            assert record.state == expected
            assert "t58: Step 58 of the work." not in record.state.remaining
    assert expected.remaining[-1] == "t59: Step 59 of the work."


def _on_disk(workspace: Path) -> WorkingMemory | None:
    """The writer's working memory of run-1 as its file holds it (no cache, nothing held)."""
    record = WorkingMemoryFile(workspace, "writer", "run-1").read()
    return None if record is None else record.state


def test_a_start_is_held_until_its_turn_ends_lasts_or_fails_then_written(app: App) -> None:
    text, nodes = _spec_and_nodes()
    spec = squad_from_text(text)
    workspace = app.squads.create(spec).path
    draft, edit, publish = nodes[1], nodes[2], nodes[4]
    ctx = AgentContext.of(spec, "writer", workspace, run_id="run-1")
    with RunLog(workspace, "run-1") as log:
        held = RunWorkingMemory(
            app.memory, spec, workspace, "run-1", log, waiting=lambda _: False, hold_s=3600
        )
        held.task_started(draft, nodes, {})
        read = app.memory.working_memory(ctx)  # what the turn's prompt reads
        assert read is not None and read.state.tasks == (task_item(draft),)
        assert _on_disk(workspace) is None  # a quick turn: not written...
        held.task_ended(draft, TaskStatus.DONE)
        state = _on_disk(workspace)  # ...until its end, with it
        assert state is not None and state.tasks == () and state.done == (task_item(draft),)

        held.task_started(edit, nodes, {draft.id: "done"})
        held.settle(edit)  # its turn ends by an error (a stop): the file says it was at work
        state = _on_disk(workspace)
        assert state is not None and state.tasks == (task_item(edit),)

        lasting = RunWorkingMemory(
            app.memory, spec, workspace, "run-1", log, waiting=lambda _: False, hold_s=0
        )
        lasting.task_started(publish, nodes, {draft.id: "done"})
        deadline = time.monotonic() + 30
        while task_item(publish) not in ((_on_disk(workspace) or WorkingMemory()).tasks):
            assert time.monotonic() < deadline, "a lasting turn's start was never written"
            time.sleep(0.01)
        lasting.task_ended(publish, TaskStatus.DONE)
    state = _on_disk(workspace)
    assert state is not None
    assert state.done == (task_item(draft), task_item(publish))
    assert state.tasks == (task_item(edit),)
