"""How a run's state sits in its checkpoints: the task list and the per-task dicts are stored
as each step's writes (LangGraph's ``DeltaChannel``), so a checkpoint costs the same at the
200th task as at the 2nd; and a run paused or interrupted under the layout before (every
checkpoint carrying every task's record) still resumes, without redoing what it did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import squad.runtime.graph as run_graph_module
from squad.app import App
from squad.model import ChatModel, ModelEvent, model_for
from squad.runtime.steps import RunState
from squad.spec.models import ModelSpec
from tests.conftest import BASIC_YAML
from tests.runtime.test_runner import (
    GATED_YAML,
    DiesOnCall,
    MakeSpec,
    assert_each_task_ran_once,
    events,
    of_kind,
)


def _checkpoints(app: App, run_id: str) -> list[dict[str, Any]]:
    """The run's checkpoints, oldest first."""
    with app.runner().checkpoints.saver() as saver:
        found = [t.checkpoint for t in saver.list({"configurable": {"thread_id": run_id}})]
    return found[::-1]


def test_a_checkpoint_stores_what_its_step_wrote_not_every_task(
    app: App, make_spec: MakeSpec
) -> None:
    tasks = 30
    lines = [
        f"  - {{id: t{i}, description: Step {i}., agent: worker"
        + (f", depends_on: [t{i - 1}]}}" if i else "}")
        for i in range(tasks)
    ]
    text = (
        "name: chain\nlimits: {max_turns: 100}\nagents:\n  - {id: worker, role: Works}\n"
        "tasks:\n" + "\n".join(lines) + "\n"
    )
    spec = make_spec(text)
    result = app.runner().run(spec, app.squads.create(spec).path)

    assert result.succeeded and len(result.tasks) == tasks
    saved = _checkpoints(app, result.run_id)
    assert len(saved) > tasks  # one per task, and the input's
    holding = {
        key: sum(key in c["channel_values"] for c in saved)
        for key in ("tasks", "status", "outputs")
    }
    # the list once, where the run's input wrote it; the dicts never (fewer than 100 writes)
    assert holding == {"tasks": 1, "status": 0, "outputs": 0}
    with app.runner()._graph_for(result.run_id) as (graph, config):
        state = graph.get_state(config).values
    assert state["status"] == {f"t{i}": "done" for i in range(tasks)}
    assert len(state["tasks"]) == tasks and len(state["outputs"]) == tasks


def _old_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout before: the state type's own keys as plain channels, each one's whole value
    in every checkpoint."""
    monkeypatch.setattr(run_graph_module, "channels", lambda: RunState)


def test_a_run_paused_under_the_old_layout_resumes_after_its_approval(
    app: App, make_spec: MakeSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_spec(GATED_YAML)
    workspace = app.squads.create(spec).path
    _old_layout(monkeypatch)
    paused = app.runner().run(spec, workspace)
    assert (paused.status, paused.awaiting) == ("awaiting_approval", "draft")
    last = _checkpoints(app, paused.run_id)[-1]["channel_values"]
    assert last["status"]["outline"] == "done" and len(last["tasks"]) == 3  # whole, as before
    monkeypatch.undo()

    assert app.runner().pending_approval(paused.run_id) == "draft"
    done = app.runner().approve(paused.run_id, "draft", approved=True)

    assert done.succeeded
    assert done.tasks == {"outline": "done", "draft": "done", "publish": "done"}
    log = events(done)
    assert [e["node"] for e in of_kind(log, "node_start")] == ["outline", "draft", "publish"]
    last = _checkpoints(app, paused.run_id)[-1]["channel_values"]
    assert "status" not in last and "tasks" not in last  # the new layout from the resume on


def test_a_run_interrupted_under_the_old_layout_resumes_without_redoing_a_task(
    app: App, make_spec: MakeSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_spec(BASIC_YAML)
    workspace = app.squads.create(spec).path

    def dies_on_second_call(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        return DiesOnCall(model_for(spec, on_event), die_on=2)

    _old_layout(monkeypatch)
    interrupted = app.runner(model_factory=dies_on_second_call).run(spec, workspace)
    assert interrupted.status == "interrupted"
    monkeypatch.undo()

    resumed = app.runner().resume(interrupted.run_id)

    assert resumed.succeeded and resumed.tasks == {"outline": "done", "draft": "done"}
    assert_each_task_ran_once(resumed, app.squads)
