"""What the store hands out: frozen dataclasses, so callers never hold a live database row."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from squad import views

__all__ = [
    "FactRecord",
    "FactStatus",
    "MessageRecord",
    "MessageRole",
    "NamespaceRecord",
    "NewFact",
    "RunRecord",
    "RunStatus",
    "SpendRecord",
    "SpendTotals",
    "SquadRecord",
    "TaskRecord",
    "TaskStatus",
    "WatermarkRecord",
    "run_duration_s",
]


def run_duration_s(
    started_at: datetime | None, ended_at: datetime | None, *, now: datetime | None = None
) -> float | None:
    """How long a run took, in seconds to a tenth: from its first ``running`` to its end
    (``now`` for one still going), waits for approval included; None when it never started
    (or has not ended and no ``now`` is given). The one definition ``squad run``'s summary,
    ``squad status``, ``squad runs``, the daemon's log and the dashboard all show."""
    end = ended_at or now
    if started_at is None or end is None:
        return None
    return round(max(0.0, (end - started_at).total_seconds()), 1)


class RunStatus(StrEnum):
    """Where a run is in its life; stored as its string value."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"
    """The process died or was killed mid-run; the run may be resumed."""
    AWAITING_APPROVAL = "awaiting_approval"
    """Paused until a human approves; not finished."""

    @property
    def is_terminal(self) -> bool:
        """True for statuses that end a run and stamp ``ended_at``."""
        return self in _TERMINAL


_TERMINAL = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.STOPPED})


@dataclass(frozen=True)
class SquadRecord:
    """A squad the store knows, keyed by name; timestamps are timezone-aware UTC."""

    name: str
    workspace: str
    source: str | None
    """Where the definition came from (usually the YAML path); None when built in code."""
    definition_sha256: str
    """Hash of the definition text, so a changed file is noticed without storing it."""
    created_at: datetime
    updated_at: datetime
    """Last time workspace, source or definition hash changed."""
    definition: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    """The validated definition as JSON (what the workspace manifest holds); None for a squad
    registered before the store kept it."""


@dataclass(frozen=True)
class RunRecord:
    """One run of a squad; timestamps are timezone-aware UTC, unset ones None."""

    id: str
    squad: str
    status: RunStatus
    trigger: str
    """What started the run: ``manual``, ``schedule``, ``on_start``..."""
    created_at: datetime
    started_at: datetime | None
    """First time the run entered ``running``."""
    ended_at: datetime | None
    """First time the run reached a terminal status."""
    error: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    goal: str | None = None
    """The goal the run was given (``squad run --goal``); None for the squad's own tasks."""
    model: str | None = None
    """The model chosen for this run (``--model``); None when the squad's own were used."""
    summary: dict[str, Any] | None = field(default=None, hash=False)
    """What the runtime reported at the end (tasks done and failed, turns, tokens, cost)."""
    job: str | None = None
    """The cluster job that runs it; None outside a cluster."""
    epoch: int = 0
    """How many times a cluster node claimed it (the fencing token of the latest claim)."""
    owner: str | None = None
    """The cluster node of the latest claim; None outside a cluster."""

    def duration_s(self, *, now: datetime | None = None) -> float | None:
        """:func:`run_duration_s` of this run; ``now`` counts a running run up to now."""
        running = self.status is RunStatus.RUNNING
        return run_duration_s(self.started_at, self.ended_at, now=now if running else None)


class FactStatus(StrEnum):
    """Where an experiential fact is in its life; stored as its string value."""

    ACTIVE = "active"
    """Retrievable (unless its ``expires_at`` has passed)."""
    SUPERSEDED = "superseded"
    """Replaced by a newer fact (``superseded_by``); kept, with its text, for history."""
    FORGOTTEN = "forgotten"
    """Withdrawn by a user or agent; out of retrieval and search, kept for audit."""
    DORMANT = "dormant"
    """Unused for long (memory gc's recency decay); out of retrieval, restorable (revive)."""
    EXPIRED = "expired"
    """Past its ``expires_at`` (memory gc's TTL sweep); out of retrieval, kept for audit."""


@dataclass(frozen=True)
class NamespaceRecord:
    """An experiential-memory namespace (``Agent Experience: <agent name>``).

    ``identity`` is what makes two agents share it: ``profile:<profile-id>`` when the agent
    has a source profile, else ``squad:<squad>/<agent-id>``.
    """

    id: int
    identity: str
    name: str
    enabled: bool
    """Whether other agents' chats may be given these facts; the owner always sees them."""
    created_at: datetime
    updated_at: datetime
    """Last time the name or the enabled flag changed."""
    fact_count: int
    """Active facts: not superseded, not forgotten, not expired."""

    def view(self) -> views.Namespace:
        return views.Namespace(
            id=self.id,
            name=self.name,
            identity=self.identity,
            enabled=self.enabled,
            facts=self.fact_count,
            updated_at=self.updated_at.isoformat(),
        )


