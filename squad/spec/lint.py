"""Warnings on a valid squad definition: what validates but is unlikely to be what was meant.

Pure, each at its own key, never an error. A warning is kept only when it can be stated
exactly: a standard variable such as HOME named as the API key, a provider name one typo away
from a known one, an MCP command not found here. Guesses about taste (an interval shorter
than a run, an agent no task uses) are not warnings. The errors are :mod:`squad.spec.checks`.
"""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Callable

from squad.errors import Problem
from squad.spec.checks import command_problem
from squad.spec.models import (
    DEFAULT_MODEL,
    ModelSpec,
    SquadSpec,
    split_tool_ref,
)
from squad.spec.schedule import parse_cron

__all__ = ["warnings_for"]


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
    warnings += _process_warnings(spec)
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


def _process_warnings(spec: SquadSpec) -> list[Problem]:
    """``strict_plan`` on a squad whose lead plans nothing."""
    if spec.process.type == "sequential" and spec.process.strict_plan:
        return [
            Problem(
                "strict_plan has no effect on a sequential squad: its tasks are written, "
                "not planned",
                path=("process", "strict_plan"),
                hint="use type: hierarchical to let the lead plan, or remove strict_plan",
            )
        ]
    return []


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
        if command is None or server.url is not None or command_problem(command) is not None:
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
