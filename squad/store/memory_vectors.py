"""Embedding vectors of experiential facts, for semantic ranking; used by MemoryStore.

``memory_vectors`` holds one row per fact: the model that embedded it, the dimension count and
the vector as little-endian float32 bytes. The store never decodes them (it needs no numpy);
:mod:`squad.memory.embeddings` does. Every read is bounded: by the fact ids asked for, or by a
LIMIT over the namespace's recency index. Ranking never scans a namespace's vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Executable,
    Integer,
    LargeBinary,
    Row,
    String,
    Table,
    bindparam,
    cast,
    delete,
    insert,
    or_,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from squad.store.memory_index import FACTS, chunks, live
from squad.store.tables import metadata

__all__ = ["VECTORS", "missing_vectors", "read_vectors", "write_vectors"]

VECTORS: Table = metadata.tables["memory_vectors"]
_UPSERT_DIALECTS = frozenset({"sqlite", "postgresql"})


def write_vectors(conn: Connection, rows: Sequence[dict[str, Any]]) -> int:
    """Insert or replace the vector of each row's fact; rows of missing facts are skipped.

    ``rows`` have ``fact_id``, ``model``, ``dims`` and ``vector``; a fact given twice keeps
    the last. Each row is written by an ``INSERT ... SELECT`` from its fact: checking that
    the fact exists and writing its vector is one statement, so a fact purged meanwhile is
    skipped rather than a foreign-key error. On Postgres the facts are first read ``FOR KEY
    SHARE``, in id order: their row locks come before any vector row's, as for every writer
    here, and a concurrent purge either waits for us or is done before we look.
    Returns the number of vectors written.
    """
    latest = [row for _, row in sorted({row["fact_id"]: row for row in rows}.items())]
    if conn.dialect.name == "postgresql":
        locked: set[int] = set()
        for chunk in chunks([row["fact_id"] for row in latest]):
            locked.update(
                conn.execute(
                    select(FACTS.c.id)
                    .where(FACTS.c.id.in_(chunk))
                    .order_by(FACTS.c.id)
                    .with_for_update(read=True, key_share=True)
                ).scalars()
            )
        latest = [row for row in latest if row["fact_id"] in locked]
    upserts = conn.dialect.name in _UPSERT_DIALECTS
    statement = _write_statement(conn.dialect.name)
    written = 0
    for batch in chunks(latest):
        if not upserts:
            fact_ids = [row["fact_id"] for row in batch]
            conn.execute(delete(VECTORS).where(VECTORS.c.fact_id.in_(fact_ids)))
        count = conn.execute(statement, list(batch)).rowcount
        # psycopg cannot count an executemany (-1); every row is written: its fact is locked.
        written += count if count >= 0 else len(batch)
    return written


def _write_statement(dialect: str) -> Executable:
    """Writes one vector, taking its fact id from the fact's row: nothing if the fact is gone.

    An upsert where the dialect has one; elsewhere a plain insert, after a delete.
    """
    from_fact = select(
        FACTS.c.id,
        cast(bindparam("model"), String),
        cast(bindparam("dims"), Integer),
        cast(bindparam("vector"), LargeBinary),
    ).where(FACTS.c.id == bindparam("fact_id"))
    columns = ["fact_id", "model", "dims", "vector"]
    if dialect not in _UPSERT_DIALECTS:
        return insert(VECTORS).from_select(columns, from_fact)
    upsert = (sqlite.insert if dialect == "sqlite" else postgresql.insert)(VECTORS)
    return upsert.from_select(columns, from_fact).on_conflict_do_update(
        index_elements=[VECTORS.c.fact_id],
        set_={
            "model": upsert.excluded.model,
            "dims": upsert.excluded.dims,
            "vector": upsert.excluded.vector,
        },
    )


def read_vectors(conn: Connection, fact_ids: Sequence[int], model: str) -> dict[int, bytes]:
    """The stored vectors of ``model`` among ``fact_ids`` (primary-key lookups only)."""
    found: dict[int, bytes] = {}
    for chunk in chunks(sorted(set(fact_ids))):
        rows = conn.execute(
            select(VECTORS.c.fact_id, VECTORS.c.vector).where(
                VECTORS.c.fact_id.in_(chunk), VECTORS.c.model == model
            )
        )
        found.update((fact_id, bytes(vector)) for fact_id, vector in rows)
    return found


def missing_vectors(
    conn: Connection, namespace_id: int, model: str, limit: int, now: datetime
) -> list[Row[Any]]:
    """Up to ``limit`` live facts of a namespace with no vector of ``model``, newest first.

    Walks the namespace's recency index and looks each fact's vector up by primary key, so a
    backfill that embeds what it gets and asks again makes steady progress.
    """
    query = (
        select(FACTS)
        .outerjoin(VECTORS, VECTORS.c.fact_id == FACTS.c.id)
        .where(
            FACTS.c.namespace_id == namespace_id,
            live(now),
            or_(VECTORS.c.fact_id.is_(None), VECTORS.c.model != model),
        )
        .order_by(FACTS.c.updated_at.desc(), FACTS.c.id.desc())
        .limit(limit)
    )
    return list(conn.execute(query))
