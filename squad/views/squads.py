"""A squad as the front ends show it: a row of the overview, and its own page."""

from __future__ import annotations

from typing import Any, Literal

from squad.views._base import View
from squad.views.runs import Approval, RunRow, RunSummary
from squad.views.workspace import Health

__all__ = [
    "AgentCard",
    "AgentRow",
    "Definition",
    "Problem",
    "SquadCard",
    "SquadDetail",
    "SquadList",
    "SquadStatus",
    "SquadSummary",
    "TaskSpec",
    "WorkspaceCreated",
]


class Problem(View):
    """What is wrong (or suspect) in a definition, where (``squad validate`` says the same)."""

    source: str | None = None
    line: int | None = None
    column: int | None = None
    path: str | None = None
    message: str
    hint: str | None = None


class SquadStatus(View):
    """A squad in ``squad status``: its schedule, whether it runs, its last run."""

    name: str
    file: str | None = None
    schedule: str | None = None
    next_fire: str | None = None
    running: bool
    queued: bool
    last_run: RunSummary | None
    warnings: list[Problem]
    file_error: str | None = None
    """Its file broke: the error; the squad runs its last good definition meanwhile."""
    invalid_since: str | None = None


class SquadSummary(SquadStatus):
    """A squad on the dashboard's overview: its status, and its spend against its cap."""

    spent_usd: float
    cap_usd: float | None
    schedule_spec: dict[str, Any] | None = None
    """The schedule's fields (``cron``, ``interval``, ``timezone``, ``run_on_start``; all
    empty: on demand) from the squad's workspace, which the pages word in the reader's
    language; None when the workspace cannot be read (``schedule`` says it in English)."""


class Definition(View):
    text: str
    file: str | None
    valid: bool
    problems: list[Problem]
    warnings: list[Problem]
    redacted: int


class AgentRow(View):
    id: str
    name: str
    role: str
    model: str
    lead: bool
    profile: str | None
    memory_identity: str
    namespace: str
    memory_enabled: bool
    api_key_env: str | None
    api_key: Literal["set", "not set"] | None


class TaskSpec(View):
    """A task as the squad's definition declares it."""

    id: str
    agent: str
    depends_on: list[str]
    approval: bool
    description: str


class SquadDetail(View):
    name: str
    description: str
    goal: str
    process: str
    workspace: str
    source: str | None
    """The squad's YAML file, when it still has one."""
    definition: Definition
    tasks: list[TaskSpec]
    agents: list[AgentRow]
    limits: dict[str, Any]
    schedule: dict[str, Any]
    """The schedule's fields (``cron``, ``interval``, ``timezone``, ``run_on_start``; all
    empty: it runs on demand)."""
    spent_usd: float
    runs: list[RunRow]
    runs_total: int
    page: int
    pages: int
    approvals: list[Approval]
    health: Health


class AgentCard(View):
    id: str
    name: str
    role: str
    model: str
    profile: str | None
    lead: bool


class SquadCard(View):
    """A squad as MCP's ``squads`` lists it: what it is for and who is in it."""

    name: str
    description: str
    goal: str
    process: str
    workspace: str
    schedule: dict[str, Any] | None
    agents: list[AgentCard]


class SquadList(View):
    squads: list[SquadCard]
    read_only: bool
    """Whether this server may write (remember, record, start runs)."""


class WorkspaceCreated(View):
    """What ``squad create`` (or ``squad restore``) did to one squad's workspace."""

    squad: str
    workspace: str
    manifest: Literal["created", "updated", "unchanged"]
    created: list[str]
    """Paths (relative to the workspace) that did not exist before."""
