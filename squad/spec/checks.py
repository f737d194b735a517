"""Checks on a structurally valid squad: pure, each problem at its own key.

:func:`check_squad` finds errors (cross-references that cannot work); :func:`warnings_for`
finds what validates but is unlikely to be what the author meant. A warning is kept only when
it can be stated exactly: a standard variable such as HOME named as the API key, a provider
name one typo away from a known one. Guesses about taste (an interval shorter than a run, an
agent no task uses) are not warnings.
"""

from __future__ import annotations

import difflib
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import PurePath

from squad.errors import Problem
from squad.paths import SLUG_PATTERN
from squad.spec.models import (
    DEFAULT_MODEL,
    McpServerSpec,
    ModelSpec,
    SquadSpec,
    split_tool_ref,
    suggest_slug,
)
from squad.spec.schedule import parse_cron

__all__ = ["check_squad", "warnings_for"]

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
    command_problem = _command_problem(server.command or "")
    if command_problem is not None:
        message, hint = command_problem
        problems.append(Problem(message, path=(*at, "command"), hint=hint))
    return problems


def _command_problem(command: str) -> tuple[str, str] | None:
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


_NOT_SECRETS = frozenset(
    {
        "HOME", "PATH", "USER", "USERNAME", "LOGNAME", "SHELL", "PWD", "OLDPWD", "LANG",
        "LANGUAGE", "TERM", "TERM_PROGRAM", "COLORTERM", "TMPDIR", "TMP", "TEMP", "HOSTNAME",
        "HOST", "EDITOR", "VISUAL", "PAGER", "DISPLAY", "WAYLAND_DISPLAY", "TZ", "MAIL",
        "SHLVL", "PS1", "PS2", "IFS", "MANPATH", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME",
        "VIRTUAL_ENV", "CONDA_PREFIX", "SSH_AUTH_SOCK", "SSH_TTY", "SSH_CONNECTION",
        "SSH_CLIENT", "COLUMNS", "LINES", "UID", "EUID", "PPID", "HISTFILE", "HISTSIZE",
        "SQUAD_HOME", "SQUAD_WORKSPACES", "SQUAD_CONFIGS", "SQUAD_DATABASE_URL",
    }
)  # fmt: skip
"""Variables every shell or squad itself sets to paths, names and locales: never a key."""
_NOT_SECRET_PREFIXES = ("LC_", "XDG_")
_ENDPOINT_SUFFIXES = ("_API_BASE", "_BASE_URL", "_URL", "_URI", "_ENDPOINT")
"""litellm reads an endpoint from OPENAI_API_BASE and the like: an address, not a key."""

_PROVIDERS = (
    "openai", "anthropic", "azure", "azure_ai", "ollama", "ollama_chat", "gemini",
    "vertex_ai", "bedrock", "mistral", "groq", "cohere", "huggingface", "together_ai",
    "openrouter", "deepseek", "xai", "fireworks_ai", "perplexity", "hosted_vllm", "vllm",
    "lm_studio", "llamafile", "cerebras", "sambanova", "deepinfra", "watsonx", "databricks",
    "replicate", "nvidia_nim", "sagemaker", "litellm_proxy",
)  # fmt: skip
"""Widely used litellm providers, the targets of the typo check. A prefix that is none of
them but close to one (similarity 0.8, as "opnai" to "openai") is warned about; none of
litellm's other 150-odd providers is that close to one of these, so a real but rarer provider
is never taken for a typo."""
_TYPO_CUTOFF = 0.8


def warnings_for(
    spec: SquadSpec, *, which: Callable[[str], str | None] = shutil.which
) -> list[Problem]:
    """What validates but is unlikely to be meant, each at its own key; never an error.

    ``which`` finds an MCP server's command on this machine (:func:`shutil.which`): one it
    does not find is a warning, not an error, because a definition is often checked where it
    is written and run elsewhere; the run says it loudly if the command is still missing.
    """
    warnings: list[Problem] = []
    if "model" in spec.model_fields_set:
        warnings += _model_warnings(spec.model, ("model",))
    for index, agent in enumerate(spec.agents):
        if agent.model is not None:
            warnings += _model_warnings(agent.model, ("agents", index, "model"))
    warnings += _schedule_warnings(spec)
    warnings += _memory_warnings(spec)
    warnings += _mcp_warnings(spec, which)
    return warnings


def _model_warnings(model: ModelSpec, path: tuple[str | int, ...]) -> list[Problem]:
    warnings: list[Problem] = []
    name_warning = _model_name_warning(model.name)
    if name_warning is not None:
        message, hint = name_warning
        warnings.append(Problem(message, path=(*path, "name"), hint=hint))
    env = model.api_key_env
    if env is not None and (env in _NOT_SECRETS or env.startswith(_NOT_SECRET_PREFIXES)):
        warnings.append(
            Problem(
                f"api_key_env names {env!r}, a standard environment variable that holds no API key",
                path=(*path, "api_key_env"),
                hint="name the variable that holds the key, for example OPENAI_API_KEY",
            )
        )
    elif env is not None and env.upper().endswith(_ENDPOINT_SUFFIXES):
        warnings.append(
            Problem(
                f"api_key_env names {env!r}, which by its name holds an address, not a key",
                path=(*path, "api_key_env"),
                hint="put the URL in api_base: and the key's variable in api_key_env:",
            )
        )
    return warnings


