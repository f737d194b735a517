"""A prompt's memory reads on a SQLite store in plain ``sqlite3`` (issue 35).

Every turn's prompt searches the agent's Layer A namespace and its conversation archive and
reads the messages it recalls: eight statements in three transactions. Through SQLAlchemy
each statement costs about four times what SQLite takes to run it (parameters, result
processing, the pool's checkout), the largest part of a prompt's store time on an instant
model. On a SQLite file the store runs them here instead, on a few ``sqlite3`` connections kept
open, with the same SQL: SQLAlchemy's statements compiled once for SQLite, or the same
statement written out where it takes a list of ids. Postgres, in-memory databases and
``file:`` URIs keep SQLAlchemy's path, and so does a read inside a
:func:`~squad.store.engine.batch` (which must see the batch's writes).

A read that meets any ``sqlite3`` error here gives up and is done again through SQLAlchemy,
which says what went wrong in the store's words (a full disk, a locked database).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Executable
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import Compiled, Engine

from squad.store.engine import BUSY_TIMEOUT_MS, CACHE_KIB, in_batch, sqlite_file

__all__ = [
    "FastReads",
    "bound_time",
    "compiled",
    "decoded_row",
    "dialect",
    "fast_reads",
    "sql_time",
]

_DIALECT = SQLiteDialect_pysqlite(paramstyle="named")
_COMPILED: dict[int, tuple[Executable, Compiled]] = {}
_COMPILED_LOCK = threading.Lock()


def dialect() -> SQLiteDialect_pysqlite:
    """The SQLite dialect statements are compiled for here (named parameters)."""
    return _DIALECT


def compiled(statement: Executable) -> Compiled:
    """``statement`` compiled for SQLite with named parameters, once per statement object
    (statements given here are module constants, built once)."""
    key = id(statement)
    kept = _COMPILED.get(key)
    if kept is not None and kept[0] is statement:
        return kept[1]
    made: Compiled = statement.compile(dialect=_DIALECT)  # type: ignore[attr-defined]
    with _COMPILED_LOCK:
        _COMPILED[key] = (statement, made)
    return made


def sql_time(text: str | None) -> datetime | None:
    """A SQLite ``UTCDateTime`` column's text as the full store hands it out: aware UTC."""
    return None if text is None else datetime.fromisoformat(text).replace(tzinfo=UTC)


def bound_time(moment: datetime) -> str:
    """``moment`` as the full store binds a ``UTCDateTime`` on SQLite (naive UTC, always
    with microseconds), so comparisons in SQL order as they do there."""
    if moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r} given; pass a timezone-aware one")
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


_TIMES = frozenset(
    {"created_at", "updated_at", "expires_at", "last_accessed_at", "superseded_at", "forgotten_at"}
)
"""``UTCDateTime`` columns of the memory tables read here."""
_JSONS = frozenset({"turns"})
"""``JSON`` columns of the memory tables read here."""


def decoded_row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> SimpleNamespace:
    """A memory row with attribute access, its columns decoded as the full store's types
    do (a ``row_factory``)."""
    row = {}
    for (name, *_), value in zip(cursor.description, values, strict=True):
        if value is not None and name in _TIMES:
            value = sql_time(value)
        elif value is not None and name in _JSONS:
            value = json.loads(value)
        row[name] = value
    return SimpleNamespace(**row)


def json_column(text: str | None) -> Any:
    """A SQLite ``JSON`` column's text, decoded."""
    return None if text is None else json.loads(text)


IDLE_KEPT = 4
"""Connections kept open between reads (the rest are closed as they come back): a daemon's
threads come and go, its connections do not pile up."""


class FastReads:
    """``sqlite3`` connections to one SQLite file, each used by one read at a time and kept
    for the next (at most :data:`IDLE_KEPT` of them); thread-safe."""

    def __init__(self, engine: Engine, path: Path) -> None:
        self._engine = engine
        self._path = path
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def usable(self) -> bool:
        """Whether a read may be made here now (not inside a batch of this thread)."""
        return not self._closed and not in_batch(self._engine)

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one read transaction; ``sqlite3.Error`` escapes (the caller
        reads through SQLAlchemy instead)."""
        connection = self._take()
        try:
            connection.execute("BEGIN")
            try:
                yield connection
            finally:
                connection.execute("COMMIT")
        except BaseException:
            connection.close()  # in whatever state the error left it: not used again
            raise
        self._give_back(connection)

    def rows(
        self, connection: sqlite3.Connection, statement: Executable, params: Mapping[str, Any]
    ) -> list[tuple[Any, ...]]:
        """The rows of a module-constant SQLAlchemy ``statement`` (no expanding parameters)
        run with ``params``."""
        made = compiled(statement)
        values = made.construct_params(dict(params)) or {}
        return connection.execute(made.string, dict(values)).fetchall()

    def decoded(
        self, connection: sqlite3.Connection, sql: str, params: Any
    ) -> list[SimpleNamespace]:
        """The rows of ``sql`` as :func:`decoded_row` makes them."""
        cursor = connection.cursor()
        cursor.row_factory = decoded_row
        return cursor.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the connections kept; reads go through SQLAlchemy after."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise sqlite3.OperationalError("the store is closed")
            if self._idle:
                return self._idle.pop()
        connection = sqlite3.connect(
            self._path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        return connection

    def _give_back(self, connection: sqlite3.Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < IDLE_KEPT:
                self._idle.append(connection)
                return
        connection.close()


def fast_reads(engine: Engine) -> FastReads | None:
    """The plain reads of ``engine``'s database, None unless it is a SQLite file."""
    path = sqlite_file(engine.url)
    return None if path is None else FastReads(engine, path)
