"""The squad definition format: strict pydantic models for untrusted YAML.

Field docstrings become descriptions in ``squad schema``, so editors show them on hover.
Cross-references (task -> agent, dependencies, cycles) are checked in :mod:`squad.spec.checks`
so every problem in a file is reported at once, each at its own key.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from squad.paths import SLUG_PATTERN
from squad.spec.schedule import parse_cron, parse_interval
from squad.spec.window import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW

__all__ = [
    "AgentMemory",
    "AgentSpec",
    "Limits",
    "McpServerSpec",
    "MemoryPolicy",
    "ModelSpec",
    "ProcessSpec",
    "ReviewMode",
    "Schedule",
    "SquadSpec",
    "TaskSpec",
    "split_tool_ref",
]

_SLUG = re.compile(SLUG_PATTERN)
_WORKSPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
DEFAULT_MCP_TIMEOUT_S = 30.0
DEFAULT_MCP_STARTUP_TIMEOUT_S = 60.0
DEFAULT_MODEL = "offline"


def _invalid(kind: str, message: str) -> PydanticCustomError:
    """A validation error whose message is already final (user text is never a template)."""
    return PydanticCustomError(kind, "{message}", {"message": message})


def suggest_slug(value: str) -> str:
    """The slug closest to ``value``: lowercased, runs of other characters turned into '-'."""
    slug = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")[:63].strip("-")
    return slug or "my-squad"


def _check_slug(value: str) -> str:
    if not _SLUG.match(value):
        raise _invalid(
            "slug",
            f"{value!r} is not a valid id: use 1-63 lowercase letters, digits and '-', "
            f"starting with a letter or digit (for example {suggest_slug(value)!r})",
        )
    return value


def _check_workspace(value: str) -> str:
    if not _WORKSPACE.match(value) or ".." in value:
        raise _invalid(
            "workspace_name",
            f"{value!r} is not a folder name under the workspace root: use letters, digits, "
            f"'-', '_' and '.', no '/' and no '..' (for example {suggest_slug(value)!r})",
        )
    return value


def _check_cron(value: str) -> str:
    try:
        parse_cron(value)
    except ValueError as exc:
        raise _invalid("cron", f"invalid cron {value!r}: {exc}") from None
    return value


def _check_interval(value: str) -> str:
    try:
        parse_interval(value)
    except ValueError as exc:
        raise _invalid("interval", str(exc)) from None
    return value


def _check_timezone(value: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: 'Etc' is a folder, too long
        import difflib

        close = difflib.get_close_matches(value, sorted(available_timezones()), n=1)
        hint = f"did you mean {close[0]!r}?" if close else "use an IANA name like 'Europe/Berlin'"
        raise _invalid("timezone", f"unknown time zone {value!r}; {hint}") from None
    return value


def _check_env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise _invalid(
            "env_name",
            f"{value!r} is not an environment variable name (letters, digits and '_'); "
            "name the variable that holds the key, never the key itself",
        )
    return value


def _check_api_base(value: str) -> str:
    if not re.match(r"^https?://[^\s/]+", value):
        raise _invalid(
            "api_base",
            f"{value!r} is not an http(s) URL (for example 'http://127.0.0.1:8000/v1')",
        )
    return value


def _check_http_url(value: str) -> str:
    if not re.match(r"^https?://[^\s/]+", value):
        raise _invalid(
            "url",
            f"{value!r} is not an http(s) URL (for example 'http://127.0.0.1:8000/mcp')",
        )
    return value


def _check_header_name(value: str) -> str:
    if not _HEADER_NAME.match(value):
        raise _invalid(
            "header_name",
            f"{value!r} is not an HTTP header name (letters, digits and '-', such as "
            "'Authorization' or 'X-Api-Key')",
        )
    return value


def _check_context_window(value: int) -> int:
    if not MIN_CONTEXT_WINDOW <= value <= MAX_CONTEXT_WINDOW:
        raise _invalid(
            "context_window",
            f"context_window {value!r} is out of range: give the model's whole window in "
            f"tokens, prompt and answer together, from {MIN_CONTEXT_WINDOW:,} to "
            f"{MAX_CONTEXT_WINDOW:,} (for example 8192 or 128000), or leave it out to use "
            "litellm's figure for the model",
        )
    return value


def _model_from_string(value: Any) -> Any:
    if isinstance(value, str):
        return {"name": value}
    return value


Slug = Annotated[
    str, AfterValidator(_check_slug), Field(json_schema_extra={"pattern": SLUG_PATTERN})
]
NonEmpty = Annotated[str, Field(min_length=1)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ModelSpec(_Strict):
    """A model to call through litellm; in YAML either a model string or this mapping."""

    name: NonEmpty
    """litellm model string: 'offline' (built in), 'openai/gpt-4o-mini', 'ollama/llama3', ..."""
    api_base: Annotated[str, AfterValidator(_check_api_base)] | None = None
    """Base URL of an OpenAI-compatible or self-hosted endpoint."""
    api_key_env: Annotated[str, AfterValidator(_check_env_name)] | None = None
    """Name of the environment variable holding the API key (never the key itself). Without
    it the provider's usual variable (OPENAI_API_KEY, ...) applies; with ``api_base`` and no key
    set anywhere, a placeholder key is sent, as local servers (llama.cpp, Ollama, vLLM) take
    none."""
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    """Sampling temperature, 0 to 2."""
    timeout_s: Annotated[float, Field(gt=0, le=3600)] | None = None
    """Per-call timeout in seconds."""
    max_tokens: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    """Cap on tokens generated per call; the prompt keeps at least this much of the context
    window free for the answer."""
    context_window: (
        Annotated[
            int,
            AfterValidator(_check_context_window),
            Field(json_schema_extra={"minimum": MIN_CONTEXT_WINDOW, "maximum": MAX_CONTEXT_WINDOW}),
        ]
        | None
    ) = None
    """Tokens one call may hold, prompt and answer together (2,048 to 10,000,000). The
    prompt's regions (boot files, memory, recall, history, ...) are sized from it. Default:
    litellm's figure for the model, else 8,192 (the offline model: 8,192)."""
    cost_per_1k_input: Annotated[float, Field(ge=0, le=1000)] | None = None
    """US dollars per 1,000 prompt tokens; with ``cost_per_1k_output``, replaces litellm's
    price map (needed for a model litellm has no price for, such as a self-hosted one: 0)."""
    cost_per_1k_output: Annotated[float, Field(ge=0, le=1000)] | None = None
    """US dollars per 1,000 generated tokens; given together with ``cost_per_1k_input``."""

    @model_validator(mode="after")
    def _prices_come_in_pairs(self) -> ModelSpec:
        if (self.cost_per_1k_input is None) != (self.cost_per_1k_output is None):
            given = (
                "cost_per_1k_input" if self.cost_per_1k_input is not None else "cost_per_1k_output"
            )
            raise _invalid(
                "price_pair",
                f"{given} is given alone; give both cost_per_1k_input and cost_per_1k_output",
            )
        return self


