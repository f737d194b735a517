"""The lexical index of experiential memory, and retrieval over it; used by MemoryStore.

Facts are indexed in ordinary tables, so SQLite and Postgres behave alike and need no
extension: ``memory_postings`` holds one row per (term, active fact), ``memory_terms`` the
number of active facts holding each term (its document frequency, df), and each namespace
row the number and total length of its indexed facts, which BM25 needs. Only active facts are
indexed: superseding, forgetting and purging take a fact's postings out and lower the dfs.

Retrieval (:func:`ranked`) runs before every agent turn, so each of its queries is bounded
by an index and a LIMIT, never by the size of the namespace:

1. the query's terms get their df in one primary-key lookup;
2. terms held by more than half the namespace's facts are skipped, like stopwords (their
   BM25 weight is under ln 2, against about ln N for a rare term), and only the
   :data:`MAX_QUERY_TERMS` rarest of the rest are used;
3. each of those reads at most :data:`POSTINGS_PER_TERM` postings, newest facts first;
4. the database scores them with BM25 (:mod:`squad.text.lexical`), sums per fact and
   returns a page of the best ids; only the facts needed are then read, dropping expired ones.

``MemoryStore.relevant_facts`` fills what is left of its limit with the newest facts (one
index range scan).
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Float,
    Row,
    Select,
    Table,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.engine import Connection

from squad.store.records import FactStatus
from squad.store.tables import metadata
from squad.text.lexical import bm25_coefficients

__all__ = [
    "CHUNK",
    "FACTS",
    "MAX_QUERY_TERMS",
    "NAMESPACES",
    "POSTINGS_PER_TERM",
    "best_facts_statement",
    "chunks",
    "deindex",
    "grow_namespace",
    "index_facts",
    "live",
    "ranked",
    "scored_statement",
    "scores",
    "scoring_params",
]

POSTINGS_PER_TERM = 1000
"""Most postings one query term reads (its newest facts): the cap on retrieval's work."""
MAX_QUERY_TERMS = 24
"""Most query terms scored, the rarest first; a long message does not mean a long query."""
CHUNK = 500
"""Ids or terms per ``IN (...)`` list, and facts per bulk-insert batch."""

NAMESPACES: Table = metadata.tables["memory_namespaces"]
FACTS: Table = metadata.tables["memory_facts"]
_TERMS: Table = metadata.tables["memory_terms"]
_POSTINGS: Table = metadata.tables["memory_postings"]

_ACTIVE = FactStatus.ACTIVE.value
T = TypeVar("T")


# retrieval


def ranked(
    conn: Connection,
    namespace_id: int,
    wanted: list[str],
    n_docs: int,
    total_len: int,
    limit: int,
    now: datetime,
) -> list[Row[Any]]:
    """The ``limit`` live facts with the best BM25 score for ``wanted`` (bounded reads).

    The database does the scoring: per usable term its newest :data:`POSTINGS_PER_TERM`
    postings, each scored, summed per fact, best first. Ties go to the higher id, the newer
    fact (a revived dormant fact keeps its old id, so it ties as old as it is).
    Only a page of ``2 * limit`` ids comes back and only the facts needed are read, in rank
    order; more are read only where expired facts left gaps.
    """
    query = _query(conn, namespace_id, wanted, n_docs, total_len)
    if query is None:
        return []
    n_terms, params = query
    best = _best_facts_statement(n_terms)
    picked: list[Row[Any]] = []
    page_size = 2 * limit
    for offset in itertools.count(0, page_size):
        page = list(conn.execute(best, {**params, "page": page_size, "offset": offset}).scalars())
        rank = {fact_id: i for i, fact_id in enumerate(page)}
        pos = 0
        while len(picked) < limit and pos < len(page):
            wanted_ids = page[pos : pos + limit - len(picked)]
            pos += len(wanted_ids)
            rows = conn.execute(_LIVE_FACTS, {"ids": wanted_ids, "now": now})
            picked += sorted(rows, key=lambda row: rank[row.id])
        if len(picked) >= limit or len(page) < page_size:
            return picked
    raise AssertionError("unreachable")


def _query(
    conn: Connection, namespace_id: int, wanted: list[str], n_docs: int, total_len: int
) -> tuple[int, dict[str, Any]] | None:
    """The usable terms of ``wanted`` and the scoring statement's parameters; None if none."""
    if not wanted or n_docs <= 0:
        return None
    dfs: list[tuple[str, int]] = []
    for chunk in chunks(wanted):
        dfs += [
            (term, df)
            for term, df in conn.execute(_TERM_DFS, {"ns": namespace_id, "terms": list(chunk)})
        ]
    return scoring_params(namespace_id, dfs, n_docs, total_len)


