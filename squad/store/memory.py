"""Experiential memory (Layer A) in the state database: namespaces, facts, retrieval.

Reached as ``store.memory``. Its namespaces, one per agent experience, are kept by the base
class (:mod:`squad.store.memory_namespaces`); the rows' checks and records are
:mod:`squad.store.memory_rows`. Facts are small texts with provenance; only active
ones are retrieved, ranked over the lexical index of :mod:`squad.store.memory_index`. Facts may
also carry an embedding vector (:mod:`squad.store.memory_vectors`) for semantic reranking.

Every method is one transaction. Writes that change the index first take a row lock (the
fact's, then its namespace's), and term rows only after, so concurrent writers queue instead of
deadlocking on Postgres.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    bindparam,
    delete,
    func,
    select,
    update,
)

from squad.errors import MemoryError_, UsageError
from squad.store.memory_index import (
    CHUNK,
    FACTS,
    best_facts_statement,
    chunks,
    deindex,
    grow_namespace,
    index_facts,
    live,
    plain_term_dfs,
    ranked,
    scores,
    scoring_params,
)
from squad.store.memory_namespaces import NamespaceStore
from squad.store.memory_records import looked_up_terms
from squad.store.memory_rows import (
    NAMESPACE_STATS,
    checked_fact,
    checked_limit,
    fact_record,
    fact_row,
    fact_values,
    index_stats,
    indexed_text,
    insert_facts,
    new_fact_record,
    no_fact,
    vector_values,
)
from squad.store.memory_vectors import missing_vectors, read_vectors, write_vectors
from squad.store.records import FactRecord, FactStatus, NewFact
from squad.store.sqlite_fast import FastReads, bound_time
from squad.store.tables import UTCDateTime
from squad.text.lexical import term_counts

__all__ = ["MemoryStore"]

_ACTIVE = FactStatus.ACTIVE.value
_RECENT_LIVE = (
    select(FACTS)
    .where(
        FACTS.c.namespace_id == bindparam("ns"),
        live(bindparam("now", type_=UTCDateTime())),
    )
    .order_by(FACTS.c.updated_at.desc(), FACTS.c.id.desc())
    .limit(bindparam("limit", type_=Integer()))
)


class MemoryStore(NamespaceStore):
    """Experiential-memory namespaces and facts; get one as ``Store.memory``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    # facts: writing

    def add_fact(
        self,
        namespace_id: int,
        text: str,
        *,
        squad: str,
        agent: str,
        run_id: str | None = None,
        turns: Sequence[int] | None = None,
        subject: str | None = None,
        source: str = "manual",
        transient: bool = False,
        expires_at: datetime | None = None,
    ) -> FactRecord:
        """Add an active fact to a namespace and index its terms."""
        fact = NewFact(
            text=text,
            squad=squad,
            agent=agent,
            run_id=run_id,
            turns=tuple(turns or ()),
            subject=subject,
            source=source,
            transient=transient,
            expires_at=expires_at,
        )
        return self.add_facts_bulk(namespace_id, [fact])[0]

    def add_facts_bulk(self, namespace_id: int, facts: Iterable[NewFact]) -> list[FactRecord]:
        """Add many facts to one namespace in one transaction (batched inserts), in order."""
        new = [checked_fact(fact) for fact in facts]
        if not new:
            return []
        now = self._now()
        indexed = [term_counts(indexed_text(fact)) for fact in new]
        records: list[FactRecord] = []
        with self._begin(f"add facts to memory namespace {namespace_id!r}") as conn:
            total_len = sum(sum(counts.values()) for counts in indexed)
            if not grow_namespace(conn, namespace_id, len(new), total_len):
                raise UsageError(
                    f"no memory namespace with id {namespace_id!r}; create it with ensure_namespace"
                )
            for start in range(0, len(new), CHUNK):
                batch = new[start : start + CHUNK]
                ids = insert_facts(conn, [fact_values(namespace_id, f, now) for f in batch])
                index_facts(conn, namespace_id, ids, indexed[start : start + CHUNK])
                records += [
                    new_fact_record(fact_id, namespace_id, fact, now)
                    for fact_id, fact in zip(ids, batch, strict=True)
                ]
        return records

    def supersede(self, old_id: int, new_id: int) -> FactRecord:
        """Mark ``old_id`` replaced by ``new_id`` (same namespace); old keeps its text.

        Returns the old fact. Superseding again with the same new fact changes nothing.
        """
        if old_id == new_id:
            raise UsageError(f"fact {old_id!r} cannot supersede itself; give two different ids")
        now = self._now()
        with self._begin(f"supersede memory fact {old_id!r}") as conn:
            new_ns = (
                select(FACTS.c.namespace_id)
                .where(FACTS.c.id == new_id, FACTS.c.status == _ACTIVE)
                .scalar_subquery()
            )
            changed = conn.execute(
                update(FACTS)
                .where(
                    FACTS.c.id == old_id,
                    FACTS.c.status == _ACTIVE,
                    FACTS.c.namespace_id == new_ns,
                )
                .values(
                    status=FactStatus.SUPERSEDED.value,
                    superseded_by=new_id,
                    superseded_at=now,
                    updated_at=now,
                )
            ).rowcount
            if changed:
                deindex(conn, [old_id])
            old, new = fact_row(conn, old_id), fact_row(conn, new_id)
            if old is None or new is None:
                raise UsageError(no_fact(old_id if old is None else new_id))
            if changed or (old.status, old.superseded_by) == (FactStatus.SUPERSEDED, new_id):
                return fact_record(old)
            if old.namespace_id != new.namespace_id:
                raise UsageError(
                    f"facts {old_id!r} and {new_id!r} are in different namespaces "
                    f"({old.namespace_id!r} and {new.namespace_id!r}); a fact can only be "
                    "superseded by one of its own namespace"
                )
            which, status = (old_id, old.status) if old.status != _ACTIVE else (new_id, new.status)
            raise MemoryError_(
                f"fact {which!r} is {status}, not active; only an active fact can supersede or "
                "be superseded (add a new fact instead)"
            )

    def forget(self, fact_id: int) -> FactRecord:
        """Take a fact out of retrieval and search, keeping it (status ``forgotten``) for audit.

        Forgetting a forgotten fact changes nothing; an unknown id is a UsageError.
        """
        now = self._now()
        with self._begin(f"forget memory fact {fact_id!r}") as conn:
            changed = conn.execute(
                update(FACTS)
                .where(FACTS.c.id == fact_id, FACTS.c.status != FactStatus.FORGOTTEN.value)
                .values(status=FactStatus.FORGOTTEN.value, forgotten_at=now, updated_at=now)
            ).rowcount
            if changed:
                deindex(conn, [fact_id])
            row = fact_row(conn, fact_id)
            if row is None:
                raise UsageError(no_fact(fact_id))
            return fact_record(row)

    def purge(self, fact_id: int) -> bool:
        """Delete a fact, its index rows and its vector for good; True if it existed.

        Facts it superseded keep their status; their ``superseded_by`` becomes None.
        """
        with self._begin(f"purge memory fact {fact_id!r}") as conn:
            # Lock order as everywhere: fact rows, then the namespace row, then term rows.
            locked = conn.execute(
                select(FACTS.c.id).where(FACTS.c.id == fact_id).with_for_update()
            ).first()
            if locked is None:
                return False
            conn.execute(
                update(FACTS).where(FACTS.c.superseded_by == fact_id).values(superseded_by=None)
            )
            deindex(conn, [fact_id])
            conn.execute(delete(FACTS).where(FACTS.c.id == fact_id))
            return True

    def touch_facts(self, ids: Iterable[int]) -> None:
        """Count one more access of each fact and stamp ``last_accessed_at`` (one UPDATE)."""
        unique = sorted(set(ids))
        if not unique:
            return
        now = self._now()
        with self._begin("record access to memory facts") as conn:
            for chunk in chunks(unique, 10 * CHUNK):
                conn.execute(
                    update(FACTS)
                    .where(FACTS.c.id.in_(chunk))
                    .values(access_count=FACTS.c.access_count + 1, last_accessed_at=now)
                )

    # facts: reading

    def get_fact(self, fact_id: int) -> FactRecord | None:
        with self._begin(f"read memory fact {fact_id!r}") as conn:
            row = fact_row(conn, fact_id)
            return None if row is None else fact_record(row)

    def facts(
        self, namespace_id: int, *, include_inactive: bool = False, limit: int | None = None
    ) -> list[FactRecord]:
        """A namespace's facts, newest first; inactive ones (superseded, forgotten, expired)
        only with ``include_inactive``."""
        query = select(FACTS).where(FACTS.c.namespace_id == namespace_id)
        if not include_inactive:
            query = query.where(live(self._now()))
        query = query.order_by(FACTS.c.updated_at.desc(), FACTS.c.id.desc())
        if limit is not None:
            query = query.limit(checked_limit(limit))
        with self._begin(f"list facts of memory namespace {namespace_id!r}") as conn:
            return [fact_record(row) for row in conn.execute(query)]

    def search_facts(
        self,
        query: str,
        *,
        namespace_ids: Iterable[int] | None = None,
        case_sensitive: bool = False,
        include_inactive: bool = False,
        limit: int = 1000,
    ) -> list[FactRecord]:
        """Facts whose text contains ``query`` as a substring, newest first (for the CLI).

        No wildcards: ``%`` and ``_`` are plain characters. Case-sensitive matching is exact on
        every backend (``instr`` on SQLite, whose LIKE ignores ASCII case; ``strpos`` on
        Postgres). Case-insensitive matching compares Python's ``str.casefold`` on SQLite (a
        function the engine registers, since SQLite's own ``lower`` knows only ASCII) and
        ``lower`` on Postgres (Unicode-aware in a UTF-8 database). It reads every fact of the
        chosen namespaces: fine for a command, never used on the retrieval path.
        """
        where: list[ColumnElement[bool]] = [self._contains(query, case_sensitive)]
        if namespace_ids is not None:
            where.append(FACTS.c.namespace_id.in_(sorted(set(namespace_ids))))
        if not include_inactive:
            where.append(live(self._now()))
        statement = (
            select(FACTS)
            .where(*where)
            .order_by(FACTS.c.updated_at.desc(), FACTS.c.id.desc())
            .limit(checked_limit(limit))
        )
        with self._begin(f"search memory facts for {query!r}") as conn:
            return [fact_record(row) for row in conn.execute(statement)]

    def candidate_facts(
        self, namespace_id: int, literal: str, *, case_sensitive: bool
    ) -> list[FactRecord]:
        """The namespace's active facts that may contain ``literal`` as the search engine's
        literal pattern matches it (:func:`squad.text.grep.compile_query`), newest first: a
        superset of its matches, narrowed in the database where that is sure, else them all.

        Case-sensitive, the store's substring test is the pattern's on every backend. Ignoring
        case, it is sure on SQLite for an ASCII query: the text is casefolded (Python's
        ``str.casefold``, registered in the engine), and a dotless ``ı`` and a dotted ``İ``,
        which the pattern takes for an ``I`` but casefolding keeps apart, are folded to ``i``.
        PostgreSQL's ``lower`` depends on the database's locale, so there every fact is
        returned.
        """
        dialect = self._engine.dialect.name
        if case_sensitive:
            return self.search_facts(
                literal, namespace_ids=[namespace_id], case_sensitive=True, limit=2**62
            )
        if dialect != "sqlite" or not literal.isascii():
            return self.facts(namespace_id)
        # The pattern takes a dotless ı, and a dotted İ (which casefolds to i and a combining
        # dot), for an i: both are folded to a plain i, so the narrowing stays a superset.
        folded = func.replace(
            func.replace(func.squad_casefold(FACTS.c.text), "\u0131", "i"), "i\u0307", "i"
        )
        statement = (
            select(FACTS)
            .where(
                FACTS.c.namespace_id == namespace_id,
                func.instr(folded, literal.casefold()) > 0,
                live(self._now()),
            )
            .order_by(FACTS.c.updated_at.desc(), FACTS.c.id.desc())
        )
        with self._begin(f"search memory facts for {literal!r}") as conn:
            return [fact_record(row) for row in conn.execute(statement)]

    def _contains(self, query: str, case_sensitive: bool) -> ColumnElement[bool]:
        text = FACTS.c.text
        dialect = self._engine.dialect.name
        if dialect == "sqlite":
            if case_sensitive:
                return func.instr(text, query) > 0
            return func.instr(func.squad_casefold(text), query.casefold()) > 0
        if dialect == "postgresql":
            if case_sensitive:
                return func.strpos(text, query) > 0
            return func.strpos(func.lower(text), func.lower(query)) > 0
        # Other backends: LIKE, whose case rules are the database's own.
        if case_sensitive:
            return text.contains(query, autoescape=True)
        return func.lower(text).contains(query.lower(), autoescape=True)

    def relevant_facts(
        self, namespace_id: int, query: str, *, limit: int = 200
    ) -> list[FactRecord]:
        """Up to ``limit`` active facts, most relevant to ``query`` first, then newest first.

        An empty (or all-stopword) query gives simply the newest facts. Every query is bounded
        by an index and a LIMIT, whatever the namespace's size: :mod:`squad.store.memory_index`
        explains how.
        """
        limit = checked_limit(limit)
        now = self._now()
        wanted = looked_up_terms(query)
        if self._fast is not None and self._fast.usable():
            try:
                return self._relevant_fast(self._fast, namespace_id, wanted, limit, now)
            except sqlite3.Error:
                pass  # read again below, where the error is told in the store's words
        with self._begin(f"retrieve facts of memory namespace {namespace_id!r}") as conn:
            n_docs, total_len = index_stats(conn, namespace_id)
            picked = ranked(conn, namespace_id, wanted, n_docs, total_len, limit, now)
            if len(picked) < limit:
                seen = {row.id for row in picked}
                recent = conn.execute(
                    _RECENT_LIVE, {"ns": namespace_id, "now": now, "limit": limit}
                ).all()
                picked += [row for row in recent if row.id not in seen][: limit - len(picked)]
            return [fact_record(row) for row in picked]

    def _relevant_fast(
        self, fast: FastReads, namespace_id: int, wanted: list[str], limit: int, now: datetime
    ) -> list[FactRecord]:
        """:meth:`relevant_facts` in plain sqlite3: the same statements, the same pages."""
        stamp = bound_time(now)
        live = f"status = '{_ACTIVE}' AND (expires_at IS NULL OR expires_at > ?)"
        with fast.snapshot() as conn:
            stats = fast.rows(conn, NAMESPACE_STATS, {"ns": namespace_id})
            if not stats:
                raise UsageError(f"no memory namespace with id {namespace_id!r}")
            n_docs, total_len = int(stats[0][0]), int(stats[0][1])
            picked: list[Any] = []
            query = None
            if wanted and n_docs > 0:
                dfs = plain_term_dfs(conn, namespace_id, wanted)
                query = scoring_params(namespace_id, dfs, n_docs, total_len)
            if query is not None:  # as memory_index.ranked
                n_terms, params = query
                page_size = 2 * limit
                for offset in itertools.count(0, page_size):
                    page = [
                        int(fact_id)
                        for (fact_id,) in fast.rows(
                            conn,
                            best_facts_statement(n_terms),
                            {**params, "page": page_size, "offset": offset},
                        )
                    ]
                    rank = {fact_id: i for i, fact_id in enumerate(page)}
                    pos = 0
                    while len(picked) < limit and pos < len(page):
                        ids = page[pos : pos + limit - len(picked)]
                        pos += len(ids)
                        rows = fast.decoded(
                            conn,
                            f"SELECT * FROM memory_facts WHERE id IN ({', '.join('?' * len(ids))})"
                            f" AND {live}",
                            (*ids, stamp),
                        )
                        picked += sorted(rows, key=lambda row: rank[row.id])
                    if len(picked) >= limit or len(page) < page_size:
                        break
            if len(picked) < limit:
                seen = {row.id for row in picked}
                recent = fast.decoded(
                    conn,
                    f"SELECT * FROM memory_facts WHERE namespace_id = ? AND {live} "
                    "ORDER BY updated_at DESC, id DESC LIMIT ?",
                    (namespace_id, stamp, limit),
                )
                picked += [row for row in recent if row.id not in seen][: limit - len(picked)]
        return [fact_record(row) for row in picked]

    def scored_facts(
        self, namespace_id: int, query: str, *, limit: int = 200
    ) -> list[tuple[FactRecord, float]]:
        """Up to ``limit`` active facts matching ``query``, with their BM25 scores, best first.

        No recency fill and no expiry check: for namespaces whose facts never expire (an
        agent's conversation archive). Bounded like :meth:`relevant_facts`.
        """
        limit = checked_limit(limit)
        wanted = looked_up_terms(query)
        with self._begin(f"score facts of memory namespace {namespace_id!r}") as conn:
            n_docs, total_len = index_stats(conn, namespace_id)
            hits = scores(conn, namespace_id, wanted, n_docs, total_len, limit)
            rows = {
                row.id: row
                for chunk in chunks([fact_id for fact_id, _ in hits])
                for row in conn.execute(
                    select(FACTS).where(FACTS.c.id.in_(chunk), FACTS.c.status == _ACTIVE)
                )
            }
            return [(fact_record(rows[i]), score) for i, score in hits if i in rows]

    def newest_fact(self, namespace_id: int) -> FactRecord | None:
        """The namespace's most recently added fact, whatever its status; None when empty."""
        query = (
            select(FACTS)
            .where(FACTS.c.namespace_id == namespace_id)
            .order_by(FACTS.c.id.desc())
            .limit(1)
        )
        with self._begin(f"read the newest fact of memory namespace {namespace_id!r}") as conn:
            row = conn.execute(query).first()
            return None if row is None else fact_record(row)

    # facts: embedding vectors (semantic ranking)

    def set_vectors(self, items: Iterable[tuple[int, str, bytes, int]]) -> int:
        """Store embeddings as ``(fact_id, model, data, dims)``, replacing a fact's old one.

        ``data`` is ``dims`` little-endian float32 values (``squad.memory.embeddings``
        encodes them). Facts that no longer exist (purged meanwhile) are skipped, not an
        error. One transaction; returns the number of vectors stored.
        """
        rows = [vector_values(*item) for item in items]
        if not rows:
            return 0
        with self._begin("store memory fact vectors") as conn:
            return write_vectors(conn, rows)

    def vectors(self, fact_ids: Sequence[int], model: str) -> dict[int, bytes]:
        """The stored ``model`` vectors of ``fact_ids``, by fact id; others are left out.

        Reads only the rows of the ids given (primary-key lookups), never a whole namespace.
        """
        with self._begin("read memory fact vectors") as conn:
            return read_vectors(conn, fact_ids, model)

    def facts_missing_vectors(
        self, namespace_id: int, model: str, limit: int = 100
    ) -> list[FactRecord]:
        """Up to ``limit`` active facts with no ``model`` vector yet, newest first (backfill)."""
        limit = checked_limit(limit)
        now = self._now()
        with self._begin(f"find facts without vectors in namespace {namespace_id!r}") as conn:
            return [
                fact_record(row) for row in missing_vectors(conn, namespace_id, model, limit, now)
            ]
