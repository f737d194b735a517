"""Where a daemon's runs go when its home is one node of a cluster: a shared queue.

The daemon does not build the cluster's side itself (the cluster sits above the daemon, and
:mod:`squad.cli.daemon` hands it in): it asks for runs and background jobs through
:class:`SharedRuns`, which has what :class:`~squad.daemon.runs.RunDispatcher` has plus a fire
of a schedule (deduplicated across daemons) and a background job's cron time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.catalog import LoadedSquad
    from squad.daemon.eventlog import DaemonLog
    from squad.daemon.runqueue import RunRequest

__all__ = ["SharedRuns", "SharedRunsFactory", "SharedRunsWiring"]


class QueueView(Protocol):
    def start(self) -> None: ...

    def snapshot(self) -> tuple[list[RunRequest], list[RunRequest]]: ...

    def idle(self) -> bool: ...

    def close(self) -> list[RunRequest]: ...

    def resize(self, workers: int) -> None: ...


class SharedRuns(Protocol):
    """A cluster's queue as the daemon uses it."""

    @property
    def queue(self) -> QueueView: ...

    @property
    def failures(self) -> int: ...

    def submit(self, request: RunRequest, *, first: bool = False) -> bool: ...

    def ask(self, request: RunRequest) -> bool: ...

    def fire(self, name: str, *, at: datetime | None = None) -> bool:
        """A scheduled fire (now, or the missed one ``at``): one job across every daemon."""
        ...

    def maintain(self, name: str) -> None:
        """A background job's cron time: one job across the cluster."""
        ...

    def running_since(self) -> dict[str, datetime]: ...

    def wait(self, grace: float, *, force: threading.Event) -> bool: ...

    def abandon(self) -> list[str]: ...

    def state(self) -> dict[str, Any]:
        """What the daemon's heartbeat reports of its node."""
        ...


@dataclass(frozen=True)
class SharedRunsWiring:
    """What the daemon gives the factory of its shared queue."""

    app: App
    log: DaemonLog
    lookup: Callable[[str], LoadedSquad | None]
    auto_approve: bool
    on_change: Callable[[], None]


SharedRunsFactory = Callable[[SharedRunsWiring], SharedRuns]
