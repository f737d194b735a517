"""What runs do: each task's state in a run, and the spend ledger; reached as ``store.runs``.

``run_tasks`` holds one row per (run, task), deleted with its run (ON DELETE CASCADE). It is
the runtime's record of progress, the one ``tasks/<task-id>/status.json`` mirrors, and what
resuming a run reads to skip finished tasks.

``spend_ledger`` holds one row per model call: tokens, cost and latency. Its ``squad`` and
``run_id`` are not foreign keys, so ``limits.max_cost_usd`` keeps counting what a squad spent
after its runs (or its record) are deleted; :meth:`RunStateStore.spent` sums it, by squad and
since a time, over the ``(squad, at)`` index.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Row,
    ScalarSelect,
    Table,
    and_,
    bindparam,
    case,
    func,
    insert,
    literal,
    null,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from squad.clock import Clock
from squad.errors import StoreError
from squad.store.engine import transaction
from squad.store.records import SpendRecord, SpendTotals, TaskRecord, TaskStatus, enum_value
from squad.store.tables import UTCDateTime, metadata
from squad.store.upsert import upsert

__all__ = ["RunStateStore"]

TASKS: Table = metadata.tables["run_tasks"]
LEDGER: Table = metadata.tables["spend_ledger"]
DAYS: Table = metadata.tables["spend_days"]
"""Spend of forgotten runs, rolled up per squad, UTC day and model (squad.store.retention)."""


class RunStateStore:
    """Task states per run and the spend ledger; get one as ``Store.runs``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC)."""
        self._engine = engine
        self._now = now

    # task states

    def set_task(
        self,
        run_id: str,
        task_id: str,
        *,
        squad: str,
        agent: str,
        status: TaskStatus | str,
        error: str | None = None,
        output: str | None = None,
        attempts: int | None = None,
        rounds: int | None = None,
    ) -> TaskRecord:
        """Create or update a task's state in a run (one atomic upsert).

        ``error`` belongs to the status and is replaced every time (None clears it);
        ``output``, ``attempts`` and ``rounds`` left None keep their value (0 and None when
        new). Entering ``running`` stamps ``started_at`` the first time only. A finished
        status (done, failed, blocked) stamps ``ended_at``, kept if the task was finished
        already; any other status clears it, so a task sent back for rework is unfinished.
        """
        status = enum_value(TaskStatus, status, "task status")
        for name, number in (("attempts", attempts), ("rounds", rounds)):
            if number is not None and number < 0:
                raise ValueError(f"{name} must be 0 or more, got {number!r}")
        now = self._now()
        action = f"set task {task_id!r} of run {run_id!r}"
        try:
            with transaction(self._engine, action) as conn:
                statement = _TASK_UPSERTS.get(conn.dialect.name)
                if statement is None:
                    return self._set_task_portably(
                        conn,
                        run_id,
                        task_id,
                        squad,
                        agent,
                        status,
                        error,
                        output,
                        attempts,
                        rounds,
                        now,
                    )
                row = conn.execute(
                    statement,
                    {
                        "run_id": run_id,
                        "task_id": task_id,
                        "squad": squad,
                        "agent": agent,
                        "status": status.value,
                        "error": error,
                        "now": now,
                        "first_output": output,
                        "first_attempts": attempts or 0,
                        "first_rounds": rounds or 0,
                        "first_started_at": now if status is TaskStatus.RUNNING else None,
                        "first_ended_at": now if status.finished else None,
                        "new_output": output,
                        "new_attempts": attempts,
                        "new_rounds": rounds,
                        "running": status is TaskStatus.RUNNING,
                        "finished": status.finished,
                    },
                ).one()
                return _task_record(row)
        except StoreError as exc:
            if isinstance(exc.__cause__, IntegrityError):
                raise StoreError(
                    f"cannot set task {task_id!r}: no run with id {run_id!r} in the state "
                    "database (create_run first)"
                ) from exc.__cause__
            raise

    @staticmethod
    def _set_task_portably(
        conn: Connection,
        run_id: str,
        task_id: str,
        squad: str,
        agent: str,
        status: TaskStatus,
        error: str | None,
        output: str | None,
        attempts: int | None,
        rounds: int | None,
        now: datetime,
    ) -> TaskRecord:
        """:meth:`set_task` on backends without ``INSERT ... ON CONFLICT ... RETURNING``."""
        stamp = literal(now, UTCDateTime())
        key = _task_key(run_id, task_id)
        values: dict[str, Any] = {
            "run_id": run_id,
            "task_id": task_id,
            "position": _next_position(),
            "squad": squad,
            "agent": agent,
            "status": status.value,
            "attempts": attempts or 0,
            "rounds": rounds or 0,
            "error": error,
            "output": output,
            "started_at": now if status is TaskStatus.RUNNING else None,
            "ended_at": now if status.finished else None,
            "updated_at": now,
        }
        changes: dict[str, Any] = {
            "squad": squad,
            "agent": agent,
            "status": status.value,
            "error": error,
            "updated_at": now,
            "ended_at": func.coalesce(TASKS.c.ended_at, stamp) if status.finished else null(),
        }
        if status is TaskStatus.RUNNING:
            changes["started_at"] = func.coalesce(TASKS.c.started_at, stamp)
        for name, value in (("output", output), ("attempts", attempts), ("rounds", rounds)):
            if value is not None:
                changes[name] = value
        upsert(conn, TASKS, values, key=("run_id", "task_id"), set_=changes)
        return _task_record(conn.execute(select(TASKS).where(key)).one())

    def tasks(self, run_id: str) -> list[TaskRecord]:
        """The run's tasks, in the order they were first set.

        A task's place is the run's highest so far plus one, taken in its insert; two tasks
        first set at once by concurrent writers on Postgres may share it, and go by task id.
        """
        query = (
            select(TASKS)
            .where(TASKS.c.run_id == run_id)
            .order_by(TASKS.c.position, TASKS.c.task_id)
        )
        with transaction(self._engine, f"read the tasks of run {run_id!r}") as conn:
            return [_task_record(row) for row in conn.execute(query)]

    def get_task(self, run_id: str, task_id: str) -> TaskRecord | None:
        query = select(TASKS).where(_task_key(run_id, task_id))
        with transaction(self._engine, f"read task {task_id!r} of run {run_id!r}") as conn:
            row = conn.execute(query).first()
        return None if row is None else _task_record(row)

    # spend ledger

    def record_spend(
        self,
        squad: str,
        *,
        model: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
        latency_s: float = 0.0,
        run_id: str | None = None,
        agent: str | None = None,
    ) -> SpendRecord:
        """Add one model call to the ledger, stamped with the store's clock."""
        for name, number in (
            ("prompt_tokens", prompt_tokens),
            ("completion_tokens", completion_tokens),
            ("cost_usd", cost_usd),
            ("latency_s", latency_s),
        ):
            if not number >= 0:  # also refuses NaN
                raise ValueError(f"{name} must be 0 or more, got {number!r}")
        if not squad or not model:
            raise ValueError(f"squad and model must be non-empty, got {squad!r} and {model!r}")
        values: dict[str, Any] = {
            "squad": squad,
            "run_id": run_id,
            "agent": agent,
            "model": model,
            "prompt_tokens": int(prompt_tokens),
            "completion_tokens": int(completion_tokens),
            "cost_usd": float(cost_usd),
            "latency_s": float(latency_s),
            "at": self._now(),
        }
        with transaction(self._engine, f"record spend of squad {squad!r}") as conn:
            key = conn.execute(_INSERT_SPEND, values).scalar_one()
        return SpendRecord(id=int(key), **values)

    def spent(self, squad: str, *, since: datetime | None = None) -> SpendTotals:
        """What the squad's model calls add up to, over all its runs and chats.

        ``since`` (inclusive) counts only calls at or after that instant; calls of forgotten
        runs, kept as per-day totals, count from the UTC day of ``since`` on.
        """
        where = [LEDGER.c.squad == squad]
        days = [DAYS.c.squad == squad]
        if since is not None:
            if since.utcoffset() is None:
                raise ValueError(f"naive since {since!r}; pass a timezone-aware datetime")
            where.append(LEDGER.c.at >= since)
            days.append(DAYS.c.day >= since.astimezone(UTC).date().isoformat())
        return self._totals(and_(*where), and_(*days), f"sum the spend of squad {squad!r}")

    def run_spend(self, run_id: str) -> SpendTotals:
        """What one run's model calls add up to."""
        return self._totals(LEDGER.c.run_id == run_id, None, f"sum the spend of run {run_id!r}")

    def spent_by_squad(self) -> dict[str, SpendTotals]:
        """:meth:`spent` of every squad with a model call, in one query per table."""
        totals: dict[str, SpendTotals] = {}
        with transaction(self._engine, "sum the spend of every squad") as conn:
            for table, calls in ((LEDGER, func.count()), (DAYS, func.sum(DAYS.c.calls))):
                query = select(
                    table.c.squad,
                    func.coalesce(func.sum(table.c.cost_usd), 0.0),
                    func.coalesce(func.sum(table.c.prompt_tokens), 0),
                    func.coalesce(func.sum(table.c.completion_tokens), 0),
                    func.coalesce(calls, 0),
                ).group_by(table.c.squad)
                for squad, cost, prompt, completion, count in conn.execute(query).all():
                    totals[str(squad)] = totals.get(str(squad), _NONE) + SpendTotals(
                        float(cost), int(prompt), int(completion), int(count)
                    )
        return totals

    def spend_since(self, since: datetime) -> list[SpendRecord]:
        """Every model call at or after ``since``, oldest first (the dashboard's charts)."""
        if since.utcoffset() is None:
            raise ValueError(f"naive since {since!r}; pass a timezone-aware datetime")
        query = select(LEDGER).where(LEDGER.c.at >= since).order_by(LEDGER.c.at, LEDGER.c.id)
        with transaction(self._engine, "list recent model calls") as conn:
            return [SpendRecord(**row._mapping) for row in conn.execute(query).all()]

    def calls_of_run(self, run_id: str, *, limit: int = 1000) -> list[SpendRecord]:
        """One run's model calls in the ledger, oldest first (at most ``limit``)."""
        query = (
            select(LEDGER)
            .where(LEDGER.c.run_id == run_id)
            .order_by(LEDGER.c.at, LEDGER.c.id)
            .limit(limit)
        )
        with transaction(self._engine, f"list the model calls of run {run_id!r}") as conn:
            return [SpendRecord(**row._mapping) for row in conn.execute(query).all()]

    def _totals(
        self, where: ColumnElement[bool], days: ColumnElement[bool] | None, action: str
    ) -> SpendTotals:
        query = select(
            func.coalesce(func.sum(LEDGER.c.cost_usd), 0.0),
            func.coalesce(func.sum(LEDGER.c.prompt_tokens), 0),
            func.coalesce(func.sum(LEDGER.c.completion_tokens), 0),
            func.count(),
        ).where(where)
        with transaction(self._engine, action) as conn:
            cost, prompt, completion, calls = conn.execute(query).one()
            total = SpendTotals(float(cost), int(prompt), int(completion), int(calls))
            if days is not None:
                rolled = select(
                    func.coalesce(func.sum(DAYS.c.cost_usd), 0.0),
                    func.coalesce(func.sum(DAYS.c.prompt_tokens), 0),
                    func.coalesce(func.sum(DAYS.c.completion_tokens), 0),
                    func.coalesce(func.sum(DAYS.c.calls), 0),
                ).where(days)
                cost, prompt, completion, calls = conn.execute(rolled).one()
                total += SpendTotals(float(cost), int(prompt), int(completion), int(calls))
        return total


