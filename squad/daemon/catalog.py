"""The squads the daemon has loaded from its folder, kept in step with the files.

:meth:`SquadCatalog.reconcile` re-reads the folder (only files whose bytes changed are
validated again, and at start-up only files changed since the last run: a
:class:`~squad.daemon.definition_cache.DefinitionCache`), then schedules new squads,
reschedules changed ones and unschedules those whose file went away or now defines another
squad. Each loaded squad gets its workspace created or updated first
(:class:`~squad.manager.SquadManager`); one that cannot be made is reported like a bad file.

A file that breaks (it no longer validates, or its new definition's workspace cannot be made)
does not take its squad down: the squad keeps its last good definition, its schedule and any
run already queued, flagged (``file_error``, ``invalid_since`` in :meth:`SquadCatalog.describe`,
``running_last_good`` on the failed file) until the file is fixed or removed. A daemon started
with a broken file takes the last good definition from the store, where the squad was
registered when it last loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.clock import Clock, utc_now
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
    from squad.daemon.definition_cache import DefinitionCache
    from squad.daemon.eventlog import DaemonLog
    from squad.daemon.scheduler import JobScheduler
    from squad.manager import SquadManager
    from squad.spec.models import SquadSpec
    from squad.store.records import SquadRecord

__all__ = ["LoadedSquad", "SquadCatalog", "recorded_owners"]


def recorded_owners(records: Mapping[str, SquadRecord]) -> dict[str, Path]:
    """Squad -> the definition file it was last loaded from, as the store remembers it
    (``records``: :meth:`SquadManager.registered_squads`), so that with two files naming one
    squad the one that had it keeps it across restarts."""
    return {name: Path(record.source) for name, record in records.items() if record.source}


_REGISTERED = "last good: as the store registered it"
"""The digest of a definition taken from the store, not the file (a daemon started while the
file was broken); no file's digest, so the fixed file is a change."""


