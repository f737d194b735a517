"""The cluster's queue: procrastinate on the store's PostgreSQL, in a schema of its own.

This is the one module that knows procrastinate's API. Its tables live in the schema
``cluster.schema_name`` (default ``procrastinate``), never beside squad's own tables, so the
store's migrations never see them. Jobs:

``squad.run``      one run (new, resumed or answered), queue ``runs``, lock ``squad:<name>``:
                   one run of a squad at a time across the cluster, the others wait in order;
                   a fire of a schedule is deferred with procrastinate's periodic dedup (one
                   job per squad and fire time, whichever daemon defers it first).
``squad.extract``  one extraction pass, queue ``memory``, lock and queueing lock
                   ``extract:<squad>/<agent>``: one pass per agent at a time, one waiting.
``squad.maintain`` consolidation, retention or the extraction sweep at its cron time, queue
                   ``memory``, deduplicated like a fire.
``squad.prune``    procrastinate's finished jobs older than a week deleted, hourly (also what
                   keeps the worker watching its side tasks, see :mod:`squad.cluster.node`).

Job functions are thin: each hands its job to the node's handler (``additional_context``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from squad.jobqueue.payloads import ExtractOutcome, RunJobArgs, RunOutcome
from squad.jobqueue.schema import (
    conninfo,
    require_procrastinate,
)

if TYPE_CHECKING:
    from squad.jobqueue.reports import JobReport
    from squad.settings import Settings

__all__ = [
    "EXTRACT_TASK",
    "MAINTAIN_TASK",
    "MEMORY_QUEUE",
    "RUNS_QUEUE",
    "RUN_TASK",
    "ClusterQueue",
    "GaveUp",
    "HandedOver",
    "JobHandler",
    "JobInfo",
]

RUN_TASK = "squad.run"
EXTRACT_TASK = "squad.extract"
MAINTAIN_TASK = "squad.maintain"
PRUNE_TASK = "squad.prune"
RUNS_QUEUE = "runs"
MEMORY_QUEUE = "memory"
KEEP_FINISHED_HOURS = 24 * 7


class HandedOver(Exception):
    """A run stopped at a checkpoint because its node is stopping: the job goes back to the
    queue (procrastinate's retry) and another node resumes it."""


class GaveUp(Exception):
    """A run job was handed over more than ``cluster.max_attempts`` times: its run is marked
    failed and the job ends ``failed`` with it (never retried)."""


class JobHandler(Protocol):
    """What a node does with the jobs its worker takes (sync: they run on threads)."""

    def run_job(self, job: JobInfo, args: RunJobArgs) -> RunOutcome: ...

    def extract_job(self, job: JobInfo, squad: str, agent: str) -> ExtractOutcome: ...

    def maintain_job(self, job: JobInfo, name: str) -> JobReport: ...


def _redacted_args(args: RunJobArgs) -> RunJobArgs:
    from squad.text.secrets import redact

    safe = args.copy()
    if "goal" in safe:
        safe["goal"] = redact(safe["goal"])[0]
    if "decision" in safe and len(safe["decision"]) == 3:
        task, approved, reason = safe["decision"]
        safe["decision"] = [task, approved, redact(str(reason))[0]]
    return safe


@dataclass(frozen=True)
class JobInfo:
    """A job as squad sees it (procrastinate's ``Job`` stays in this module)."""

    id: int
    task: str
    queue: str
    status: str
    attempts: int
    lock: str | None
    args: dict[str, Any]
    worker_id: int | None
    scheduled_at: str | None = None

    @classmethod
    def of(cls, job: Any) -> JobInfo:
        scheduled = getattr(job, "scheduled_at", None)
        return cls(
            id=int(job.id),
            task=str(job.task_name),
            queue=str(job.queue),
            status=str(getattr(job.status, "value", job.status)),
            attempts=int(job.attempts),
            lock=job.lock,
            args=dict(job.task_kwargs),
            worker_id=getattr(job, "worker_id", None),
            scheduled_at=None if scheduled is None else scheduled.isoformat(),
        )


def _handler(context: Any) -> JobHandler:
    handler: JobHandler = context.additional_context["squad"]
    return handler


class ClusterQueue:
    """procrastinate's App with squad's tasks, on one event loop (see :class:`LoopThread`)."""

    def __init__(self, settings: Settings, *, pool_size: int = 4) -> None:
        procrastinate = require_procrastinate()
        self.settings = settings
        cluster = settings.cluster
        connector = procrastinate.PsycopgConnector(
            conninfo=conninfo(settings.database_url),
            kwargs={"options": f"-c search_path={cluster.schema_name}"},
            min_size=1,
            max_size=max(2, pool_size),
        )
        self.app: Any = procrastinate.App(connector=connector)
        """procrastinate's App (typed loosely: its decorators are untyped)."""
        self.app.job_manager = _owned_jobs(connector)
        self._register(procrastinate)

    def _register(self, procrastinate: Any) -> None:
        app = self.app
        # Unbounded here: the node's handler counts a run job's hand-overs against
        # ``cluster.max_attempts`` and fails the run and the job together (GaveUp). Waiting
        # for a squad's run lock is no hand-over and costs no attempt (:meth:`reschedule`).
        retry = procrastinate.RetryStrategy(wait=1, retry_exceptions={HandedOver})

        def run(context: Any, **args: Any) -> RunOutcome:
            return _handler(context).run_job(JobInfo.of(context.job), cast(RunJobArgs, args))

        def extract(context: Any, squad: str, agent: str) -> ExtractOutcome:
            return _handler(context).extract_job(JobInfo.of(context.job), squad, agent)

        def maintain(context: Any, name: str, timestamp: int) -> JobReport:
            return _handler(context).maintain_job(JobInfo.of(context.job), name)

        async def prune(context: Any, timestamp: int) -> None:
            await context.app.job_manager.delete_old_jobs(
                nb_hours=KEEP_FINISHED_HOURS, include_failed=True, include_cancelled=True
            )

        app.task(name=RUN_TASK, queue=RUNS_QUEUE, pass_context=True, retry=retry)(run)
        app.task(name=EXTRACT_TASK, queue=MEMORY_QUEUE, pass_context=True)(extract)
        app.task(name=MAINTAIN_TASK, queue=MEMORY_QUEUE, pass_context=True)(maintain)
        pruning = app.task(name=PRUNE_TASK, queue=MEMORY_QUEUE, pass_context=True)(prune)
        app.periodic(cron="7 * * * *", periodic_id="prune")(pruning)

    # -- on the loop ---------------------------------------------------------------------

    async def open(self) -> None:
        await self.app.open_async()

    async def close(self) -> None:
        await self.app.close_async()

    def worker(self, *, name: str, concurrency: int, handler: JobHandler) -> Any:
        """A procrastinate worker for this node, not started (``await worker.run()``)."""
        from procrastinate.worker import Worker

        cluster = self.settings.cluster
        return Worker(
            self.app,
            name=name,
            concurrency=concurrency,
            fetch_job_polling_interval=cluster.poll_s,
            abort_job_polling_interval=max(cluster.poll_s, 5.0),
            # Running runs are asked to stop at their next checkpoint instead: a sync job
            # cannot be cancelled, and an abort would mark it ended while it still runs.
            shutdown_graceful_timeout=None,
            install_signal_handlers=False,
            update_heartbeat_interval=cluster.heartbeat_s,
            stalled_worker_timeout=cluster.stall_timeout_s,
            additional_context={"squad": handler},
        )

    async def defer_run(
        self, args: RunJobArgs, *, fire: tuple[str, int] | None = None
    ) -> int | None:
        """Queue a run job; with ``fire`` = (periodic id, fire time), only if no node queued
        that fire already (None then). The run holds its squad's lock. The arguments are
        stored in the queue's table: a goal or an approval's reason goes in with its
        credentials redacted, as the run's own row keeps them."""
        args = _redacted_args(args)
        squad = args["squad"]
        deferrer = self.app.configure_task(RUN_TASK, lock=f"squad:{squad}", queue=RUNS_QUEUE)
        if fire is None:
            job_id: int = await deferrer.defer_async(**args)
            return job_id
        periodic_id, timestamp = fire
        job = deferrer.make_new_job(**{**args, "timestamp": timestamp})
        found: int | None = await self.app.job_manager.defer_periodic_job(
            job, periodic_id=periodic_id, defer_timestamp=timestamp
        )
        return found

    async def defer_extraction(self, squad: str, agent: str) -> int | None:
        """Queue an extraction pass of one agent; None when one is already waiting."""
        from procrastinate.exceptions import AlreadyEnqueued

        key = f"extract:{squad}/{agent}"
        deferrer = self.app.configure_task(
            EXTRACT_TASK, lock=key, queueing_lock=key, queue=MEMORY_QUEUE
        )
        try:
            job_id: int = await deferrer.defer_async(squad=squad, agent=agent)
        except AlreadyEnqueued:
            return None
        return job_id

    async def defer_maintenance(self, name: str, timestamp: int) -> int | None:
        """Queue a maintenance job for its cron time, once across the cluster."""
        deferrer = self.app.configure_task(
            MAINTAIN_TASK, lock=f"maintain:{name}", queue=MEMORY_QUEUE
        )
        job = deferrer.make_new_job(name=name, timestamp=timestamp)
        found: int | None = await self.app.job_manager.defer_periodic_job(
            job, periodic_id=f"maintain:{name}", defer_timestamp=timestamp
        )
        return found

    async def waiting_run(self, squad: str) -> bool:
        """Whether a new run of ``squad`` waits in the queue (to coalesce another into it)."""
        jobs = await self.app.job_manager.list_jobs_async(
            task=RUN_TASK, lock=f"squad:{squad}", status="todo"
        )
        return any(not job.task_kwargs.get("run_id") for job in jobs)

    async def beat(self, worker_id: int) -> None:
        """Move procrastinate's heartbeat of ``worker_id`` (the node's own beat keeps it
        fresh while the worker itself restarts or waits for its runs to stop)."""
        await self.app.job_manager.update_heartbeat(worker_id)

    async def stalled(self) -> list[JobInfo]:
        """Jobs marked running whose worker has not beaten for ``cluster.stall_timeout_s``."""
        found = await self.app.job_manager.get_stalled_jobs(
            seconds_since_heartbeat=self.settings.cluster.stall_timeout_s
        )
        return [JobInfo.of(job) for job in found]

    async def requeue(self, job_id: int) -> bool:
        """Put a running job back in the queue (a lost node's); False if it already moved."""
        from procrastinate import exceptions

        try:
            await self.app.job_manager.retry_job_by_id_async(job_id, retry_at=_now())
        except exceptions.ProcrastinateException:
            return False
        return True

    async def reschedule(self, job: JobInfo, delay_s: float) -> bool:
        """Put a running job back in the queue for ``delay_s`` seconds without counting an
        attempt (it waits for a lock another process holds: no failure of its own). Only
        while this attempt still has the job; the worker's own end of the job is then a
        no-op (:func:`_owned_jobs`). False if the job had moved on already."""
        from datetime import timedelta

        connector = self.app.connector
        async with connector.pool.connection() as connection:
            cursor = await connection.execute(
                _RESCHEDULE,
                {
                    "id": job.id,
                    "worker_id": job.worker_id,
                    "attempts": job.attempts,
                    "at": _now() + timedelta(seconds=delay_s),
                },
            )
            return bool(cursor.rowcount)

    async def job_states(self, job_ids: list[int]) -> dict[int, tuple[str, dict[str, Any]]]:
        """Status and arguments of each of these jobs the queue still has."""
        if not job_ids:
            return {}
        connector = self.app.connector
        async with connector.pool.connection() as connection:
            cursor = await connection.execute(
                "SELECT id, status, args FROM procrastinate_jobs WHERE id = ANY(%(ids)s)",
                {"ids": job_ids},
            )
            rows = await cursor.fetchall()
        return {int(job_id): (str(status), dict(args)) for job_id, status, args in rows}

    async def defer_recovery(self, args: RunJobArgs) -> int | None:
        """Queue the resume of a run whose job ended before it did; None when one is already
        waiting (two nodes recovering it at once)."""
        from procrastinate.exceptions import AlreadyEnqueued

        squad, run_id = args["squad"], args["run_id"]
        deferrer = self.app.configure_task(
            RUN_TASK, lock=f"squad:{squad}", queueing_lock=f"recover:{run_id}", queue=RUNS_QUEUE
        )
        try:
            job_id: int = await deferrer.defer_async(**args)
        except AlreadyEnqueued:
            return None
        return job_id

    async def cancel(self, job_id: int) -> None:
        """Delete a job still waiting in the queue."""
        await self.app.job_manager.cancel_job_by_id_async(job_id, delete_job=True)

    async def fail(self, job_id: int) -> None:
        from procrastinate import jobs

        await self.app.job_manager.finish_job_by_id_async(
            job_id, status=jobs.Status.FAILED, delete_job=False
        )

    async def jobs(self, status: str) -> list[JobInfo]:
        found = await self.app.job_manager.list_jobs_async(status=status)
        return [JobInfo.of(job) for job in found]

    async def depth(self) -> dict[str, int]:
        """Jobs waiting per queue."""
        rows = await self.app.job_manager.list_queues_async()
        return {str(row["name"]): int(row.get("todo", 0)) for row in rows}


_IF_STILL_OURS = """
WITH ours AS MATERIALIZED (
  SELECT 1 FROM procrastinate_jobs
   WHERE id = %(id)s AND status = 'doing' AND worker_id = %(worker_id)s
     AND attempts = %(attempts)s
     FOR UPDATE
)
SELECT ({end}) FROM ours
"""
"""A worker's end of a job (``{end}``, procrastinate's call), written only if its attempt
still has the job: not put back by a sweep (a new attempt), taken by another worker,
rescheduled or ended meanwhile. One statement, so one round trip and one transaction: the
row is locked (its conditions checked again on the newest version, as ``FOR UPDATE`` does)
before the end is written, and the outer ``SELECT`` returns no row when it is not ours."""
_RESCHEDULE = """
UPDATE procrastinate_jobs SET status = 'todo', scheduled_at = %(at)s
 WHERE id = %(id)s AND status = 'doing' AND worker_id = %(worker_id)s AND attempts = %(attempts)s
"""


def _owned_jobs(connector: Any) -> Any:
    """procrastinate's JobManager, except that a worker ends (finishes or retries) a job only
    if its attempt still has the job (:data:`_STILL_OURS`, checked in the same transaction).

    A node frozen past the stall timeout finds, when it wakes, that its job went back to
    the queue and is another node's now (waiting, or running there): its end of that job
    would mark the other node's job succeeded or failed, or fail itself on procrastinate's
    status check (``procrastinate_finish_job`` raising in the worker). It is skipped."""
    import logging

    from procrastinate import manager, sql

    logger = logging.getLogger(__name__)

    class OwnedJobs(manager.JobManager):
        async def finish_job(self, job: Any, status: Any, delete_job: bool) -> None:
            params = {"job_id": job.id, "status": status.value, "delete_job": delete_job}
            await self._if_ours(job, sql.queries["finish_job"], params)

        async def retry_job(
            self,
            job: Any,
            retry_at: Any = None,
            priority: int | None = None,
            queue: str | None = None,
            lock: str | None = None,
        ) -> None:
            params = {
                "job_id": job.id,
                "retry_at": retry_at or _now(),
                "new_priority": priority,
                "new_queue_name": queue,
                "new_lock": lock,
            }
            await self._if_ours(job, sql.queries["retry_job"], params)

        async def _if_ours(self, job: Any, query: str, params: dict[str, Any]) -> bool:
            mine = {"id": job.id, "worker_id": job.worker_id, "attempts": job.attempts}
            end = query.strip().removeprefix("SELECT").strip().removesuffix(";")
            pool = self.connector.pool  # type: ignore[attr-defined]
            async with pool.connection() as connection:
                cursor = await connection.execute(
                    _IF_STILL_OURS.format(end=end), {**params, **mine}
                )
                if await cursor.fetchone() is None:
                    logger.info("job %s moved on since this attempt; left as it is", job.id)
                    return False
            return True

    return OwnedJobs(connector=connector)


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)
