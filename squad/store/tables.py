"""SQLModel tables of the state store; they never leave the store package.

The tables have their own ``MetaData`` (not SQLModel's global one), so migrations and the
autogenerate drift check see exactly these tables and nothing another module defines. Column
types are spelled out rather than inferred, so a change in SQLModel's defaults cannot make the
tables drift from the hand-written migrations.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import registry
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

__all__ = [
    "NAMING_CONVENTION",
    "ArchiveTextRow",
    "ClusterNodeRow",
    "DecisionRow",
    "ExtractionRunRow",
    "FactRow",
    "HeartbeatRow",
    "MessageCounterRow",
    "MessageRow",
    "NamespaceRow",
    "PostingRow",
    "ReviewRow",
    "RunRow",
    "RunTaskRow",
    "SightingRow",
    "SpendDayRow",
    "SpendRow",
    "SquadRow",
    "TermRow",
    "UTCDateTime",
    "VectorRow",
    "WatermarkRow",
    "metadata",
]

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Named constraints, so later (batch) migrations can drop or alter them by name."""

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in, timezone-aware UTC out, on every backend.

    Postgres keeps the offset (``timestamptz``); SQLite drops it, so UTC wall time is stored
    there and the offset is put back on read. Naive values are refused rather than guessed at.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r} given; pass a timezone-aware one")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.utcoffset() is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class _Table(SQLModel, registry=registry(metadata=metadata)):
    """Base of the store's tables: binds them to :data:`metadata`."""


class SquadRow(_Table, table=True):
    __tablename__ = "squads"

    name: str = Field(sa_type=String, primary_key=True)
    workspace: str = Field(sa_type=String)
    source: str | None = Field(default=None, sa_type=String)
    definition_sha256: str = Field(sa_type=String(64))
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    definition: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    """The squad's validated definition (as its workspace manifest holds it), so a cluster
    worker that never saw the YAML file can run the squad."""


class RunRow(_Table, table=True):
    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_squad_created_at", "squad", "created_at"),)

    id: str = Field(sa_type=String, primary_key=True)
    squad: str = Field(sa_type=String, foreign_key="squads.name", ondelete="CASCADE")
    status: str = Field(sa_type=String(32))
    trigger: str = Field(sa_type=String)
    created_at: datetime = Field(sa_type=UTCDateTime)
    started_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    error: str | None = Field(default=None, sa_type=Text)
    tokens_in: int = Field(
        default=0, sa_type=Integer, sa_column_kwargs={"server_default": text("0")}
    )
    tokens_out: int = Field(
        default=0, sa_type=Integer, sa_column_kwargs={"server_default": text("0")}
    )
    cost_usd: float = Field(
        default=0.0, sa_type=Float, sa_column_kwargs={"server_default": text("0")}
    )
    goal: str | None = Field(default=None, sa_type=Text)
    """The goal the run was given (``squad run --goal``); None for the squad's own tasks."""
    model: str | None = Field(default=None, sa_type=String)
    """The model the run was started with, when one was chosen for it (``--model``)."""
    summary: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    """What the run did, as the runtime reports it at the end (tasks, turns, tokens, cost)."""
    job: str | None = Field(default=None, sa_type=String, index=True)
    """The cluster job that runs it (procrastinate's job id); None outside a cluster. Its
    liveness is the cluster's to judge (worker heartbeats), not the home's run lock."""
    epoch: int = Field(default=0, sa_type=Integer, sa_column_kwargs={"server_default": text("0")})
    """How many times a cluster node claimed the run (its fencing token); a node writes the
    run's state only while the epoch is still the one its claim took."""
    owner: str | None = Field(default=None, sa_type=String)
    """The cluster node of the latest claim; None outside a cluster."""


# experiential memory (Layer A)


def _zero_default() -> dict[str, Any]:
    """A ``server_default`` of 0 (a function: ``memory_facts`` has a column named ``text``)."""
    return {"server_default": text("0")}


