"""What a node does with the jobs its worker takes: runs, extraction passes, maintenance.

A run job is idempotent across attempts, which is what makes losing a node safe:

* its first attempt creates the run record, naming the job (``runs.job``);
* a later attempt (the job requeued after its node was lost, or handed over by a node that
  stopped) finds that record and resumes the run from its last checkpoint, so finished tasks
  are neither redone nor their model calls repeated; a run that never reached its first
  checkpoint starts over on the same record; a run that already ended is left as it is.

A node that is stopping asks its runs to stop at their next checkpoint; each such run raises
:class:`~squad.jobqueue.queue.HandedOver`, and procrastinate puts its job back in the queue.
A node whose heartbeat has failed for most of the stall timeout does the same (it fences
itself), so that by the time the others take it for lost it starts no step of its own.

That is the node's own courtesy; the guarantee is the database's. Every attempt that drives
a run *claims* it once it holds the squad's run lock (``runs.epoch`` goes up, ``runs.owner``
and ``runs.job`` name the node and the job), and every write of the run's state the attempt
makes (its status and end, its task rows, its checkpoints) carries that epoch and is
refused once a newer claim exists (:class:`~squad.errors.RunFenced`). A node that finds the
lock held by the run's owner, silent for :data:`FENCE_AFTER_STALLS` stall timeouts (frozen
by SIGSTOP, a GC pause, a frozen VM; cut off), claims the run without the lock: the owner,
when it wakes, finds its first write refused, stops the run where it is, marks nothing,
lets the lock go and leaves the job, which is another node's now, alone. An owner that was
only slow beats again before that and finishes its run; the job then finds it ended.

A job that finds its squad's run lock held by another process (a node frozen with it, a
local ``squad run``) waits for it without using up an attempt: it goes back to the queue
for :func:`wait_s` seconds (:meth:`~squad.jobqueue.queue.ClusterQueue.reschedule`), as many
times as it takes; only hand-overs (a node stopped or lost, the database gone) count
against ``cluster.max_attempts``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from squad.daemon.runs import SCHEDULED, run_end_fields, waiting_approval
from squad.errors import NotFound, RunFenced, SquadBusy, SquadError, StoreError
from squad.jobqueue.payloads import ExtractOutcome, NodeRunState, RunJobArgs, RunOutcome
from squad.jobqueue.queue import GaveUp, HandedOver, JobInfo

if TYPE_CHECKING:
    from pathlib import Path

    from squad.app import App
    from squad.jobqueue.reports import JobReport
    from squad.runtime.run_result import RunResult
    from squad.runtime.runner import SquadRunner
    from squad.spec.models import SquadSpec
    from squad.store.records import RunRecord

__all__ = ["NodeWork"]

Emit = Callable[..., object]
BUSY_RETRY_S = 2.0
"""How long a run job waits before going back to the queue when the database is unreachable."""
LOCK_WAIT_MAX_S = 10.0
FENCE_AFTER_STALLS = 2.0
"""A node that finds its run's lock held by the run's owner claims the run (fencing the owner
off it) once the owner has not beaten for this many stall timeouts: a node that was only
slow (a load spike) beats again well before that and keeps its run."""


def wait_s(stall_timeout_s: float) -> float:
    """How long a run job whose squad's run lock is held elsewhere waits before it tries
    again: half the stall timeout (a frozen holder is noticed on that scale), 1 s to 10 s."""
    return min(LOCK_WAIT_MAX_S, max(1.0, stall_timeout_s / 2))


@dataclass
class _Active:
    job: JobInfo
    squad: str
    since: datetime
    runner: SquadRunner
    run_id: str | None = None
    found_ended: bool = False
    """The run had ended already (under an earlier attempt) when this one looked."""


class NodeWork:
    """The node's :class:`~squad.jobqueue.queue.JobHandler`; thread-safe (jobs run on threads)."""

    def __init__(
        self,
        app: App,
        emit: Emit,
        *,
        auto_approve: bool = False,
        on_change: Callable[[], None],
        owner: str | None = None,
    ) -> None:
        from squad.cluster.node import node_name

        self.owner = owner or node_name(app)
        """The node's name: what its claims of runs record (``runs.owner``)."""
        self._app = app
        self._emit = emit
        self._auto_approve = auto_approve
        self._on_change = on_change
        self._lock = threading.Lock()
        self._active: dict[int, _Active] = {}
        self._stopping = threading.Event()
        self._fenced = threading.Event()
        self.failures = 0
        self.ended = 0

    # -- the node's view -------------------------------------------------------------------

    def running(self) -> list[NodeRunState]:
        """The runs this node works on now: job, squad, run id, since."""
        with self._lock:
            active = list(self._active.values())
        return [
            {
                "job": a.job.id,
                "squad": a.squad,
                "run_id": a.run_id,
                "attempt": a.job.attempts + 1,
                "since": a.since.isoformat(),
            }
            for a in active
        ]

    def running_jobs(self) -> list[int]:
        with self._lock:
            return sorted(self._active)

    def stop_all(self) -> None:
        """Take no new run; every running one stops at its next checkpoint and is handed over."""
        self._stopping.set()
        with self._lock:
            for active in self._active.values():
                active.runner.stop.set()

    def fence(self) -> None:
        """The node cannot prove it is alive (its heartbeat fails): before the cluster takes
        it for lost and resumes its runs elsewhere, they stop at their next checkpoint, and
        it takes no new run until :meth:`unfence`."""
        self._fenced.set()
        with self._lock:
            for active in self._active.values():
                active.runner.stop.set()

    def unfence(self) -> None:
        self._fenced.clear()

    def idle(self) -> bool:
        with self._lock:
            return not self._active

    # -- jobs --------------------------------------------------------------------------------

    def run_job(self, job: JobInfo, args: RunJobArgs) -> RunOutcome:
        if self._stopping.is_set():
            raise HandedOver("the node is stopping")
        if self._fenced.is_set():
            raise HandedOver("the node cannot reach the cluster's database to beat")
        squad = args["squad"]
        self._emit(
            "run_start",
            squad=squad,
            trigger=args.get("trigger"),
            run_id=args.get("run_id"),
            job=job.id,
            attempt=job.attempts + 1,
        )
        max_attempts = self._app.settings.cluster.max_attempts
        if job.attempts >= max_attempts:
            self._give_up(job, args, squad, f"its job was handed over {job.attempts} times")
        try:
            spec, workspace = self._app.squads.registered(squad)
        except NotFound as exc:
            self._emit("run_dropped", squad=squad, job=job.id, reason=str(exc))
            return {"dropped": str(exc)}
        trigger = str(args.get("trigger") or "schedule")
        if args.get("run_id") is None and trigger in SCHEDULED:
            waiting = waiting_approval(self._app.store, squad)
            if waiting is not None and self._app.store.run_of_job(str(job.id)) is None:
                # A gated squad on a schedule keeps one run waiting, not one per tick.
                self._emit(
                    "fire_skipped_waiting_approval",
                    squad=squad,
                    trigger=trigger,
                    waiting=waiting,
                    job=job.id,
                )
                return {"skipped": waiting}
        runner = self._app.runner()
        runner.owner, runner.job = self.owner, str(job.id)
        active = _Active(job, squad, datetime.now(UTC), runner)
        with self._lock:
            self._active[job.id] = active
        self._on_change()
        try:
            result = self._drive(runner, job, args, spec, workspace, active)
        except SquadBusy as exc:  # another process holds the squad (frozen, or a `squad run`)
            return self._wait_for_lock(job, squad, exc, active.run_id)
        except RunFenced as exc:  # another node claimed the run since: it is theirs
            self._emit("run_fenced", squad=squad, job=job.id, run_id=exc.run_id, epoch=exc.epoch)
            return {"fenced": exc.run_id, "epoch": exc.epoch}
        except StoreError as exc:  # the database went away mid-run (a restart): later
            self._emit("run_handed_over", squad=squad, job=job.id, error=str(exc))
            time.sleep(BUSY_RETRY_S)
            raise HandedOver(str(exc)) from None
        except SquadError as exc:
            self._count(failed=True)
            self._emit("run_error", squad=squad, job=job.id, error=str(exc))
            return {"error": str(exc)}
        except Exception as exc:
            if not _transient(exc):
                raise
            self._emit("run_handed_over", squad=squad, job=job.id, error=f"{exc}")
            time.sleep(BUSY_RETRY_S)
            raise HandedOver(str(exc)) from None
        finally:
            with self._lock:
                self._active.pop(job.id, None)
            self._on_change()
        if result.status == "interrupted":  # stopped at a checkpoint: another node goes on
            self._emit("run_handed_over", squad=squad, run_id=result.run_id, job=job.id)
            raise HandedOver(f"run {result.run_id} stopped at a checkpoint; its node is stopping")
        if active.found_ended:  # it ended under another attempt (its holder was only slow)
            self._emit("run_found_ended", squad=squad, job=job.id, run_id=result.run_id)
            return {"run_id": result.run_id, "status": result.status}
        self._count(failed=result.status in ("failed", "stopped"))
        self._emit("run_end", squad=squad, job=job.id, **run_end_fields(result))
        return {"run_id": result.run_id, "status": result.status}

    def _wait_for_lock(
        self, job: JobInfo, squad: str, busy: SquadBusy, run_id: str | None
    ) -> RunOutcome:
        """Back to the queue for a while, no attempt used: the holder ends, dies or (frozen,
        then woken) finds itself fenced, and the squad's run lock is free again."""
        fenced = self._fence_if_lost(job, run_id, busy)
        delay = wait_s(self._app.settings.cluster.stall_timeout_s)
        client = self._app.cluster
        try:
            moved = not client.call(client.open().reschedule(job, delay))
        except StoreError as exc:  # the database is away: a hand-over, counted
            self._emit("run_handed_over", squad=squad, job=job.id, error=str(exc))
            time.sleep(BUSY_RETRY_S)
            raise HandedOver(str(exc)) from None
        self._emit(
            "run_busy",
            squad=squad,
            job=job.id,
            holder=busy.run_id,
            fenced=fenced,
            reason=str(busy),
            retry_in_s=None if moved else delay,
        )
        return {"waiting": str(busy)}

    def _fence_if_lost(self, job: JobInfo, run_id: str | None, busy: SquadBusy) -> str | None:
        """When the lock's holder is this very run's owner and that node has been silent for
        :data:`FENCE_AFTER_STALLS` stall timeouts (frozen, cut off), claim the run: the
        database refuses the owner's writes from now on, so it stops at its next one and
        lets the lock go. The owner's name, or None when it was left alone."""
        if run_id is None or busy.run_id != run_id:
            return None
        store = self._app.store
        record = store.get_run(run_id)
        if record is None or record.status.is_terminal or record.owner == self.owner:
            return None
        node = None if record.owner is None else store.cluster.get(record.owner)
        if node is not None and node.stopped_at is None:
            silent = (self._app.clock() - node.beat_at).total_seconds()
            if silent <= FENCE_AFTER_STALLS * self._app.settings.cluster.stall_timeout_s:
                return None
        store.run_state.claim(run_id, self.owner, job=str(job.id))
        return record.owner or "?"

    def _drive(
        self,
        runner: SquadRunner,
        job: JobInfo,
        args: RunJobArgs,
        spec: SquadSpec,
        workspace: Path,
        active: _Active,
    ) -> RunResult:
        store = self._app.store
        run_id = args.get("run_id")
        decision = args.get("decision")
        if run_id is not None:
            record = store.get_run(str(run_id))
            if record is None:
                raise NotFound(f"no run {run_id!r}")
            active.run_id = record.id
            if decision is not None and (job.attempts == 0 or _awaiting(record)):
                task, approved, reason = decision
                result = runner.approve(
                    record.id, str(task), approved=bool(approved), reason=str(reason)
                )
            else:
                result = self._continue(runner, record, workspace, active)
        else:
            existing = store.run_of_job(str(job.id))
            if existing is None:
                result = runner.run(
                    spec,
                    workspace,
                    trigger=str(args.get("trigger") or "schedule"),
                    goal=args.get("goal"),
                    job=str(job.id),
                )
            else:
                active.run_id = existing.id
                self._emit("run_resumed", squad=spec.name, run_id=existing.id, job=job.id)
                result = self._continue(runner, existing, workspace, active)
        active.run_id = result.run_id
        while self._auto_approve and result.awaiting and not runner.stop.is_set():
            self._emit("auto_approve", squad=spec.name, run_id=result.run_id, task=result.awaiting)
            result = runner.approve(result.run_id, result.awaiting, approved=True)
        return result

    def _continue(
        self, runner: SquadRunner, record: RunRecord, workspace: Path, active: _Active
    ) -> RunResult:
        """Resume a run from its checkpoint; one without any starts over; one that ended (or
        waits for a person) is reported as it is."""
        from squad.runtime.run_result import RunResult
        from squad.store.records import RunStatus

        if record.status.is_terminal or record.status is RunStatus.AWAITING_APPROVAL:
            active.found_ended = record.status.is_terminal
            summary = record.summary or {}
            return RunResult(
                record.id,
                record.squad,
                record.status.value,
                workspace,
                error=record.error,
                awaiting=summary.get("awaiting"),
                duration_s=record.duration_s(),
            )
        if runner.has_checkpoint(record.id):
            return runner.resume(record.id)
        return runner.start_over(record.id)

    def _give_up(self, job: JobInfo, args: RunJobArgs, squad: str, why: str) -> None:
        """The run fails (claimed first, so whoever held it writes no more) and so does its
        job: GaveUp is never retried."""
        from squad.store.records import RunStatus

        store = self._app.store
        run_id = args.get("run_id")
        record = store.get_run(str(run_id)) if run_id else store.run_of_job(str(job.id))
        if record is not None and not record.status.is_terminal:
            epoch = store.run_state.claim(record.id, self.owner, job=str(job.id))
            store.update_run(
                record.id, status=RunStatus.FAILED, error=f"gave up: {why}", epoch=epoch
            )
        self._count(failed=True)
        self._emit("run_error", squad=squad, job=job.id, error=f"gave up: {why}")
        raise GaveUp(why)

    def extract_job(self, job: JobInfo, squad: str, agent: str) -> ExtractOutcome:
        from squad.jobqueue.extraction import ClusterExtraction
        from squad.memory.agent import AgentContext

        try:
            spec, workspace = self._app.squads.registered(squad)
            ctx = AgentContext.of(spec, agent, workspace)
        except NotFound as exc:
            return {"skipped": str(exc)}
        extraction = self._app.extraction
        if not isinstance(extraction, ClusterExtraction):  # pragma: no cover - cluster only
            return {"skipped": "not a cluster node"}
        reports = extraction.run_pass(ctx)
        self._emit("extraction_pass", squad=squad, agent=agent, job=job.id, passes=len(reports))
        return {"passes": len(reports)}

    def maintain_job(self, job: JobInfo, name: str) -> JobReport:
        from squad.cluster.maintenance import maintain

        self._emit("job_start", job=name, queue_job=job.id)
        report = maintain(self._app, name)
        self._emit("job_end", job=name, queue_job=job.id, report=report)
        return report

    def _count(self, *, failed: bool) -> None:
        with self._lock:
            self.ended += 1
            if failed:
                self.failures += 1


def _transient(exc: BaseException) -> bool:
    """A database driver's error (a connection lost while Postgres restarts): the run's job
    goes back to the queue rather than failing."""
    return type(exc).__module__.split(".")[0] in ("psycopg", "psycopg_pool", "sqlalchemy")


def _awaiting(record: RunRecord) -> bool:
    from squad.store.records import RunStatus

    return record.status is RunStatus.AWAITING_APPROVAL