@dataclass(frozen=True)
class NewFact:
    """A fact to add; the arguments of ``MemoryStore.add_fact`` as data, for bulk adds."""

    text: str
    squad: str
    agent: str
    run_id: str | None = None
    turns: tuple[int, ...] = ()
    """Chat turns the fact was drawn from."""
    subject: str | None = None
    source: str = "manual"
    """How the fact got here: ``manual``, ``extraction``..."""
    transient: bool = False
    expires_at: datetime | None = None


@dataclass(frozen=True)
class FactRecord:
    """One experiential fact; ``id`` is a small integer users type (``memory forget 12``)."""

    id: int
    namespace_id: int
    text: str
    subject: str | None
    squad: str
    """The squad the fact was learnt in."""
    agent: str
    """The agent id that learnt it."""
    run_id: str | None
    turns: tuple[int, ...]
    source: str
    status: FactStatus
    transient: bool
    expires_at: datetime | None
    """After this instant the fact is no longer retrieved (None: never expires)."""
    created_at: datetime
    updated_at: datetime
    """Last change of status; recency ranking orders by it."""
    access_count: int
    """How many times retrieval handed the fact to an agent (``touch_facts``)."""
    last_accessed_at: datetime | None
    superseded_by: int | None
    superseded_at: datetime | None
    forgotten_at: datetime | None

    def is_active(self, now: datetime) -> bool:
        """True when the fact can be retrieved at ``now``."""
        return self.status is FactStatus.ACTIVE and (
            self.expires_at is None or self.expires_at > now
        )


class MessageRole(StrEnum):
    """Who speaks in a conversation message; the chat-completions roles."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class MessageRecord:
    """One message of an agent's conversation, in a run or in a chat session.

    ``seq`` numbers an agent's messages 1, 2, 3... with no gap or repeat, whatever wrote them;
    ``turn`` is how many assistant replies the agent had given up to and including this one.
    """

    id: int
    message_id: str
    squad: str
    agent: str
    run_id: str | None
    session_id: str | None
    role: MessageRole
    content: str
    tool_name: str | None
    """The tool a ``tool`` message answers (or an assistant message calls), when known."""
    created_at: datetime
    seq: int
    turn: int
    author: str | None = None
    """Who spoke it, when known; None for the user of a chat and for the agent itself."""


@dataclass(frozen=True)
class WatermarkRecord:
    """The background extractor's place in one agent's messages.

    ``pending`` means a trigger came while an extraction was in flight: it was coalesced into
    one more pass after the current one. ``updated_at`` is None while nothing was recorded.
    """

    squad: str
    agent: str
    last_processed_seq: int
    """Messages with ``seq`` up to this one have been read by the extractor."""
    last_run_at: datetime | None
    """When an extraction last finished."""
    in_flight: bool
    pending: bool
    claimed_at: datetime | None
    """When the extraction now in flight claimed the agent (None when none is)."""
    updated_at: datetime | None


E = TypeVar("E", bound=StrEnum)


def enum_value(kind: type[E], value: E | str, what: str) -> E:
    """``value`` as a member of ``kind``; ValueError listing the valid values otherwise."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(repr(member.value) for member in kind)
        raise ValueError(f"{what} {value!r} is not one of {choices}") from None


class TaskStatus(StrEnum):
    """Where a task is in one run; the values of ``squad.runtime.tasks.TaskStatus``."""

    PENDING = "pending"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    DONE = "done"
    FAILED = "failed"
    BLOCKED = "blocked"

    @property
    def finished(self) -> bool:
        """True for statuses that end the task in its run and stamp ``ended_at``."""
        return self in _FINISHED


_FINISHED = frozenset({TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.BLOCKED})


@dataclass(frozen=True)
class TaskRecord:
    """The state of one task in one run; timestamps are timezone-aware UTC."""

    run_id: str
    task_id: str
    squad: str
    agent: str
    status: TaskStatus
    attempts: int
    rounds: int
    """Review rounds the task went through (hierarchical process)."""
    error: str | None
    """Why the task failed or was blocked; None unless its status says so."""
    output: str | None
    """The output file, relative to the workspace (``tasks/<task-id>/output.md``)."""
    started_at: datetime | None
    """First time the task entered ``running`` in this run."""
    ended_at: datetime | None
    """When it reached its finished status; None while it is not finished."""
    updated_at: datetime


@dataclass(frozen=True)
class SpendRecord:
    """One model call in the spend ledger."""

    id: int
    squad: str
    run_id: str | None
    agent: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    at: datetime


@dataclass(frozen=True)
class SpendTotals:
    """What a set of model calls added up to; all zero when there were none."""

    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def __add__(self, other: SpendTotals) -> SpendTotals:
        return SpendTotals(
            self.cost_usd + other.cost_usd,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
        )
