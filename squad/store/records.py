"""What the store hands out: frozen dataclasses, so callers never hold a live database row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = [
    "FactRecord",
    "FactStatus",
    "NamespaceRecord",
    "NewFact",
    "RunRecord",
    "RunStatus",
    "SquadRecord",
]


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


class FactStatus(StrEnum):
    """Where an experiential fact is in its life; stored as its string value."""

    ACTIVE = "active"
    """Retrievable (unless its ``expires_at`` has passed)."""
    SUPERSEDED = "superseded"
    """Replaced by a newer fact (``superseded_by``); kept, with its text, for history."""
    FORGOTTEN = "forgotten"
    """Withdrawn by a user or agent; out of retrieval and search, kept for audit."""


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
