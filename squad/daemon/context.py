"""What the daemon's components share: the app, the settings, the log, the events that pace
the main loop, and the slots a component fills when it starts (the scheduler, the catalog,
the run dispatcher) for the components after it.

Explicit, like pydantic-ai's ``RunContext``: a component gets it at start, stop and tick, and
reads nothing global.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.catalog import LoadedSquad, SquadCatalog
    from squad.daemon.components.lifecycle import Component
    from squad.daemon.components.runs import Runs
    from squad.daemon.eventlog import DaemonLog
    from squad.daemon.scheduler import JobScheduler
    from squad.settings import DaemonSettings, Settings
    from squad.store import Store

__all__ = ["BACKGROUND_JOBS", "DaemonContext", "iso"]

BACKGROUND_JOBS = ("consolidation", "retention", "extraction")
"""The daemon's own cron jobs (``daemon.<job>_cron``)."""


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


@dataclass(eq=False)
class DaemonContext:
    """One daemon's shared state; thread-safe where its events and the catalog are."""

    app: App
    settings: Settings
    """The running settings: a reload of settings.yaml replaces them (live fields only)."""
    log: DaemonLog
    squads_dir: Path
    once: bool = False
    """``--once``: no scheduler and no watcher; the daemon ends when no run is left."""
    auto_approve: bool = False
    debounce_s: float = 0.5
    read_settings: Callable[[], Settings] | None = None
    """Reads settings.yaml again (None: an edit is not applied)."""
    pid: int = field(default_factory=os.getpid)
    wake: threading.Event = field(default_factory=threading.Event)
    """Set to wake the main loop: something changed that the heartbeat should report."""
    ready: threading.Event = field(default_factory=threading.Event)
    stopping: threading.Event = field(default_factory=threading.Event)
    force: threading.Event = field(default_factory=threading.Event)
    """A second stop request: stop now, without the grace period."""
    stop_reason: str = "signal"
    reload_reason: str | None = None
    """Set by :meth:`squad.daemon.service.Daemon.request_reload`, taken by the next tick."""
    phase: str = "starting"
    components: tuple[Component, ...] = ()
    # Filled as the components start:
    scheduler: JobScheduler | None = None
    catalog: SquadCatalog | None = None
    runs: Runs | None = None
    followers: list[Callable[[], None]] = field(default_factory=list)
    """Called after each reconcile of the catalog (the watcher follows workspace files)."""
    left_behind: frozenset[str] = frozenset()
    """Runs whose checkpoints a switch of store backends left in the home's SQLite file."""
    configs_missing: bool = False
    restart_needed: tuple[str, ...] = ()
    attached: dict[str, Mapping[str, object]] = field(default_factory=dict)
    """What each started attachment (the web server) publishes in the heartbeat state."""
    interrupted: list[str] = field(default_factory=list)
    """Runs still going when the grace period ended, recorded as interrupted."""

    @property
    def config(self) -> DaemonSettings:
        return self.settings.daemon

    @property
    def store(self) -> Store:
        return self.app.store

    def lookup(self, name: str) -> LoadedSquad | None:
        """The loaded squad named ``name`` (None before the catalog starts)."""
        return None if self.catalog is None else self.catalog.get(name)

    def reconcile(self, *, starting: bool = False) -> None:
        """Read the squads folder again, then let the followers catch up."""
        if self.catalog is None:
            return
        self.catalog.reconcile(starting=starting)
        for follow in self.followers:
            follow()

    def state(self) -> dict[str, Any]:
        """What the heartbeat reports: squads, next fire times, runs, queue, failed files."""
        if self.catalog is None or self.runs is None:
            return {"phase": self.phase, "configs": str(self.squads_dir), "squads": []}
        dispatcher = self.runs.dispatcher
        running, queued = dispatcher.queue.snapshot()
        since = dispatcher.running_since()
        busy = {r.squad for r in running}
        waiting = {r.squad for r in queued}
        scheduler = self.scheduler
        squads = self.catalog.describe(
            lambda name: None if scheduler is None else scheduler.next_fire(name)
        )
        for squad in squads:
            squad["next_fire"] = iso(squad["next_fire"])
            squad["running"] = squad["name"] in busy
            squad["queued"] = squad["name"] in waiting
        return {
            "phase": self.phase,
            **self.attached,
            "configs": str(self.squads_dir),
            "configs_missing": self.configs_missing,
            "max_concurrent_runs": self.config.max_concurrent_runs,
            "squads": squads,
            "running": [
                {
                    "squad": r.squad,
                    "trigger": r.trigger,
                    "run_id": r.run_id,
                    "since": iso(since.get(r.squad)),
                }
                for r in running
            ],
            "queue": [{"squad": r.squad, "trigger": r.trigger} for r in queued],
            "failed_files": self.catalog.failed_files(),
            "settings_restart_needed": list(self.restart_needed),
            "jobs": self._jobs(),
            **self.runs.report(),
        }

    def _jobs(self) -> dict[str, dict[str, str | None]]:
        """The background jobs' triggers and next fire times."""
        found = {}
        for name in BACKGROUND_JOBS:
            job = None if self.scheduler is None else self.scheduler.job(name)
            if job is not None:
                found[name] = {"trigger": job[0], "next_fire": iso(job[1])}
        return found