def scoring_params(
    namespace_id: int, dfs: Sequence[tuple[str, int]], n_docs: int, total_len: int
) -> tuple[int, dict[str, Any]] | None:
    """How many terms the scoring statement takes, and its parameters, from the df of each
    term of a query the namespace holds; None if no term is usable."""
    usable = sorted((df, term) for term, df in dfs if df > 0 and 2 * df <= n_docs)
    if not usable:
        return None
    terms = usable[:MAX_QUERY_TERMS]
    avg_len = total_len / n_docs
    params: dict[str, Any] = {"ns": namespace_id, "cap": POSTINGS_PER_TERM}
    for i, (df, term) in enumerate(terms):
        params[f"term{i}"] = term
        params[f"scale{i}"], params["flat"], params["per_len"] = bm25_coefficients(
            n_docs, df, avg_len
        )
    return len(terms), params


def best_facts_statement(n_terms: int) -> Select[Any]:
    """The statement :func:`ranked` pages through for ``n_terms`` terms (fact ids, best
    first; parameters those of :func:`scoring_params` with ``page`` and ``offset``)."""
    return _best_facts_statement(n_terms)


def scored_statement(n_terms: int) -> Select[Any]:
    """The statement :func:`scores` runs for ``n_terms`` terms (fact id and score, best
    first; parameters those of :func:`scoring_params` with ``page`` and ``offset``)."""
    return _scored_statement(n_terms)


def scores(
    conn: Connection,
    namespace_id: int,
    wanted: list[str],
    n_docs: int,
    total_len: int,
    limit: int,
) -> list[tuple[int, float]]:
    """The ``limit`` best ``(fact id, BM25 score)`` for ``wanted``, best first (bounded
    reads, as :func:`ranked`; expiry is not checked, so use it where facts never expire)."""
    query = _query(conn, namespace_id, wanted, n_docs, total_len)
    if query is None:
        return []
    n_terms, params = query
    rows = conn.execute(_scored_statement(n_terms), {**params, "page": limit, "offset": 0})
    return [(int(row.fact_id), float(row.score)) for row in rows]


@functools.cache
def _scored_statement(n_terms: int) -> Select[Any]:
    """:func:`_best_facts_statement` with each fact's summed score beside its id."""
    return _hits_statement(n_terms, with_score=True)


@functools.cache
def _best_facts_statement(n_terms: int) -> Select[Any]:
    """Fact ids by summed BM25 score over ``n_terms`` terms, best first, ties to higher ids.

    Built once per term count (building it costs more than running it on a small namespace).
    Parameters: ``ns``, ``cap`` (postings per term), ``page``, ``offset``, ``flat`` and
    ``per_len`` (the BM25 length terms), and ``term<i>`` and ``scale<i>`` per term.
    """
    return _hits_statement(n_terms, with_score=False)


def _hits_statement(n_terms: int, *, with_score: bool) -> Select[Any]:
    tf, doc_len = _POSTINGS.c.tf, _POSTINGS.c.doc_len
    flat, per_len = bindparam("flat", type_=Float), bindparam("per_len", type_=Float)
    per_term = []
    for i in range(n_terms):
        score = bindparam(f"scale{i}", type_=Float) * tf / (tf + flat + per_len * doc_len)
        newest = (
            select(_POSTINGS.c.fact_id, score.label("score"))
            .where(
                _POSTINGS.c.namespace_id == bindparam("ns"),
                _POSTINGS.c.term == bindparam(f"term{i}"),
            )
            .order_by(_POSTINGS.c.fact_id.desc())
            .limit(bindparam("cap"))
            .subquery()
        )
        per_term.append(select(newest.c.fact_id, newest.c.score))
    hits = union_all(*per_term).subquery("hits")
    total = func.sum(hits.c.score)
    columns = [hits.c.fact_id, total.label("score")] if with_score else [hits.c.fact_id]
    return (
        select(*columns)
        .group_by(hits.c.fact_id)
        .order_by(total.desc(), hits.c.fact_id.desc())
        .limit(bindparam("page"))
        .offset(bindparam("offset"))
    )


# writing


def grow_namespace(conn: Connection, namespace_id: int, facts: int, terms: int) -> bool:
    """Add to a namespace's counters; False if there is no such namespace.

    Writers that add facts call it first: it takes the namespace row's lock, so writers of
    one namespace queue there and never deadlock on term rows.
    """
    found = conn.execute(
        update(NAMESPACES)
        .where(NAMESPACES.c.id == namespace_id)
        .values(
            indexed_facts=NAMESPACES.c.indexed_facts + facts,
            indexed_terms=NAMESPACES.c.indexed_terms + terms,
        )
    ).rowcount
    return bool(found)