ModelField = Annotated[
    ModelSpec, BeforeValidator(_model_from_string, json_schema_input_type=str | ModelSpec)
]


ProcessType = Literal["sequential", "hierarchical"]
_PROCESS_TYPES: tuple[str, ...] = ("sequential", "hierarchical")


class ProcessSpec(_Strict):
    """How the squad works; in YAML either the process type (``hierarchical``) or this
    mapping (``{type: hierarchical, strict_plan: true}``)."""

    type: ProcessType = "sequential"
    """sequential: the tasks in dependency order; hierarchical: the lead plans, others execute."""
    strict_plan: bool = False
    """Hierarchical squads: fail the run when the lead's plan is invalid twice. By default
    (false) the run goes on with a plan squad makes from the goal itself (the offline
    planner's, else one task for the lead), logged as ``plan_fallback``: what a small local
    model that cannot write the JSON plan needs."""

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The plain process type when nothing else is set, as most definitions write it (a
        stored definition reads as before the mapping form existed)."""
        return self.type if not self.strict_plan else handler(self)


def _process_from_string(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if value not in _PROCESS_TYPES:
        expected = " or ".join(repr(t) for t in _PROCESS_TYPES)
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )
    return {"type": value}


ProcessField = Annotated[
    ProcessSpec,
    BeforeValidator(_process_from_string, json_schema_input_type=ProcessType | ProcessSpec),
]


ReviewMode = Literal["off", "low_confidence", "all"]
"""Which extracted facts wait for a person's review before they are written."""


