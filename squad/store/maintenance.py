"""What memory maintenance reads and writes in the store; reached as ``store.maintenance``.

Experiential facts are never deleted here, only moved out of retrieval, with their postings
(so retrieval cost stays bounded by what is live):

- ``expired``: past their ``expires_at``, or transient and unused for a TTL (:meth:`expire`);
- ``dormant``: unused for long, by memory gc's recency decay (:meth:`make_dormant`), and
  brought back with :meth:`revive`.

Candidates are read first and written in a second call, so a dry run reads exactly what a real
run would change; each write re-checks its condition under the fact rows' locks, so a fact
used in between is left alone. Lock order is the one of :mod:`squad.store.memory`: fact rows,
then namespace rows, then term rows.

``memory_sightings`` holds the evidence for promoting a project fact (a memory.md line) to
experiential memory: the distinct runs and chat sessions it was extracted in, under
:func:`squad.memory.sightings.sighting_key` of its text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Row, Table, and_, func, or_, select, update
from sqlalchemy.engine import Connection, Engine

from squad.clock import Clock
from squad.errors import MemoryError_, NotFound
from squad.store.engine import transaction
from squad.store.memory_index import FACTS, chunks, deindex, grow_namespace, index_facts
from squad.store.memory_rows import fact_record, indexed_text
from squad.store.records import FactRecord, FactStatus, NewFact
from squad.store.tables import metadata
from squad.store.upsert import upsert
from squad.text.lexical import term_counts

__all__ = ["MAX_SOURCES", "MaintenanceStore", "SightingRecord"]

SIGHTINGS: Table = metadata.tables["memory_sightings"]
_POSTINGS: Table = metadata.tables["memory_postings"]
_ACTIVE = FactStatus.ACTIVE.value
MAX_SOURCES = 100
"""Distinct sources kept per sighting; the count saturates there (promotion needs three)."""


@dataclass(frozen=True)
class SightingRecord:
    """A project fact and the distinct runs or chat sessions it was extracted in."""

    squad: str
    agent: str
    key: str
    """:func:`~squad.memory.sightings.sighting_key` of the text."""
    text: str
    """The wording first seen."""
    sources: tuple[str, ...]
    """Run ids or chat session ids, first seen first (at most :data:`MAX_SOURCES`)."""
    first_seen_at: datetime
    last_seen_at: datetime
    proposed_at: datetime | None
    """When memory gc proposed promoting it; None until then."""


class MaintenanceStore:
    """Decay, TTL and promotion evidence for memory gc; get one as ``Store.maintenance``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC)."""
        self._engine = engine
        self._now = now

    def now(self) -> datetime:
        """The store's clock: what its writes stamp, and memory gc's default ``now``."""
        return self._now()

    # TTL

    def due_to_expire(
        self, now: datetime, *, transient_ttl: timedelta | None = None
    ) -> list[FactRecord]:
        """Active facts to expire at ``now``, by id: past their ``expires_at``, or (with
        ``transient_ttl``) transient ones without one that nobody used for that long."""
        where = _expiry(now, transient_ttl)
        with transaction(self._engine, "find memory facts to expire") as conn:
            rows = conn.execute(select(FACTS).where(where).order_by(FACTS.c.id)).all()
        return [fact_record(row) for row in rows]

    def expire(
        self, ids: Iterable[int], now: datetime, *, transient_ttl: timedelta | None = None
    ) -> dict[int, int]:
        """Mark those of ``ids`` still due (as :meth:`due_to_expire` says) ``expired``.

        Returns the ids changed, each with the number of index rows removed with it.
        """
        return self._retire(
            ids, _expiry(now, transient_ttl), FactStatus.EXPIRED, "expire memory facts"
        )

    # decay

    def decay_candidates(
        self, unused_since: datetime, *, after_id: int = 0, limit: int = 1000
    ) -> list[FactRecord]:
        """Up to ``limit`` active facts, by id above ``after_id``, neither changed nor
        retrieved since ``unused_since``: the only ones recency decay can make dormant.

        A conversation archive's entries never decay: they are the record recall searches,
        not facts that may have stopped being true.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        query = (
            select(FACTS)
            .where(_unused(unused_since), FACTS.c.id > after_id, FACTS.c.source != "archive")
            .order_by(FACTS.c.id)
            .limit(limit)
        )
        with transaction(self._engine, "find memory facts to decay") as conn:
            return [fact_record(row) for row in conn.execute(query)]

    def make_dormant(self, ids: Iterable[int], *, unused_since: datetime) -> dict[int, int]:
        """Mark those of ``ids`` still unused since ``unused_since`` ``dormant``.

        A fact retrieved after the candidates were read is left active. Returns the ids
        changed, each with the number of index rows removed with it.
        """
        return self._retire(
            ids, _unused(unused_since), FactStatus.DORMANT, "make memory facts dormant"
        )

    def revive(self, fact_id: int, *, any_status: bool = False) -> FactRecord:
        """Bring a dormant fact back into retrieval (active, indexed, ``updated_at`` now).

        Reviving an active fact changes nothing; an unknown id is a NotFound, any other
        status a MemoryError_ (forgotten, superseded and expired facts stay out), unless
        ``any_status``: a revert of the change that forgot or superseded it brings it back.
        """
        now = self._now()
        with transaction(self._engine, f"revive memory fact {fact_id!r}") as conn:
            row = conn.execute(select(FACTS).where(FACTS.c.id == fact_id).with_for_update()).first()
            if row is None:
                raise NotFound(
                    f"no memory fact with id {fact_id!r}; `squad memory show --all` lists them"
                )
            if row.status == _ACTIVE:
                return fact_record(row)
            if row.status != FactStatus.DORMANT.value and not any_status:
                raise MemoryError_(
                    f"fact {fact_id!r} is {row.status}, not dormant; only dormant facts can be "
                    "revived (remember the fact again instead)"
                )
            conn.execute(
                update(FACTS)
                .where(FACTS.c.id == fact_id)
                .values(
                    status=_ACTIVE,
                    updated_at=now,
                    last_accessed_at=now,
                    superseded_by=None,
                    superseded_at=None,
                    forgotten_at=None,
                )
            )
            fact = NewFact(text=row.text, squad=row.squad, agent=row.agent, subject=row.subject)
            counts = term_counts(indexed_text(fact))
            grow_namespace(conn, row.namespace_id, 1, sum(counts.values()))
            index_facts(conn, row.namespace_id, [fact_id], [counts])
            revived = conn.execute(select(FACTS).where(FACTS.c.id == fact_id)).one()
            return fact_record(revived)

    def postings(self, ids: Iterable[int]) -> dict[int, int]:
        """How many index rows each of the facts ``ids`` has (what retiring it removes)."""
        counts: dict[int, int] = {}
        with transaction(self._engine, "count memory postings") as conn:
            for chunk in chunks(sorted(set(ids))):
                counts.update(_postings(conn, chunk))
        return counts

    def _retire(
        self, ids: Iterable[int], still: ColumnElement[bool], status: FactStatus, action: str
    ) -> dict[int, int]:
        removed: dict[int, int] = {}
        now = self._now()
        for chunk in chunks(sorted(set(ids))):
            with transaction(self._engine, action) as conn:
                locked = list(
                    conn.execute(
                        select(FACTS.c.id)
                        .where(FACTS.c.id.in_(chunk), still)
                        .order_by(FACTS.c.id)
                        .with_for_update()
                    ).scalars()
                )
                if not locked:
                    continue
                conn.execute(
                    update(FACTS)
                    .where(FACTS.c.id.in_(locked))
                    .values(status=status.value, updated_at=now)
                )
                counts = _postings(conn, locked)
                deindex(conn, locked)
                removed.update({fact_id: counts.get(fact_id, 0) for fact_id in locked})
        return removed

    # promotion evidence

    def record_sighting(self, squad: str, agent: str, key: str, text: str, source: str) -> int:
        """Note that the project fact ``key`` was extracted in run or session ``source``.

        Returns how many distinct sources the fact has now been seen in. ``key`` is
        :func:`~squad.memory.sightings.sighting_key` of ``text``; the first wording is kept.
        """
        if not key or not source or not squad or not agent:
            raise ValueError(
                f"squad, agent, key and source must be non-empty, got {squad!r}, {agent!r}, "
                f"{key!r} and {source!r}"
            )
        now = self._now()
        values = {
            "squad": squad,
            "agent": agent,
            "key": key,
            "text": text,
            "sources": [source],
            "first_seen_at": now,
            "last_seen_at": now,
            "proposed_at": None,
        }
        where = _sighting_key(squad, agent, key)
        with transaction(self._engine, f"record a sighting of {key!r}") as conn:
            upsert(conn, SIGHTINGS, values, key=("squad", "agent", "key"), set_=None)
            row = conn.execute(select(SIGHTINGS).where(where).with_for_update()).one()
            sources = list(row.sources or ())
            if source not in sources and len(sources) < MAX_SOURCES:
                sources.append(source)
            conn.execute(update(SIGHTINGS).where(where).values(sources=sources, last_seen_at=now))
            return len(sources)

    def sighting(self, squad: str, agent: str, key: str) -> SightingRecord | None:
        with transaction(self._engine, f"read the sighting {key!r}") as conn:
            row = conn.execute(select(SIGHTINGS).where(_sighting_key(squad, agent, key))).first()
        return None if row is None else _sighting_record(row)

    def promotion_candidates(self, min_sources: int = 3) -> list[SightingRecord]:
        """Sightings in at least ``min_sources`` distinct sources, not yet proposed.

        Ordered by squad, agent, then first sighting.
        """
        if min_sources < 1:
            raise ValueError(f"min_sources must be at least 1, got {min_sources!r}")
        query = (
            select(SIGHTINGS)
            .where(
                SIGHTINGS.c.proposed_at.is_(None),
                func.json_array_length(SIGHTINGS.c.sources) >= min_sources,
            )
            .order_by(
                SIGHTINGS.c.squad, SIGHTINGS.c.agent, SIGHTINGS.c.first_seen_at, SIGHTINGS.c.key
            )
        )
        with transaction(self._engine, "find promotion candidates") as conn:
            return [_sighting_record(row) for row in conn.execute(query)]

    def mark_proposed(self, squad: str, agent: str, key: str) -> bool:
        """Stamp ``proposed_at``; False if the sighting is unknown or was proposed already."""
        with transaction(self._engine, f"mark the sighting {key!r} proposed") as conn:
            changed = conn.execute(
                update(SIGHTINGS)
                .where(_sighting_key(squad, agent, key), SIGHTINGS.c.proposed_at.is_(None))
                .values(proposed_at=self._now())
            ).rowcount
        return bool(changed)