def index_facts(
    conn: Connection, namespace_id: int, ids: list[int], counts: list[dict[str, int]]
) -> None:
    """Add postings for new facts (``counts`` from :func:`term_counts`) and raise the dfs.

    The caller has already raised the namespace's counters (:func:`grow_namespace`).
    """
    rows = [
        {
            "namespace_id": namespace_id,
            "term": term,
            "fact_id": fact_id,
            "tf": tf,
            "doc_len": sum(fact_counts.values()),
        }
        for fact_id, fact_counts in zip(ids, counts, strict=True)
        for term, tf in fact_counts.items()
    ]
    if rows:
        conn.execute(insert(_POSTINGS), rows)
    _add_df(conn, namespace_id, Counter(term for fact_counts in counts for term in fact_counts))


def _add_df(conn: Connection, namespace_id: int, df: Counter[str]) -> None:
    """Raise the df of each term by its count, creating missing term rows.

    Read-then-write is race-free here: the caller holds the namespace row's lock.
    """
    existing: set[str] = set()
    for chunk in chunks(sorted(df)):
        existing.update(
            conn.execute(
                select(_TERMS.c.term).where(
                    _TERMS.c.namespace_id == namespace_id, _TERMS.c.term.in_(chunk)
                )
            ).scalars()
        )
    _change_df(conn, namespace_id, {term: df[term] for term in existing})
    missing = [
        {"namespace_id": namespace_id, "term": term, "df": df[term]}
        for term in sorted(df)
        if term not in existing
    ]
    if missing:
        conn.execute(insert(_TERMS), missing)


def _change_df(conn: Connection, namespace_id: int, deltas: dict[str, int]) -> None:
    if not deltas:
        return
    statement = (
        update(_TERMS)
        .where(
            _TERMS.c.namespace_id == namespace_id,
            _TERMS.c.term == bindparam("term_key"),
        )
        .values(df=_TERMS.c.df + bindparam("delta"))
    )
    conn.execute(
        statement, [{"term_key": term, "delta": delta} for term, delta in sorted(deltas.items())]
    )


def deindex(conn: Connection, fact_ids: list[int]) -> None:
    """Remove the facts' postings and lower the dfs and namespace counters they added."""
    postings = conn.execute(
        select(
            _POSTINGS.c.namespace_id, _POSTINGS.c.fact_id, _POSTINGS.c.term, _POSTINGS.c.doc_len
        ).where(_POSTINGS.c.fact_id.in_(fact_ids))
    ).all()
    if not postings:
        return
    by_namespace: dict[int, list[Any]] = defaultdict(list)
    for posting in postings:
        by_namespace[posting.namespace_id].append(posting)
    for namespace_id, rows in sorted(by_namespace.items()):
        lengths = {row.fact_id: row.doc_len for row in rows}
        conn.execute(
            update(NAMESPACES)
            .where(NAMESPACES.c.id == namespace_id)
            .values(
                indexed_facts=NAMESPACES.c.indexed_facts - len(lengths),
                indexed_terms=NAMESPACES.c.indexed_terms - sum(lengths.values()),
            )
        )
        drops = Counter(row.term for row in rows)
        _change_df(conn, namespace_id, {term: -count for term, count in drops.items()})
        for chunk in chunks(sorted(drops)):
            conn.execute(
                delete(_TERMS).where(
                    _TERMS.c.namespace_id == namespace_id,
                    _TERMS.c.term.in_(chunk),
                    _TERMS.c.df <= 0,
                )
            )
    conn.execute(delete(_POSTINGS).where(_POSTINGS.c.fact_id.in_(fact_ids)))


# helpers


_TERM_DFS = select(_TERMS.c.term, _TERMS.c.df).where(
    _TERMS.c.namespace_id == bindparam("ns"), _TERMS.c.term.in_(bindparam("terms", expanding=True))
)
"""The df of each of some terms of a namespace (``ns``, ``terms``): built once, as every
statement a prompt runs (building one costs more than running it on a small namespace)."""


def live(now: datetime | BindParameter[datetime]) -> ColumnElement[bool]:
    """Active and not expired at ``now`` (a value, or a bound parameter of a prepared query)."""
    return and_(
        FACTS.c.status == _ACTIVE,
        or_(FACTS.c.expires_at.is_(None), FACTS.c.expires_at > now),
    )


_LIVE_FACTS = select(FACTS).where(
    FACTS.c.id.in_(bindparam("ids", expanding=True)),
    live(bindparam("now", type_=FACTS.c.updated_at.type)),
)
"""The live facts at ``now`` among ``ids``."""


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def plain_term_dfs(conn: Any, namespace_id: int, wanted: Sequence[str]) -> list[tuple[str, int]]:
    """The document frequency of each of ``wanted`` in a namespace, read on a plain sqlite3
    connection (the fast read path's; terms the namespace never saw are left out)."""
    dfs: list[tuple[str, int]] = []
    for chunk in chunks(wanted):
        marks = ", ".join("?" * len(chunk))
        dfs += conn.execute(
            f"SELECT term, df FROM memory_terms WHERE namespace_id = ? AND term IN ({marks})",
            (namespace_id, *chunk),
        ).fetchall()
    return dfs
