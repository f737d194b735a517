"""Checks on a structurally valid squad: pure, each problem at its own key.

:func:`check_squad` finds errors (cross-references that cannot work); what validates but is
unlikely to be meant is a warning of :mod:`squad.spec.lint`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import PurePath

from squad.errors import Problem
from squad.paths import SLUG_PATTERN
from squad.spec.models import (
    McpServerSpec,
    SquadSpec,
    split_tool_ref,
    suggest_slug,
)

__all__ = ["check_squad", "command_problem"]

_SLUG = re.compile(SLUG_PATTERN)


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
    problems += _check_mcp_servers(spec)
    problems += _check_agent_tools(spec)
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
    if spec.process.type == "sequential" and not spec.tasks:
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


def _check_mcp_servers(spec: SquadSpec) -> list[Problem]:
    problems: list[Problem] = []
    for name, server in spec.mcp_servers.items():
        at = ("mcp_servers", name)
        if not _SLUG.match(name):
            problems.append(
                Problem(
                    f"MCP server name {name!r} is not a valid id: use 1-63 lowercase letters, "
                    "digits and '-', starting with a letter or digit",
                    path=at,
                    hint=f"rename it, for example to {suggest_slug(name)!r} (agents' tools "
                    "name it, and its tools reach the model as '<server>__<tool>')",
                )
            )
        problems += _check_transport(server, at)
    return problems


def _check_transport(server: McpServerSpec, at: tuple[str | int, ...]) -> list[Problem]:
    if server.command is not None and server.url is not None:
        return [
            Problem(
                "an MCP server has either command (stdio) or url (streamable HTTP), not both",
                path=(*at, "url"),
                hint="remove one of them",
            )
        ]
    if server.command is None and server.url is None:
        return [
            Problem(
                "an MCP server needs a command (started over stdio) or a url (streamable HTTP)",
                path=at,
                hint="add command: mcp-server-time, or url: 'http://127.0.0.1:8000/mcp'",
            )
        ]
    if server.url is not None:
        return [
            Problem(
                f"{key} belongs to a stdio server (command:), not to one reached by url",
                path=(*at, key),
                hint=f"remove {key}, or start the server with command:",
            )
            for key in ("args", "env")
            if getattr(server, key)  # not model_fields_set: a manifest holds every default
        ]
    problems = []
    if server.headers_env:
        problems.append(
            Problem(
                "headers_env belongs to a server reached by url, not to a stdio one",
                path=(*at, "headers_env"),
                hint="remove it, and pass the variables the server needs with env:",
            )
        )
    unusable = command_problem(server.command or "")
    if unusable is not None:
        message, hint = unusable
        problems.append(Problem(message, path=(*at, "command"), hint=hint))
    return problems


def command_problem(command: str) -> tuple[str, str] | None:
    """(message, hint) when ``command`` cannot name one program wherever squad runs it."""
    if command != command.strip() or "\0" in command:
        return (
            f"command {command!r} has leading or trailing spaces or a NUL character",
            "write the program's name or absolute path alone",
        )
    if command.startswith("~"):
        return (
            f"command {command!r} starts with '~', which no shell expands here",
            "write the absolute path, such as '/home/me/bin/server'",
        )
    if "/" in command and not PurePath(command).is_absolute():
        return (
            f"command {command!r} is a relative path: relative to what is unclear (the "
            "server runs in the workspace folder)",
            "use a name found on PATH or an absolute path",
        )
    if not PurePath(command).is_absolute() and any(c.isspace() for c in command):
        program = command.split()[0]
        return (
            f"command {command!r} holds spaces: it names one program, without arguments",
            f"write command: {program} and put the rest in args:",
        )
    return None


def _check_agent_tools(spec: SquadSpec) -> list[Problem]:
    problems: list[Problem] = []
    servers = set(spec.mcp_servers)
    for index, agent in enumerate(spec.agents):
        listed: set[str] = set()
        for item_index, entry in enumerate(agent.tools):
            path = ("agents", index, "tools", item_index)
            server, tool = split_tool_ref(entry)
            if server not in servers:
                hint = (
                    _closest(server, servers)
                    if servers
                    else "define it under mcp_servers: (name -> command: or url:)"
                )
                problems.append(
                    Problem(
                        f"agent {agent.id!r} lists tools of unknown MCP server {server!r}",
                        path=path,
                        hint=hint,
                    )
                )
            elif tool is not None and not tool:
                problems.append(
                    Problem(
                        f"tools entry {entry!r} names no tool after the '.'",
                        path=path,
                        hint=f"write {server!r} for all its tools, or '{server}.<tool name>'",
                    )
                )
            elif entry in listed:
                message = f"tools entry {entry!r} is listed twice"
                problems.append(Problem(message, path=path, hint="list it once"))
            listed.add(entry)
    return problems