class NamespaceRow(_Table, table=True):
    """A ``Agent Experience: <name>`` namespace, with the statistics BM25 needs."""

    __tablename__ = "memory_namespaces"
    __table_args__ = (
        UniqueConstraint("identity", name="uq_memory_namespaces_identity"),
        {"sqlite_autoincrement": True},
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    identity: str = Field(sa_type=String)
    name: str = Field(sa_type=String)
    enabled: bool = Field(sa_type=Boolean)
    indexed_facts: int = Field(default=0, sa_type=Integer, sa_column_kwargs=_zero_default())
    """Facts with postings, BM25's N: the active ones (memory gc removes the postings of the
    facts it expires or makes dormant)."""
    indexed_terms: int = Field(default=0, sa_type=Integer, sa_column_kwargs=_zero_default())
    """Sum of the indexed facts' lengths in terms: N times BM25's average length."""
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)


class FactRow(_Table, table=True):
    """One experiential fact; only ``active`` ones have postings."""

    __tablename__ = "memory_facts"
    __table_args__ = (
        # Recency order within a namespace (retrieval fill, `memory show`).
        Index("ix_memory_facts_recent", "namespace_id", "status", "updated_at", "id"),
        # Counting live facts without reading them.
        Index("ix_memory_facts_expiry", "namespace_id", "status", "expires_at"),
        # ON DELETE SET NULL of superseded_by would otherwise scan the table per purge.
        Index("ix_memory_facts_superseded_by", "superseded_by"),
        {"sqlite_autoincrement": True},  # ids are typed by users: never reuse a purged one
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    namespace_id: int = Field(
        sa_type=Integer, foreign_key="memory_namespaces.id", ondelete="CASCADE"
    )
    text: str = Field(sa_type=Text)
    subject: str | None = Field(default=None, sa_type=String)
    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    run_id: str | None = Field(default=None, sa_type=String)
    turns: list[int] = Field(sa_type=JSON)
    source: str = Field(sa_type=String)
    status: str = Field(sa_type=String(16))
    transient: bool = Field(sa_type=Boolean)
    expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    access_count: int = Field(default=0, sa_type=Integer, sa_column_kwargs=_zero_default())
    last_accessed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    superseded_by: int | None = Field(
        default=None, sa_type=Integer, foreign_key="memory_facts.id", ondelete="SET NULL"
    )
    superseded_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    forgotten_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class TermRow(_Table, table=True):
    """Document frequency of one term in one namespace (rows at zero are deleted)."""

    __tablename__ = "memory_terms"
    __table_args__ = (
        PrimaryKeyConstraint("namespace_id", "term", name="pk_memory_terms"),
        {"sqlite_with_rowid": False},  # the primary key is the table: one lookup, not two
    )

    namespace_id: int = Field(
        sa_type=Integer, foreign_key="memory_namespaces.id", ondelete="CASCADE"
    )
    term: str = Field(sa_type=String)
    df: int = Field(sa_type=Integer)


class PostingRow(_Table, table=True):
    """One term of one active fact; the primary key reads a term's newest facts first."""

    __tablename__ = "memory_postings"
    __table_args__ = (
        PrimaryKeyConstraint("namespace_id", "term", "fact_id", name="pk_memory_postings"),
        Index("ix_memory_postings_fact_id", "fact_id"),
        # Clustered on the primary key, so reading a term's postings touches no other page.
        {"sqlite_with_rowid": False},
    )

    namespace_id: int = Field(sa_type=Integer)
    term: str = Field(sa_type=String)
    fact_id: int = Field(sa_type=Integer, foreign_key="memory_facts.id", ondelete="CASCADE")
    tf: int = Field(sa_type=Integer)
    doc_len: int = Field(sa_type=Integer)
    """Length of the fact in terms, copied here so scoring never reads the fact."""


class VectorRow(_Table, table=True):
    """A fact's embedding for semantic ranking: one per fact, of the embedder that wrote it.

    A vector of another model than the configured embedder's counts as missing and is
    replaced when the fact is next embedded; purging the fact deletes it (ON DELETE CASCADE).
    """

    __tablename__ = "memory_vectors"

    fact_id: int = Field(
        sa_type=Integer,
        primary_key=True,
        foreign_key="memory_facts.id",
        ondelete="CASCADE",
        sa_column_kwargs={"autoincrement": False},
    )
    model: str = Field(sa_type=String)
    """The embedder's name (``Embedder.name``), e.g. ``hashing-v1-1024``."""
    dims: int = Field(sa_type=Integer)
    vector: bytes = Field(sa_type=LargeBinary)
    """``dims`` little-endian float32 values, L2-normalised."""


# runtime: conversations, extraction, task states, spend


class MessageRow(_Table, table=True):
    """One message of an agent's conversation (a run's turns or a chat session's)."""

    __tablename__ = "conversation_messages"
    __table_args__ = (
        UniqueConstraint("message_id", name="uq_conversation_messages_message_id"),
        # An agent's history in order; also what makes two messages with one seq impossible.
        UniqueConstraint("squad", "agent", "seq", name="uq_conversation_messages_squad_agent_seq"),
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    message_id: str = Field(sa_type=String)
    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    run_id: str | None = Field(default=None, sa_type=String)
    session_id: str | None = Field(default=None, sa_type=String)
    role: str = Field(sa_type=String(16))
    content: str = Field(sa_type=Text)
    tool_name: str | None = Field(default=None, sa_type=String)
    author: str | None = Field(default=None, sa_type=String)
    """Who spoke the message, when known (a person of a replayed transcript)."""
    created_at: datetime = Field(sa_type=UTCDateTime)
    seq: int = Field(sa_type=Integer)
    turn: int = Field(sa_type=Integer)


class MessageCounterRow(_Table, table=True):
    """Per agent: the last ``seq`` handed out and the assistant replies so far.

    Bumped in the transaction that inserts the message; its row lock is what serialises an
    agent's writers, so seqs never repeat and never skip.
    """

    __tablename__ = "message_counters"
    __table_args__ = (PrimaryKeyConstraint("squad", "agent", name="pk_message_counters"),)

    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    last_seq: int = Field(sa_type=Integer)
    turns: int = Field(sa_type=Integer)


class WatermarkRow(_Table, table=True):
    """How far the background extractor has read an agent's messages, and whether it runs."""

    __tablename__ = "extraction_watermarks"
    __table_args__ = (PrimaryKeyConstraint("squad", "agent", name="pk_extraction_watermarks"),)

    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    last_processed_seq: int = Field(default=0, sa_type=Integer, sa_column_kwargs=_zero_default())
    last_run_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    in_flight: bool = Field(sa_type=Boolean)
    pending: bool = Field(sa_type=Boolean)
    claimed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    """When the running extraction claimed it; a claim older than a caller's limit is stale."""
    updated_at: datetime = Field(sa_type=UTCDateTime)


class RunTaskRow(_Table, table=True):
    """The state of one task in one run; deleted with its run."""

    __tablename__ = "run_tasks"
    __table_args__ = (PrimaryKeyConstraint("run_id", "task_id", name="pk_run_tasks"),)

    run_id: str = Field(sa_type=String, foreign_key="runs.id", ondelete="CASCADE")
    task_id: str = Field(sa_type=String)
    position: int = Field(sa_type=Integer)
    """1 for the run's first task written, then 2...: the order :meth:`tasks` lists them in."""
    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    status: str = Field(sa_type=String(32))
    attempts: int = Field(default=0, sa_type=Integer, sa_column_kwargs=_zero_default())
    rounds: int = Field(default=0, sa_type=Integer, sa_column_kwargs=_zero_default())
    error: str | None = Field(default=None, sa_type=Text)
    output: str | None = Field(default=None, sa_type=String)
    started_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)


class SpendRow(_Table, table=True):
    """One model call's tokens, cost and latency.

    ``squad`` and ``run_id`` are plain columns, not foreign keys: a squad's spend cap holds
    across runs and re-registrations, so the ledger outlives both records.
    """

    __tablename__ = "spend_ledger"
    __table_args__ = (
        Index("ix_spend_ledger_squad_at", "squad", "at"),
        Index("ix_spend_ledger_run_id", "run_id"),
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    squad: str = Field(sa_type=String)
    run_id: str | None = Field(default=None, sa_type=String)
    agent: str | None = Field(default=None, sa_type=String)
    model: str = Field(sa_type=String)
    prompt_tokens: int = Field(sa_type=Integer)
    completion_tokens: int = Field(sa_type=Integer)
    cost_usd: float = Field(sa_type=Float)
    latency_s: float = Field(sa_type=Float)
    at: datetime = Field(sa_type=UTCDateTime)


class SpendDayRow(_Table, table=True):
    """One squad's spend with one model on one UTC day, rolled up from ``spend_ledger`` when
    retention forgets the runs the calls belonged to (spend charts read both)."""

    __tablename__ = "spend_days"
    __table_args__ = (PrimaryKeyConstraint("squad", "day", "model", name="pk_spend_days"),)

    squad: str = Field(sa_type=String)
    day: str = Field(sa_type=String(10))
    """``YYYY-MM-DD``, UTC."""
    model: str = Field(sa_type=String)
    calls: int = Field(sa_type=Integer)
    prompt_tokens: int = Field(sa_type=Integer)
    completion_tokens: int = Field(sa_type=Integer)
    cost_usd: float = Field(sa_type=Float)
    latency_s: float = Field(sa_type=Float)
    """Summed over the calls."""


class HeartbeatRow(_Table, table=True):
    """The daemon of one squad home: who it is, when it last beat, what it reported."""

    __tablename__ = "daemon_heartbeats"

    home: str = Field(sa_type=String, primary_key=True)
    pid: int = Field(sa_type=Integer)
    host: str = Field(sa_type=String)
    started_at: datetime = Field(sa_type=UTCDateTime)
    beat_at: datetime = Field(sa_type=UTCDateTime)
    stopped_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    state: dict[str, Any] | None = Field(default=None, sa_type=JSON)


class ExtractionRunRow(_Table, table=True):
    """One pass of the background extractor over an agent's new messages."""

    __tablename__ = "extraction_runs"
    __table_args__ = (
        Index("ix_extraction_runs_squad_agent_started_at", "squad", "agent", "started_at"),
        {"sqlite_autoincrement": True},
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    started_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    status: str = Field(sa_type=String(16))
    reason: str | None = Field(default=None, sa_type=Text)
    extractor: str = Field(sa_type=String(32))
    from_seq: int = Field(sa_type=Integer)
    to_seq: int = Field(sa_type=Integer)
    message_ids: list[str] = Field(sa_type=JSON)
    written: list[dict[str, Any]] = Field(sa_type=JSON)
    dropped: list[dict[str, Any]] = Field(sa_type=JSON)


class ArchiveTextRow(_Table, table=True):
    """A distinct text of an agent's conversation archive and the fact that holds it: a text
    said again adds its seq to that fact's ``turns`` instead of a new fact."""

    __tablename__ = "archive_texts"
    __table_args__ = (PrimaryKeyConstraint("namespace_id", "key", name="pk_archive_texts"),)

    namespace_id: int = Field(
        sa_type=Integer, foreign_key="memory_namespaces.id", ondelete="CASCADE"
    )
    key: str = Field(sa_type=String(64))
    """sha256 of the entry's text (speaker and message)."""
    fact_id: int = Field(sa_type=Integer, foreign_key="memory_facts.id", ondelete="CASCADE")
    occurrences: int = Field(sa_type=Integer)
    """Times the text was archived, those its fact's ``turns`` no longer lists included."""
    last_seq: int = Field(sa_type=Integer)
    """The seq it was last said at; the archive's newest over all texts is how far it reaches."""


class SightingRow(_Table, table=True):
    """A project fact and the runs or sessions it was extracted in (promotion evidence)."""

    __tablename__ = "memory_sightings"
    __table_args__ = (PrimaryKeyConstraint("squad", "agent", "key", name="pk_memory_sightings"),)

    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    key: str = Field(sa_type=String)
    text: str = Field(sa_type=Text)
    sources: list[str] = Field(sa_type=JSON)
    first_seen_at: datetime = Field(sa_type=UTCDateTime)
    last_seen_at: datetime = Field(sa_type=UTCDateTime)
    proposed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class ReviewRow(_Table, table=True):
    """A fact the extractor proposed that waits for a person (the review queue), and what
    the person decided. Prompt assembly never reads this table: a fact reaches memory.md or
    ``memory_facts`` only when approved, through the extractor's own write path."""

    __tablename__ = "memory_review"
    __table_args__ = (
        Index("ix_memory_review_squad_agent_status", "squad", "agent", "status", "id"),
        Index("ix_memory_review_squad_agent_key", "squad", "agent", "key"),
        Index("ix_memory_review_decided_at", "decided_at"),
        {"sqlite_autoincrement": True},  # ids are typed by people: never reused
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    squad: str = Field(sa_type=String)
    agent: str = Field(sa_type=String)
    layer: str = Field(sa_type=String(16))
    """``project`` (a memory.md line) or ``experiential`` (a Layer A fact)."""
    section: str | None = Field(default=None, sa_type=String)
    """The memory.md section of a project fact."""
    subject: str | None = Field(default=None, sa_type=String)
    text: str = Field(sa_type=Text)
    """As proposed, credentials already redacted."""
    key: str = Field(sa_type=String(64))
    """sha256 of the normalised text: the same fact proposed again is not queued twice."""
    confidence: float = Field(sa_type=Float)
    extractor: str = Field(sa_type=String(32))
    turns: list[int] = Field(sa_type=JSON)
    """Store seqs of the messages it came from."""
    run_id: str | None = Field(default=None, sa_type=String)
    source: str = Field(sa_type=String)
    """The run, or chat session and day, it came from (promotion evidence once approved)."""
    details: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    """What the write needs besides the text: ``expires_on``, ``detail`` (the daily log's)."""
    proposed_at: datetime = Field(sa_type=UTCDateTime)
    status: str = Field(sa_type=String(16))
    """``pending``, ``approved`` or ``rejected``."""
    decided_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    decided_by: str | None = Field(default=None, sa_type=String)
    edited_text: str | None = Field(default=None, sa_type=Text)
    """The text the person approved instead of ``text``, when they edited it."""
    outcome: str | None = Field(default=None, sa_type=Text)
    """Where the approved fact went (``agents/x/memory.md#Insights``, ``fact:12``), or why
    nothing was written (already in memory)."""


# decisions with their reasons


class DecisionRow(_Table, table=True):
    """One recorded decision of a squad; rows are never deleted, only superseded.

    ``reasons`` and ``alternatives`` are JSON lists kept as text, so every backend stores and
    reads them alike. ``decision_key`` is the sha256 of the normalised decision text: what
    "the same decision" means when the extractor sees it again.
    """

    __tablename__ = "decisions"
    __table_args__ = (
        Index("ix_decisions_squad_id", "squad", "id"),
        Index("ix_decisions_squad_decision_key", "squad", "decision_key"),
        {"sqlite_autoincrement": True},  # ids are linked to and typed by people: never reused
    )

    id: int | None = Field(default=None, sa_type=Integer, primary_key=True)
    squad: str = Field(sa_type=String)
    title: str = Field(sa_type=Text)
    decision: str = Field(sa_type=Text)
    decision_key: str = Field(sa_type=String(64))
    reasons: str = Field(sa_type=Text)
    alternatives: str = Field(sa_type=Text)
    decided_by: str = Field(sa_type=String)
    """``cli``, ``person:<name>``, ``agent:<id>`` or ``mcp:<client name>``."""
    decided_at: datetime = Field(sa_type=UTCDateTime)
    supersedes: int | None = Field(
        default=None, sa_type=Integer, foreign_key="decisions.id", ondelete="SET NULL"
    )
    superseded_by: int | None = Field(
        default=None, sa_type=Integer, foreign_key="decisions.id", ondelete="SET NULL"
    )


class ClusterNodeRow(_Table, table=True):
    """One node of a cluster (a ``squad daemon`` or ``squad worker`` process) and its beat."""

    __tablename__ = "cluster_nodes"

    name: str = Field(sa_type=String, primary_key=True)
    host: str = Field(sa_type=String)
    pid: int = Field(sa_type=Integer)
    role: str = Field(sa_type=String(16))
    """``scheduler`` (a daemon: schedules and works) or ``worker`` (only works)."""
    worker_id: int | None = Field(default=None, sa_type=Integer)
    """The procrastinate worker the node runs now (a restart of its worker makes a new one)."""
    started_at: datetime = Field(sa_type=UTCDateTime)
    beat_at: datetime = Field(sa_type=UTCDateTime)
    stopped_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    state: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    """What it reported with its last beat: concurrency, the jobs it runs."""
