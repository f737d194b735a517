"""The state store: squads and runs in SQLite (default) or any SQLAlchemy database.

Open with :meth:`Store.open` (or :func:`open_store` from settings); the schema is migrated to
this squad's version on open. Everything returned is a frozen record, never a database row.
"""

from __future__ import annotations

from squad.store.records import RunRecord, RunStatus, SquadRecord
from squad.store.store import Store, open_store

__all__ = ["RunRecord", "RunStatus", "SquadRecord", "Store", "open_store"]