# helpers


def _expiry(now: datetime, transient_ttl: timedelta | None) -> ColumnElement[bool]:
    """Active and due to expire at ``now`` (the complement of ``live`` among active facts,
    plus transient facts with no ``expires_at`` unused for ``transient_ttl``)."""
    due: ColumnElement[bool] = and_(FACTS.c.expires_at.is_not(None), FACTS.c.expires_at <= now)
    if transient_ttl is not None:
        stale = now - transient_ttl
        due = or_(
            due,
            and_(
                FACTS.c.transient.is_(True),
                FACTS.c.expires_at.is_(None),
                FACTS.c.updated_at < stale,
                or_(FACTS.c.last_accessed_at.is_(None), FACTS.c.last_accessed_at < stale),
            ),
        )
    return and_(FACTS.c.status == _ACTIVE, due)


def _unused(since: datetime) -> ColumnElement[bool]:
    """Active, and neither changed nor retrieved since ``since``."""
    return and_(
        FACTS.c.status == _ACTIVE,
        FACTS.c.updated_at < since,
        or_(FACTS.c.last_accessed_at.is_(None), FACTS.c.last_accessed_at < since),
    )


def _postings(conn: Connection, ids: Sequence[int]) -> dict[int, int]:
    """Index rows per fact of ``ids`` (facts without any are left out)."""
    query = (
        select(_POSTINGS.c.fact_id, func.count())
        .where(_POSTINGS.c.fact_id.in_(ids))
        .group_by(_POSTINGS.c.fact_id)
    )
    return {int(fact_id): int(count) for fact_id, count in conn.execute(query)}


def _sighting_key(squad: str, agent: str, key: str) -> ColumnElement[bool]:
    return and_(SIGHTINGS.c.squad == squad, SIGHTINGS.c.agent == agent, SIGHTINGS.c.key == key)


def _sighting_record(row: Row[Any]) -> SightingRecord:
    return SightingRecord(
        squad=row.squad,
        agent=row.agent,
        key=row.key,
        text=row.text,
        sources=tuple(str(source) for source in row.sources or ()),
        first_seen_at=row.first_seen_at,
        last_seen_at=row.last_seen_at,
        proposed_at=row.proposed_at,
    )
