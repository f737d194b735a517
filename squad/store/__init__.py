"""The state store: squads, runs, what runs do, and memory, in SQLite (default) or Postgres.

Open with :meth:`Store.open` (or :func:`open_store` from settings); the schema is migrated to
this squad's version on open. Everything returned is a frozen record, never a database row.

The names below are loaded on first access: importing a record type or
:mod:`squad.store.engine` (to ask whether a database exists) does not import the tables and
queries, nor SQLModel's ORM layer, which only opening a store needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "ConversationStore": "conversation",
    "MemoryStore": "memory",
    "RunStateStore": "run_state",
    "SpendStore": "spend",
    "Store": "store",
    "open_store": "store",
}
"""Where each name of :data:`__all__` lives; the rest are :mod:`squad.store.records`'."""


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_HOMES.get(name, 'records')}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
