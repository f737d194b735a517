"""Where the daemon's runs go: the run dispatcher component (this process's run queue here,
the cluster's queue in :mod:`squad.cluster.daemon`), and the runs due at start-up.

Stopping: no new runs start, running ones are asked to stop at their next checkpoint and get
``daemon.shutdown_grace_s`` to do so; queued extraction passes get what is left of it.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol, TypedDict

from squad.daemon.context import iso
from squad.daemon.runqueue import RunRequest
from squad.daemon.triggers import build_trigger, missed_fire
from squad.model.factory import preload_client, squad_models
from squad.runtime.runlock import settle_dead_runs

if TYPE_CHECKING:
    from squad.daemon.catalog import LoadedSquad
    from squad.daemon.context import DaemonContext
    from squad.daemon.runs import RunDispatcher
    from squad.jobqueue.payloads import NodeState

__all__ = [
    "DAEMON_TRIGGERS",
    "Dispatcher",
    "LocalRuns",
    "QueueView",
    "Runs",
    "RunsReport",
    "StartupRuns",
]

DAEMON_TRIGGERS = frozenset({"schedule", "on_start"})
"""Run triggers only a daemon uses: a ``running`` run with one of them, found at start, was
left by a daemon that died, and is resumed. Other ``running`` runs may belong to a
``squad run`` still at work, and are left alone."""


class RunsReport(TypedDict, total=False):
    """The runs component's part of the heartbeat state: nothing for this process's queue,
    the node's state in a cluster."""

    cluster: NodeState


class QueueView(Protocol):
    def start(self) -> None: ...

    def snapshot(self) -> tuple[list[RunRequest], list[RunRequest]]: ...

    def idle(self) -> bool: ...

    def close(self) -> list[RunRequest]: ...

    def resize(self, workers: int) -> None: ...


class Dispatcher(Protocol):
    """What the daemon asks of a dispatcher of runs (:class:`~squad.daemon.runs.RunDispatcher`
    or the cluster's :class:`~squad.cluster.dispatch.ClusterDispatcher`)."""

    @property
    def queue(self) -> QueueView: ...

    @property
    def failures(self) -> int: ...

    def submit(self, request: RunRequest, *, first: bool = False) -> bool: ...

    def ask(self, request: RunRequest) -> bool: ...

    def hand_off(self, request: RunRequest) -> bool: ...

    def running_since(self) -> dict[str, datetime]: ...

    def wait(self, grace: float, *, force: threading.Event) -> bool: ...

    def abandon(self) -> list[str]: ...


class Runs(Protocol):
    """The run dispatcher component, as the components after it and the state use it."""

    name: str

    @property
    def dispatcher(self) -> Dispatcher:
        """Set by :meth:`start`."""
        ...

    def start(self, ctx: DaemonContext) -> None: ...

    def stop(self, ctx: DaemonContext) -> None: ...

    def fire(self, ctx: DaemonContext, name: str) -> None:
        """A squad's schedule fired."""
        ...

    def fire_late(self, ctx: DaemonContext, name: str, at: datetime) -> None:
        """A cron time ``at`` passed while no daemon ran, within the misfire grace."""
        ...

    def report(self) -> RunsReport:
        """Its own part of the heartbeat state."""
        ...


def wind_down(ctx: DaemonContext, dispatcher: Dispatcher) -> None:
    """Close the queue, give running runs the grace period, record those left as interrupted
    (``ctx.interrupted``), and let queued extraction passes use what is left of it."""
    for request in dispatcher.queue.close():
        ctx.log.emit("run_dropped", squad=request.squad, trigger=request.trigger)
    grace = ctx.config.shutdown_grace_s
    running = sorted(dispatcher.running_since())
    if running:
        ctx.log.emit("stopping", running=running, grace_s=grace)
    deadline = time.monotonic() + grace
    if not dispatcher.wait(grace, force=ctx.force):
        ctx.interrupted = dispatcher.abandon()
    remaining = 0.0 if ctx.force.is_set() else deadline - time.monotonic()
    if not ctx.app.drain_extraction(max(1.0, remaining)):
        ctx.log.emit("extraction_left", reason="stopped before queued passes ran")