_NONE = SpendTotals(0.0, 0, 0, 0)


# helpers


def _next_position() -> ScalarSelect[Any]:
    """A new task's place in its run: the highest so far plus one."""
    return (
        select(func.coalesce(func.max(TASKS.c.position), 0) + 1)
        .where(TASKS.c.run_id == bindparam("run_id"))
        .scalar_subquery()
    )


def _task_upsert(insert_of: Callable[[Table], Any]) -> Any:
    """:meth:`RunStateStore.set_task` as one prepared ``INSERT ... ON CONFLICT ... RETURNING``.

    Built once per dialect, so a task change costs one statement and no SQL construction.
    """
    now = bindparam("now", type_=UTCDateTime())
    statement = insert_of(TASKS).values(
        run_id=bindparam("run_id"),
        task_id=bindparam("task_id"),
        position=_next_position(),
        squad=bindparam("squad"),
        agent=bindparam("agent"),
        status=bindparam("status"),
        attempts=bindparam("first_attempts"),
        rounds=bindparam("first_rounds"),
        error=bindparam("error"),
        output=bindparam("first_output"),
        started_at=bindparam("first_started_at", type_=UTCDateTime()),
        ended_at=bindparam("first_ended_at", type_=UTCDateTime()),
        updated_at=now,
    )
    keep = {name: bindparam(f"new_{name}", type_=TASKS.c[name].type) for name in _KEPT}
    return statement.on_conflict_do_update(
        index_elements=[TASKS.c.run_id, TASKS.c.task_id],
        set_={
            "squad": statement.excluded.squad,
            "agent": statement.excluded.agent,
            "status": statement.excluded.status,
            "error": statement.excluded.error,
            "updated_at": statement.excluded.updated_at,
            "started_at": case(
                (bindparam("running", type_=Boolean()), func.coalesce(TASKS.c.started_at, now)),
                else_=TASKS.c.started_at,
            ),
            "ended_at": case(
                (bindparam("finished", type_=Boolean()), func.coalesce(TASKS.c.ended_at, now)),
                else_=null(),
            ),
            **{name: func.coalesce(keep[name], TASKS.c[name]) for name in _KEPT},
        },
    ).returning(*TASKS.c)


_INSERT_SPEND = insert(LEDGER).returning(LEDGER.c.id)
"""Prepared once: a model call's ledger row builds no SQL."""
_KEPT = ("output", "attempts", "rounds")
"""Columns a ``set_task`` leaves alone when given None."""
_TASK_UPSERTS = {
    "sqlite": _task_upsert(sqlite.insert),
    "postgresql": _task_upsert(postgresql.insert),
}


def _task_key(run_id: str, task_id: str) -> ColumnElement[bool]:
    return and_(TASKS.c.run_id == run_id, TASKS.c.task_id == task_id)


def _task_record(row: Row[Any]) -> TaskRecord:
    return TaskRecord(
        run_id=row.run_id,
        task_id=row.task_id,
        squad=row.squad,
        agent=row.agent,
        status=TaskStatus(row.status),
        attempts=row.attempts,
        rounds=row.rounds,
        error=row.error,
        output=row.output,
        started_at=row.started_at,
        ended_at=row.ended_at,
        updated_at=row.updated_at,
    )
