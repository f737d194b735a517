"""The cluster queue's tables: procrastinate's schema, made once in a schema of its own.

procrastinate's schema SQL is not idempotent, so it is applied only when its jobs table is
missing, under an advisory lock that other nodes starting at the same time wait on; beside it
goes squad's own trigger that wakes workers when a running job ends or goes back.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from squad.errors import StoreError

if TYPE_CHECKING:
    from squad.settings import Settings

__all__ = ["conninfo", "ensure_schema", "require_procrastinate"]

_SCHEMA_LOCK = 0x5155_4144_5051
"""Advisory lock key serialising the queue schema's set-up across nodes ("SQUADPQ")."""
_SCHEMA_WAIT_S = 60.0


def conninfo(database_url: str) -> str:
    """The libpq URL of the store's database (SQLAlchemy's driver name taken off)."""
    from squad.store.engine import parse_url

    return (
        parse_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    )


def require_procrastinate() -> Any:
    try:
        import procrastinate
    except ImportError as exc:
        raise StoreError(
            f"cluster mode needs procrastinate ({exc}); install squad with the postgres extra: "
            "pip install 'squad[postgres]'"
        ) from None
    return procrastinate


def ensure_schema(settings: Settings) -> bool:
    """Create the queue's schema and tables once (True if this call made them); a database
    that refuses is a StoreError."""
    import psycopg

    try:
        return _ensure_schema(settings)
    except psycopg.Error as exc:
        raise StoreError(f"cannot set up the cluster's queue: {exc}") from None


def _ensure_schema(settings: Settings) -> bool:
    """procrastinate's schema SQL is not idempotent, so it is applied only when its jobs table
    is missing, under an advisory lock that other nodes starting at the same time wait on."""
    import psycopg
    from psycopg import sql

    procrastinate = require_procrastinate()
    schema = settings.cluster.schema_name
    try:
        connection = psycopg.connect(conninfo(settings.database_url), autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the cluster's database: {exc}") from None
    with connection:
        deadline = time.monotonic() + _SCHEMA_WAIT_S
        while not _scalar(connection, "SELECT pg_try_advisory_lock(%s)", _SCHEMA_LOCK):
            if time.monotonic() >= deadline:
                raise StoreError("another node is still setting up the cluster's queue; try again")
            time.sleep(0.05)
        try:
            jobs_table = f"{schema}.procrastinate_jobs"
            made = False
            with connection.transaction():
                create = sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
                connection.execute(create)
                connection.execute(
                    sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema))
                )
                if not _scalar(connection, "SELECT to_regclass(%s) IS NOT NULL", jobs_table):
                    connection.execute(procrastinate.schema.SchemaManager.get_schema())
                    made = True
                if not _scalar(connection, _HAS_WAKE_TRIGGER, jobs_table):
                    connection.execute(_WAKE_ON_RELEASE)
            return made
        finally:
            connection.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))


_WAKE_ON_RELEASE = """
CREATE OR REPLACE FUNCTION squad_notify_job_released() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    payload TEXT;
BEGIN
    SELECT json_build_object('type', 'job_inserted', 'job_id', NEW.id)::text INTO payload;
    PERFORM pg_notify('procrastinate_queue_v1#' || NEW.queue_name, payload);
    PERFORM pg_notify('procrastinate_any_queue_v1', payload);
    RETURN NEW;
END;
$$;
CREATE TRIGGER squad_notify_job_released
    AFTER UPDATE OF status ON procrastinate_jobs
    FOR EACH ROW WHEN (OLD.status = 'doing' AND NEW.status <> 'doing')
    EXECUTE PROCEDURE squad_notify_job_released();
"""
"""Workers hear of a job only when one is inserted; a job waiting on a lock (the next run of
a squad) or put back in the queue (a lost node's, a handed-over run) would wait for the next
poll. This trigger, squad's own, wakes them when a running job ends or goes back."""


_HAS_WAKE_TRIGGER = (
    "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'squad_notify_job_released' "
    "AND tgrelid = to_regclass(%s))"
)


def _scalar(connection: Any, query: str, arg: object) -> bool:
    row = connection.execute(query, (arg,)).fetchone()
    return bool(row is not None and row[0])
