"""The runtime's working memory in a long plan: a task's start looks only at the agent's last
remaining tasks, and shows exactly what looking at all of them would."""

from __future__ import annotations

from squad.app import App
from squad.memory.agent import AgentContext
from squad.memory.working import LIMITS, WorkingMemory, start_task
from squad.runtime.runlog import RunLog
from squad.runtime.tasks import TaskNode
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
