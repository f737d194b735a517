"""What an edit of ``configs/settings.yaml`` changes for a running daemon, and applying it.

The daemon applies at once what it can swap safely: its background jobs' cron times
(``consolidation_cron``, ``retention_cron``, ``extraction_cron``), ``max_concurrent_runs``,
``shutdown_grace_s`` and the ``retention`` section (run logs, checkpoints, its own log's
size). The rest is fixed for the life of the process, because live objects were built from
it: the workspace root, the database URL, ``memory`` (the shared memory service and its
embedder), ``misfire_grace_s`` (every squad's scheduled job) and ``http`` (the bound
server). Those are reported as
needing a restart, and keep their running values until then.

:func:`compare` is pure; :func:`reload_settings` applies its answer to a running daemon (its
components reschedule and resize through :class:`~squad.daemon.components.lifecycle.
Reconfigurable`), and :class:`ReloadRequests` reads everything again on SIGHUP.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from squad.errors import SquadError
from squad.settings import Settings

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext

__all__ = [
    "LIVE_FIELDS",
    "RESTART_FIELDS",
    "ReloadRequests",
    "SettingsChange",
    "compare",
    "is_settings_file",
    "reload_settings",
]

LIVE_FIELDS = (
    "daemon.consolidation_cron",
    "daemon.retention_cron",
    "daemon.extraction_cron",
    "daemon.max_concurrent_runs",
    "daemon.shutdown_grace_s",
    "daemon.retention",
)
RESTART_FIELDS = (
    "workspaces",
    "database_url",
    "memory.file_cap_kb",
    "memory.ranking",
    "daemon.misfire_grace_s",
    "daemon.http",
)


@dataclass(frozen=True)
class SettingsChange:
    applied: tuple[str, ...]
    """Live fields whose value changed: applied now."""
    restart_needed: tuple[str, ...]
    """Restart-only fields the file now sets differently from what the daemon runs with."""
    effective: Settings
    """What the daemon runs with from now on: the new live fields, the running rest."""


def _value(settings: Settings, name: str) -> object:
    if name == "memory.file_cap_kb":
        return settings.memory_file_cap_bytes
    if name == "memory.ranking":
        return settings.memory_ranking
    value: object = settings
    for part in name.split("."):
        value = getattr(value, part)
    return value


def compare(running: Settings, new: Settings) -> SettingsChange:
    """How ``new`` (the file as it reads now) changes a daemon running with ``running``."""
    applied = tuple(f for f in LIVE_FIELDS if _value(running, f) != _value(new, f))
    restart = tuple(f for f in RESTART_FIELDS if _value(running, f) != _value(new, f))
    daemon = new.daemon.model_copy(
        update={"misfire_grace_s": running.daemon.misfire_grace_s, "http": running.daemon.http}
    )
    effective = dataclasses.replace(running, daemon=daemon, settings_file=new.settings_file)
    return SettingsChange(applied, restart, effective)


def is_settings_file(configs: Path, path: Path) -> bool:
    return path.parent == configs and path.name == "settings.yaml"


def reload_settings(ctx: DaemonContext) -> None:
    """Apply an edited settings.yaml: what can change live now, the rest reported."""
    from squad.daemon.components.lifecycle import Reconfigurable

    if ctx.read_settings is None:
        return
    try:
        new = ctx.read_settings()
    except SquadError as exc:  # a bad edit: keep running as before, and say why
        ctx.log.emit("settings_error", error=str(exc), kept="the running settings")
        return
    change = compare(ctx.settings, new)
    ctx.restart_needed = change.restart_needed
    if change.applied:
        ctx.settings = change.effective
        for component in ctx.components:
            if isinstance(component, Reconfigurable):
                component.reconfigure(ctx, change.applied)
        retention = ctx.config.retention
        ctx.log.set_limits(
            max_bytes=retention.daemon_log_mb * 1024 * 1024, keep=retention.daemon_log_files
        )
    if change.applied or change.restart_needed:
        ctx.log.emit(
            "settings_reloaded",
            applied=list(change.applied) or None,
            restart_needed=list(change.restart_needed) or None,
        )
    ctx.wake.set()


class ReloadRequests:
    """At the tick after :meth:`~squad.daemon.service.Daemon.request_reload` (SIGHUP): the
    settings, every squad file and the watches, read again."""

    name = "reload"

    def start(self, ctx: DaemonContext) -> None:
        """Nothing to set up: requests wait in ``ctx.reload_reason``."""

    def stop(self, ctx: DaemonContext) -> None:
        """Nothing held."""

    def tick(self, ctx: DaemonContext, *, woken: bool) -> None:
        if ctx.reload_reason is None:
            return
        reason, ctx.reload_reason = ctx.reload_reason, None
        ctx.log.emit("reload", reason=reason)
        try:
            reload_settings(ctx)
            ctx.reconcile()
        except Exception as exc:  # noqa: BLE001 - logged; the daemon goes on as it was
            ctx.log.emit("job_error", job="reload", error=f"{type(exc).__name__}: {exc}")
        ctx.wake.set()
