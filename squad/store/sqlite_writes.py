"""A run step's store writes on a SQLite file in plain ``sqlite3`` (issue 35).

A step writes its messages, the spend of its calls and its task's state in one transaction
(:mod:`squad.runtime.step_journal`): five statements whose execution through SQLAlchemy
(parameters, the compiled cache's lookups, events, result objects) costs several times what
SQLite takes to run them. On a SQLite file those statements run here instead, on the
transaction's own ``sqlite3`` connection, the one under SQLAlchemy's ``Connection``. They are
part of its transaction, so a :func:`~squad.store.engine.batch` stays all-or-nothing and
commits (one commit, one fsync of the write-ahead log) exactly as before, and any other write
of the batch joins the same transaction through SQLAlchemy. The SQL is SQLAlchemy's own
statement compiled once for SQLite; its parameters and returned rows pass through the same
types' processors (a ``UTCDateTime`` is stored as SQLAlchemy stores it), so the rows are the
same whichever path wrote them. Postgres, in-memory databases and ``file:`` URIs keep
SQLAlchemy's path.

A statement that meets a ``sqlite3`` error while SQLite undid that statement alone (the
transaction it was part of still open) is done again through SQLAlchemy, in the same
transaction, which says what went wrong in the store's words (a missing run, a full disk) or
does it. An error that
ended the transaction (SQLite rolls a transaction back on some I/O errors) is raised as
SQLAlchemy raises it: doing the statement again would start a new transaction and let the
rest of the batch land without what came before.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Executable, Table
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from squad.store.sqlite_fast import dialect

__all__ = ["PlainStatement"]

Processor = Callable[[Any], Any]


class PlainStatement:
    """A module-constant SQLAlchemy statement run in plain ``sqlite3`` on a transaction's
    own connection; compiled for SQLite on first use.

    ``table`` types the columns it returns; ``keys`` names the columns of an ``INSERT``
    given no values (each call gives exactly those).
    """

    def __init__(
        self, statement: Executable, table: Table, *, keys: Sequence[str] | None = None
    ) -> None:
        self._statement = statement
        self._table = table
        self._keys = None if keys is None else list(keys)
        self._made: tuple[Any, str, dict[str, Processor]] | None = None
        self._decoders: dict[str, Processor | None] = {}
        self._lock = threading.Lock()

    def rows(self, conn: Connection, params: Mapping[str, Any]) -> list[SimpleNamespace] | None:
        """The rows the statement returns, run with ``params`` on ``conn``'s ``sqlite3``
        connection, decoded as SQLAlchemy decodes them; None when the caller should run it
        through SQLAlchemy instead (see the module docstring)."""
        compiled, sql, processors = self._compiled()
        try:
            values = compiled.construct_params(dict(params))
            for name, process in processors.items():
                values[name] = process(values[name])
        except (SQLAlchemyError, ValueError, TypeError):
            return None  # nothing ran: SQLAlchemy says what is wrong with them
        raw = conn.connection.driver_connection
        if not isinstance(raw, sqlite3.Connection):
            return None  # another driver's connection: SQLAlchemy knows it
        began = raw.in_transaction
        try:
            cursor = raw.execute(sql, values)
            names = [column[0] for column in cursor.description or ()]
            found = cursor.fetchall()
        except sqlite3.Error as exc:
            if raw.in_transaction or not began:
                return None  # SQLite undid this statement alone; no earlier write is lost
            raise DBAPIError.instance(sql, values, exc, sqlite3.Error) from exc
        decoders = [self._decoder(name) for name in names]
        return [
            SimpleNamespace(
                **{
                    name: value if decode is None or value is None else decode(value)
                    for name, decode, value in zip(names, decoders, row, strict=True)
                }
            )
            for row in found
        ]

    def _compiled(self) -> tuple[Any, str, dict[str, Processor]]:
        made = self._made
        if made is None:
            with self._lock:
                made = self._made
                if made is None:
                    made = self._made = self._compile()
        return made

    def _compile(self) -> tuple[Any, str, dict[str, Processor]]:
        compiled: Any = self._statement.compile(  # type: ignore[attr-defined]
            dialect=dialect(), column_keys=self._keys
        )
        processors: dict[str, Processor] = {}
        for bind, name in compiled.bind_names.items():
            process = bind.type.dialect_impl(dialect()).bind_processor(dialect())
            if process is not None:  # keyed as the SQL names it (construct_params' keys)
                processors[compiled.escaped_bind_names.get(name, name)] = process
        return compiled, compiled.string, processors

    def _decoder(self, name: str) -> Processor | None:
        if name not in self._decoders:
            column_type = self._table.c[name].type.dialect_impl(dialect())
            self._decoders[name] = column_type.result_processor(dialect(), None)
        return self._decoders[name]
