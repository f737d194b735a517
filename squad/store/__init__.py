"""The state store: squads, runs, what runs do, and memory, in SQLite (default) or Postgres.

Open with :meth:`Store.open` (or :func:`open_store` from settings); the schema is migrated to
this squad's version on open. Everything returned is a frozen record, never a database row.
"""

from __future__ import annotations

from squad.store.conversation import ConversationStore
from squad.store.memory import MemoryStore
from squad.store.records import (
    FactRecord,
    FactStatus,
    MessageRecord,
    MessageRole,
    NamespaceRecord,
    NewFact,
    RunRecord,
    RunStatus,
    SpendRecord,
    SpendTotals,
    SquadRecord,
    TaskRecord,
    TaskStatus,
    WatermarkRecord,
)
from squad.store.run_state import RunStateStore
from squad.store.spend import SpendStore
from squad.store.store import Store, open_store

__all__ = [
    "ConversationStore",
    "FactRecord",
    "FactStatus",
    "MemoryStore",
    "MessageRecord",
    "MessageRole",
    "NamespaceRecord",
    "NewFact",
    "RunRecord",
    "RunStateStore",
    "RunStatus",
    "SpendRecord",
    "SpendStore",
    "SpendTotals",
    "SquadRecord",
    "Store",
    "TaskRecord",
    "TaskStatus",
    "WatermarkRecord",
    "open_store",
]