def _model_name_warning(name: str) -> tuple[str, str] | None:
    """(message, hint) when ``name`` looks like a typo of a provider or of ``offline``."""
    provider, slash, rest = name.partition("/")
    if not slash:
        if name != DEFAULT_MODEL and difflib.get_close_matches(
            name.lower(), [DEFAULT_MODEL], cutoff=_TYPO_CUTOFF
        ):
            return (
                f"model {name!r} is not the built-in {DEFAULT_MODEL!r} model; it would go "
                "to litellm",
                f"did you mean {DEFAULT_MODEL!r}?",
            )
        return None
    if provider in _PROVIDERS:
        return None
    close = difflib.get_close_matches(provider.lower(), _PROVIDERS, n=1, cutoff=_TYPO_CUTOFF)
    if not close:
        return None
    return (
        f"model provider {provider!r} looks like a typo of {close[0]!r}",
        f"did you mean '{close[0]}/{rest}'? An unknown provider fails at the first model call",
    )


def _schedule_warnings(spec: SquadSpec) -> list[Problem]:
    schedule = spec.schedule
    if schedule is None:
        return []
    warnings: list[Problem] = []
    if schedule.cron is not None and parse_cron(schedule.cron).only_on_leap_day:
        warnings.append(
            Problem(
                f"cron {schedule.cron!r} fires only on 29 February, once every four years",
                path=("schedule", "cron"),
                hint="if that is meant, ignore this; otherwise check the day and month fields",
            )
        )
    if "timezone" in schedule.model_fields_set and schedule.interval and not schedule.cron:
        warnings.append(
            Problem(
                "timezone has no effect on an interval schedule",
                path=("schedule", "timezone"),
                hint="it is the clock a cron expression is read in; remove it, or use cron:",
            )
        )
    return warnings


def _memory_warnings(spec: SquadSpec) -> list[Problem]:
    """``extract: true`` where memory is off: the extractor needs memory to write to."""
    warnings: list[Problem] = []
    enabled = [
        spec.memory.enabled if a.memory.enabled is None else a.memory.enabled for a in spec.agents
    ]
    if "extract" in spec.memory.model_fields_set and spec.memory.extract and not any(enabled):
        warnings.append(
            Problem(
                "extract: true has no effect: memory is off for every agent",
                path=("memory", "extract"),
                hint="set memory.enabled: true, or remove extract",
            )
        )
    for index, agent in enumerate(spec.agents):
        if agent.memory.extract is True and not enabled[index]:
            warnings.append(
                Problem(
                    f"agent {agent.id!r} has extract: true but its memory is off",
                    path=("agents", index, "memory", "extract"),
                    hint="set enabled: true for this agent, or remove extract",
                )
            )
    return warnings


def _mcp_warnings(spec: SquadSpec, which: Callable[[str], str | None]) -> list[Problem]:
    warnings: list[Problem] = []
    used = {split_tool_ref(entry)[0] for agent in spec.agents for entry in agent.tools}
    for name, server in spec.mcp_servers.items():
        at = ("mcp_servers", name)
        if name not in used:
            warnings.append(
                Problem(
                    f"MCP server {name!r} is in no agent's tools, so it is never started",
                    path=at,
                    hint=f"add {name!r} to the tools: of the agents that should use it",
                )
            )
        command = server.command
        if command is None or server.url is not None or _command_problem(command) is not None:
            continue
        if which(command) is None:
            where = "does not exist or is not executable" if "/" in command else "is not on PATH"
            warnings.append(
                Problem(
                    f"command {command!r} of MCP server {name!r} {where} on this machine",
                    path=(*at, "command"),
                    hint="install it where squad runs, or fix the name; a run without it "
                    "goes on without this server's tools",
                )
            )
    warnings += _redundant_tool_warnings(spec)
    return warnings


def _redundant_tool_warnings(spec: SquadSpec) -> list[Problem]:
    """'git.git_log' beside 'git', which already allows every tool of git."""
    warnings: list[Problem] = []
    for index, agent in enumerate(spec.agents):
        whole = {entry for entry in agent.tools if "." not in entry}
        for item_index, entry in enumerate(agent.tools):
            server, tool = split_tool_ref(entry)
            if tool and server in whole:
                warnings.append(
                    Problem(
                        f"tools entry {entry!r} has no effect: {server!r} already allows "
                        "all its tools",
                        path=("agents", index, "tools", item_index),
                        hint=f"remove it, or replace {server!r} by the tools it should allow",
                    )
                )
    return warnings