class LocalRuns:
    """Runs in this process, ``daemon.max_concurrent_runs`` at once (:mod:`squad.daemon.runs`)."""

    name = "runs"
    dispatcher: RunDispatcher

    def start(self, ctx: DaemonContext) -> None:
        from squad.daemon.runs import RunDispatcher

        self.dispatcher = RunDispatcher(
            ctx.app,
            ctx.log,
            lookup=ctx.lookup,
            workers=ctx.config.max_concurrent_runs,
            auto_approve=ctx.auto_approve,
            on_change=ctx.wake.set,
        )
        ctx.runs = self

    def stop(self, ctx: DaemonContext) -> None:
        wind_down(ctx, self.dispatcher)

    def fire(self, ctx: DaemonContext, name: str) -> None:
        if not self.dispatcher.submit(RunRequest(name, "schedule")):
            ctx.log.emit("run_coalesced", squad=name, reason="a run of it is already waiting")

    def fire_late(self, ctx: DaemonContext, name: str, at: datetime) -> None:
        self.dispatcher.submit(RunRequest(name, "schedule"))

    def report(self) -> RunsReport:
        return {}

    def reconfigure(self, ctx: DaemonContext, applied: tuple[str, ...]) -> None:
        if "daemon.max_concurrent_runs" in applied:
            self.dispatcher.queue.resize(ctx.config.max_concurrent_runs)


class StartupRuns:
    """Reads the squads folder, queues the runs due at start (resumes of interrupted runs,
    then late cron runs, then on-start runs), then lets the dispatcher start them."""

    name = "startup"

    def start(self, ctx: DaemonContext) -> None:
        assert ctx.catalog is not None and ctx.runs is not None
        ctx.reconcile(starting=True)
        loaded = ctx.catalog.squads()
        # litellm's import overlaps the resumes and the queue's start-up when a squad needs it
        preload_client(
            (name for squad in loaded.values() for name in squad_models(squad.spec)),
            factory=ctx.app.model_factory,
        )
        self._resume(ctx, loaded)
        if not ctx.once:
            self._late(ctx, loaded)
        dispatcher = ctx.runs.dispatcher
        for name, squad in loaded.items():
            if squad.spec.schedule is not None and squad.spec.schedule.run_on_start:
                dispatcher.submit(RunRequest(name, "on_start"))
        dispatcher.queue.start()

    def stop(self, ctx: DaemonContext) -> None:
        """The dispatcher's stop ends the runs."""

    def _resume(self, ctx: DaemonContext, loaded: dict[str, LoadedSquad]) -> None:
        from squad.store.records import RunStatus

        assert ctx.runs is not None
        for run in settle_dead_runs(ctx.store, ctx.settings.locks_dir):
            ctx.log.emit("run_settled", squad=run.squad, run_id=run.id, error=run.error)
        for run in reversed(ctx.store.interrupted_runs()):
            if run.status is RunStatus.AWAITING_APPROVAL:
                continue  # waits for `squad approve`
            if run.status is RunStatus.RUNNING and run.trigger not in DAEMON_TRIGGERS:
                continue  # a `squad run` elsewhere may still be at it
            if run.job is not None:
                continue  # a cluster job's: the queue hands it on when its node is lost
            reason = None
            if run.id in ctx.left_behind:
                reason = (
                    "its checkpoints are in the home's checkpoints.sqlite, from before the store "
                    "moved to PostgreSQL (not migrated); it stays resumable there"
                )
            elif run.squad not in loaded:
                reason = "its squad is not in the squads folder"
            elif not ctx.runs.dispatcher.submit(RunRequest(run.squad, "resume", run.id)):
                reason = "another run of the squad resumes first; `squad resume` this one"
            if reason is not None:
                ctx.log.emit("resume_skipped", squad=run.squad, run_id=run.id, reason=reason)

    def _late(self, ctx: DaemonContext, loaded: dict[str, LoadedSquad]) -> None:
        """A cron time that passed while no daemon ran, within the misfire grace, runs now."""
        assert ctx.runs is not None
        now = ctx.app.clock()
        grace = timedelta(seconds=ctx.config.misfire_grace_s)
        for name, squad in loaded.items():
            schedule = squad.spec.schedule
            if schedule is None or schedule.cron is None:
                continue
            missed = missed_fire(build_trigger(schedule), now, grace)
            if missed is None:
                continue
            latest = ctx.store.list_runs(name, limit=1)
            if not latest or latest[0].created_at < missed:
                ctx.log.emit("fire_late", squad=name, scheduled=iso(missed))
                ctx.runs.fire_late(ctx, name, missed)
