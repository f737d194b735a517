"""Runs in the state database, read: by id, by job, newest first, still resumable, ended.

Each query is one session whose SQLAlchemy errors become a :class:`~squad.errors.StoreError`
naming the action and the database (``_session``, which the store's writes use too).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session, col, select

from squad.errors import StoreError
from squad.store.engine import reading
from squad.store.records import RunRecord, RunStatus
from squad.store.row_records import RESUMABLE, run_record
from squad.store.tables import RunRow

__all__ = ["RunReads", "run_record"]

_LOOKUP_CHUNK = 500
"""Ids per ``IN (...)`` list: far under SQLite's and Postgres's parameter limits."""


class RunReads:
    """Runs found and listed, and the session every query of the store runs in: the base of
    :class:`~squad.store.Store`, which writes the runs."""

    _engine: Engine
    _where: str

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._reading(f"read run {run_id!r}") as session:
            row = session.get(RunRow, run_id)
            return None if row is None else run_record(row)

    def run_of_job(self, job: str) -> RunRecord | None:
        """The run a cluster job started (the newest, should a job ever have made two)."""
        query = (
            select(RunRow)
            .where(col(RunRow.job) == job)
            .order_by(col(RunRow.created_at).desc(), col(RunRow.id).desc())
            .limit(1)
        )
        with self._reading(f"find the run of job {job}") as session:
            row = session.exec(query).first()
            return None if row is None else run_record(row)

    def list_runs(
        self, squad: str | None = None, limit: int = 50, *, offset: int = 0
    ) -> list[RunRecord]:
        """The newest ``limit`` runs after skipping ``offset``, of one squad or of all,
        newest first."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        if offset < 0:
            raise ValueError(f"offset must be 0 or more, got {offset!r}")
        query = select(RunRow)
        if squad is not None:
            query = query.where(col(RunRow.squad) == squad)
        query = (
            query.order_by(col(RunRow.created_at).desc(), col(RunRow.id).desc())
            .offset(offset)
            .limit(limit)
        )
        with self._session("list runs") as session:
            return [run_record(row) for row in session.exec(query).all()]

    def latest_runs(self) -> dict[str, RunRecord]:
        """Each squad's newest run (as :meth:`list_runs` with ``limit=1`` orders them), in
        one query: what ``squad status`` shows per squad."""
        rank = (
            func.row_number()
            .over(
                partition_by=col(RunRow.squad),
                order_by=(col(RunRow.created_at).desc(), col(RunRow.id).desc()),
            )
            .label("rank")
        )
        ranked = select(col(RunRow.id), rank).subquery()
        query = select(RunRow).join(ranked, ranked.c.id == col(RunRow.id)).where(ranked.c.rank == 1)
        with self._session("list the newest run of each squad") as session:
            return {row.squad: run_record(row) for row in session.exec(query).all()}

    def count_runs(self, squad: str | None = None) -> int:
        """How many runs the store holds, of one squad or of all."""
        from sqlalchemy import func

        query = select(func.count()).select_from(RunRow)
        if squad is not None:
            query = query.where(col(RunRow.squad) == squad)
        with self._session("count runs") as session:
            return int(session.exec(query).one())

    def interrupted_runs(self, squad: str | None = None) -> list[RunRecord]:
        """Runs that stopped without finishing and may be resumed, newest first.

        That is ``running`` (the process died or is still at it: the store cannot tell),
        ``awaiting_approval`` and ``interrupted``; of one squad or of all.
        """
        query = select(RunRow).where(col(RunRow.status).in_([s.value for s in RESUMABLE]))
        if squad is not None:
            query = query.where(col(RunRow.squad) == squad)
        query = query.order_by(col(RunRow.created_at).desc(), col(RunRow.id).desc())
        with self._session("list interrupted runs") as session:
            return [run_record(row) for row in session.exec(query).all()]

    def ended_runs(self, *, before: datetime) -> list[RunRecord]:
        """Runs that ended (succeeded, failed, stopped) before ``before``, oldest first.

        Interrupted and paused runs are not among them: they may still be resumed.
        """
        if before.utcoffset() is None:
            raise ValueError(f"naive before {before!r}; pass a timezone-aware datetime")
        ended = [s.value for s in RunStatus if s.is_terminal]
        query = (
            select(RunRow)
            .where(col(RunRow.status).in_(ended), col(RunRow.ended_at) < before)
            .order_by(col(RunRow.ended_at), col(RunRow.id))
        )
        with self._session("list ended runs") as session:
            return [run_record(row) for row in session.exec(query).all()]

    def known_runs(self, run_ids: Iterable[str]) -> set[str]:
        """Which of ``run_ids`` the store holds (deleted runs and strangers are left out)."""
        wanted = sorted(set(run_ids))
        found: set[str] = set()
        with self._session("look up runs") as session:
            for start in range(0, len(wanted), _LOOKUP_CHUNK):
                chunk = wanted[start : start + _LOOKUP_CHUNK]
                found.update(session.exec(select(RunRow.id).where(col(RunRow.id).in_(chunk))))
        return found

    @contextmanager
    def _reading(self, action: str) -> Iterator[Session]:
        """A session for a single read (see :func:`~squad.store.engine.reading`)."""
        with (
            reading(self._engine, action) as conn,
            Session(conn, expire_on_commit=False) as session,
        ):
            yield session

    @contextmanager
    def _session(
        self, action: str, *, reraise: type[SQLAlchemyError] | None = None
    ) -> Iterator[Session]:
        """A session whose SQLAlchemy errors become StoreError (except ``reraise``, for retries)."""
        try:
            with Session(self._engine, expire_on_commit=False) as session:
                yield session
        except SQLAlchemyError as exc:
            if reraise is not None and isinstance(exc, reraise):
                raise
            reason = getattr(exc, "orig", None) or exc
            raise StoreError(
                f"cannot {action} in the state database {self._where!r}: {reason}"
            ) from exc
