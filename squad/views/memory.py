"""Memory as the front ends show it: an agent's memory.md and facts, the namespaces, the boot
files, the exact block a prompt would get, searches, decisions and the extractor's passes."""

from __future__ import annotations

from typing import Any, Literal

from squad.views._base import View
from squad.views.workspace import ContextLine, SkippedFile

__all__ = [
    "AgentMemory",
    "BootFile",
    "ContextPreview",
    "ContextWindow",
    "Decision",
    "DecisionList",
    "ExtractionPass",
    "Fact",
    "Forgotten",
    "MemoryContext",
    "MemoryHit",
    "MemoryRead",
    "MemorySearch",
    "Namespace",
    "ProjectMemory",
    "RegionRow",
    "Remembered",
    "Section",
]


class Namespace(View):
    id: int
    identity: str
    name: str
    enabled: bool
    facts: int
    updated_at: str


class Fact(View):
    id: int
    text: str
    subject: str | None
    status: str
    squad: str
    agent: str
    run_id: str | None
    turns: list[int]
    source: str
    created_at: str
    expires_at: str | None
    access_count: int
    superseded_by: int | None


class Decision(View):
    id: int
    squad: str
    title: str
    decision: str
    reasons: list[str]
    alternatives: list[str]
    decided_by: str
    """``agent:<id>``, ``person:<name>``, ``cli`` or ``mcp:<client>``."""
    decided_at: str
    supersedes: int | None
    superseded_by: int | None


class DecisionList(View):
    """Decisions found (MCP's ``decision_search``: ``query``) or listed (``squad``)."""

    query: str | None = None
    squad: str | None = None
    decisions: list[Decision]


class Section(View):
    name: str | None
    heading: str
    text: str


class ProjectMemory(View):
    file: str
    size: int
    cap: int
    version: str
    problem: str | None
    sections: list[Section]


class AgentMemory(View):
    squad: str
    agent: str
    name: str
    memory_enabled: bool
    project: ProjectMemory
    namespace: Namespace
    facts: list[Fact]


class MemoryRead(View):
    """One agent's memory.md (or one section of it), with its version for an edit."""

    squad: str
    agent: str
    section: str | None
    text: str
    version: str
    sections: list[str]


class ContextWindow(View):
    tokens: int
    source: Literal["option", "spec", "offline", "litellm", "default"]
    """Where the figure came from: the request, the model mapping, the offline model,
    litellm's model map, or the default for a model none of them knows."""


class RegionRow(View):
    region: Literal[
        "boot", "memory", "recall", "supplementary", "working", "history", "turn", "reserve"
    ]
    budget: int
    used: int | None
    """Tokens the prompt holds in the region; None when not measured here."""
    set_by: str | None
    """The setting that fixed the budget; None when the window sized it."""
    capped: bool


class Supplementary(View):
    text: str
    tokens: int
    budget: int
    dropped_lines: int


class BootCut(View):
    tokens: int
    dropped_lines: dict[str, int]


class MemoryBudget(View):
    total: int
    experiential: int
    project: int
    flow: bool
    """Unused share of one layer is lent to the other."""
    recall: int


class ContextPreview(View):
    """The memory block the agent's next prompt would get for ``message``, and the prompt's
    regions with their budgets and use."""

    text: str
    budget: MemoryBudget
    tokens: dict[str, int]
    dropped_lines: dict[str, int]
    recalled: list[int]
    recall_read: int
    message: str
    supplementary: Supplementary
    boot: BootCut
    context_window: ContextWindow
    regions: list[RegionRow]
    working_memory: dict[str, Any] | None = None
    """The agent's working memory in the run under way (``MemoryService.working_memory``)."""


MemoryContext = ContextPreview
"""What MCP's ``memory_context`` answers: the same preview, its texts redacted."""


class BootFile(View):
    name: Literal["soul", "user", "agents"]
    file: str
    title: str
    squad: str | None
    """The squad whose workspace ``AGENTS.md`` (its rules) this is; None for the home's."""
    action: str
    """Where the dashboard's editor posts an edit."""
    text: str
    version: str
    size: int
    cap: int


class MemoryHit(View):
    layer: Literal["project", "experiential", "conversation"]
    squad: str | None
    agent: str | None
    where: str
    section: str | None
    namespace: str | None
    line_number: int
    line: str
    spans: list[list[int]]
    before: list[ContextLine]
    after: list[ContextLine]


class MemorySearch(View):
    """Hits across every memory; MCP's answer is cut at its ``limit`` (``total`` and
    ``truncated`` say so), the API's lists the files it could not read."""

    query: str
    hits: list[MemoryHit]
    skipped: list[SkippedFile] | None = None
    total: int | None = None
    truncated: bool | None = None


class ExtractionPass(View):
    id: int
    squad: str
    agent: str
    started_at: str
    finished_at: str | None
    status: str
    reason: str | None
    extractor: str
    messages: list[int]
    written: list[dict[str, Any]]
    dropped: list[dict[str, Any]]


class Remembered(View):
    layer: Literal["project", "experiential"]
    where: str
    """``agents/<id>/memory.md#Section`` or ``fact:<id>``."""
    fact_id: int | None
    stored: bool
    already: str | None
    """When nothing was stored: the memory.md line or ``fact:<id>`` that already says it."""


class Forgotten(View):
    fact_id: int
    forgotten: bool
    reason: str
