"""Before any run: the checkpoint tables, and the app's errors routed to the daemon's log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext
    from squad.memory.agent import AgentContext

__all__ = ["Checkpoints"]


class Checkpoints:
    """Creates the checkpoint tables once, before runs use them side by side, and says which
    checkpoints a switch of store backends left behind (they are not migrated; their runs'
    resumes are skipped, :class:`~squad.daemon.components.runs.StartupRuns`)."""

    name = "checkpoints"

    def start(self, ctx: DaemonContext) -> None:
        from squad.checkpoints import left_behind

        checkpoints = ctx.app.checkpoints
        checkpoints.setup()
        kept = left_behind(ctx.settings.home, checkpoints)
        ctx.left_behind = frozenset(kept.runs) if kept is not None else frozenset()
        if kept is not None:
            ctx.log.emit(
                "checkpoints_left_behind",
                file=str(kept.path),
                runs=len(kept.runs),
                using=checkpoints.where,
                note=kept.describe(),
            )
        log = ctx.log

        def extraction_error(agent: AgentContext, exc: BaseException) -> None:
            log.emit(
                "job_error",
                job="extraction",
                squad=agent.squad.name,
                agent=agent.agent.id,
                error=f"{type(exc).__name__}: {exc}",
            )

        def history_event(event: str, fields: dict[str, Any]) -> None:
            """``history_paused``: a workspace whose history cannot be written."""
            log.emit(event, **fields)

        ctx.app.on_extraction_error(extraction_error)
        ctx.app.on_history_event(history_event)

    def stop(self, ctx: DaemonContext) -> None:
        """The app closes the checkpoints (its owner does)."""
