"""One node of a cluster: a procrastinate worker, supervised, and the node's own heartbeat.

Liveness is the node's, not the worker's. procrastinate's worker beats from a side task that
stops while the worker shuts down (and dies with a dropped connection), and a worker that
waits for its runs to reach a checkpoint would then look lost, its runs retried elsewhere
while they still go on here. So the node beats on its own task, as long as the process
lives: it moves procrastinate's heartbeat of the current worker, writes the node's row in
``cluster_nodes`` (name, host, pid, what it runs), and sweeps the queue for jobs whose worker
stopped beating for ``cluster.stall_timeout_s``, putting them back in the queue
(:meth:`~squad.jobqueue.queue.ClusterQueue.requeue`), where another node resumes them from
their checkpoints.

The worker is restarted whenever it ends while the node is not stopping: procrastinate stops
a worker whose listener or heartbeat side task fails (Postgres restarted under it), after its
running jobs end, and a fresh worker listens again. Restarts back off while the database is
unreachable.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from squad.cluster.work import NodeWork
from squad.jobqueue.payloads import NodeState

if TYPE_CHECKING:
    from squad.app import App
    from squad.jobqueue.client import ClusterClient

__all__ = ["ClusterNode", "node_name"]


Emit = Callable[..., object]
RESTART_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0)
FENCE_SHARE = 0.6
"""A node whose heartbeat has failed for this share of ``cluster.stall_timeout_s`` fences
itself: its runs stop at their next checkpoint before another node may take them over."""


def should_fence(silent_s: float, stall_timeout_s: float) -> bool:
    """Whether a node that last beat ``silent_s`` ago must stop its runs."""
    return silent_s > FENCE_SHARE * stall_timeout_s


def node_name(app: App) -> str:
    """``cluster.node`` (or SQUAD_NODE), else host name and process id."""
    return app.settings.cluster.node or f"{socket.gethostname()}-{os.getpid()}"


class ClusterNode:
    """Start with :meth:`start`, end with :meth:`stop`; thread-safe."""

    def __init__(
        self,
        app: App,
        emit: Emit,
        *,
        role: str,
        concurrency: int,
        auto_approve: bool = False,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.app = app
        self.role = role
        self.concurrency = concurrency
        self.name = node_name(app)
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.started_at = datetime.now(UTC)
        self.work = NodeWork(
            app, emit, auto_approve=auto_approve, on_change=on_change, owner=self.name
        )
        self._emit = emit
        self._client: ClusterClient = app.cluster
        self._stopping = threading.Event()
        self._worker: Any = None
        self._supervisor: Future[Any] | None = None
        self._beats: Future[Any] | None = None
        self._beating = True
        self._last_beat = time.monotonic()
        self.fenced = False
        """Whether the node stopped its runs because it could not beat (see :data:`FENCE_SHARE`)."""
        self._restarts = 0
        self._orphans_checked = -float("inf")
        self.recovered = 0
        """Jobs this node put back in the queue after their node was lost."""

    # -- life --------------------------------------------------------------------------------

    def start(self) -> None:
        """Open the queue (its schema made once), start the worker and the heartbeat."""
        self._client.open()
        loop = self._client.loop
        self._beat_sync()
        self._supervisor = loop.spawn(self._supervise())
        self._beats = loop.spawn(self._beat_loop())
        self._emit("node_start", node=self.name, role=self.role, concurrency=self.concurrency)

    def stop(self, grace: float, *, force: threading.Event | None = None) -> list[int]:
        """Stop taking jobs, ask running runs to stop at their next checkpoint (their jobs go
        back to the queue), and wait up to ``grace`` seconds for them. Jobs still running
        then are put back in the queue at once, for another node; their ids are returned."""
        self._stopping.set()
        self.work.stop_all()
        loop = self._client.loop.loop
        worker = self._worker
        if worker is not None:
            loop.call_soon_threadsafe(worker.stop)
        left: list[int] = []
        deadline = time.monotonic() + grace
        supervisor = self._supervisor
        while supervisor is not None and not supervisor.done():
            if time.monotonic() >= deadline or (force is not None and force.is_set()):
                break
            self.work.stop_all()  # a run that was just starting cleared its flag
            try:
                supervisor.result(timeout=0.2)
            except FutureTimeout:
                continue
            except Exception:  # noqa: BLE001 - ended is ended
                break
        if supervisor is not None and not supervisor.done():
            left = self.work.running_jobs()
            for job_id in left:
                self._requeue(job_id)
            supervisor.cancel()
        if self._beats is not None:
            self._beats.cancel()
        try:
            self.app.store.cluster.mark_stopped(self.name, pid=self.pid)
        except Exception as exc:  # noqa: BLE001 - the node stops anyway
            self._emit("job_error", job="heartbeat", error=f"{type(exc).__name__}: {exc}")
        self._emit("node_stop", node=self.name, handed_back=left or None)
        return left

    def _requeue(self, job_id: int) -> None:
        queue = self._client.open()
        try:
            self._client.call(queue.requeue(job_id), timeout=10.0)
        except Exception as exc:  # noqa: BLE001 - the sweep of another node does it later
            self._emit("job_error", job="handover", queue_job=job_id, error=str(exc))

    # -- what it reports -----------------------------------------------------------------------

    @property
    def worker_id(self) -> int | None:
        worker = self._worker
        found = None if worker is None else worker.worker_id
        return None if found is None else int(found)

    def state(self) -> NodeState:
        return {
            "node": self.name,
            "role": self.role,
            "concurrency": self.concurrency,
            "worker_id": self.worker_id,
            "running": self.work.running(),
            "ended": self.work.ended,
            "failures": self.work.failures,
            "worker_restarts": self._restarts,
            "recovered": self.recovered,
            "fenced": self.fenced,
        }

    # -- on the loop ---------------------------------------------------------------------------

    async def _supervise(self) -> None:
        queue = self._client.open()
        attempt = 0
        while not self._stopping.is_set():
            worker = queue.worker(name=self.name, concurrency=self.concurrency, handler=self.work)
            self._worker = worker
            began = time.monotonic()
            error = None
            try:
                await worker.run()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - logged; the worker is restarted
                error = f"{type(exc).__name__}: {exc}"
            finally:
                self._worker = None
            if self._stopping.is_set():
                return
            attempt = 0 if time.monotonic() - began > 30 else attempt + 1
            delay = RESTART_BACKOFF_S[min(attempt, len(RESTART_BACKOFF_S) - 1)]
            self._restarts += 1
            self._emit("worker_restart", node=self.name, error=error, in_s=delay)
            await asyncio.sleep(delay)

    async def _beat_loop(self) -> None:
        interval = self.app.settings.cluster.heartbeat_s
        while True:
            await self._beat()
            await asyncio.sleep(interval)

    async def _beat(self) -> None:
        queue = self._client.open()
        try:
            worker_id = self.worker_id
            if worker_id is not None:
                await queue.beat(worker_id)
            await asyncio.to_thread(self._beat_sync)
            if not self._stopping.is_set():
                await self._sweep()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - logged once; the next beat tries again
            if self._beating:
                self._beating = False
                self._emit("heartbeat_failed", node=self.name, error=f"{type(exc).__name__}: {exc}")
            silent = time.monotonic() - self._last_beat
            if not self.fenced and should_fence(silent, self.app.settings.cluster.stall_timeout_s):
                self.fenced = True
                self.work.fence()
                self._emit("fenced", node=self.name, silent_s=round(silent, 1))
        else:
            self._last_beat = time.monotonic()
            if not self._beating:
                self._beating = True
                self._emit("heartbeat_restored", node=self.name)
            if self.fenced:
                self.fenced = False
                self.work.unfence()
                self._emit("fence_lifted", node=self.name)

    def _beat_sync(self) -> None:
        self.app.store.cluster.beat(
            self.name,
            host=self.host,
            pid=self.pid,
            role=self.role,
            started_at=self.started_at,
            worker_id=self.worker_id,
            state=self.state(),
        )

    async def _sweep(self) -> None:
        """Put back in the queue the jobs of workers that stopped beating; now and then,
        resume the runs whose jobs ended before they did."""
        await self._requeue_stalled()
        now = time.monotonic()
        if now - self._orphans_checked >= self.app.settings.cluster.stall_timeout_s:
            self._orphans_checked = now
            await self._recover_orphans()

    async def _recover_orphans(self) -> None:
        """A run still ``running`` or ``interrupted`` whose job is over (given up by an older
        squad, failed by a bug, pruned away) would wait forever: no job of it is left for a
        node to take. It gets a new job that resumes it from its checkpoint, once across
        the cluster (the queueing lock, then the run rebound to its new job only if still
        bound to the old one); after ``cluster.max_attempts`` such recoveries it is failed,
        honestly, instead."""
        from squad.store.records import RunStatus

        store = self.app.store
        runs = await asyncio.to_thread(store.interrupted_runs)
        bound = {
            int(run.job): run
            for run in runs
            if run.job is not None
            and run.job.isdigit()
            and run.status in (RunStatus.RUNNING, RunStatus.INTERRUPTED)
        }
        if not bound:
            return
        queue = self._client.open()
        states = await queue.job_states(sorted(bound))
        for job_id, run in bound.items():
            status, args = states.get(job_id, (None, {}))
            if status in ("todo", "doing"):
                continue
            recoveries = int(args.get("recovery", 0)) + 1
            if recoveries > self.app.settings.cluster.max_attempts:
                await asyncio.to_thread(self._fail_orphan, run.id, job_id, recoveries - 1)
                continue
            new = await queue.defer_recovery(
                {"squad": run.squad, "run_id": run.id, "trigger": "recover", "recovery": recoveries}
            )
            if new is None:
                continue
            if not await asyncio.to_thread(
                store.run_state.rebind_job, run.id, str(job_id), str(new)
            ):
                with contextlib.suppress(Exception):  # it started already: it finds the run ended
                    await queue.cancel(new)
                continue
            self._emit(
                "run_recovered",
                node=self.name,
                squad=run.squad,
                run_id=run.id,
                lost_job=job_id,
                lost_job_status=status,
                queue_job=new,
            )

    def _fail_orphan(self, run_id: str, job_id: int, recoveries: int) -> None:
        from squad.store.records import RunStatus

        store = self.app.store
        epoch = store.run_state.claim(run_id, self.name)
        store.update_run(
            run_id,
            status=RunStatus.FAILED,
            error=f"gave up: its cluster job ended before the run did {recoveries + 1} times "
            f"(last job {job_id})",
            epoch=epoch,
        )
        self._emit("run_error", node=self.name, run_id=run_id, error="gave up: orphaned run")

    async def _requeue_stalled(self) -> None:
        """Put back in the queue the jobs of workers that stopped beating."""
        queue = self._client.open()
        own = self.worker_id
        for job in await queue.stalled():
            if own is not None and job.worker_id == own:
                continue
            if await queue.requeue(job.id):
                self.recovered += 1
                self._emit(
                    "job_recovered",
                    node=self.name,
                    queue_job=job.id,
                    task=job.task,
                    lock=job.lock,
                    attempts=job.attempts,
                    lost_worker=job.worker_id,
                )
            elif job.task != "squad.run":
                # An extraction pass that cannot go back (another one of the agent waits):
                # end it, so its lock is free for the one waiting.
                with contextlib.suppress(Exception):  # another sweeper got there first
                    await queue.fail(job.id)
