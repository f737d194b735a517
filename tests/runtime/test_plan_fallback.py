"""A lead whose model cannot write the JSON plan: after two invalid plans the run goes on with
squad's own plan for the goal (the offline planner's, else one task for the lead), logged as
``plan_fallback`` and shown on the run page (``process.strict_plan: true`` fails it instead:
see test_runner.py).

The weak model is the OpenAI stub server on 127.0.0.1, answering plan requests in prose and
reviews in markdown, its verdict on the last line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from squad.app import App
from squad.model import ChatModel, ModelEvent
from squad.model.stub_answers import Behaviour, answer
from squad.model.testing import OpenAIStubServer
from squad.runtime.plan import fallback_plan
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec
from squad.web.runs import run_detail
from tests.runtime.test_runner import (
    TEAM_YAML,
    DiesOnCall,
    events,
    fast_models,
    of_kind,
    on_stub,
    user_messages,
)
from tests.support.web import serve

PLAN_ASKED = "Write a plan for this goal as JSON."
PROSE = "Sure! First we research the market, then we write the report."
OFFLINE_TASKS = ["research-market", "write-report"]  # the goal's two clauses


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")


def weak_model(body: Any) -> Behaviour:
    """Prose where a plan is asked for; reasons then a verdict in markdown for a review; the
    task's first line else."""
    said = user_messages(body)[-1]
    if said.startswith(PLAN_ASKED):
        return answer(PROSE)
    if said.startswith("Review the work for this task."):
        return answer("The work covers the task.\n\n**Approved** - nothing to add.")
    return answer(f"Done: {said.splitlines()[0]}")


def plan_requests(stub: OpenAIStubServer) -> int:
    return sum(user_messages(b)[-1].startswith(PLAN_ASKED) for b in stub.bodies)


def test_a_lead_that_never_writes_a_json_plan_runs_the_offline_planners_plan(app: App) -> None:
    with OpenAIStubServer(weak_model) as stub:
        spec = squad_from_text(on_stub(TEAM_YAML, stub.url), source="team.yaml")
        workspace = app.squads.create(spec).path
        lines: list[str] = []
        result = app.runner(model_factory=fast_models(), progress=lines.append).run(spec, workspace)
        asked = plan_requests(stub)

    assert result.succeeded, result.error
    assert asked == 2  # the plan and its retry, then no more
    assert result.tasks == dict.fromkeys(OFFLINE_TASKS, "done")
    for task in OFFLINE_TASKS:
        assert (workspace / "tasks" / task / "output.md").read_text().startswith("Done: Task:")
    log = events(result)
    assert [e["attempt"] for e in of_kind(log, "plan_invalid")] == [1, 2]
    [fallback] = of_kind(log, "plan_fallback")
    assert fallback["kind"] == "offline_planner" and fallback["agent"] == "lead"
    assert fallback["tasks"] == OFFLINE_TASKS
    assert len(fallback["errors"]) == 2
    assert all("holds no JSON object" in e for e in fallback["errors"])
    [written] = of_kind(log, "plan_written")
    assert written["fallback"] == "offline_planner" and written["tasks"] == OFFLINE_TASKS
    reviews = of_kind(log, "review")
    assert [(e["node"], e["approved"]) for e in reviews] == [(t, True) for t in OFFLINE_TASKS]
    plan = (workspace / "plans" / "plan-001.md").read_text(encoding="utf-8")
    assert "Planned by: squad's offline planner (lead's plan was invalid twice)" in plan
    assert "Research the market." in plan and "Write the report." in plan
    assert any("the lead's plan was invalid twice" in line for line in lines)
    assert any("process.strict_plan: true" in line for line in lines)

    shown = run_detail(app, result.run_id).plan
    assert shown is not None and shown.fallback is not None
    assert shown.fallback.kind == "offline_planner"
    assert shown.fallback.reason == (
        "the lead's plan was invalid twice; the run goes on with the offline planner's plan "
        "for the goal (2 tasks)"
    )
    assert shown.fallback.errors == fallback["errors"]


