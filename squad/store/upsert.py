"""Insert-or-update of one row, atomic on the store's backends; used by the runtime tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table, and_, insert, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

__all__ = ["upsert"]


def upsert(
    conn: Connection,
    table: Table,
    values: Mapping[str, Any],
    *,
    key: Sequence[str],
    set_: Mapping[str, Any] | None,
) -> None:
    """Insert ``values``; if a row with the same ``key`` columns exists, update it with ``set_``
    instead (None: leave it as it is).

    On SQLite and Postgres it is one ``INSERT ... ON CONFLICT`` statement: concurrent upserts
    of one key queue on its row (Postgres) or the database (SQLite), and none fails. Other
    backends get an UPDATE, then an INSERT if nothing matched; there a concurrent first insert
    of the same key can fail with IntegrityError.
    """
    dialect = conn.dialect.name
    if dialect in {"sqlite", "postgresql"}:
        statement = (sqlite.insert if dialect == "sqlite" else postgresql.insert)(table)
        statement = statement.values(dict(values))
        index = [table.c[name] for name in key]
        conn.execute(
            statement.on_conflict_do_nothing(index_elements=index)
            if set_ is None
            else statement.on_conflict_do_update(index_elements=index, set_=dict(set_))
        )
        return
    where = and_(*(table.c[name] == values[name] for name in key))
    if set_ is not None:
        if conn.execute(update(table).where(where).values(dict(set_))).rowcount:
            return
    elif conn.execute(select(literal(1)).select_from(table).where(where)).first() is not None:
        return
    conn.execute(insert(table).values(dict(values)))
