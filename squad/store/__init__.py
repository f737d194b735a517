"""The state store: squads, runs and experiential memory, in SQLite (default) or Postgres.

Open with :meth:`Store.open` (or :func:`open_store` from settings); the schema is migrated to
this squad's version on open. Everything returned is a frozen record, never a database row.
"""

from __future__ import annotations

from squad.store.memory import MemoryStore
from squad.store.records import (
    FactRecord,
    FactStatus,
    NamespaceRecord,
    NewFact,
    RunRecord,
    RunStatus,
    SquadRecord,
)
from squad.store.store import Store, open_store

__all__ = [
    "FactRecord",
    "FactStatus",
    "MemoryStore",
    "NamespaceRecord",
    "NewFact",
    "RunRecord",
    "RunStatus",
    "SquadRecord",
    "Store",
    "open_store",
]