class AgentMemory(_Strict):
    """Per-agent memory overrides; unset values inherit the squad's memory policy."""

    enabled: bool | None = None
    """Whether this agent reads and writes memory (default: the squad setting)."""
    trigger_interval: Annotated[int, Field(ge=1, le=1000)] | None = None
    """Turns between background fact extractions (default: the squad setting)."""
    extract: bool | None = None
    """Whether the background extractor learns facts from this agent's conversations
    (default: the squad setting)."""
    review: ReviewMode | None = None
    """Which extracted facts wait for a person before any prompt sees them (default: the
    squad setting)."""


def split_tool_ref(entry: str) -> tuple[str, str | None]:
    """An agent's ``tools`` entry as (server, tool): 'git' -> ('git', None), 'git.git_log' ->
    ('git', 'git_log'). Server names are slugs (no '.'), so the first '.' separates them."""
    server, dot, tool = entry.partition(".")
    return server, (tool if dot else None)


class AgentSpec(_Strict):
    """One agent of the squad."""

    id: Slug
    """Unique id within the squad; names the folder agents/<id>/."""
    name: NonEmpty | None = None
    """Display name (default: the id title-cased)."""
    role: NonEmpty
    """What this agent is for, one line."""
    instructions: str = ""
    """Standing instructions added to the agent's system prompt."""
    model: ModelField | None = None
    """Model override for this agent (same forms as the squad's model)."""
    profile: Slug | None = None
    """Source profile id: the identity of the agent's experiential memory across squads."""
    lead: bool = False
    """The planner of a hierarchical squad (default: the first agent)."""
    memory: AgentMemory = AgentMemory()
    """Memory overrides for this agent."""
    tools: list[NonEmpty] = []
    """MCP tools this agent may use: a server of ``mcp_servers`` (all its tools) or
    'server.tool' (that one tool)."""

    @property
    def display_name(self) -> str:
        return self.name or self.id.replace("-", " ").title()


class TaskSpec(_Strict):
    """One task of a sequential squad (or a seed task of a hierarchical one)."""

    id: Slug
    """Unique id within the squad; names the folder tasks/<id>/."""
    description: NonEmpty
    """What to do."""
    expected_output: str | None = None
    """What a finished task hands over (helps the agent and the reviewer)."""
    agent: Slug
    """Id of the agent that does this task."""
    depends_on: list[Slug] = []
    """Ids of tasks that must be done first (no cycles)."""
    approval: bool = False
    """Pause for a human before this task runs (`squad approve`)."""


class Schedule(_Strict):
    """When the daemon runs this squad: a cron expression or an interval, not both."""

    cron: Annotated[str, AfterValidator(_check_cron)] | None = None
    """Five-field cron ('0 9 * * 1-5': weekdays at 09:00; weekday 0 = Sunday) or '@daily'."""
    interval: Annotated[str, AfterValidator(_check_interval)] | None = None
    """Fixed interval: '45s', '30m', '2h', '1d', '1h30m'."""
    timezone: Annotated[str, AfterValidator(_check_timezone)] = "UTC"
    """IANA time zone the cron expression is read in."""
    run_on_start: bool = False
    """Also run once when the daemon starts."""


class MemoryPolicy(_Strict):
    """Squad-wide memory settings."""

    enabled: bool = True
    """Whether agents read and write memory."""
    max_tokens: Annotated[int, Field(ge=0, le=200_000)] | None = None
    """Token budget of the injected agent memory block (60% experiential, 40% project).
    Default: sized from the model's context window (2,000 at 8,192 tokens)."""
    supplementary_max_tokens: Annotated[int, Field(ge=0, le=200_000)] | None = None
    """Independent budget of the global [Supplementary Context] block. Default: sized from
    the model's context window (1,000 at 8,192 tokens)."""
    recall_max_tokens: Annotated[int, Field(ge=0, le=200_000)] | None = None
    """Independent budget of the earlier conversation recalled for each message (0: off).
    Default: sized from the model's context window (1,000 at 8,192 tokens)."""
    trigger_interval: Annotated[int, Field(ge=1, le=1000)] = 6
    """Turns between background fact extractions."""
    extract: bool = True
    """Whether the background extractor learns facts from conversations (needs memory on)."""
    share_unused: bool = False
    """Let a memory layer use the share the other layer leaves unused (off: strict 60/40)."""
    review: ReviewMode = "off"
    """Which facts the extractor proposes wait in the review queue for a person (``squad
    memory review``) instead of being written: ``off`` none, ``low_confidence`` those whose
    classification confidence is under 0.7, ``all`` every new fact."""


