"""Engines for the state store: one function turns a URL into a ready, correctly tuned engine.

SQLite is the default backend and gets the settings a multi-threaded, multi-process daemon needs
on *every* connection (``PRAGMA foreign_keys`` and ``busy_timeout`` are per connection, not per
file). Anything else SQLAlchemy understands is passed through, so Postgres works with the same
code.

A SQLite file is created 0600 in a 0700 folder (its WAL and shared-memory files take its
mode), so chat history and facts are for their user only; one an older version left readable
by others is tightened when opened.

A full disk is a :class:`DiskFull` naming the filesystem, its free space and what to do, not
SQLite's "disk I/O error"; a database whose write-ahead log holds nothing pending can still be
read there (:func:`reader_on_full_disk`), so reading commands keep working.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from squad.diskfull import FULL_ERRNOS, as_disk_full, disk_full
from squad.errors import StoreError
from squad.fsutil import SQLITE_COMPANIONS, private_dir, private_file

__all__ = [
    "BUSY_TIMEOUT_MS",
    "batch",
    "database_exists",
    "in_batch",
    "make_engine",
    "mask_url",
    "parse_url",
    "reader_on_full_disk",
    "reading",
    "sqlite_file",
    "transaction",
]

BUSY_TIMEOUT_MS = 5000
"""How long a SQLite writer waits for another one before failing with 'database is locked'."""

_POSTGRES_CONNECT_TIMEOUT_S = 10
_URL_EXAMPLES = "e.g. sqlite:////home/me/.squad/squad.db or postgresql://user@host/dbname"


def mask_url(url: str | URL) -> str:
    """``url`` fit for an error message: any password replaced by ``***``."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def parse_url(url: str | URL) -> URL:
    """Parse ``url``; bare ``postgres://`` and ``postgresql://`` get the psycopg 3 driver.

    Without the rewrite SQLAlchemy would pick psycopg2, which squad does not install.
    """
    try:
        parsed = url if isinstance(url, URL) else make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"invalid database URL {mask_url(url)!r}: {exc}; {_URL_EXAMPLES}") from exc
    if parsed.drivername in {"postgres", "postgresql"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def sqlite_file(url: URL) -> Path | None:
    """The database file of a SQLite ``url``; None for in-memory and ``file:`` URI databases."""
    if url.get_backend_name() != "sqlite" or _sqlite_in_memory(url):
        return None
    if url.query.get("uri") in {"true", "1"}:
        return None
    assert url.database is not None
    return Path(url.database)


def database_exists(url: str | URL) -> bool:
    """Whether the database at ``url`` is there already: a SQLite file that exists, an
    in-memory database, or a server (which cannot be checked without connecting)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return True
    path = sqlite_file(parsed)
    return path is None or path.is_file()


def make_engine(url: str | URL) -> Engine:
    """An engine for ``url``; raises StoreError for a malformed URL or a missing driver.

    Does not connect: an unreachable server is reported by the first use (the migration).
    """
    parsed = parse_url(url)
    try:
        if parsed.get_backend_name() == "sqlite":
            return _sqlite_engine(parsed)
        return _server_engine(parsed)
    except (ArgumentError, ImportError) as exc:
        raise StoreError(
            f"cannot use database URL {mask_url(parsed)!r}: {exc}; {_URL_EXAMPLES}"
        ) from exc


_BATCH: ContextVar[tuple[Engine, Connection] | None] = ContextVar("store_batch", default=None)
"""The batch transaction open in this context, if any (see :func:`batch`)."""


@contextmanager
def transaction(
    engine: Engine, action: str, *, reraise: type[SQLAlchemyError] | None = None
) -> Iterator[Connection]:
    """One transaction on ``engine``; its SQLAlchemy errors become StoreError naming ``action``.

    ``action`` completes "cannot ... in the state database": ``"record a message of 'a'"``.
    Errors of type ``reraise`` pass through unchanged, for callers that handle them. Inside a
    :func:`batch` on the same engine, the work joins the batch's transaction instead of
    committing on its own.
    """
    open_batch = _BATCH.get()
    with _store_errors(engine, action, reraise):
        if open_batch is not None and open_batch[0] is engine:
            yield open_batch[1]
        else:
            with engine.begin() as conn:
                yield conn


@contextmanager
def reading(engine: Engine, action: str) -> Iterator[Connection]:
    """A connection for reads that need no snapshot shared between their statements (each
    statement sees what was committed when it began); errors as :func:`transaction`.

    On a server each statement is its own transaction (autocommit): one round trip instead
    of three (``BEGIN``, the query, ``ROLLBACK``), which is what Postgres's default READ
    COMMITTED gives a transaction's statements anyway. On SQLite, and inside a
    :func:`batch` (whose writes it must see), it is a :func:`transaction`. Never for a
    read that locks rows (``FOR UPDATE``/``FOR SHARE``): the lock would end with it."""
    open_batch = _BATCH.get()
    if engine.dialect.name == "sqlite" or (open_batch is not None and open_batch[0] is engine):
        with transaction(engine, action) as conn:
            yield conn
        return
    with (
        _store_errors(engine, action, None),
        engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn,
    ):
        yield conn


@contextmanager
def _store_errors(
    engine: Engine, action: str, reraise: type[SQLAlchemyError] | None
) -> Iterator[None]:
    """SQLAlchemy's errors as StoreError (a full disk as DiskFull), except ``reraise``."""
    try:
        yield
    except SQLAlchemyError as exc:
        if reraise is not None and isinstance(exc, reraise):
            raise
        full = as_disk_full(exc, sqlite_file(engine.url))
        if full is not None:
            raise full from exc
        reason = getattr(exc, "orig", None) or exc
        raise StoreError(
            f"cannot {action} in the state database {mask_url(engine.url)!r}: {reason}"
        ) from exc


def in_batch(engine: Engine) -> bool:
    """Whether this context has a :func:`batch` open on ``engine``."""
    open_batch = _BATCH.get()
    return open_batch is not None and open_batch[0] is engine


@contextmanager
def batch(engine: Engine, action: str) -> Iterator[None]:
    """Make every store write in this block one transaction: all of them land, or none.

    A runtime step buffers its messages, spend and task state while the model works and
    writes them here at the end, so no lock is held across a model call and a step costs one
    commit instead of one per record. Batches do not nest.
    """
    if _BATCH.get() is not None:
        raise RuntimeError("store batches do not nest")
    with transaction(engine, action) as conn:
        token = _BATCH.set((engine, conn))
        try:
            yield
        finally:
            _BATCH.reset(token)


def reader_on_full_disk(url: URL) -> Engine | None:
    """A read-only engine on the SQLite database of ``url`` that needs no room on its disk,
    or None when reading it so would not see everything committed.

    SQLite in WAL mode must size its shared-memory index even to read, which a full disk
    refuses. Opened ``immutable`` it reads the database file alone: complete exactly when
    the write-ahead log holds nothing (absent or empty: the last writer checkpointed it).
    """
    path = sqlite_file(url)
    if path is None or not path.is_file():
        return None
    try:
        if path.with_name(path.name + "-wal").stat().st_size > 0:
            return None
    except FileNotFoundError:
        pass
    address = f"{path.resolve().as_uri()}?mode=ro&immutable=1"

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(address, uri=True, check_same_thread=False)
        _add_functions(connection)
        return connection

    return create_engine(url, creator=connect)


def _sqlite_in_memory(url: URL) -> bool:
    return url.database in {None, "", ":memory:"} or url.query.get("mode") == "memory"


def _sqlite_engine(url: URL) -> Engine:
    path = sqlite_file(url)
    if path is not None:
        try:
            private_dir(path.parent)
        except OSError as exc:
            if exc.errno in FULL_ERRNOS:
                raise disk_full(path.parent) from exc
            raise StoreError(
                f"cannot create the folder {str(path.parent)!r} for the state database: {exc}"
            ) from exc
        try:
            # SQLite gives its WAL and shared-memory files the database file's mode.
            private_file(path, companions=SQLITE_COMPANIONS)
        except OSError as exc:
            if exc.errno in FULL_ERRNOS:
                raise disk_full(path) from exc
            raise StoreError(f"cannot create the state database {str(path)!r}: {exc}") from exc
    options: dict[str, Any] = {"connect_args": {"check_same_thread": False}}
    if _sqlite_in_memory(url):
        # Every new connection to an in-memory database is a new, empty database: keep one.
        options["poolclass"] = StaticPool
    engine = create_engine(url, **options)
    event.listen(engine, "connect", _tune_sqlite_connection)
    return engine


CACHE_KIB = 512
"""Page cache per pooled connection (SQLite's default is 2 MiB): the pool keeps up to five
connections for the daemon's life, each cache filling as the database grows; the store's
reads are by index, and a smaller cache only costs page reads the OS caches anyway."""


SYNCHRONOUS = "FULL"
"""The store's SQLite ``synchronous`` level, set on every connection rather than left to how
SQLite was built: in WAL mode FULL fsyncs the log at every commit, so a committed transaction
survives a power loss, and a run's turn (committed before its checkpoint is written) is never
behind a checkpoint that survived. NORMAL would save that fsync but let a power loss take the
last commits back, a turn's messages and spend with them, while its checkpoint stays (see
"What a power loss can cost" in docs/running.md)."""


def _tune_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    """Per-connection SQLite settings; busy_timeout first so the WAL switch can wait its turn.

    Also registers ``squad_casefold(text)``, Python's ``str.casefold`` as an SQL function.
    """
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        _switch_to_wal(cursor)
        cursor.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
    finally:
        cursor.close()
    _add_functions(dbapi_connection)


def _add_functions(dbapi_connection: Any) -> None:
    # SQLite's lower() knows only ASCII; case-insensitive memory search needs real Unicode folding.
    dbapi_connection.create_function("squad_casefold", 1, _casefold, deterministic=True)


def _switch_to_wal(cursor: Any) -> None:
    """``PRAGMA journal_mode = WAL``, retried while another opener holds the file.

    Changing the journal mode can fail with "database is locked" without waiting for
    busy_timeout (seen when several processes open a new file at once), so wait here instead.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _casefold(value: object) -> object:
    return value.casefold() if isinstance(value, str) else value


def _server_engine(url: URL) -> Engine:
    options: dict[str, Any] = {"pool_pre_ping": True}
    if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
        options["connect_args"] = {"connect_timeout": _POSTGRES_CONNECT_TIMEOUT_S}
    return create_engine(url, **options)