@dataclass(frozen=True)
class _Broken:
    """A squad whose file broke: since when, and what is wrong with it."""

    since: datetime
    error: str


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
        clock: Clock = utc_now,
        cache: DefinitionCache | None = None,
    ) -> None:
        self.folder = folder
        self._cache = cache
        """Validated definitions from the last run, by file digest (None: parse every file)."""
        self._manager = manager
        self._log = log
        self._scheduler = scheduler
        self._fire = fire
        self._on_added = on_added
        self._clock = clock
        self._lock = threading.RLock()
        self._files: dict[Path, Definition] = {}
        """Every definition file as loaded (valid or not)."""
        self._refused: dict[Path, Definition] = {}
        """Valid files refused anyway: a taken squad name, a workspace that cannot be made."""
        self._squads: dict[str, LoadedSquad] = {}
        self._broken: dict[str, _Broken] = {}
        """Squads running their last good definition, their file broken."""

    # -- reading ---------------------------------------------------------------------------

    def squads(self) -> dict[str, LoadedSquad]:
        with self._lock:
            return dict(self._squads)

    def get(self, name: str) -> LoadedSquad | None:
        with self._lock:
            return self._squads.get(name)

    def failed_files(self) -> list[dict[str, Any]]:
        """Files that failed to load, and why, by path; ``running_last_good`` names the squad
        that keeps running the file's last good definition (None: no squad runs from it)."""
        with self._lock:
            failed = [d for d in self._files.values() if d.spec is None]
            failed += list(self._refused.values())
            kept = {self._squads[name].definition.path: name for name in self._broken}
        return [
            {**d.to_dict(), "running_last_good": kept.get(d.path)}
            for d in sorted(failed, key=lambda d: d.path)
        ]

    def describe(self, next_fire: Callable[[str], datetime | None]) -> list[dict[str, Any]]:
        """Each squad for the heartbeat: name, file, schedule, next fire time, warnings, and
        for a squad whose file broke, the file's error and since when (ISO) it runs its last
        good definition (both None otherwise)."""
        with self._lock:
            loaded = sorted(self._squads.items())
            broken = dict(self._broken)
        return [
            {
                "name": name,
                "file": str(squad.definition.path),
                "workspace": str(squad.workspace),
                "schedule": describe_schedule(squad.spec.schedule),
                "next_fire": next_fire(name),
                "warnings": [w.to_dict() for w in squad.definition.warnings],
                "file_error": broken[name].error if name in broken else None,
                "invalid_since": broken[name].since.isoformat() if name in broken else None,
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
            registered = self._manager.registered_squads() if starting else {}
            recorded = recorded_owners(registered)
            # the files that had their squads before the restart keep them
            owners = {**recorded, **owners}
            wanted, refused = assign_squads(valid, owners)
            broken = self._keep_last_good(wanted, recorded)
            before, self._refused = self._refused, refused
            for path, definition in refused.items():
                if path not in before or before[path].digest != definition.digest:
                    self._log.emit("load_error", file=str(path), error=definition.error)
            current = {name: squad.definition for name, squad in self._squads.items()}
            plan = plan_changes(current, wanted)
            for name in plan.remove:
                self._unschedule(name, self._squads.pop(name).definition)
            for name in plan.change + plan.add:
                new = name not in self._squads
                error = self._load(wanted[name], new=new, starting=starting, known=registered)
                if error is not None:
                    broken[name] = error
            self._flag(broken)

    def _keep_last_good(
        self, wanted: dict[str, Definition], recorded: dict[str, Path]
    ) -> dict[str, str]:
        """Add to ``wanted`` the squads whose file is still there but broken, with their last
        good definition (the one running, else the one the store registered: ``recorded``
        owners at start-up); returns their files' errors by squad."""
        broken: dict[str, str] = {}
        for name, squad in self._squads.items():
            file = self._files.get(squad.definition.path)
            if name not in wanted and file is not None and file.spec is None:
                wanted[name] = squad.definition
                broken[name] = file.error or "the file is invalid"
        for name, path in recorded.items():
            file = self._files.get(path)
            if name in wanted or file is None or file.spec is not None:
                continue
            try:
                spec, _ = self._manager.registered(name)
            except SquadError:
                continue
            if spec.name == name:
                wanted[name] = Definition(path, _REGISTERED, spec)
                broken[name] = file.error or "the file is invalid"
        return broken

    def _flag(self, broken: dict[str, str]) -> None:
        """Flag the squads running a last good definition (logged ``keep_last_good`` when
        they start to), and unflag those whose file is fixed (``file_fixed``)."""
        for name in [n for n in self._broken if n not in broken]:
            del self._broken[name]
            squad = self._squads.get(name)
            if squad is not None:
                self._log.emit("file_fixed", squad=name, file=str(squad.definition.path))
        for name, error in broken.items():
            squad = self._squads.get(name)
            if squad is None:
                continue
            known = self._broken.get(name)
            self._broken[name] = _Broken(known.since if known else self._clock(), error)
            if known is None:
                fire = None if self._scheduler is None else self._scheduler.next_fire(name)
                self._log.emit(
                    "keep_last_good",
                    squad=name,
                    file=str(squad.definition.path),
                    reason="its file is broken: the squad runs its last good definition, on "
                    "its schedule, until the file is fixed or removed",
                    next_fire=None if fire is None else fire.astimezone(UTC).isoformat(),
                )

    def _reload_files(self) -> None:
        """Load the files that are new or changed; log each one's problems or warnings once."""
        found = {path: file_digest(path) for path in list_definition_files(self.folder)}
        for path in [p for p in self._files if p not in found]:
            del self._files[path]
        for path, digest in found.items():
            known = self._files.get(path)
            if known is None or known.digest != digest:
                cached = None if self._cache is None else self._cache.lookup(path, digest)
                loaded = cached or load_definition(path)
                self._files[path] = loaded
                if loaded.spec is None:
                    self._log.emit("load_error", file=str(path), error=loaded.error)
                elif loaded.warnings:
                    self._log.emit("load_warning", file=str(path), warnings=loaded.warning_text)
        if self._cache is not None:
            self._cache.save(self._files)

    def _load(
        self,
        definition: Definition,
        *,
        new: bool,
        starting: bool,
        known: Mapping[str, SquadRecord],
    ) -> str | None:
        """Load a new or changed definition; the error when it cannot be and the squad keeps
        its last good definition from the same file. ``known``: the store's records, read
        at start-up (an unchanged squad is not registered again)."""
        assert definition.spec is not None
        name = definition.spec.name
        try:
            report = self._manager.create(
                definition.spec, source=definition.path, registered=known.get(name)
            )
        except SquadError as exc:
            failed = definition.failed(f"cannot prepare the workspace: {exc}")
            self._refused[definition.path] = failed
            self._log.emit("load_error", file=str(definition.path), error=failed.error)
            old = self._squads.get(name)
            if old is not None and old.definition.path == definition.path:
                return failed.error
            if old is not None:
                self._unschedule(name, self._squads.pop(name).definition)
            return None
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
        return None

    def _unschedule(self, name: str, definition: Definition) -> None:
        if self._scheduler is not None:
            self._scheduler.unschedule_squad(name)
        current = self._files.get(definition.path)
        if current is None:
            reason = "file removed"
        elif current.spec is None:  # its squad moved to a file whose workspace failed
            reason = "file invalid"
        elif current.spec.name == name:
            reason = "its workspace cannot be prepared"
        else:
            reason = f"the file now defines squad {current.spec.name!r}"
        self._log.emit("unschedule", squad=name, file=str(definition.path), reason=reason)
