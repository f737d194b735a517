"""Checks on a structurally valid squad: pure, each problem at its own key.

:func:`check_squad` finds errors (cross-references that cannot work); :func:`warnings_for`
finds what validates but is unlikely to be what the author meant. A warning is kept only when
it can be stated exactly: a standard variable such as HOME named as the API key, a provider
name one typo away from a known one. Guesses about taste (an interval shorter than a run, an
agent no task uses) are not warnings.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from squad.errors import Problem
from squad.spec.models import DEFAULT_MODEL, ModelSpec, SquadSpec
from squad.spec.schedule import parse_cron

__all__ = ["check_squad", "warnings_for"]


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


def warnings_for(spec: SquadSpec) -> list[Problem]:
    """What validates but is unlikely to be meant, each at its own key; never an error."""
    warnings: list[Problem] = []
    if "model" in spec.model_fields_set:
        warnings += _model_warnings(spec.model, ("model",))
    for index, agent in enumerate(spec.agents):
        if agent.model is not None:
            warnings += _model_warnings(agent.model, ("agents", index, "model"))
    warnings += _schedule_warnings(spec)
    warnings += _memory_warnings(spec)
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
