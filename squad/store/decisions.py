"""Squads' decisions with their reasons; reached as ``store.decisions``.

A decision is never deleted or edited: a later one supersedes it, and both rows keep the link
(``supersedes`` on the new one, ``superseded_by`` on the old one), written in the same
transaction as the new row. Checking what is recorded (lengths, credentials, who decided) is
the caller's business (:class:`squad.memory.decisions.log.DecisionLog`); this module checks only
what needs the database: that a superseded decision exists, is the same squad's and is not
superseded already.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Table, insert, select, update
from sqlalchemy.engine import Connection, Engine

from squad import views
from squad.clock import Clock
from squad.errors import NotFound, UsageError
from squad.store.engine import transaction
from squad.store.tables import metadata

__all__ = ["DecisionRecord", "DecisionStore", "NewDecision"]

DECISIONS: Table = metadata.tables["decisions"]

Mirror = Callable[[Sequence["DecisionRecord"]], None]
"""Called inside the writing transaction with all the squad's decisions, oldest first; if it
raises, nothing is stored."""


@dataclass(frozen=True)
class NewDecision:
    """A decision to record, already checked by the caller."""

    squad: str
    title: str
    decision: str
    decision_key: str
    """Identifies the decision text however it is spaced or cased (a sha256 hex digest)."""
    reasons: tuple[str, ...]
    alternatives: tuple[str, ...]
    decided_by: str
    decided_at: datetime
    supersedes: int | None = None


@dataclass(frozen=True)
class DecisionRecord:
    """One recorded decision; ``decided_at`` is timezone-aware UTC."""

    id: int
    squad: str
    title: str
    decision: str
    decision_key: str
    """Identifies the decision text however it is spaced or cased (a sha256 hex digest)."""
    reasons: tuple[str, ...]
    alternatives: tuple[str, ...]
    """What else was considered (may be empty)."""
    decided_by: str
    """``cli``, ``person:<name>``, ``agent:<id>`` or ``mcp:<client name>``."""
    decided_at: datetime
    supersedes: int | None
    """The decision this one replaces, if any."""
    superseded_by: int | None
    """The decision that replaced this one; None while it holds."""

    def view(self) -> views.Decision:
        """As every front end shows it (ISO 8601 time, lists for reasons and alternatives)."""
        return views.Decision(
            id=self.id,
            squad=self.squad,
            title=self.title,
            decision=self.decision,
            reasons=list(self.reasons),
            alternatives=list(self.alternatives),
            decided_by=self.decided_by,
            decided_at=self.decided_at.isoformat(),
            supersedes=self.supersedes,
            superseded_by=self.superseded_by,
        )


class DecisionStore:
    """Decisions of every squad; get one as ``Store.decisions``. Safe to share between threads."""

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        self._engine = engine
        self._now = now

    def add(
        self, new: NewDecision, *, mirror: Mirror | None = None, once: bool = False
    ) -> tuple[DecisionRecord, bool]:
        """Record ``new`` (and its supersession link) in one transaction; (record, created).

        With ``once``, a decision of the squad with the same ``decision_key`` is returned
        instead (created False) and nothing is written. NotFound when ``supersedes`` names no
        decision, UsageError when it names another squad's or one already superseded.
        """
        with transaction(self._engine, f"record a decision of squad {new.squad!r}") as conn:
            if once:
                found = conn.execute(
                    select(DECISIONS)
                    .where(
                        DECISIONS.c.squad == new.squad,
                        DECISIONS.c.decision_key == new.decision_key,
                    )
                    .order_by(DECISIONS.c.id)
                    .limit(1)
                ).first()
                if found is not None:
                    return _record(found), False
            if new.supersedes is not None:
                _check_supersedable(conn, new.squad, new.supersedes)
            key = conn.execute(
                insert(DECISIONS).values(
                    squad=new.squad,
                    title=new.title,
                    decision=new.decision,
                    decision_key=new.decision_key,
                    reasons=_dump(new.reasons),
                    alternatives=_dump(new.alternatives),
                    decided_by=new.decided_by,
                    decided_at=new.decided_at,
                    supersedes=new.supersedes,
                )
            ).inserted_primary_key
            assert key is not None
            decision_id = int(key[0])
            if new.supersedes is not None:
                linked = conn.execute(
                    update(DECISIONS)
                    .where(
                        DECISIONS.c.id == new.supersedes,
                        DECISIONS.c.superseded_by.is_(None),
                    )
                    .values(superseded_by=decision_id)
                )
                if linked.rowcount != 1:  # another writer superseded it since the check
                    raise UsageError(_already_superseded(conn, new.supersedes))
            rows = self._of_squad(conn, new.squad)
            if mirror is not None:
                mirror(rows)
            return next(r for r in rows if r.id == decision_id), True

    def get(self, decision_id: int) -> DecisionRecord | None:
        with transaction(self._engine, f"read decision {decision_id!r}") as conn:
            row = conn.execute(select(DECISIONS).where(DECISIONS.c.id == decision_id)).first()
            return None if row is None else _record(row)

    def of_squad(self, squad: str) -> list[DecisionRecord]:
        """Every decision of ``squad``, oldest first (the order of ``decisions.md``)."""
        with transaction(self._engine, f"read the decisions of squad {squad!r}") as conn:
            return self._of_squad(conn, squad)

    def recent(
        self,
        squads: Sequence[str] | None = None,
        *,
        include_superseded: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[DecisionRecord]:
        """Decisions of ``squads`` (None: of all), the last recorded first."""
        query = select(DECISIONS)
        if squads is not None:
            query = query.where(DECISIONS.c.squad.in_(sorted(set(squads))))
        if not include_superseded:
            query = query.where(DECISIONS.c.superseded_by.is_(None))
        query = query.order_by(DECISIONS.c.id.desc()).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        with transaction(self._engine, "list decisions") as conn:
            return [_record(row) for row in conn.execute(query)]

    def _of_squad(self, conn: Connection, squad: str) -> list[DecisionRecord]:
        query = select(DECISIONS).where(DECISIONS.c.squad == squad).order_by(DECISIONS.c.id)
        return [_record(row) for row in conn.execute(query)]


def _check_supersedable(conn: Connection, squad: str, decision_id: int) -> None:
    old = conn.execute(select(DECISIONS).where(DECISIONS.c.id == decision_id)).first()
    if old is None:
        raise NotFound(
            f"no decision {decision_id} to supersede; `squad decisions list {squad}` lists "
            "the squad's decisions"
        )
    if old.squad != squad:
        raise UsageError(
            f"decision {decision_id} is squad {old.squad!r}'s, not {squad!r}'s; a decision "
            "can only supersede one of its own squad"
        )
    if old.superseded_by is not None:
        raise UsageError(_already_superseded(conn, decision_id))


def _already_superseded(conn: Connection, decision_id: int) -> str:
    by = conn.execute(
        select(DECISIONS.c.superseded_by).where(DECISIONS.c.id == decision_id)
    ).scalar()
    return (
        f"decision {decision_id} is already superseded by decision {by}; supersede decision "
        f"{by} instead"
    )


def _dump(items: Sequence[str]) -> str:
    return json.dumps(list(items), ensure_ascii=False)


def _load(text: str) -> tuple[str, ...]:
    items = json.loads(text)
    return tuple(str(item) for item in items) if isinstance(items, list) else ()


def _record(row: Row[Any]) -> DecisionRecord:
    return DecisionRecord(
        id=row.id,
        squad=row.squad,
        title=row.title,
        decision=row.decision,
        decision_key=row.decision_key,
        reasons=_load(row.reasons),
        alternatives=_load(row.alternatives),
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        supersedes=row.supersedes,
        superseded_by=row.superseded_by,
    )
