"""Experiential memory (Layer A) in the state database: namespaces, facts, retrieval.

Reached as ``store.memory``. A namespace (``Agent Experience: <agent name>``) is identified by
``profile:<profile-id>`` or ``squad:<squad>/<agent-id>``, and created disabled: the flag only
governs injection into other agents' chats. Facts are small texts with provenance; only active
ones are retrieved, ranked over the lexical index of :mod:`squad.store.memory_index`. Facts may
also carry an embedding vector (:mod:`squad.store.memory_vectors`) for semantic reranking.

Every method is one transaction. Writes that change the index first take a row lock (the
fact's, then its namespace's), and term rows only after, so concurrent writers queue instead of
deadlocking on Postgres.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    bindparam,
    delete,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from squad.clock import Clock
from squad.errors import MemoryError_, UsageError
from squad.store.engine import transaction
from squad.store.memory_index import (
    CHUNK,
    FACTS,
    NAMESPACES,
    chunks,
    deindex,
    grow_namespace,
    index_facts,
    live,
    ranked,
    scores,
)
from squad.store.memory_vectors import missing_vectors, read_vectors, write_vectors
from squad.store.records import FactRecord, FactStatus, NamespaceRecord, NewFact
from squad.store.tables import UTCDateTime
from squad.text.lexical import query_terms, term_counts

__all__ = ["MemoryStore"]

ARCHIVE_PREFIX = "archive:"
"""Identity prefix of an agent's conversation archive (see squad.memory.recall)."""
_QUERY_TERMS_LOOKED_UP = 256
"""Distinct terms of a query whose df is looked up (in first-seen order)."""
_ACTIVE = FactStatus.ACTIVE.value


_NAMESPACE_STATS = select(NAMESPACES.c.indexed_facts, NAMESPACES.c.indexed_terms).where(
    NAMESPACES.c.id == bindparam("ns")
)
"""Prepared once, like the two below: they run on every prompt, so they build no SQL per call."""
_ENABLED = (
    select(NAMESPACES)
    .where(NAMESPACES.c.enabled.is_(True))
    .order_by(NAMESPACES.c.name, NAMESPACES.c.id)
)
_RECENT_LIVE = (
    select(FACTS)
    .where(
        FACTS.c.namespace_id == bindparam("ns"),
        live(bindparam("now", type_=UTCDateTime())),
    )
    .order_by(FACTS.c.updated_at.desc(), FACTS.c.id.desc())
    .limit(bindparam("limit", type_=Integer()))
)


