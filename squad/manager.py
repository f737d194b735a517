"""The squad manager: definitions in, workspaces and store records out.

It ties the pure spec to the edges (workspace folders, the store) and is the Python API
behind ``squad create`` and ``squad restore``. It is handed the store by its owner (the
:class:`~squad.app.App`, which opens it on first use and closes it) and asks for it only in
operations that write, so reading commands never create a database as a side effect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from squad.clock import Clock, utc_now
from squad.errors import NotFound, SquadError
from squad.settings import Settings
from squad.spec.loader import squad_from_file
from squad.spec.models import SquadSpec
from squad.workspace.folders import CreateReport, WorkspaceFolders
from squad.workspace.layout import MANIFEST_NAME
from squad.workspace.manifest import definition_sha256

if TYPE_CHECKING:
    from squad.history.history import History
    from squad.store import Store
    from squad.store.records import SquadRecord

__all__ = ["SquadManager", "SquadWorkspace"]


@dataclass(frozen=True)
class SquadWorkspace:
    squad: str
    path: Path


class SquadManager:
    """Creates, restores and finds squads for one :class:`~squad.settings.Settings`."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | Callable[[], Store],
        clock: Clock = utc_now,
        histories: Callable[[Path, str], History] | None = None,
    ) -> None:
        """``store`` is the state store, or how to reach it when first needed (the App's,
        which opens it then): the manager never opens or closes one. ``histories`` gives
        each workspace's history: a created workspace starts one, and an updated definition
        is committed."""
        self._histories = histories
        self.settings = settings
        self._given_store = not callable(store)
        self._store: Callable[[], Store] = store if callable(store) else lambda: store
        self.workspaces = WorkspaceFolders(
            settings.workspaces, locks=settings.locks_dir, clock=clock
        )

    @property
    def store(self) -> Store:
        """The state store (its owner opens it on this first use)."""
        return self._store()

    def create_from_file(self, path: Path) -> tuple[SquadSpec, CreateReport]:
        spec = squad_from_file(path)
        return spec, self.create(spec, source=path)

    def create(
        self,
        spec: SquadSpec,
        *,
        source: Path | None = None,
        registered: SquadRecord | None = None,
    ) -> CreateReport:
        """Create or update the squad's workspace and register it in the store.

        ``registered`` is the squad's record as just read from the store (a daemon starting
        over many squads reads them all at once): when it already says what this would
        write, the store is left alone."""
        report = self.workspaces.create(spec, source=source)
        if not _registered_as(registered, spec, report.path, source):
            self._register(spec, report.path, source)
        self._record(spec.name, report)
        return report

    def restore(self, path: Path) -> tuple[SquadSpec, CreateReport]:
        """Rebuild a squad from a workspace folder's manifest alone."""
        spec, report = self.workspaces.restore(path)
        manifest = self.workspaces.read_manifest(report.path)
        source = Path(manifest.source_path) if manifest.source_path else None
        self._register(spec, report.path, source)
        self._record(spec.name, report)
        return spec, report

    def _record(self, squad: str, report: CreateReport) -> None:
        """The workspace's history started (``history starts``, for an existing workspace
        too), and what this create changed committed as squad's."""
        if self._histories is None:
            return
        history = self._histories(report.path, squad)
        if not history.enabled:
            return
        paths = [p for p in report.created if not p.endswith("/")]
        if report.manifest == "updated":
            paths.append(MANIFEST_NAME)
        if not paths and history.started:
            return  # a restart over an unchanged squad: its next run or commit settles it
        history.start()
        if not paths:
            return
        from squad.history.message import Kind, compose  # only when a create commits

        what = "definition updated" if report.manifest == "updated" else "workspace updated"
        history.record_paths(
            "squad",
            compose(
                f"{what}: {squad}",
                [f"  {p}" for p in paths],
                [("Squad-Kind", Kind.WORKSPACE.value), ("Squad-Actor", "squad")],
            ),
            paths,
        )

    def definition(self, squad_or_path: str) -> tuple[SquadSpec, Path]:
        """A squad's definition, as its workspace manifest holds it, and its workspace folder."""
        found = self.locate(squad_or_path)
        return self.workspaces.read_manifest(found.path).definition, found.path

    def registered(self, squad: str) -> tuple[SquadSpec, Path]:
        """A squad's definition as the store registered it, and its workspace folder: what a
        cluster worker that never saw the YAML file runs. A squad registered before the store
        kept definitions falls back to its workspace manifest."""
        from squad.spec.loader import squad_from_dict

        record = self.store.get_squad(squad)
        if record is None:
            raise NotFound(
                f"no squad named {squad!r} is registered in the state database; a scheduling "
                "daemon registers every squad of its squads folder"
            )
        if record.definition is None:
            return self.definition(squad)
        spec = squad_from_dict(record.definition, source=f"squad {squad!r} in the store")
        return spec, Path(record.workspace)

    def locate(self, squad_or_path: str) -> SquadWorkspace:
        """Find a squad's workspace by squad name, workspace folder name, or folder path."""
        quick = self._by_folder_name(squad_or_path)
        if quick is not None:
            return quick
        for info in self.workspaces.scan():
            if squad_or_path in (info.squad, info.path.name):
                return SquadWorkspace(info.squad, info.path)
        if self.database_exists():
            record = self.store.get_squad(squad_or_path)
            if record is not None and (Path(record.workspace) / MANIFEST_NAME).is_file():
                return SquadWorkspace(record.name, Path(record.workspace))
        candidate = Path(squad_or_path)
        if (candidate / MANIFEST_NAME).is_file():
            manifest = self.workspaces.read_manifest(candidate)
            return SquadWorkspace(manifest.squad, candidate.resolve())
        known = ", ".join(info.squad for info in self.workspaces.scan()) or "none yet"
        message = (
            f"no squad or workspace named {squad_or_path!r} under {self.settings.workspaces} "
            f"(known: {known}); create one with `squad create FILE`"
        )
        for path, reason in self.workspaces.unreadable():
            message += f"\n  {path.name}: unreadable manifest: {reason}"
        raise NotFound(message)

    def _by_folder_name(self, name: str) -> SquadWorkspace | None:
        """The workspace in the folder named like the squad, when its manifest says so: one
        manifest read instead of all of them (every dashboard request locates a squad)."""
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            return None
        path = self.workspaces.root / name
        if not (path / MANIFEST_NAME).is_file() or path.is_symlink():
            return None
        try:
            manifest = self.workspaces.read_manifest(path)
        except SquadError:
            return None
        return SquadWorkspace(name, path) if manifest.squad == name else None

    def all_workspaces(self) -> list[SquadWorkspace]:
        """Workspaces under the root plus registered ones restored elsewhere, by squad name."""
        found = {
            info.squad: SquadWorkspace(info.squad, info.path) for info in self.workspaces.scan()
        }
        if self.database_exists():
            for record in self.store.list_squads():
                path = Path(record.workspace)
                if record.name not in found and (path / MANIFEST_NAME).is_file():
                    found[record.name] = SquadWorkspace(record.name, path)
        return [found[name] for name in sorted(found)]

    def workspace_paths(self) -> dict[str, Path]:
        """Every squad's workspace folder by squad name (:meth:`all_workspaces` as a mapping)."""
        return {found.squad: found.path for found in self.all_workspaces()}

    def registered_squads(self) -> dict[str, SquadRecord]:
        """Every squad the store has registered, by name; empty when the home has no
        database yet (none is created for this)."""
        if not self.database_exists():
            return {}
        return {record.name: record for record in self.store.list_squads()}

    def _register(self, spec: SquadSpec, path: Path, source: Path | None) -> None:
        self.store.upsert_squad(
            spec.name,
            workspace=str(path),
            source=str(source.resolve()) if source else None,
            definition_sha256=definition_sha256(spec),
            definition=spec.model_dump(mode="json"),
        )

    def database_exists(self) -> bool:
        """Whether the store was given open or its database is there (reading creates none)."""
        from squad.store.engine import database_exists

        return self._given_store or database_exists(self.settings.database_url)


def _registered_as(
    record: SquadRecord | None, spec: SquadSpec, path: Path, source: Path | None
) -> bool:
    """Whether ``record`` is what registering ``spec`` in ``path`` from ``source`` writes."""
    if record is None or record.definition is None:
        return False
    wanted = (str(path), str(source.resolve()) if source else None, definition_sha256(spec))
    return (record.workspace, record.source, record.definition_sha256) == wanted
