"""Test databases made once and handed out many times.

Running every alembic migration costs a store test 0.1 s on SQLite and 1-2 s on Postgres; a
test wants a migrated database, not the migration (``tests/store/test_migrations.py`` tests
that, on an empty one). So a session migrates once and each test gets a copy:

* SQLite: a template file migrated once per session, copied into the test's folder.
* Postgres: each pytest process (each xdist worker) has a database of its own,
  ``<db>_<worker>_<session>`` beside the one ``SQUAD_TEST_POSTGRES_URL`` names, created at the
  start of the session and dropped at its end, so parallel workers, and sessions running at
  once on one server, never share (or drop) tables, locks or notifications. In it a
  schema migrated once is emptied before each test (rows deleted, sequences restarted, tables
  a test added dropped): far cheaper than a migration, and than ``TRUNCATE``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import MetaData, create_engine, text
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.pool import NullPool

from squad.fsutil import private_dir

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
STORE_SCHEMA = "squad_store"
"""The migrated schema in a worker's database that ``store_url`` empties before each test."""


def base_postgres_url() -> URL:
    return make_url(os.environ.get("SQUAD_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL))


def worker_name() -> str:
    """``gw0``, ``gw1``... under pytest-xdist, ``main`` in a plain pytest run."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def session_id() -> str:
    """This pytest session's id, the same in each of its xdist workers: two sessions on one
    server (a developer's run beside CI's) never drop each other's databases."""
    return (os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid()))[:12]


def worker_database(base: URL) -> str:
    return f"{base.database}_{worker_name()}_{session_id()}"


def _autocommit(url: URL) -> Engine:
    return create_engine(
        url,
        poolclass=NullPool,
        isolation_level="AUTOCOMMIT",
        connect_args={"connect_timeout": 5},
    )


@contextmanager
def own_database(base: URL) -> Iterator[Engine]:
    """An engine on this process's own database, created afresh (one a crashed session left
    is dropped first) and dropped after; ``base`` must name a database that exists."""
    name = worker_database(base)
    maintenance = _autocommit(base)
    try:
        with maintenance.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        engine = create_engine(
            base.set(database=name), poolclass=NullPool, connect_args={"connect_timeout": 5}
        )
        try:
            yield engine
        finally:
            engine.dispose()
            with maintenance.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        maintenance.dispose()


def schema_url(admin: Engine, schema: str) -> str:
    """A URL on ``admin``'s database whose search_path is ``schema``."""
    url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


class MigratedSchema:
    """A Postgres schema migrated once, emptied on demand."""

    def __init__(self, admin: Engine, schema: str = STORE_SCHEMA) -> None:
        from squad.store import Store

        self.schema = schema
        self.url = schema_url(admin, schema)
        with admin.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        Store.open(self.url).close()
        self._engine = create_engine(self.url, poolclass=NullPool)
        metadata = MetaData()
        metadata.reflect(self._engine, schema=schema)
        # Children before parents, so no foreign key is ever left dangling mid-way.
        self._tables = [t.name for t in reversed(metadata.sorted_tables)]

    def empty(self) -> str:
        """Delete every row, restart every sequence and drop any table a test added; the URL."""
        schema = self.schema
        with self._engine.begin() as connection:
            found = {
                row[0]
                for row in connection.execute(
                    text("SELECT tablename FROM pg_tables WHERE schemaname = :s"), {"s": schema}
                )
            }
            for table in found - set(self._tables):
                connection.execute(text(f'DROP TABLE IF EXISTS "{schema}"."{table}" CASCADE'))
            for table in self._tables:
                if table != "alembic_version":
                    connection.execute(text(f'DELETE FROM "{schema}"."{table}"'))
            sequences = connection.execute(
                text("SELECT sequencename FROM pg_sequences WHERE schemaname = :s"), {"s": schema}
            )
            for (sequence,) in sequences.all():
                connection.execute(
                    text("SELECT setval(:seq, 1, false)"), {"seq": f'"{schema}"."{sequence}"'}
                )
        return self.url

    def close(self) -> None:
        self._engine.dispose()


def migrated_sqlite(folder: Path) -> Path:
    """A SQLite database migrated to head in ``folder``, the template of :func:`copy_sqlite`."""
    from squad.store import Store

    path = folder / "template.db"
    Store.open(f"sqlite:///{path}").close()
    return path


def copy_sqlite(template: Path, target: Path) -> None:
    """``target`` becomes a copy of the migrated ``template``, private as the store makes it."""
    private_dir(target.parent)
    shutil.copyfile(template, target)
    target.chmod(0o600)
