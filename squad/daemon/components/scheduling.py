"""The scheduler (APScheduler, :mod:`squad.daemon.scheduler`) and the catalog of the squads
folder that puts each squad's schedule on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from squad.daemon.catalog import LoadedSquad, SquadCatalog
from squad.daemon.context import iso
from squad.daemon.definition_cache import CACHE_FILE, DefinitionCache
from squad.daemon.runqueue import RunRequest

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext

__all__ = ["Catalog", "Scheduler"]


class Scheduler:
    """Fires cron and interval triggers, which only *ask* for runs; ``anchored`` in a cluster,
    so every daemon computes the same fire times."""

    name = "scheduler"

    def __init__(self, *, anchored: bool = False) -> None:
        self._anchored = anchored

    def start(self, ctx: DaemonContext) -> None:
        from squad.daemon.scheduler import JobScheduler

        log = ctx.log
        scheduler = JobScheduler(
            anchored=self._anchored,
            misfire_grace_s=ctx.config.misfire_grace_s,
            on_error=lambda job, exc: log.emit(
                "job_error", job=job, error=f"{type(exc).__name__}: {exc}"
            ),
            on_missed=lambda job, at: log.emit("fire_missed", job=job, scheduled=iso(at)),
        )
        scheduler.start()
        ctx.scheduler = scheduler

    def stop(self, ctx: DaemonContext) -> None:
        if ctx.scheduler is not None:
            ctx.scheduler.shutdown()


class Catalog:
    """The squads folder as loaded (:class:`~squad.daemon.catalog.SquadCatalog`), empty until
    :class:`~squad.daemon.components.runs.StartupRuns` reads it; a fire asks the run
    dispatcher for a run."""

    name = "catalog"

    def start(self, ctx: DaemonContext) -> None:
        def fire(name: str) -> None:
            assert ctx.runs is not None
            ctx.runs.fire(ctx, name)
            ctx.wake.set()  # its next fire time moved

        def added(squad: LoadedSquad) -> None:
            """A squad that appeared while running: its first load counts as its start."""
            assert ctx.runs is not None
            schedule = squad.spec.schedule
            if schedule is not None and schedule.run_on_start:
                ctx.runs.dispatcher.submit(RunRequest(squad.spec.name, "on_start"))

        ctx.catalog = SquadCatalog(
            ctx.squads_dir,
            ctx.app.squads,
            ctx.log,
            scheduler=ctx.scheduler,
            fire=fire,
            on_added=added,
            cache=DefinitionCache(ctx.settings.home / CACHE_FILE),
        )

    def stop(self, ctx: DaemonContext) -> None:
        """The scheduler's stop unschedules its squads."""