class MemoryStore:
    """Experiential-memory namespaces and facts; get one as ``Store.memory``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC)."""
        self._engine = engine
        self._now = now

    # namespaces

    def ensure_namespace(self, identity: str, name: str) -> NamespaceRecord:
        """The namespace of ``identity``, created disabled if missing, renamed if ``name`` moved.

        ``identity`` is ``profile:<profile-id>`` or ``squad:<squad>/<agent-id>``; the enabled
        flag of an existing namespace is left as it is.
        """
        identity, name = _checked_identity(identity), _checked_name(name)
        try:
            return self._ensure_namespace(identity, name, first_try=True)
        except IntegrityError:
            # Another writer created it between our read and our insert: read it back.
            return self._ensure_namespace(identity, name, first_try=False)

    def _ensure_namespace(self, identity: str, name: str, *, first_try: bool) -> NamespaceRecord:
        now = self._now()
        reraise = IntegrityError if first_try else None
        with self._begin(f"save memory namespace {identity!r}", reraise=reraise) as conn:
            row = conn.execute(select(NAMESPACES).where(NAMESPACES.c.identity == identity)).first()
            if row is None:
                conn.execute(
                    insert(NAMESPACES).values(
                        identity=identity, name=name, enabled=False, created_at=now, updated_at=now
                    )
                )
            elif row.name != name:
                conn.execute(
                    update(NAMESPACES)
                    .where(NAMESPACES.c.id == row.id)
                    .values(name=name, updated_at=now)
                )
            return self._namespaces(conn, NAMESPACES.c.identity == identity)[0]

    def get_namespace(self, id_or_identity: int | str) -> NamespaceRecord | None:
        """The namespace with this numeric id (an int or a string of digits) or identity."""
        with self._begin("read a memory namespace") as conn:
            found = self._namespaces(conn, _namespace_key(id_or_identity))
            return found[0] if found else None

    def list_namespaces(self) -> list[NamespaceRecord]:
        """Every namespace with its active fact count, sorted by name then id."""
        with self._begin("list memory namespaces") as conn:
            return self._namespaces(conn, true())

    def enabled_namespaces(self) -> list[NamespaceRecord]:
        """Enabled namespaces, cheaply: for every prompt's supplementary block.

        ``fact_count`` here is the index's count of active facts (expiry not re-checked), so
        no query ever counts a namespace's facts on the prompt path.
        """
        with self._begin("list enabled memory namespaces") as conn:
            rows = conn.execute(_ENABLED).all()
            return [_namespace_record(row, int(row.indexed_facts)) for row in rows]

    def set_namespace_enabled(self, ref: int | str, enabled: bool) -> NamespaceRecord:
        """Enable or disable injection of a namespace into other agents' chats.

        ``ref`` is the identity, the exact name or the numeric id; UsageError when it names
        no namespace (with close matches) or a name several namespaces share.
        """
        now = self._now()
        with self._begin(f"enable memory namespace {ref!r}") as conn:
            row = _resolve_namespace(conn, str(ref).strip())
            if enabled and row.identity.startswith(ARCHIVE_PREFIX):
                raise UsageError(
                    f"{row.name!r} is a conversation archive: it holds the agent's own messages "
                    "and is never shared with other agents; enable its experience namespace"
                )
            if row.enabled != enabled:
                conn.execute(
                    update(NAMESPACES)
                    .where(NAMESPACES.c.id == row.id)
                    .values(enabled=enabled, updated_at=now)
                )
            return self._namespaces(conn, NAMESPACES.c.id == row.id)[0]

    def _namespaces(self, conn: Connection, where: ColumnElement[bool]) -> list[NamespaceRecord]:
        rows = conn.execute(
            select(NAMESPACES).where(where).order_by(NAMESPACES.c.name, NAMESPACES.c.id)
        ).all()
        if not rows:
            return []
        counts: dict[int, int] = {}
        now = self._now()
        for ids in chunks([row.id for row in rows]):
            query = (
                select(FACTS.c.namespace_id, func.count())
                .where(FACTS.c.namespace_id.in_(ids), live(now))
                .group_by(FACTS.c.namespace_id)
            )
            counts.update({ns: count for ns, count in conn.execute(query)})
        return [_namespace_record(row, counts.get(row.id, 0)) for row in rows]

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
        new = [_checked_fact(fact) for fact in facts]
        if not new:
            return []
        now = self._now()
        indexed = [term_counts(_indexed_text(fact)) for fact in new]
        records: list[FactRecord] = []
        with self._begin(f"add facts to memory namespace {namespace_id!r}") as conn:
            total_len = sum(sum(counts.values()) for counts in indexed)
            if not grow_namespace(conn, namespace_id, len(new), total_len):
                raise UsageError(
                    f"no memory namespace with id {namespace_id!r}; create it with ensure_namespace"
                )
            for start in range(0, len(new), CHUNK):
                batch = new[start : start + CHUNK]
                ids = _insert_facts(conn, [_fact_values(namespace_id, f, now) for f in batch])
                index_facts(conn, namespace_id, ids, indexed[start : start + CHUNK])
                records += [
                    _new_fact_record(fact_id, namespace_id, fact, now)
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
            old, new = _fact_row(conn, old_id), _fact_row(conn, new_id)
            if old is None or new is None:
                raise UsageError(_no_fact(old_id if old is None else new_id))
            if changed or (old.status, old.superseded_by) == (FactStatus.SUPERSEDED, new_id):
                return _fact_record(old)
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
            row = _fact_row(conn, fact_id)
            if row is None:
                raise UsageError(_no_fact(fact_id))
            return _fact_record(row)

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
            row = _fact_row(conn, fact_id)
            return None if row is None else _fact_record(row)

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
            query = query.limit(_checked_limit(limit))
        with self._begin(f"list facts of memory namespace {namespace_id!r}") as conn:
            return [_fact_record(row) for row in conn.execute(query)]

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
            .limit(_checked_limit(limit))
        )
        with self._begin(f"search memory facts for {query!r}") as conn:
            return [_fact_record(row) for row in conn.execute(statement)]

    def candidate_facts(
        self, namespace_id: int, literal: str, *, case_sensitive: bool
    ) -> list[FactRecord]:
        """The namespace's active facts that may contain ``literal`` as the search engine's
        literal pattern matches it (:func:`squad.text.search.compile_query`), newest first: a
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
            return [_fact_record(row) for row in conn.execute(statement)]

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
        limit = _checked_limit(limit)
        now = self._now()
        wanted = query_terms(query)[:_QUERY_TERMS_LOOKED_UP]
        with self._begin(f"retrieve facts of memory namespace {namespace_id!r}") as conn:
            n_docs, total_len = _index_stats(conn, namespace_id)
            picked = ranked(conn, namespace_id, wanted, n_docs, total_len, limit, now)
            if len(picked) < limit:
                seen = {row.id for row in picked}
                recent = conn.execute(
                    _RECENT_LIVE, {"ns": namespace_id, "now": now, "limit": limit}
                ).all()
                picked += [row for row in recent if row.id not in seen][: limit - len(picked)]
            return [_fact_record(row) for row in picked]

    def scored_facts(
        self, namespace_id: int, query: str, *, limit: int = 200
    ) -> list[tuple[FactRecord, float]]:
        """Up to ``limit`` active facts matching ``query``, with their BM25 scores, best first.

        No recency fill and no expiry check: for namespaces whose facts never expire (an
        agent's conversation archive). Bounded like :meth:`relevant_facts`.
        """
        limit = _checked_limit(limit)
        wanted = query_terms(query)[:_QUERY_TERMS_LOOKED_UP]
        with self._begin(f"score facts of memory namespace {namespace_id!r}") as conn:
            n_docs, total_len = _index_stats(conn, namespace_id)
            hits = scores(conn, namespace_id, wanted, n_docs, total_len, limit)
            rows = {
                row.id: row
                for chunk in chunks([fact_id for fact_id, _ in hits])
                for row in conn.execute(
                    select(FACTS).where(FACTS.c.id.in_(chunk), FACTS.c.status == _ACTIVE)
                )
            }
            return [(_fact_record(rows[i]), score) for i, score in hits if i in rows]

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
            return None if row is None else _fact_record(row)

    # facts: embedding vectors (semantic ranking)

    def set_vectors(self, items: Iterable[tuple[int, str, bytes, int]]) -> int:
        """Store embeddings as ``(fact_id, model, data, dims)``, replacing a fact's old one.

        ``data`` is ``dims`` little-endian float32 values (``squad.memory.embeddings``
        encodes them). Facts that no longer exist (purged meanwhile) are skipped, not an
        error. One transaction; returns the number of vectors stored.
        """
        rows = [_vector_values(*item) for item in items]
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
        limit = _checked_limit(limit)
        now = self._now()
        with self._begin(f"find facts without vectors in namespace {namespace_id!r}") as conn:
            return [
                _fact_record(row) for row in missing_vectors(conn, namespace_id, model, limit, now)
            ]

    # plumbing

    @contextmanager
    def _begin(
        self, action: str, *, reraise: type[SQLAlchemyError] | None = None
    ) -> Iterator[Connection]:
        """A transaction whose SQLAlchemy errors become StoreError (except ``reraise``)."""
        with transaction(self._engine, action, reraise=reraise) as conn:
            yield conn


# helpers


def _insert_facts(conn: Connection, rows: list[dict[str, Any]]) -> list[int]:
    """Insert fact rows and return their new ids, in order."""
    if conn.dialect.insert_executemany_returning_sort_by_parameter_order:
        statement = insert(FACTS).returning(FACTS.c.id, sort_by_parameter_order=True)
        return list(conn.execute(statement, rows).scalars())
    ids = []  # SQLite before 3.35 has no RETURNING: one statement per fact
    for row in rows:
        key = conn.execute(insert(FACTS).values(row)).inserted_primary_key
        assert key is not None
        ids.append(int(key[0]))
    return ids


def _checked_limit(limit: int) -> int:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit!r}")
    return limit


def _vector_values(fact_id: int, model: str, data: bytes, dims: int) -> dict[str, Any]:
    if dims < 1 or len(data) != 4 * dims:
        raise ValueError(
            f"vector of fact {fact_id!r} has {len(data)} bytes, not 4 * dims ({dims!r}); "
            "pass dims little-endian float32 values"
        )
    if not model:
        raise ValueError(f"vector of fact {fact_id!r} needs the name of its model")
    return {"fact_id": int(fact_id), "model": model, "dims": dims, "vector": bytes(data)}


def _index_stats(conn: Connection, namespace_id: int) -> tuple[int, int]:
    """The namespace's indexed fact count and total length (BM25 needs them)."""
    stats = conn.execute(_NAMESPACE_STATS, {"ns": namespace_id}).first()
    if stats is None:
        raise UsageError(f"no memory namespace with id {namespace_id!r}")
    return int(stats.indexed_facts), int(stats.indexed_terms)


def _checked_identity(identity: str) -> str:
    identity = identity.strip()
    if not identity or identity.isdigit():
        raise UsageError(
            f"memory namespace identity {identity!r} is invalid; use profile:<profile-id> or "
            "squad:<squad>/<agent-id>"
        )
    return identity


def _checked_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise UsageError("a memory namespace needs a non-empty name")
    return name


def _checked_fact(fact: NewFact) -> NewFact:
    if not fact.text.strip():
        raise UsageError("a memory fact needs non-empty text")
    # The last gate on every path into Layer A (service, extractor, tools, the HTTP and MCP
    # front ends): a caller that forgot the check still cannot store a credential.
    from squad.text.secrets import refuse_secrets  # its patterns cost 0.1 s to import

    refuse_secrets(_indexed_text(fact), what="a memory fact")
    if fact.expires_at is not None and fact.expires_at.utcoffset() is None:
        raise ValueError(f"naive expires_at {fact.expires_at!r}; pass a timezone-aware one")
    return fact


def _indexed_text(fact: NewFact) -> str:
    return fact.text if fact.subject is None else f"{fact.subject}\n{fact.text}"


_MAX_ID = 2**31 - 1
"""The largest id an INTEGER key holds on Postgres (SQLite's are wider)."""


def _namespace_key(id_or_identity: int | str) -> ColumnElement[bool]:
    if isinstance(id_or_identity, int):
        return NAMESPACES.c.id == id_or_identity
    ref = id_or_identity.strip()
    # ASCII digits only ('²'.isdigit() is True) and within the id column's range
    if ref.isascii() and ref.isdigit() and len(ref) <= 10 and int(ref) <= _MAX_ID:
        return NAMESPACES.c.id == int(ref)
    return NAMESPACES.c.identity == ref


def _resolve_namespace(conn: Connection, ref: str) -> Row[Any]:
    """The namespace ``ref`` names: by identity, then numeric id, then exact name."""
    by_key = conn.execute(select(NAMESPACES).where(_namespace_key(ref))).first() if ref else None
    if by_key is not None:
        return by_key
    named = conn.execute(
        select(NAMESPACES).where(NAMESPACES.c.name == ref).order_by(NAMESPACES.c.id)
    ).all()
    if len(named) == 1:
        return named[0]
    if named:
        choices = ", ".join(f"{row.id} ({row.identity})" for row in named)
        raise UsageError(
            f"{len(named)} memory namespaces are named {ref!r}: {choices}; give the id or the "
            "identity instead"
        )
    everything = conn.execute(select(NAMESPACES.c.identity, NAMESPACES.c.name)).all()
    known = sorted({row.identity for row in everything} | {row.name for row in everything})
    close = difflib.get_close_matches(ref, known, n=5, cutoff=0.5)
    hint = (
        f"did you mean {', '.join(repr(c) for c in close)}?"
        if close
        else "`squad memory namespaces` shows the namespaces"
    )
    raise UsageError(f"no memory namespace {ref!r} (by identity, name or id); {hint}")


def _fact_row(conn: Connection, fact_id: int) -> Row[Any] | None:
    return conn.execute(select(FACTS).where(FACTS.c.id == fact_id)).first()


def _no_fact(fact_id: int) -> str:
    return f"no memory fact with id {fact_id!r}; `squad memory show` lists them"


def _fact_values(namespace_id: int, fact: NewFact, now: datetime) -> dict[str, Any]:
    return {
        "namespace_id": namespace_id,
        "text": fact.text,
        "subject": fact.subject,
        "squad": fact.squad,
        "agent": fact.agent,
        "run_id": fact.run_id,
        "turns": [int(turn) for turn in fact.turns],
        "source": fact.source,
        "status": _ACTIVE,
        "transient": fact.transient,
        "expires_at": fact.expires_at,
        "created_at": now,
        "updated_at": now,
        "access_count": 0,
    }


def _new_fact_record(fact_id: int, namespace_id: int, fact: NewFact, now: datetime) -> FactRecord:
    values = _fact_values(namespace_id, fact, now)
    values.update(
        id=fact_id,
        turns=tuple(values["turns"]),
        status=FactStatus.ACTIVE,
        last_accessed_at=None,
        superseded_by=None,
        superseded_at=None,
        forgotten_at=None,
    )
    if fact.expires_at is not None:
        values["expires_at"] = fact.expires_at.astimezone(UTC)
    return FactRecord(**values)


def _fact_record(row: Row[Any]) -> FactRecord:
    return FactRecord(
        id=row.id,
        namespace_id=row.namespace_id,
        text=row.text,
        subject=row.subject,
        squad=row.squad,
        agent=row.agent,
        run_id=row.run_id,
        turns=tuple(int(turn) for turn in row.turns or ()),
        source=row.source,
        status=FactStatus(row.status),
        transient=bool(row.transient),
        expires_at=row.expires_at,
        created_at=row.created_at,
        updated_at=row.updated_at,
        access_count=row.access_count,
        last_accessed_at=row.last_accessed_at,
        superseded_by=row.superseded_by,
        superseded_at=row.superseded_at,
        forgotten_at=row.forgotten_at,
    )


def _namespace_record(row: Row[Any], fact_count: int) -> NamespaceRecord:
    return NamespaceRecord(
        id=row.id,
        identity=row.identity,
        name=row.name,
        enabled=bool(row.enabled),
        created_at=row.created_at,
        updated_at=row.updated_at,
        fact_count=fact_count,
    )
