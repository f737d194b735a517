"""The squads the daemon has loaded from its folder, kept in step with the files.

:meth:`SquadCatalog.reconcile` re-reads the folder (only files whose bytes changed are
validated again), then schedules new squads, reschedules changed ones and unschedules those
whose file went away or broke. Each loaded squad gets its workspace created or updated first
(:class:`~squad.manager.SquadManager`); one that cannot be made is reported like a bad file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.daemon.definitions import (
    Definition,
    assign_squads,
    file_digest,
    list_definition_files,
    load_definition,
    plan_changes,
)
from squad.daemon.triggers import describe_schedule, timing
from squad.errors import SquadError

if TYPE_CHECKING:
    from squad.daemon.eventlog import DaemonLog
    from squad.daemon.scheduler import JobScheduler
    from squad.manager import SquadManager
    from squad.spec.models import SquadSpec

__all__ = ["LoadedSquad", "SquadCatalog", "recorded_owners"]


def recorded_owners(manager: SquadManager) -> dict[str, Path]:
    """Squad -> the definition file it was last loaded from, as the store remembers it, so
    that with two files naming one squad the one that had it keeps it across restarts.
    Empty when the home has no database yet (none is created for this)."""
    if not manager.database_exists():
        return {}
    return {
        record.name: Path(record.source) for record in manager.store.list_squads() if record.source
    }


@dataclass(frozen=True)
class LoadedSquad:
    """A squad the daemon runs: its definition and workspace."""

    definition: Definition
    workspace: Path

    @property
    def spec(self) -> SquadSpec:
        assert self.definition.spec is not None
        return self.definition.spec


class SquadCatalog:
    """The squads folder as loaded; thread-safe (reloads come from the watcher's thread)."""

    def __init__(
        self,
        folder: Path,
        manager: SquadManager,
        log: DaemonLog,
        *,
        scheduler: JobScheduler | None,
        fire: Callable[[str], None],
        on_added: Callable[[LoadedSquad], None] = lambda _: None,
    ) -> None:
        self.folder = folder
        self._manager = manager
        self._log = log
        self._scheduler = scheduler
        self._fire = fire
        self._on_added = on_added
        self._lock = threading.RLock()
        self._files: dict[Path, Definition] = {}
        """Every definition file as loaded (valid or not)."""
        self._refused: dict[Path, Definition] = {}
        """Valid files refused anyway: a taken squad name, a workspace that cannot be made."""
        self._squads: dict[str, LoadedSquad] = {}

    # -- reading ---------------------------------------------------------------------------

    def squads(self) -> dict[str, LoadedSquad]:
        with self._lock:
            return dict(self._squads)

    def get(self, name: str) -> LoadedSquad | None:
        with self._lock:
            return self._squads.get(name)

    def failed_files(self) -> list[dict[str, Any]]:
        """Files that define no running squad, and why, by path."""
        with self._lock:
            failed = [d for d in self._files.values() if d.spec is None]
            failed += list(self._refused.values())
        return [d.to_dict() for d in sorted(failed, key=lambda d: d.path)]

    def describe(self, next_fire: Callable[[str], datetime | None]) -> list[dict[str, Any]]:
        """Each squad for the heartbeat: name, file, schedule, next fire time, warnings."""
        with self._lock:
            loaded = sorted(self._squads.items())
        return [
            {
                "name": name,
                "file": str(squad.definition.path),
                "workspace": str(squad.workspace),
                "schedule": describe_schedule(squad.spec.schedule),
                "next_fire": next_fire(name),
                "warnings": [w.to_dict() for w in squad.definition.warnings],
            }
            for name, squad in loaded
        ]

    # -- reloading -------------------------------------------------------------------------

    def reconcile(self, *, starting: bool = False) -> None:
        """Bring the schedule in line with the folder's files.

        Squads that appear after start-up with ``run_on_start`` are handed to ``on_added``.
        """
        with self._lock:
            self._reload_files()
            valid = {p: d for p, d in self._files.items() if d.spec is not None}
            owners = {name: squad.definition.path for name, squad in self._squads.items()}
            if starting:  # the files that had their squads before the restart keep them
                owners = {**recorded_owners(self._manager), **owners}
            wanted, refused = assign_squads(valid, owners)
            before, self._refused = self._refused, refused
            for path, definition in refused.items():
                if path not in before or before[path].digest != definition.digest:
                    self._log.emit("load_error", file=str(path), error=definition.error)
            current = {name: squad.definition for name, squad in self._squads.items()}
            plan = plan_changes(current, wanted)
            for name in plan.remove:
                self._unschedule(name, self._squads.pop(name).definition)
            for name in plan.change + plan.add:
                self._load(wanted[name], new=name not in self._squads, starting=starting)

    def _reload_files(self) -> None:
        """Load the files that are new or changed; log each one's problems or warnings once."""
        found = {path: file_digest(path) for path in list_definition_files(self.folder)}
        for path in [p for p in self._files if p not in found]:
            del self._files[path]
        for path, digest in found.items():
            known = self._files.get(path)
            if known is None or known.digest != digest:
                loaded = load_definition(path)
                self._files[path] = loaded
                if loaded.spec is None:
                    self._log.emit("load_error", file=str(path), error=loaded.error)
                elif loaded.warnings:
                    self._log.emit("load_warning", file=str(path), warnings=loaded.warning_text)

    def _load(self, definition: Definition, *, new: bool, starting: bool) -> None:
        assert definition.spec is not None
        name = definition.spec.name
        try:
            report = self._manager.create(definition.spec, source=definition.path)
        except SquadError as exc:
            failed = definition.failed(f"cannot prepare the workspace: {exc}")
            self._refused[definition.path] = failed
            self._log.emit("load_error", file=str(definition.path), error=failed.error)
            if name in self._squads:
                self._unschedule(name, self._squads.pop(name).definition)
            return
        squad = LoadedSquad(definition, report.path)
        old = self._squads.get(name)
        self._squads[name] = squad
        # An edit that leaves the timing alone leaves the job alone: its next fire stays.
        same = old is not None and timing(old.spec.schedule) == timing(squad.spec.schedule)
        next_fire = None
        if self._scheduler is not None:
            if same:
                next_fire = self._scheduler.next_fire(name)
            else:
                next_fire = self._scheduler.schedule_squad(name, squad.spec.schedule, self._fire)
        event = "schedule" if old is None else "update" if same else "reschedule"
        self._log.emit(
            event if self._scheduler is not None else "load",
            squad=name,
            file=str(definition.path),
            schedule=describe_schedule(squad.spec.schedule),
            previous=None if old is None or same else describe_schedule(old.spec.schedule),
            next_fire=None if next_fire is None else next_fire.astimezone(UTC).isoformat(),
        )
        if new and not starting:
            self._on_added(squad)

    def _unschedule(self, name: str, definition: Definition) -> None:
        if self._scheduler is not None:
            self._scheduler.unschedule_squad(name)
        current = self._files.get(definition.path)
        if current is None:
            reason = "file removed"
        elif current.spec is None:
            reason = "file invalid"
        elif current.spec.name == name:
            reason = "its workspace cannot be prepared"
        else:
            reason = f"the file now defines squad {current.spec.name!r}"
        self._log.emit("unschedule", squad=name, file=str(definition.path), reason=reason)
