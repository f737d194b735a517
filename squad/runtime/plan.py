"""Plans of a hierarchical squad: the lead's JSON, checked at the trust boundary, and its file.

The lead model answers with JSON; it is untrusted input, validated like a YAML definition
(strict pydantic, then cross-references). A plan that does not validate is retried once with
the validation error (by the caller); the error text here is written for the model to fix.
When the retry is invalid too, the run goes on with :func:`fallback_plan` (unless the squad
sets ``process.strict_plan``): a small local model that cannot write the JSON still runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from squad.errors import PlanError
from squad.paths import SLUG_PATTERN
from squad.runtime.tasks import TaskNode, topological_order
from squad.spec.models import SquadSpec

__all__ = [
    "FallbackKind",
    "PlanFallback",
    "fallback_plan",
    "fallback_reason",
    "parse_plan",
    "plan_request",
    "plan_response_format",
    "plan_response_formats",
    "render_plan",
]

MAX_PLAN_TASKS = 20


class _PlanTask(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: Annotated[str, Field(pattern=SLUG_PATTERN)]
    description: Annotated[str, Field(min_length=1)]
    agent: str
    depends_on: list[str] = []


class _Plan(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    tasks: Annotated[list[_PlanTask], Field(min_length=1, max_length=MAX_PLAN_TASKS)]


def plan_response_format(squad: SquadSpec) -> dict[str, object]:
    """Structured output for the plan (OpenAI's ``json_schema`` response format, which
    llama.cpp's and vLLM's servers also accept): a JSON object of tasks whose ``agent`` must
    be one of the squad's. Where the provider does not follow it, :func:`parse_plan` still
    checks everything."""
    agents = sorted(a.id for a in squad.agents)
    task = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": SLUG_PATTERN},
            "description": {"type": "string", "minLength": 1},
            "agent": {"type": "string", "enum": agents},
            "depends_on": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["id", "description", "agent", "depends_on"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {
            "tasks": {"type": "array", "items": task, "minItems": 1, "maxItems": MAX_PLAN_TASKS}
        },
        "required": ["tasks"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "plan", "schema": schema}}


def plan_response_formats(squad: SquadSpec) -> list[dict[str, Any]]:
    """The plan's structured-output request in the forms providers take, most standard first:
    OpenAI's ``json_schema``, then llama-cpp-python's ``json_object`` with a ``schema``."""
    standard = plan_response_format(squad)
    schema = standard["json_schema"]["schema"]  # type: ignore[index]
    return [standard, {"type": "json_object", "schema": schema}]


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def _json_object(text: str) -> object:
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text[text.find("{") : text.rfind("}") + 1]
    if not candidate:
        raise PlanError('the answer holds no JSON object; answer with {"tasks": [...]}')
    try:
        return json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise PlanError(f"the JSON does not parse: {exc}") from None


def parse_plan(text: str, squad: SquadSpec) -> list[TaskNode]:
    """Tasks from the lead's answer, or PlanError listing every problem found."""
    try:
        plan = _Plan.model_validate(_json_object(text))
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise PlanError(f"the plan does not match the schema: {details}") from None
    agents = {a.id for a in squad.agents}
    ids = [t.id for t in plan.tasks]
    problems: list[str] = []
    for task in plan.tasks:
        if task.agent not in agents:
            problems.append(
                f"task {task.id!r}: agent {task.agent!r} is not one of {sorted(agents)}"
            )
        for dep in task.depends_on:
            if dep not in ids or dep == task.id:
                problems.append(f"task {task.id!r}: depends_on {dep!r} is not another task")
    if len(set(ids)) != len(ids):
        problems.append("task ids must be unique")
    if problems:
        raise PlanError("; ".join(problems))
    nodes = [TaskNode(t.id, t.agent, tuple(t.depends_on), t.description) for t in plan.tasks]
    try:
        topological_order(nodes)
    except ValueError as exc:
        raise PlanError(str(exc)) from None
    return nodes


def plan_request(squad: SquadSpec, goal: str) -> str:
    """The lead's planning prompt (the JSON contract the offline model also follows)."""
    team = "\n".join(f"- {a.id}: {a.role}" for a in squad.agents)
    return (
        f"Write a plan for this goal as JSON.\nGoal: {goal.strip()}\n\nAgents:\n{team}\n\n"
        'Answer with one JSON object: {"tasks": [{"id": "short-slug", "description": "...", '
        '"agent": "<agent id>", "depends_on": ["<task id>", ...]}]} with at most '
        f"{MAX_PLAN_TASKS} tasks, ids in lowercase letters, digits and '-'."
    )


FallbackKind = Literal["offline_planner", "lead_task"]
"""Which plan a run went on with when its lead's was invalid twice: the offline planner's
for the goal, or one task for the lead with the goal as its description."""


@dataclass(frozen=True)
class PlanFallback:
    """The plan a run goes on with when its lead's plan is invalid twice."""

    kind: FallbackKind
    tasks: tuple[TaskNode, ...]

    def describe(self) -> str:
        """One line for a person: what happened and what the run does now."""
        return fallback_reason(self.kind, len(self.tasks), self.tasks[0].agent)

    def author(self, lead: str) -> str:
        """Who the plan file says planned it."""
        if self.kind == "offline_planner":
            return f"squad's offline planner ({lead}'s plan was invalid twice)"
        return f"squad, one task for {lead} ({lead}'s plan was invalid twice)"


def fallback_reason(kind: str, tasks: int, lead: str) -> str:
    """One line for a person on a run that went on with a :class:`PlanFallback` of ``kind``
    (``tasks`` tasks; the lead task's agent is ``lead``)."""
    if kind == "offline_planner":
        plan = f"the offline planner's plan for the goal ({tasks} task{'s' * (tasks != 1)})"
    else:
        plan = f"one task for {lead}, the goal itself"
    return f"the lead's plan was invalid twice; the run goes on with {plan}"


def fallback_plan(squad: SquadSpec, goal: str) -> PlanFallback:
    """The plan for ``goal`` when the lead cannot write one (pure): the offline planner's
    (:func:`squad.model.offline.plan_tasks`, over the squad's agents), or, when that has no
    task for the goal (it has no clause to plan, or what it plans does not validate), one task
    for the lead with the goal as its description."""
    from squad.model.offline import plan_tasks

    planned = plan_tasks(goal, [(a.id, a.role) for a in squad.agents])
    if planned:
        try:
            tasks = parse_plan(json.dumps({"tasks": planned}), squad)
            return PlanFallback("offline_planner", tuple(tasks))
        except PlanError:
            pass
    text = goal.strip() or squad.description.strip() or "Work toward the squad's goal."
    return PlanFallback("lead_task", (TaskNode("goal", squad.lead.id, (), text),))


def render_plan(number: int, goal: str, tasks: Sequence[TaskNode], lead: str) -> str:
    """``plans/plan-NNN.md``: what a person reads to see what the squad is doing."""
    lines = [
        f"# Plan {number:03d}",
        "",
        f"Goal: {goal.strip()}",
        "",
        f"Planned by: {lead}",
        "",
        "| # | task | agent | depends on |",
        "|---|---|---|---|",
    ]
    for index, task in enumerate(tasks, start=1):
        deps = ", ".join(task.depends_on) or "-"
        lines.append(f"| {index} | `{task.id}` | {task.agent} | {deps} |")
    lines.append("")
    for task in tasks:
        lines += [f"## {task.id}", "", task.description.strip(), ""]
    return "\n".join(lines)
