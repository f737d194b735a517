"""The components of a daemon that runs its squads in this process, in start order (they
stop in reverse). The daemon of a cluster node is another list: :mod:`squad.cluster.daemon`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from squad.daemon.components.background import BackgroundJobs, SecretsScan, local_job
from squad.daemon.components.checkpoints import Checkpoints
from squad.daemon.components.home import FreedMemory, Heartbeat, HomeLock
from squad.daemon.components.runs import LocalRuns, StartupRuns
from squad.daemon.components.scheduling import Catalog, Scheduler
from squad.daemon.components.watching import Watching
from squad.daemon.reload import ReloadRequests
from squad.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from squad.daemon.components.lifecycle import Component
    from squad.daemon.context import DaemonContext

__all__ = ["Layout", "local_components"]

Layout: TypeAlias = "Callable[[DaemonContext], list[Component]]"
"""Builds the components of a daemon from its context, in start order."""


def local_components(ctx: DaemonContext) -> list[Component]:
    """One machine's daemon; with ``--once``, no scheduler and no watcher."""
    if ctx.settings.clustered:
        raise UsageError(
            "this home is one node of a cluster (cluster.enabled), and this daemon was "
            "started without the cluster's queue; start it with `squad daemon`"
        )
    return [
        HomeLock(),
        Heartbeat(),
        Checkpoints(),
        LocalRuns(),
        *([] if ctx.once else [Scheduler()]),
        Catalog(),
        *([] if ctx.once else [Watching()]),
        StartupRuns(),
        BackgroundJobs(local_job),
        SecretsScan(),
        ReloadRequests(),
        FreedMemory(),
    ]
