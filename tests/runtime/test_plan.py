"""The lead's plan JSON is untrusted: validated, with errors a model can act on."""

from __future__ import annotations

import json

import pytest

from squad.errors import PlanError
from squad.runtime.plan import parse_plan, plan_request, render_plan
from squad.spec.loader import squad_from_text

SQUAD = squad_from_text("""
name: code
process: hierarchical
goal: Add validation.
agents:
  - {id: planner, role: Plans, lead: true}
  - {id: developer, role: Builds}
  - {id: reviewer, role: Reviews}
""")

GOOD = {
    "tasks": [
        {"id": "tests", "description": "Write failing tests.", "agent": "developer"},
        {
            "id": "code",
            "description": "Make them pass.",
            "agent": "developer",
            "depends_on": ["tests"],
        },
    ]
}


def test_a_valid_plan_becomes_task_nodes() -> None:
    nodes = parse_plan(json.dumps(GOOD), SQUAD)
    assert [(n.id, n.agent, n.depends_on) for n in nodes] == [
        ("tests", "developer", ()),
        ("code", "developer", ("tests",)),
    ]


def test_json_inside_a_fence_or_prose_is_found() -> None:
    text = "Here is the plan:\n```json\n" + json.dumps(GOOD) + "\n```\nDone."
    assert len(parse_plan(text, SQUAD)) == 2
    assert len(parse_plan("Sure! " + json.dumps(GOOD) + " Hope this helps", SQUAD)) == 2


@pytest.mark.parametrize(
    ("plan", "words"),
    [
        ("no json here", "holds no JSON object"),
        ("{not json}", "does not parse"),
        (json.dumps({"tasks": []}), "tasks"),
        (
            json.dumps({"tasks": [{"id": "Bad Id", "description": "d", "agent": "developer"}]}),
            "tasks.0.id",
        ),
        (
            json.dumps({"tasks": [{"id": "a", "description": "d", "agent": "ghost"}]}),
            "agent 'ghost' is not one of",
        ),
        (
            json.dumps(
                {
                    "tasks": [
                        {"id": "a", "description": "d", "agent": "developer", "depends_on": ["zzz"]}
                    ]
                }
            ),
            "depends_on 'zzz'",
        ),
        (
            json.dumps(
                {
                    "tasks": [
                        {"id": "a", "description": "d", "agent": "developer", "depends_on": ["b"]},
                        {"id": "b", "description": "d", "agent": "developer", "depends_on": ["a"]},
                    ]
                }
            ),
            "cycle",
        ),
        (
            json.dumps({"tasks": [{"id": "a", "description": "d", "agent": "developer"}] * 2}),
            "unique",
        ),
    ],
)
def test_bad_plans_are_refused_with_a_reason(plan: str, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        parse_plan(plan, SQUAD)


def test_request_and_rendering_name_the_agents_and_tasks() -> None:
    request = plan_request(SQUAD, "Add validation.")
    assert "- developer: Builds" in request and '"tasks"' in request
    text = render_plan(3, "Add validation.", parse_plan(json.dumps(GOOD), SQUAD), "planner")
    assert text.startswith("# Plan 003\n")
    assert "| 2 | `code` | developer | tests |" in text
    assert "## tests\n\nWrite failing tests." in text
