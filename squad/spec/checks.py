"""Cross-reference checks on a structurally valid squad: pure, each problem at its own key."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from squad.errors import Problem
from squad.spec.models import SquadSpec

__all__ = ["check_squad"]


def check_squad(spec: SquadSpec) -> list[Problem]:
    """Every cross-reference problem in ``spec``; an empty list means the squad is coherent."""
    problems: list[Problem] = []
    agent_ids = _unique_ids(problems, "agents", [a.id for a in spec.agents], "agent")
    task_ids = _unique_ids(problems, "tasks", [t.id for t in spec.tasks], "task")
    problems += _check_leads(spec)
    problems += _check_task_refs(spec, agent_ids, task_ids)
    problems += _check_cycles(spec, task_ids)
    problems += _check_process(spec)
    problems += _check_schedule(spec)
    return problems


def _unique_ids(problems: list[Problem], key: str, ids: list[str], what: str) -> set[str]:
    seen: dict[str, int] = {}
    for index, item_id in enumerate(ids):
        if item_id in seen:
            problems.append(
                Problem(
                    f"duplicate {what} id {item_id!r} (also {key}[{seen[item_id]}])",
                    path=(key, index, "id"),
                    hint=f"give every {what} its own id",
                )
            )
        else:
            seen[item_id] = index
    return set(seen)


def _closest(value: str, candidates: Iterable[str]) -> str:
    options = sorted(candidates)
    close = difflib.get_close_matches(value, options, n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return "valid: " + ", ".join(repr(o) for o in options) if options else "define it first"


def _check_leads(spec: SquadSpec) -> list[Problem]:
    leads = [i for i, a in enumerate(spec.agents) if a.lead]
    return [
        Problem(
            f"more than one lead agent (also agents[{leads[0]}])",
            path=("agents", index, "lead"),
            hint="mark exactly one agent with lead: true",
        )
        for index in leads[1:]
    ]


def _check_task_refs(spec: SquadSpec, agent_ids: set[str], task_ids: set[str]) -> list[Problem]:
    problems: list[Problem] = []
    for index, task in enumerate(spec.tasks):
        if task.agent not in agent_ids:
            problems.append(
                Problem(
                    f"task {task.id!r} names unknown agent {task.agent!r}",
                    path=("tasks", index, "agent"),
                    hint=_closest(task.agent, agent_ids),
                )
            )
        listed: set[str] = set()
        for dep_index, dep in enumerate(task.depends_on):
            path = ("tasks", index, "depends_on", dep_index)
            if dep == task.id:
                problems.append(
                    Problem(
                        f"task {task.id!r} depends on itself (a cycle)",
                        path=path,
                        hint="remove it from its own depends_on",
                    )
                )
            elif dep not in task_ids:
                problems.append(
                    Problem(
                        f"task {task.id!r} depends on unknown task {dep!r}",
                        path=path,
                        hint=_closest(dep, task_ids - {task.id}),
                    )
                )
            elif dep in listed:
                problems.append(
                    Problem(f"task {dep!r} is listed twice", path=path, hint="list it once")
                )
            listed.add(dep)
    return problems


def _check_cycles(spec: SquadSpec, task_ids: set[str]) -> list[Problem]:
    """Report each dependency cycle once, at the edge that closes it (self-cycles excluded)."""
    index_of = {t.id: i for i, t in reversed(list(enumerate(spec.tasks)))}
    edges = {t.id: [d for d in t.depends_on if d in task_ids and d != t.id] for t in spec.tasks}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    problems: list[Problem] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        trail.append(node)
        for dep in edges.get(node, []):
            if state.get(dep) == 1:
                cycle = [*trail[trail.index(dep) :], dep]
                task_index = index_of[node]
                dep_index = spec.tasks[task_index].depends_on.index(dep)
                problems.append(
                    Problem(
                        "dependency cycle: " + " -> ".join(cycle),
                        path=("tasks", task_index, "depends_on", dep_index),
                        hint="remove one of these dependencies",
                    )
                )
            elif dep not in state:
                visit(dep, trail)
        trail.pop()
        state[node] = 2

    for task in spec.tasks:
        if task.id not in state:
            visit(task.id, [])
    return problems


def _check_process(spec: SquadSpec) -> list[Problem]:
    if spec.process == "sequential" and not spec.tasks:
        return [
            Problem(
                "a sequential squad needs at least one task",
                path=("tasks",) if "tasks" in spec.model_fields_set else ("process",),
                hint="add tasks, or use process: hierarchical to let the lead plan them",
            )
        ]
    return []


def _check_schedule(spec: SquadSpec) -> list[Problem]:
    schedule = spec.schedule
    if schedule is None:
        return []
    if schedule.cron and schedule.interval:
        return [
            Problem(
                "a schedule has either cron or interval, not both",
                path=("schedule", "interval"),
                hint="remove one of them",
            )
        ]
    if not schedule.cron and not schedule.interval and not schedule.run_on_start:
        return [
            Problem(
                "the schedule never fires",
                path=("schedule",),
                hint="set cron: '0 9 * * 1-5', interval: 30m, or run_on_start: true",
            )
        ]
    return []
