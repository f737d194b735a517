"""Experiential memory's rows: inputs checked, row values built, rows read back as records.

What :class:`~squad.store.memory.MemoryStore` and the archive (:mod:`squad.store.archive`)
share below their transactions: the checks a namespace, a fact or a limit must pass, the
values a fact row is written with, frozen records made from rows, and the few look-ups by key
every write starts with.
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Row, bindparam, insert, select
from sqlalchemy.engine import Connection

from squad.errors import UsageError
from squad.store.memory_index import FACTS, NAMESPACES
from squad.store.memory_records import (
    QUERY_TERMS_LOOKED_UP,
    checked_identity,
    checked_limit,
    checked_name,
    fact_record,
    namespace_record,
)
from squad.store.records import FactRecord, FactStatus, NewFact

__all__ = [
    "MAX_ID",
    "NAMESPACE_STATS",
    "QUERY_TERMS_LOOKED_UP",
    "checked_fact",
    "checked_identity",
    "checked_limit",
    "checked_name",
    "fact_record",
    "fact_row",
    "fact_values",
    "index_stats",
    "indexed_text",
    "insert_facts",
    "namespace_key",
    "namespace_record",
    "new_fact_record",
    "no_fact",
    "resolve_namespace",
    "vector_values",
]

NAMESPACE_STATS = select(NAMESPACES.c.indexed_facts, NAMESPACES.c.indexed_terms).where(
    NAMESPACES.c.id == bindparam("ns")
)
"""Prepared once: it runs on every prompt, so it builds no SQL per call."""


def insert_facts(conn: Connection, rows: list[dict[str, Any]]) -> list[int]:
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


def vector_values(fact_id: int, model: str, data: bytes, dims: int) -> dict[str, Any]:
    if dims < 1 or len(data) != 4 * dims:
        raise ValueError(
            f"vector of fact {fact_id!r} has {len(data)} bytes, not 4 * dims ({dims!r}); "
            "pass dims little-endian float32 values"
        )
    if not model:
        raise ValueError(f"vector of fact {fact_id!r} needs the name of its model")
    return {"fact_id": int(fact_id), "model": model, "dims": dims, "vector": bytes(data)}


def index_stats(conn: Connection, namespace_id: int) -> tuple[int, int]:
    """The namespace's indexed fact count and total length (BM25 needs them)."""
    stats = conn.execute(NAMESPACE_STATS, {"ns": namespace_id}).first()
    if stats is None:
        raise UsageError(f"no memory namespace with id {namespace_id!r}")
    return int(stats.indexed_facts), int(stats.indexed_terms)


def checked_fact(fact: NewFact) -> NewFact:
    if not fact.text.strip():
        raise UsageError("a memory fact needs non-empty text")
    # The last gate on every path into Layer A (service, extractor, tools, the HTTP and MCP
    # front ends): a caller that forgot the check still cannot store a credential.
    from squad.text.secrets import refuse_secrets  # its patterns cost 0.1 s to import

    refuse_secrets(indexed_text(fact), what="a memory fact")
    if fact.expires_at is not None and fact.expires_at.utcoffset() is None:
        raise ValueError(f"naive expires_at {fact.expires_at!r}; pass a timezone-aware one")
    return fact


def indexed_text(fact: NewFact) -> str:
    return fact.text if fact.subject is None else f"{fact.subject}\n{fact.text}"


MAX_ID = 2**31 - 1
"""The largest id an INTEGER key holds on Postgres (SQLite's are wider)."""


def namespace_key(id_or_identity: int | str) -> ColumnElement[bool]:
    if isinstance(id_or_identity, int):
        return NAMESPACES.c.id == id_or_identity
    ref = id_or_identity.strip()
    # ASCII digits only ('²'.isdigit() is True) and within the id column's range
    if ref.isascii() and ref.isdigit() and len(ref) <= 10 and int(ref) <= MAX_ID:
        return NAMESPACES.c.id == int(ref)
    return NAMESPACES.c.identity == ref


def resolve_namespace(conn: Connection, ref: str) -> Row[Any]:
    """The namespace ``ref`` names: by identity, then numeric id, then exact name."""
    by_key = conn.execute(select(NAMESPACES).where(namespace_key(ref))).first() if ref else None
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


def fact_row(conn: Connection, fact_id: int) -> Row[Any] | None:
    return conn.execute(select(FACTS).where(FACTS.c.id == fact_id)).first()


def no_fact(fact_id: int) -> str:
    return f"no memory fact with id {fact_id!r}; `squad memory show` lists them"


def fact_values(namespace_id: int, fact: NewFact, now: datetime) -> dict[str, Any]:
    return {
        "namespace_id": namespace_id,
        "text": fact.text,
        "subject": fact.subject,
        "squad": fact.squad,
        "agent": fact.agent,
        "run_id": fact.run_id,
        "turns": [int(turn) for turn in fact.turns],
        "source": fact.source,
        "status": FactStatus.ACTIVE.value,
        "transient": fact.transient,
        "expires_at": fact.expires_at,
        "created_at": now,
        "updated_at": now,
        "access_count": 0,
    }


def new_fact_record(fact_id: int, namespace_id: int, fact: NewFact, now: datetime) -> FactRecord:
    values = fact_values(namespace_id, fact, now)
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
