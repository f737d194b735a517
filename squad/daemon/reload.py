"""What an edit of ``configs/settings.yaml`` changes for a running daemon. Pure.

The daemon applies at once what it can swap safely: its background jobs' cron times
(``consolidation_cron``, ``retention_cron``, ``extraction_cron``), ``max_concurrent_runs``,
``shutdown_grace_s`` and the ``retention`` section (run logs, checkpoints, its own log's
size). The rest is fixed for the life of the process, because live objects were built from
it: the workspace root, the database URL, ``memory`` (the shared memory service and its
embedder), ``misfire_grace_s`` (every squad's scheduled job) and ``http`` (the bound
server). Those are reported as
needing a restart, and keep their running values until then.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from squad.settings import Settings

__all__ = ["LIVE_FIELDS", "RESTART_FIELDS", "SettingsChange", "compare"]

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