def test_the_run_page_and_api_show_the_plan_fallback(app: App) -> None:
    with OpenAIStubServer(weak_model) as stub:
        spec = squad_from_text(on_stub(TEAM_YAML, stub.url), source="team.yaml")
        result = app.runner(model_factory=fast_models()).run(spec, app.squads.create(spec).path)
    assert result.succeeded, result.error
    spec, workspace = app.squads.definition("team")
    model_planned = app.runner().run(spec, workspace, model="offline")
    assert model_planned.succeeded

    with serve(app) as site:
        page = site.get(f"/runs/{result.run_id}")
        data = site.get(f"/api/v1/runs/{result.run_id}").json()
        plain = site.get(f"/runs/{model_planned.run_id}")

    assert page.status_code == 200
    notice = re.search(r'<p class="warn" id="plan-fallback">(.*?)</p>', page.text, re.S)
    assert notice is not None
    assert "The lead's plan was invalid twice" in notice[1]
    assert "the offline planner's plan for the goal" in notice[1]
    assert "With process.strict_plan: true the run fails instead" in notice[1]
    assert data["plan"]["fallback"]["kind"] == "offline_planner"
    assert plain.status_code == 200 and 'id="plan-fallback"' not in plain.text


def test_a_run_killed_after_a_fallback_plan_resumes_it_without_planning_again(
    app: App,
) -> None:
    with OpenAIStubServer(weak_model) as stub:
        spec = squad_from_text(on_stub(TEAM_YAML, stub.url), source="team.yaml")
        workspace = app.squads.create(spec).path
        real = fast_models()

        def dies_mid_second_task(
            spec: ModelSpec, on_event: Callable[[ModelEvent], None]
        ) -> ChatModel:
            # calls: plan, plan again, research-market, its review, write-report (dies)
            return DiesOnCall(real(spec, on_event), die_on=5)

        killed = app.runner(model_factory=dies_mid_second_task).run(spec, workspace)
        before = len(stub.bodies)
        first_output = workspace / "tasks" / "research-market" / "output.md"
        kept = (first_output.read_bytes(), first_output.stat().st_mtime_ns)

        resumed = app.runner(model_factory=fast_models()).resume(killed.run_id)
        after = stub.bodies[before:]

    assert killed.status == "interrupted"
    assert killed.tasks["research-market"] == "done"
    assert resumed.succeeded, resumed.error
    assert resumed.tasks == dict.fromkeys(OFFLINE_TASKS, "done")
    asked = [user_messages(b)[-1] for b in after]
    assert not any(a.startswith(PLAN_ASKED) for a in asked)  # the checkpoint kept the plan
    assert len(asked) == 2 and "Task: Write the report." in asked[0]  # the task and its review
    assert (first_output.read_bytes(), first_output.stat().st_mtime_ns) == kept
    assert [p.name for p in (workspace / "plans").iterdir()] == ["plan-001.md"]
    log = events(resumed)
    assert len(of_kind(log, "plan_fallback")) == 1 and len(of_kind(log, "plan_written")) == 1
    assert [e["node"] for e in of_kind(log, "node_end")] == OFFLINE_TASKS


# -- the fallback plan, pure ----------------------------------------------------------------


def test_the_fallback_is_the_offline_planners_plan_over_the_squads_agents() -> None:
    spec = squad_from_text(TEAM_YAML, source="team.yaml")
    plan = fallback_plan(
        spec, "Research the market for small\ntools, then write the report; review it."
    )
    assert plan.kind == "offline_planner"
    assert [(t.id, t.agent, t.depends_on) for t in plan.tasks] == [
        ("research-market-small", "researcher", ()),
        ("write-report", "writer", ("research-market-small",)),
        ("review", "reviewer", ("write-report",)),
    ]
    assert plan.tasks[0].description == "Research the market for small tools."


def test_a_goal_the_offline_planner_cannot_split_becomes_one_task_for_the_lead() -> None:
    spec = squad_from_text(TEAM_YAML, source="team.yaml")
    for goal, description in (("Launch.", "Launch."), ("", "Work toward the squad's goal.")):
        plan = fallback_plan(spec, goal)
        assert plan.kind == "lead_task"
        [task] = plan.tasks
        assert (task.id, task.agent, task.depends_on, task.description) == (
            "goal",
            "lead",
            (),
            description,
        )
        assert plan.describe() == (
            "the lead's plan was invalid twice; the run goes on with one task for lead, "
            "the goal itself"
        )
