"""Bring a state database to the schema this squad expects, safely under concurrency.

Alembic runs programmatically: the config is built here (no ``alembic.ini``) and the migration
scripts ship inside the package. Opening a store calls :func:`upgrade`, which

* returns at once when the database is already at head (no lock, no writes);
* refuses a database stamped with a revision this code does not know (a newer squad wrote it);
* otherwise takes a cross-process lock and migrates: a ``<db>.migrate.lock`` file lock for
  SQLite, ``pg_advisory_xact_lock`` for Postgres. Whoever waits re-checks after the lock, so
  only one opener migrates. Other backends migrate without a lock.

Every upgrade runs in one transaction, on SQLite too (it has transactional DDL even though
alembic does not assume so), so a failed migration leaves the database as it was. On SQLite,
foreign keys are switched off while migrating: batch migrations rebuild a table by copy, drop
and rename, and dropping ``squads`` with foreign keys on would cascade-delete every run.
``PRAGMA foreign_key_check`` then verifies nothing was left dangling before commit.

To write the next migration, generate a draft against a migrated database and edit it::

    with engine.connect() as conn:
        command.revision(alembic_config(conn), "what changed", autogenerate=True, rev_id="0002")
"""

from __future__ import annotations

import contextlib
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout
from sqlalchemy import func, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

from squad.errors import StoreError
from squad.store.engine import mask_url, sqlite_file
from squad.store.revisions import MIGRATIONS, shipped_heads

__all__ = [
    "MIGRATIONS",
    "alembic_config",
    "current_revisions",
    "head_revisions",
    "shipped_heads",
    "upgrade",
]

LOCK_TIMEOUT_S = 300.0
"""How long an opener waits for another process's SQLite migration before giving up."""

_PG_LOCK_KEY = zlib.crc32(b"squad.store.migrate")
"""Advisory lock id; one per database, so schemas sharing a database migrate one at a time."""


def alembic_config(
    connection: Connection | None = None, *, script_location: Path = MIGRATIONS
) -> Config:
    """An alembic ``Config`` built in code; env.py runs on ``connection``."""
    from alembic.config import Config

    # alembic's default `stdout` is the sys.stdout of the moment alembic was imported, which
    # may be a stream closed since (a test's capture, a redirected CLI); and squad's own
    # stdout is for its output (`--json`), so alembic's chatter goes to a buffer nobody reads.
    config = Config(stdout=io.StringIO())
    # The option goes through ConfigParser interpolation: a '%' in the path must be doubled.
    config.set_main_option("script_location", str(script_location).replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revisions(script_location: Path = MIGRATIONS) -> frozenset[str]:
    """The revisions a fully migrated database is at."""
    from alembic.script import ScriptDirectory

    return frozenset(
        ScriptDirectory.from_config(alembic_config(script_location=script_location)).get_heads()
    )


def current_revisions(connection: Connection) -> frozenset[str]:
    """The revisions stamped in the database (empty for a fresh one)."""
    from alembic.runtime.migration import MigrationContext

    return frozenset(MigrationContext.configure(connection).get_current_heads())


def upgrade(engine: Engine, *, script_location: Path = MIGRATIONS) -> None:
    """Migrate the database behind ``engine`` to head; StoreError if it cannot be done.

    A database already at head (every open but the first after an upgrade) is told apart by
    reading its stamp and the shipped scripts' revision lines, without importing alembic."""
    if _stamped_at_head(engine, script_location):
        return
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    where = mask_url(engine.url)
    script = ScriptDirectory.from_config(alembic_config(script_location=script_location))
    try:
        with engine.connect() as connection:
            if _is_current(connection, script, where):
                return
            connection.rollback()
            if connection.dialect.name == "sqlite":
                _upgrade_sqlite(connection, script, where)
            elif connection.dialect.name == "postgresql":
                _upgrade_postgres(connection, script, where)
            else:
                with connection.begin():
                    _run_upgrade(connection, script, where)
    except (SQLAlchemyError, CommandError) as exc:
        raise StoreError(
            f"cannot open or migrate the state database {where!r}: {_reason(exc, engine)}"
        ) from exc


def _stamped_at_head(engine: Engine, script_location: Path) -> bool:
    """True when the database's alembic stamp is exactly the shipped heads."""
    heads = shipped_heads(script_location)
    if heads is None:
        return False
    try:
        with engine.connect() as connection:
            stamped = connection.execute(text("SELECT version_num FROM alembic_version"))
            return frozenset(str(row[0]) for row in stamped) == heads
    except SQLAlchemyError:  # no stamp table yet, or no database: the full path decides
        return False


def _is_current(connection: Connection, script: ScriptDirectory, where: str) -> bool:
    """True when no migration is needed; raises when the database is ahead of this code."""
    current = current_revisions(connection)
    known = {revision.revision for revision in script.walk_revisions()}
    unknown = sorted(current - known)
    if unknown:
        raise StoreError(
            f"database at revision {', '.join(unknown)} is newer than this squad; upgrade squad "
            f"(state database {where!r}; this squad knows up to {', '.join(script.get_heads())})"
        )
    return current == frozenset(script.get_heads())


def _run_upgrade(connection: Connection, script: ScriptDirectory, where: str) -> None:
    """Re-check under the lock (another opener may have migrated meanwhile), then upgrade."""
    if _is_current(connection, script, where):
        return
    from alembic import command

    config = alembic_config(connection, script_location=Path(script.dir))
    command.upgrade(config, "head")


def _upgrade_postgres(connection: Connection, script: ScriptDirectory, where: str) -> None:
    with connection.begin():
        connection.execute(select(func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
        _run_upgrade(connection, script, where)


def _upgrade_sqlite(connection: Connection, script: ScriptDirectory, where: str) -> None:
    path = sqlite_file(connection.engine.url)
    lock = FileLock(f"{path}.migrate.lock", timeout=LOCK_TIMEOUT_S) if path else None
    try:
        with lock or contextlib.nullcontext(), _foreign_keys_off(connection):
            connection.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                _run_upgrade(connection, script, where)
                dangling = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if dangling:
                    raise StoreError(
                        f"migrating the state database {where!r} would leave rows pointing at "
                        f"missing rows ({dangling[:3]!r}...); nothing was changed"
                    )
            except BaseException:
                connection.rollback()
                raise
            connection.commit()
    except Timeout as exc:
        raise StoreError(
            f"another squad process has been migrating {where!r} for over {LOCK_TIMEOUT_S:.0f}s "
            f"(lock {exc.lock_file!r}); retry when it is done, or remove the lock file if no "
            "squad process is running"
        ) from exc


@contextlib.contextmanager
def _foreign_keys_off(connection: Connection) -> Iterator[None]:
    """Foreign keys off on this connection (only possible outside a transaction), then on."""
    connection.exec_driver_sql("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        try:
            connection.rollback()
            connection.exec_driver_sql("PRAGMA foreign_keys = ON")
        except SQLAlchemyError:
            # Never hand a pooled connection back without foreign keys.
            connection.invalidate()
            raise


def _reason(exc: BaseException, engine: Engine) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    password = engine.url.password
    return text.replace(password, "***") if password else text