class McpServerSpec(_Strict):
    """An MCP server whose tools agents may use: a command squad starts and talks to over
    stdio, or the URL of a streamable-HTTP server; one of the two."""

    command: NonEmpty | None = None
    """Program to start (stdio): a name found on PATH or an absolute path, no arguments."""
    args: list[str] = []
    """Arguments of ``command``; the server runs in the workspace folder."""
    env: list[EnvName] = []
    """Names of environment variables passed through to the server (never values); it gets
    only these and HOME, LOGNAME, PATH, SHELL, TERM, USER."""
    url: Annotated[str, AfterValidator(_check_http_url)] | None = None
    """Endpoint of a streamable-HTTP server, such as 'http://127.0.0.1:8000/mcp'."""
    headers_env: dict[Annotated[str, AfterValidator(_check_header_name)], EnvName] = {}
    """HTTP headers sent to ``url``: header name -> name of the environment variable holding
    its value (for example Authorization: SEARCH_TOKEN, the variable holding 'Bearer ...')."""
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = DEFAULT_MCP_TIMEOUT_S
    """Seconds the server has to answer each tool call; past them the model gets an error."""
    startup_timeout_s: Annotated[float, Field(gt=0, le=3600)] = DEFAULT_MCP_STARTUP_TIMEOUT_S
    """Seconds the server has to start (or accept the connection) and list its tools; a
    server that does not is left out of the run, which goes on without its tools."""

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"


class Limits(_Strict):
    """Bounds on one run."""

    max_turns: Annotated[int, Field(ge=1, le=100_000)] = 50
    """Agent turns per run."""
    max_rounds: Annotated[int, Field(ge=1, le=100)] = 3
    """Review rounds (send-backs) per task in a hierarchical squad."""
    max_cost_usd: Annotated[float, Field(ge=0, le=1_000_000)] = 5.0
    """Spend cap in US dollars, enforced by a ledger kept across runs."""
    timeout_s: Annotated[float, Field(gt=0, le=7 * 24 * 3600)] = 600
    """Wall-clock limit of one run in seconds."""
    max_parallel: Annotated[int, Field(ge=1, le=64)] = 4
    """Tasks run at once when their dependencies allow (1: one task at a time)."""


class SquadSpec(_Strict):
    """A squad: a team of agents, its tasks, and how and when it runs."""

    model_config = ConfigDict(title="squad definition")

    name: Slug
    """The squad id, a slug: [a-z0-9][a-z0-9-]{0,62}."""
    description: str = ""
    """One line about the squad."""
    goal: str = ""
    """What the squad works toward (used by hierarchical planning)."""
    workspace: (
        Annotated[
            str,
            AfterValidator(_check_workspace),
            Field(json_schema_extra={"pattern": _WORKSPACE.pattern}),
        ]
        | None
    ) = None
    """Folder name under the workspace root (default: the squad name)."""
    model: ModelField = ModelSpec(name=DEFAULT_MODEL)
    """Default model of every agent: a litellm model string or a mapping."""
    process: ProcessField = ProcessSpec()
    """sequential: the tasks in dependency order; hierarchical: the lead plans, others execute.
    As a mapping: ``{type: hierarchical, strict_plan: true}``."""
    agents: Annotated[list[AgentSpec], Field(min_length=1)]
    """The agents, at least one."""
    tasks: list[TaskSpec] = []
    """Tasks (optional when the process is hierarchical)."""
    mcp_servers: dict[str, McpServerSpec] = {}
    """MCP servers by name (a slug): their tools are offered to the agents that list them in
    their ``tools``; started when a run starts, stopped when it ends."""
    schedule: Schedule | None = None
    """When the daemon runs the squad (omit to run only on demand)."""
    memory: MemoryPolicy = MemoryPolicy()
    """Memory settings."""
    limits: Limits = Limits()
    """Run limits."""

    @property
    def workspace_name(self) -> str:
        return self.workspace or self.name

    def agent(self, agent_id: str) -> AgentSpec:
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        raise KeyError(agent_id)

    @property
    def lead(self) -> AgentSpec:
        """The planning agent: the one marked ``lead``, else the first."""
        return next((a for a in self.agents if a.lead), self.agents[0])
