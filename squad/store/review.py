"""The review queue's rows; reached as ``store.review``.

A proposal is ``pending`` until a person decides it: ``approved`` (the caller has written the
fact, and says where in ``outcome``) or ``rejected``. Rows are never edited after that; a
decision is one ``UPDATE ... WHERE status = 'pending'``, so two people deciding the same row
at once cannot both win. Nothing here writes memory: approving is the caller's business
(:class:`squad.extraction.review.ReviewQueue`), and prompt assembly never reads this table.

The same text (by ``key``, the caller's hash of its normalised form) is queued once: while a
proposal of it is pending, and for good once it was rejected. Retention drops decided rows
older than its cutoff (:meth:`ReviewStore.forget_decided`); pending rows stay until decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from sqlalchemy import Row, Table, func, insert, select, update
from sqlalchemy.engine import Engine

from squad.clock import Clock
from squad.errors import NotFound, UsageError
from squad.store.engine import transaction
from squad.store.tables import metadata

__all__ = ["NewProposal", "ReviewRecord", "ReviewStatus", "ReviewStore"]

REVIEW: Table = metadata.tables["memory_review"]
ReviewStatus = Literal["pending", "approved", "rejected"]


@dataclass(frozen=True)
class NewProposal:
    """A fact to queue, already redacted and checked by the caller."""

    squad: str
    agent: str
    layer: Literal["project", "experiential"]
    text: str
    key: str
    confidence: float
    extractor: str
    source: str
    section: str | None = None
    subject: str | None = None
    turns: tuple[int, ...] = ()
    run_id: str | None = None
    expires_on: date | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ReviewRecord:
    """One proposal and, once decided, the decision; times are timezone-aware UTC."""

    id: int
    squad: str
    agent: str
    layer: Literal["project", "experiential"]
    section: str | None
    subject: str | None
    text: str
    key: str
    confidence: float
    extractor: str
    turns: tuple[int, ...]
    run_id: str | None
    source: str
    expires_on: date | None
    detail: str | None
    proposed_at: datetime
    status: ReviewStatus
    decided_at: datetime | None
    decided_by: str | None
    edited_text: str | None
    outcome: str | None

    @property
    def final_text(self) -> str:
        """What was (or would be) written: the edit, else the proposal."""
        return self.edited_text if self.edited_text is not None else self.text


class ReviewStore:
    """Proposed facts and their review; safe to share between threads."""

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        self._engine = engine
        self._now = now

    def propose(self, new: NewProposal) -> tuple[ReviewRecord, bool]:
        """Queue ``new``; (record, True) when queued now, else (the pending or rejected row of
        the same text, False) and nothing is written."""
        with transaction(self._engine, f"queue a fact for review of agent {new.agent!r}") as conn:
            found = conn.execute(
                select(REVIEW)
                .where(
                    REVIEW.c.squad == new.squad,
                    REVIEW.c.agent == new.agent,
                    REVIEW.c.key == new.key,
                    REVIEW.c.status.in_(("pending", "rejected")),
                )
                .order_by(REVIEW.c.id)
                .limit(1)
            ).first()
            if found is not None:
                return _record(found), False
            details: dict[str, Any] = {}
            if new.expires_on is not None:
                details["expires_on"] = new.expires_on.isoformat()
            if new.detail:
                details["detail"] = new.detail
            key = conn.execute(
                insert(REVIEW).values(
                    squad=new.squad,
                    agent=new.agent,
                    layer=new.layer,
                    section=new.section,
                    subject=new.subject,
                    text=new.text,
                    key=new.key,
                    confidence=float(new.confidence),
                    extractor=new.extractor,
                    turns=list(new.turns),
                    run_id=new.run_id,
                    source=new.source,
                    details=details or None,
                    proposed_at=self._now(),
                    status="pending",
                )
            ).inserted_primary_key
            assert key is not None
            row = conn.execute(select(REVIEW).where(REVIEW.c.id == int(key[0]))).one()
            return _record(row), True

    def get(self, review_id: int) -> ReviewRecord | None:
        with transaction(self._engine, f"read review item {review_id}") as conn:
            row = conn.execute(select(REVIEW).where(REVIEW.c.id == review_id)).first()
        return None if row is None else _record(row)

    def items(
        self,
        squad: str,
        agent: str,
        *,
        status: ReviewStatus | None = "pending",
        limit: int = 200,
    ) -> list[ReviewRecord]:
        """The agent's proposals of ``status`` (None: all), oldest first (pending) or newest
        first (decided or all), at most ``limit``."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        query = select(REVIEW).where(REVIEW.c.squad == squad, REVIEW.c.agent == agent)
        if status is not None:
            query = query.where(REVIEW.c.status == status)
        order = REVIEW.c.id if status == "pending" else REVIEW.c.id.desc()
        with transaction(self._engine, f"list review items of agent {agent!r}") as conn:
            rows = conn.execute(query.order_by(order).limit(limit)).all()
        return [_record(row) for row in rows]

    def pending_counts(self) -> dict[tuple[str, str], int]:
        """Pending proposals per ``(squad, agent)`` that has any."""
        query = (
            select(REVIEW.c.squad, REVIEW.c.agent, func.count())
            .where(REVIEW.c.status == "pending")
            .group_by(REVIEW.c.squad, REVIEW.c.agent)
        )
        with transaction(self._engine, "count pending review items") as conn:
            return {(str(s), str(a)): int(n) for s, a, n in conn.execute(query)}

    def decide(
        self,
        review_id: int,
        status: Literal["approved", "rejected"],
        *,
        by: str,
        edited_text: str | None = None,
        outcome: str | None = None,
    ) -> ReviewRecord:
        """Record the decision on a pending proposal; UsageError when it was decided already
        (by whom and when), NotFound when there is no such proposal."""
        with transaction(self._engine, f"decide review item {review_id}") as conn:
            done = conn.execute(
                update(REVIEW)
                .where(REVIEW.c.id == review_id, REVIEW.c.status == "pending")
                .values(
                    status=status,
                    decided_at=self._now(),
                    decided_by=by,
                    edited_text=edited_text,
                    outcome=outcome,
                )
            )
            row = conn.execute(select(REVIEW).where(REVIEW.c.id == review_id)).first()
        if row is None:
            raise NotFound(f"no review item {review_id}")
        record = _record(row)
        if done.rowcount != 1:
            raise UsageError(already_decided(record))
        return record

    def settle(self, review_id: int, outcome: str) -> ReviewRecord:
        """Say where a decided proposal's fact went (or why it did not)."""
        with transaction(self._engine, f"settle review item {review_id}") as conn:
            conn.execute(update(REVIEW).where(REVIEW.c.id == review_id).values(outcome=outcome))
            row = conn.execute(select(REVIEW).where(REVIEW.c.id == review_id)).one()
        return _record(row)

    def reopen(self, review_id: int) -> None:
        """Make a proposal pending again (its approval failed half-way: nothing was written)."""
        with transaction(self._engine, f"reopen review item {review_id}") as conn:
            conn.execute(
                update(REVIEW)
                .where(REVIEW.c.id == review_id)
                .values(status="pending", decided_at=None, decided_by=None)
                .values(edited_text=None, outcome=None)
            )


def already_decided(record: ReviewRecord) -> str:
    when = record.decided_at.isoformat(timespec="seconds") if record.decided_at else "earlier"
    return (
        f"review item {record.id} was {record.status} already, by {record.decided_by} at "
        f"{when}; only pending items can be approved, edited or rejected"
    )


def _record(row: Row[Any]) -> ReviewRecord:
    details = row.details or {}
    expires = details.get("expires_on")
    return ReviewRecord(
        id=int(row.id),
        squad=row.squad,
        agent=row.agent,
        layer=row.layer,
        section=row.section,
        subject=row.subject,
        text=row.text,
        key=row.key,
        confidence=float(row.confidence),
        extractor=row.extractor,
        turns=tuple(int(t) for t in row.turns or ()),
        run_id=row.run_id,
        source=row.source,
        expires_on=date.fromisoformat(expires) if expires else None,
        detail=details.get("detail"),
        proposed_at=row.proposed_at,
        status=row.status,
        decided_at=row.decided_at,
        decided_by=row.decided_by,
        edited_text=row.edited_text,
        outcome=row.outcome,
    )
