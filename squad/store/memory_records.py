"""What a memory row becomes (its frozen record) and the checks on what a memory query is
given: no SQLAlchemy here, so the store's ORM side (:mod:`squad.store.memory_rows`) and the
reading commands' sqlite3 path (:mod:`squad.store.sqlite_reader`) share them and answer
alike."""

from __future__ import annotations

import functools
from typing import Any

from squad.errors import UsageError
from squad.store.records import FactRecord, FactStatus, NamespaceRecord

__all__ = [
    "QUERY_TERMS_LOOKED_UP",
    "checked_identity",
    "checked_limit",
    "checked_name",
    "fact_record",
    "looked_up_terms",
    "namespace_record",
]

QUERY_TERMS_LOOKED_UP = 256
"""Distinct terms of a query whose df is looked up (in first-seen order)."""


def looked_up_terms(query: str) -> list[str]:
    """The terms of ``query`` whose df a search looks up (:data:`QUERY_TERMS_LOOKED_UP`).

    A prompt asks with one message two or three times (Layer A, recall, other agents'
    experience), and stemming it costs about 0.3 ms each time: the last few are kept."""
    return list(_looked_up_terms(query))


@functools.lru_cache(maxsize=16)
def _looked_up_terms(query: str) -> tuple[str, ...]:
    from squad.text.lexical import query_terms

    return tuple(query_terms(query)[:QUERY_TERMS_LOOKED_UP])


def checked_limit(limit: int) -> int:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit!r}")
    return limit


def checked_identity(identity: str) -> str:
    identity = identity.strip()
    if not identity or identity.isdigit():
        raise UsageError(
            f"memory namespace identity {identity!r} is invalid; use profile:<profile-id> or "
            "squad:<squad>/<agent-id>"
        )
    return identity


def checked_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise UsageError("a memory namespace needs a non-empty name")
    return name


def fact_record(row: Any) -> FactRecord:
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


def namespace_record(row: Any, fact_count: int) -> NamespaceRecord:
    return NamespaceRecord(
        id=row.id,
        identity=row.identity,
        name=row.name,
        enabled=bool(row.enabled),
        created_at=row.created_at,
        updated_at=row.updated_at,
        fact_count=fact_count,
    )
