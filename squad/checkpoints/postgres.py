"""Checkpoints in the store's PostgreSQL database (``langgraph-checkpoint-postgres``).

A run whose worker is lost can then resume on any machine that reaches the database. The
tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``,
``checkpoint_migrations``) land in the connection's schema, beside the store's own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from squad.checkpoints.base import Checkpoints, Fence
from squad.errors import RunFenced, StoreError
from squad.store.engine import mask_url, parse_url

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from squad.checkpoints.redaction import CheckpointSweep

__all__ = ["PostgresCheckpoints"]

POOL_SIZE = 8
"""Connections kept at most: runs at once, their resumes and the daemon's jobs."""
REACH_S = 10.0
"""How long the first connection may take before the database counts as unreachable."""
_CONNECT_TIMEOUT_S = 5
_SETUP_LOCK = 0x5155_4144_4350
"""The advisory lock key that serialises table set-up across processes ("SQUADCP")."""
_SETUP_WAIT_S = 60.0


class PostgresCheckpoints(Checkpoints):
    """LangGraph's ``PostgresSaver``, one per use, over a shared connection pool."""

    backend = "postgres"

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, reach_s: float = REACH_S) -> None:
        super().__init__()
        parsed = parse_url(url)
        self._where = mask_url(parsed)
        if "connect_timeout" not in parsed.query:
            parsed = parsed.update_query_dict({"connect_timeout": str(_CONNECT_TIMEOUT_S)})
        self._conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self._pool_size = pool_size
        self._reach_s = reach_s
        self._pool: Any = None
        self._pool_lock = threading.Lock()

    @property
    def where(self) -> str:
        return self._where

    def _connections(self) -> Any:
        with self._pool_lock:
            if self._pool is None:
                self._pool = self._open_pool()
            return self._pool

    def _open_pool(self) -> Any:
        """A pool whose first connection is made (or StoreError saying why not)."""
        try:
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ImportError as exc:
            raise StoreError(
                f"Postgres checkpoints need psycopg and psycopg-pool ({exc}); "
                "install squad with the postgres extra: pip install 'squad[postgres]'"
            ) from None
        pool = ConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=self._pool_size,
            timeout=self._reach_s,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            # A connection the server dropped (a restart) is replaced, not handed out.
            check=ConnectionPool.check_connection,
            open=True,
            name="squad-checkpoints",
        )
        try:
            pool.wait(timeout=self._reach_s)
        except PoolTimeout:
            pool.close()
            raise StoreError(
                f"cannot reach the checkpoint database {self._where!r} within "
                f"{self._reach_s:g}s; is the server up and the URL right?"
            ) from None
        return pool

    def _create_tables(self) -> None:
        """LangGraph's set-up under an advisory lock: its ``CREATE TABLE IF NOT EXISTS`` and
        migration rows race when two processes set up one database at once (a daemon and a
        ``squad run``, two workers), and the loser fails on a duplicate key.

        The lock is *tried* until taken, never waited for: a session blocked in
        ``pg_advisory_lock`` sits in an open transaction, and the migrations' ``CREATE INDEX
        CONCURRENTLY`` waits for every open transaction to end, a deadlock."""
        from langgraph.checkpoint.postgres import PostgresSaver

        deadline = time.monotonic() + _SETUP_WAIT_S
        with self._connections().connection() as connection:
            while not connection.execute(
                "SELECT pg_try_advisory_lock(%s) AS taken", (_SETUP_LOCK,)
            ).fetchone()["taken"]:
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"the checkpoint tables in {self._where!r} are still being set up by "
                        f"another process after {_SETUP_WAIT_S:g}s; try again"
                    )
                time.sleep(0.05)
            try:
                PostgresSaver(connection).setup()
            finally:
                connection.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))

    @contextmanager
    def _connect(self) -> Iterator[BaseCheckpointSaver[str]]:
        from langgraph.checkpoint.postgres import PostgresSaver

        yield PostgresSaver(self._connections(), serde=_serde())

    def _fenced(self, saver: BaseCheckpointSaver[str], fence: Fence) -> BaseCheckpointSaver[str]:
        return _fenced_saver(self._connections(), fence)

    def backend_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error,)

    def _list_threads(self) -> list[str]:
        from psycopg import errors

        with self._connections().connection() as connection:
            try:
                rows = connection.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
            except errors.UndefinedTable:  # no checkpoint was ever written here
                return []
        return [str(row["thread_id"]) for row in rows]

    def scrub(self, *, fix: bool, threads: Collection[str] | None = None) -> CheckpointSweep:
        from langgraph.checkpoint.postgres import PostgresSaver

        from squad.checkpoints.redaction import sweep_postgres

        with self._connections().connection() as connection:
            serde = PostgresSaver(connection).serde
            return sweep_postgres(connection, serde, fix=fix, threads=threads)

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


_CHECK_FENCE = "SELECT epoch FROM runs WHERE id = %s FOR SHARE"
"""The run's epoch, its row share-locked until the write's transaction ends: a claim of the
run waits for the checkpoint it fences, and a checkpoint after the claim sees it."""


def _fenced_saver(pool: Any, fence: Fence) -> BaseCheckpointSaver[str]:
    """A ``PostgresSaver`` whose every write runs in one transaction with the check of
    ``fence`` on the store's ``runs`` table (same database, same search path)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    class FencedSaver(PostgresSaver):
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            with pool.connection() as connection, connection.transaction():
                _check(connection, fence)
                saver = PostgresSaver(connection, serde=self.serde)
                return saver.put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            with pool.connection() as connection, connection.transaction():
                _check(connection, fence)
                saver = PostgresSaver(connection, serde=self.serde)
                saver.put_writes(config, writes, task_id, task_path)

    return FencedSaver(pool, serde=_serde())


def _serde() -> Any:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from squad.checkpoints.serde import RedactingSerde

    return RedactingSerde(JsonPlusSerializer())


def _check(connection: Any, fence: Fence) -> None:
    row = connection.execute(_CHECK_FENCE, (fence.run_id,)).fetchone()
    found = None if row is None else row["epoch"]
    if found != fence.epoch:
        raise RunFenced(
            f"run {fence.run_id!r} was claimed again (epoch {found}) after this node's claim "
            f"(epoch {fence.epoch}): its checkpoint write is refused",
            run_id=fence.run_id,
            epoch=fence.epoch,
        )
