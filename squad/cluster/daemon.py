"""The daemon of a cluster node: the components of :mod:`squad.daemon.layout`, but runs and
background jobs go to the cluster's queue (:class:`~squad.cluster.dispatch.ClusterDispatcher`),
whose node in this daemon works too, and the scheduler is anchored so every daemon computes
the same fire times.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from squad.daemon.components.background import BackgroundJobs, SecretsScan
from squad.daemon.components.checkpoints import Checkpoints
from squad.daemon.components.home import FreedMemory, Heartbeat, HomeLock
from squad.daemon.components.runs import StartupRuns, wind_down
from squad.daemon.components.scheduling import Catalog, Scheduler
from squad.daemon.components.watching import Watching
from squad.daemon.reload import ReloadRequests
from squad.errors import SquadError, UsageError

if TYPE_CHECKING:
    from squad.cluster.dispatch import ClusterDispatcher
    from squad.daemon.components.lifecycle import Component
    from squad.daemon.components.runs import RunsReport
    from squad.daemon.context import DaemonContext
    from squad.jobqueue.reports import JobQueued

__all__ = ["ClusterRuns", "cluster_components"]


def cluster_components(ctx: DaemonContext) -> list[Component]:
    """A scheduling node of the cluster; never ``--once`` (the queue is shared)."""
    if ctx.once:
        raise UsageError(
            "--once runs a squad home on its own; in a cluster (cluster.enabled) the "
            "queue is shared, so start `squad daemon` without --once, or run the squads "
            "with `squad run`"
        )
    runs = ClusterRuns()
    return [
        HomeLock(),
        Heartbeat(),
        Checkpoints(),
        runs,
        Scheduler(anchored=True),
        Catalog(),
        Watching(),
        StartupRuns(),
        BackgroundJobs(runs.queue_job),
        SecretsScan(),
        ReloadRequests(),
        FreedMemory(),
    ]


class ClusterRuns:
    """Runs asked for become cluster jobs; a scheduled fire is one job however many daemons
    schedule it; this daemon's node (:class:`~squad.cluster.node.ClusterNode`) takes jobs
    once start-up has queued its own."""

    name = "cluster_runs"
    dispatcher: ClusterDispatcher

    def start(self, ctx: DaemonContext) -> None:
        from squad.cluster.dispatch import ClusterDispatcher
        from squad.cluster.node import ClusterNode

        node = ClusterNode(
            ctx.app,
            ctx.log.emit,
            role="scheduler",
            concurrency=ctx.config.max_concurrent_runs,
            auto_approve=ctx.auto_approve,
            on_change=ctx.wake.set,
        )
        self.dispatcher = ClusterDispatcher(
            node,
            ctx.log,
            lookup=ctx.lookup,
            clock=ctx.app.clock,
            misfire_grace_s=ctx.config.misfire_grace_s,
        )
        ctx.runs = self

    def stop(self, ctx: DaemonContext) -> None:
        wind_down(ctx, self.dispatcher)

    def fire(self, ctx: DaemonContext, name: str) -> None:
        try:
            self.dispatcher.fire(name)
        except SquadError as exc:
            ctx.log.emit("job_error", job="schedule", squad=name, error=str(exc))

    def fire_late(self, ctx: DaemonContext, name: str, at: datetime) -> None:
        self.dispatcher.fire(name, at=at)

    def report(self) -> RunsReport:
        return {"cluster": self.dispatcher.state()}

    def queue_job(self, ctx: DaemonContext, job: str) -> JobQueued:
        """A background job's cron time: one maintenance job across the cluster."""
        self.dispatcher.maintain(job)
        return {"queued": job}
