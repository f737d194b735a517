"""What the JSON API answers, as response models: the OpenAPI schema says it, FastAPI checks
every answer against it before it leaves, and the schema fuzzing checks the schema.

Each model names the fields a client can rely on, with their types; ``extra="allow"`` lets
an answer carry more (nested status details) without the schema lying about what it names.
Times are ISO 8601 strings, as the data layer makes them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AgentMemory",
    "Approval",
    "BootFile",
    "Cluster",
    "ClusterJob",
    "ClusterNode",
    "ClusterQueue",
    "ClusterUnreachable",
    "ContextPreview",
    "ContextWindow",
    "Decision",
    "ExtractionPass",
    "Fact",
    "Folder",
    "Health",
    "MemorySearch",
    "Namespace",
    "Overview",
    "Preview",
    "RegionRow",
    "RunDetail",
    "RunRow",
    "SearchResult",
    "Spend",
    "SquadDetail",
    "SquadSummary",
]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class RunRow(_Open):
    id: str
    squad: str
    status: str
    trigger: str
    goal: str | None
    created_at: str
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    error: str | None


class Approval(RunRow):
    task: str | None
    agent: str | None
    output: str | None


class SquadSummary(_Open):
    name: str
    file: str | None = None
    schedule: str | None = None
    next_fire: str | None = None
    running: bool
    queued: bool
    last_run: dict[str, Any] | None
    warnings: list[dict[str, Any]]
    file_error: str | None = None
    """Its file broke: the error; the squad runs its last good definition meanwhile."""
    invalid_since: str | None = None
    spent_usd: float
    cap_usd: float | None


class NodeRun(_Open):
    """A run a node says it works on (its heartbeat's ``running``)."""

    job: int
    squad: str
    run_id: str | None
    attempt: int
    since: str


class ClusterNode(_Open):
    name: str
    host: str
    pid: int
    role: str
    """``daemon`` (schedules and works) or ``worker`` (only works)."""
    state: Literal["up", "stopped", "lost"]
    """``lost``: no heartbeat for ``stall_timeout_s``; ``stopped``: it said it stopped."""
    beat_age_s: float
    started_at: str
    worker_id: int | None
    concurrency: int | None
    running: list[NodeRun]
    """Empty unless the node is up."""


class ClusterQueue(_Open):
    waiting: int
    by_queue: dict[str, int]


class ClusterJob(_Open):
    job: int
    task: str
    what: str | None
    """The squad (a run), ``squad/agent`` (an extraction pass) or the job's name."""
    run_id: str | None
    attempts: int
    node: str | None
    """The node whose worker runs it (None when no node has that worker id)."""
    worker_id: int | None
    stalled: bool


class Cluster(_Open):
    stall_timeout_s: float
    nodes: list[ClusterNode]
    queue: ClusterQueue
    running: list[ClusterJob]
    stalled: list[ClusterJob]
    """Running jobs whose node stopped beating; the next sweep puts them back in the queue."""


class ClusterUnreachable(_Open):
    error: str
    """Why the cluster's queue could not be read (the rest of the overview still shows)."""


class Overview(_Open):
    daemon: dict[str, Any]
    squads: list[SquadSummary]
    running: list[dict[str, Any]]
    queue: list[dict[str, Any]]
    queue_length: int
    failed_files: list[dict[str, Any]]
    extraction_backlog: list[dict[str, Any]]
    approvals: list[Approval]
    server: dict[str, Any] | None
    cluster: Cluster | ClusterUnreachable | None = None
    """Only in cluster mode: what ``/api/v1/cluster`` answers, or why it could not."""


class Definition(_Open):
    text: str
    file: str | None
    valid: bool
    problems: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    redacted: int


class AgentRow(_Open):
    id: str
    name: str
    role: str
    model: str
    lead: bool
    memory_identity: str
    namespace: str
    memory_enabled: bool
    api_key_env: str | None
    api_key: Literal["set", "not set"] | None


class SquadDetail(_Open):
    name: str
    description: str
    goal: str
    process: str
    workspace: str
    definition: Definition
    tasks: list[dict[str, Any]]
    agents: list[AgentRow]
    limits: dict[str, Any]
    spent_usd: float
    runs: list[RunRow]
    runs_total: int
    page: int
    pages: int
    approvals: list[Approval]
    health: dict[str, Any]


class TaskRow(_Open):
    id: str
    agent: str
    status: str
    attempts: int
    rounds: int
    error: str | None
    output: str | None
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class ModelCall(_Open):
    agent: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    at: str


class Plan(_Open):
    path: str | None
    tasks: list[str]
    text: str | None


class RunDetail(RunRow):
    model: str | None
    tasks: list[TaskRow]
    awaiting: str | None
    resumable: bool
    plan: Plan | None
    model_calls: list[ModelCall]
    log_file: str | None
    events: list[dict[str, Any]]
    events_total: int


class FolderEntry(_Open):
    name: str
    path: str
    kind: Literal["dir", "file", "link", "other"]
    size: int | None
    mtime: str


class Folder(_Open):
    path: str
    entries: list[FolderEntry]


class Preview(_Open):
    path: str
    kind: Literal["markdown", "json", "jsonl", "yaml", "text"]
    text: str
    size: int
    truncated: bool
    language: str
    redacted: int
    notice: str | None = None
    """Set when ``truncated``: how much is shown and where the whole file is."""


class ContextLine(_Open):
    line_number: int
    line: str


class LineMatch(_Open):
    line_number: int
    line: str
    spans: list[list[int]]
    before: list[ContextLine]
    after: list[ContextLine]


class FileMatches(_Open):
    path: str
    matches: list[LineMatch]


class SkippedFile(_Open):
    path: str
    reason: str


class SearchResult(_Open):
    squad: str
    query: str
    files: list[FileMatches]
    match_count: int
    files_scanned: int
    files_skipped: dict[str, int]
    skipped: list[SkippedFile]
    max_file_bytes: int
    truncated: bool
    redacted: int


class Health(_Open):
    path: str
    total_bytes: int
    file_count: int
    folder_count: int
    links: int
    folders: dict[str, Any]
    largest_files: list[dict[str, Any]]
    memory_files: list[dict[str, Any]]
    last_activity: str | None
    last_activity_age_s: float | None


class Namespace(_Open):
    id: int
    identity: str
    name: str
    enabled: bool
    facts: int
    updated_at: str


class Fact(_Open):
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


class Decision(_Open):
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


class Section(_Open):
    name: str | None
    heading: str
    text: str


class ProjectMemory(_Open):
    file: str
    size: int
    cap: int
    version: str
    problem: str | None
    sections: list[Section]


class AgentMemory(_Open):
    squad: str
    agent: str
    name: str
    memory_enabled: bool
    project: ProjectMemory
    namespace: Namespace
    facts: list[Fact]


class ContextWindow(_Open):
    tokens: int
    source: Literal["option", "spec", "offline", "litellm", "default"]
    """Where the figure came from: the request, the model mapping, the offline model,
    litellm's model map, or the default for a model none of them knows."""


class RegionRow(_Open):
    region: Literal[
        "boot", "memory", "recall", "supplementary", "working", "history", "turn", "reserve"
    ]
    budget: int
    used: int | None
    """Tokens the prompt holds in the region; None when not measured here."""
    set_by: str | None
    """The setting that fixed the budget; None when the window sized it."""
    capped: bool


class ContextPreview(_Open):
    text: str
    budget: dict[str, Any]
    tokens: dict[str, int]
    dropped_lines: dict[str, int]
    message: str
    supplementary: dict[str, Any]
    context_window: ContextWindow
    regions: list[RegionRow]
    working_memory: dict[str, Any] | None = None
    """The agent's working memory in the run under way (``MemoryService.working_memory``)."""


class BootFile(_Open):
    name: Literal["soul", "user", "agents"]
    file: str
    title: str
    text: str
    version: str
    size: int
    cap: int


class MemoryHit(_Open):
    layer: Literal["project", "experiential", "conversation"]
    squad: str | None
    agent: str | None
    where: str
    section: str | None
    namespace: str | None
    line_number: int
    line: str
    spans: list[list[int]]


class MemorySearch(_Open):
    query: str
    hits: list[MemoryHit]
    skipped: list[SkippedFile]


class ExtractionPass(_Open):
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


class SpendDay(_Open):
    day: str
    cost_usd: float


class SquadSpend(_Open):
    squad: str
    days: list[SpendDay]
    total_usd: float
    calls: int
    runs: list[dict[str, Any]]


class Spend(_Open):
    since: str
    days: int
    squads: list[SquadSpend]
