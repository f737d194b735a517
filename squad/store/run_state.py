"""Each run's claim and its tasks' states; reached as ``store.run_state``.

``run_tasks`` holds one row per (run, task), deleted with its run (ON DELETE CASCADE). It is
the runtime's record of progress, the one ``tasks/<task-id>/status.json`` mirrors, and what
resuming a run reads to skip finished tasks.

A run claimed by a cluster node carries a fencing epoch (``runs.epoch``):
:meth:`RunStateStore.claim` raises it, and a write given the epoch of its claim
(``set_task(..., epoch=)``, ``Store.update_run(..., epoch=)``,
:meth:`RunStateStore.check_fence`) is refused by the database, in the write's own
transaction, once a newer claim exists (:class:`~squad.errors.RunFenced`).

What the runs' model calls cost is :mod:`squad.store.spend` (``store.spend``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    ScalarSelect,
    Table,
    and_,
    bindparam,
    case,
    func,
    literal,
    null,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from squad.clock import Clock
from squad.errors import RunFenced, StoreError
from squad.store.engine import reading, transaction
from squad.store.records import TaskRecord, TaskStatus, enum_value
from squad.store.row_records import task_record
from squad.store.sqlite_writes import PlainStatement
from squad.store.tables import UTCDateTime, metadata
from squad.store.upsert import upsert

__all__ = ["RunStateStore"]

TASKS: Table = metadata.tables["run_tasks"]
RUNS: Table = metadata.tables["runs"]


class RunStateStore:
    """Runs' claims and their tasks' states; get one as ``Store.run_state``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock, plain: bool = False) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC);
        ``plain``: set tasks and check claims in plain ``sqlite3`` on the transaction's own
        connection (:mod:`.sqlite_writes`), for a SQLite file."""
        self._engine = engine
        self._now = now
        self._plain = plain

    # claims of runs (fencing)

    def claim(self, run_id: str, owner: str, *, job: str | None = None) -> int:
        """Node ``owner`` takes run ``run_id`` (for cluster job ``job``, which the run names
        from now on): its epoch goes up by one, in one statement, and the new epoch is the
        token the node's writes to the run carry from now on."""
        action = f"claim run {run_id!r} for node {owner!r}"
        values: dict[str, Any] = {"epoch": RUNS.c.epoch + 1, "owner": owner}
        if job is not None:
            values["job"] = job
        with transaction(self._engine, action) as conn:
            changed = conn.execute(update(RUNS).where(RUNS.c.id == run_id).values(values)).rowcount
            if not changed:
                raise StoreError(f"cannot {action}: no run with id {run_id!r}")
            return int(conn.execute(select(RUNS.c.epoch).where(RUNS.c.id == run_id)).scalar_one())

    def rebind_job(self, run_id: str, old: str, new: str) -> bool:
        """The run's cluster job is ``new`` now, if it was still ``old`` (one statement, so
        of two nodes recovering one run only one rebinds it)."""
        with transaction(self._engine, f"rebind run {run_id!r} to job {new!r}") as conn:
            statement = update(RUNS).where(RUNS.c.id == run_id, RUNS.c.job == old)
            return bool(conn.execute(statement.values(job=new)).rowcount)

    def check_fence(self, run_id: str, epoch: int | None) -> None:
        """RunFenced unless ``epoch`` is still the run's (None: no claim to check). Inside a
        store batch it is part of the batch's transaction, and holds the run's row until it
        commits, so no claim lands between the check and the batch's writes."""
        if epoch is None:
            return
        with transaction(self._engine, f"check the claim of run {run_id!r}") as conn:
            fence(conn, run_id, epoch, plain=self._plain)

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
        epoch: int | None = None,
    ) -> TaskRecord:
        """Create or update a task's state in a run (one atomic upsert).

        With ``epoch`` (the writer's claim of the run) the write is refused, RunFenced,
        when the run has been claimed again since: checked in the same transaction.

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
                if epoch is not None:
                    fence(conn, run_id, epoch, plain=self._plain)
                params = {
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
                }
                found = _TASK_UPSERT_PLAIN.rows(conn, params) if self._plain else None
                if found is not None:
                    return task_record(found[0])
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
                return task_record(conn.execute(statement, params).one())
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
        return task_record(conn.execute(select(TASKS).where(key)).one())

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
        with reading(self._engine, f"read the tasks of run {run_id!r}") as conn:
            return [task_record(row) for row in conn.execute(query)]

    def get_task(self, run_id: str, task_id: str) -> TaskRecord | None:
        query = select(TASKS).where(_task_key(run_id, task_id))
        with reading(self._engine, f"read task {task_id!r} of run {run_id!r}") as conn:
            row = conn.execute(query).first()
        return None if row is None else task_record(row)


# helpers


def fence(conn: Connection, run_id: str, epoch: int, *, plain: bool = False) -> None:
    """RunFenced unless run ``run_id`` is still at ``epoch``; on Postgres the run's row is
    share-locked until the transaction ends, so a claim waits for the writes it fences
    (``plain``: read in plain ``sqlite3`` if it can, :mod:`.sqlite_writes`)."""
    rows = _FENCE_PLAIN.rows(conn, {"run_id": run_id}) if plain else None
    if rows is not None:
        found = rows[0].epoch if rows else None
    else:
        found = conn.execute(_FENCE, {"run_id": run_id}).scalar()
    if found is None:
        raise StoreError(f"no run with id {run_id!r} in the state database")
    if int(found) != epoch:
        raise RunFenced(
            f"run {run_id!r} was claimed again (epoch {found}) after this node's claim "
            f"(epoch {epoch}): another node has taken it over; this write is refused",
            run_id=run_id,
            epoch=epoch,
        )


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


_KEPT = ("output", "attempts", "rounds")
"""Columns a ``set_task`` leaves alone when given None."""
_TASK_UPSERTS = {
    "sqlite": _task_upsert(sqlite.insert),
    "postgresql": _task_upsert(postgresql.insert),
}
_TASK_UPSERT_PLAIN = PlainStatement(_TASK_UPSERTS["sqlite"], TASKS)
_FENCE = select(RUNS.c.epoch).where(RUNS.c.id == bindparam("run_id")).with_for_update(read=True)
_FENCE_PLAIN = PlainStatement(_FENCE, RUNS)


def _task_key(run_id: str, task_id: str) -> ColumnElement[bool]:
    return and_(TASKS.c.run_id == run_id, TASKS.c.task_id == task_id)
