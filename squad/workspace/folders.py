"""Workspace folders: created, updated and restored, never anything in them deleted.

Creation is idempotent: every existing file is kept, a changed definition rewrites only the
manifest, new agents get their folders. The manifest is written last, so an interrupted
creation is completed by the next one. Writers of one workspace are serialised by a lock
that holds across processes.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from squad.clock import Clock, utc_now
from squad.errors import ConfigError, Problem, SquadError, WorkspaceError
from squad.fsutil import atomic_write, create_new, read_up_to
from squad.paths import check_name, contained
from squad.spec.models import SquadSpec
from squad.workspace.layout import MANIFEST_NAME, MEMORY_FILE, STANDARD_FOLDERS, memory_seed
from squad.workspace.manifest import (
    MAX_MANIFEST_BYTES,
    Manifest,
    definition_sha256,
    manifest_too_large,
)

if TYPE_CHECKING:
    from squad.workspace.timed_lock import TimedLock

__all__ = ["CreateReport", "WorkspaceFolders", "WorkspaceInfo"]

LOCK_TIMEOUT_S = 30.0

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a link swapped in after the check is refused
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the check must not block open()
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True)
class CreateReport:
    """What one create (or restore) did."""

    squad: str
    path: Path
    manifest: Literal["created", "updated", "unchanged"]
    created: list[str] = field(default_factory=list)
    """Paths (relative to the workspace) that did not exist before."""


@dataclass(frozen=True)
class WorkspaceInfo:
    squad: str
    path: Path
    manifest: Manifest


class WorkspaceFolders:
    """Workspaces under one root; ``locks`` is where cross-process lock files live."""

    def __init__(self, root: Path, *, locks: Path, clock: Clock = utc_now) -> None:
        self.root = root
        self._locks = locks
        self._clock = clock

    def path_for(self, spec: SquadSpec) -> Path:
        """The squad's folder under the root (checked: never outside it, never a link)."""
        return contained(self.root, spec.workspace_name)

    def create(self, spec: SquadSpec, *, source: Path | None = None) -> CreateReport:
        """Create or update ``spec``'s workspace under the root."""
        self._ensure_root()
        return self.create_at(self.path_for(spec), spec, source=source)

    def create_at(self, path: Path, spec: SquadSpec, *, source: Path | None = None) -> CreateReport:
        """Create or update ``spec``'s workspace in ``path`` (used by restore too).

        A workspace with nothing to make (a daemon restarting over its squads) is only
        looked at: no lock is taken and nothing is written."""
        made = self._already_made(path, spec, source)
        if made is not None:
            return made
        with self._lock(spec.name):
            return self._create_locked(path, spec, source)

    def read_manifest(self, path: Path) -> Manifest:
        """The validated manifest of the workspace folder ``path``."""
        manifest_path = contained(path, MANIFEST_NAME)
        try:
            raw = _read_manifest_bytes(manifest_path)
        except FileNotFoundError:
            raise WorkspaceError(
                f"{path} has no {MANIFEST_NAME}; it is not a squad workspace"
            ) from None
        except OSError as exc:
            reason = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
            raise WorkspaceError(f"cannot read {manifest_path}: {reason}") from None
        return Manifest.from_json(raw, source=str(manifest_path))

    def restore(self, path: Path) -> tuple[SquadSpec, CreateReport]:
        """Rebuild a squad from its workspace manifest alone, completing missing folders."""
        if path.name == MANIFEST_NAME:
            path = path.parent
        if not path.is_dir():
            raise WorkspaceError(f"{path} is not a folder")
        manifest = self.read_manifest(path)
        report = self.create_at(path.resolve(), manifest.definition)
        return manifest.definition, report

    def scan(self) -> list[WorkspaceInfo]:
        """Every workspace under the root with a readable manifest, sorted by squad name."""
        return self._scan()[0]

    def unreadable(self) -> list[tuple[Path, str]]:
        """Folders under the root whose manifest exists but cannot be trusted, and why."""
        return self._scan()[1]

    def _scan(self) -> tuple[list[WorkspaceInfo], list[tuple[Path, str]]]:
        if not self.root.is_dir():
            return [], []
        found, broken = [], []
        for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
            if not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if not (path / MANIFEST_NAME).is_file():
                continue
            try:
                manifest = self.read_manifest(path)
            except (ConfigError, WorkspaceError) as error:
                broken.append((path, str(error)))
                continue
            found.append(WorkspaceInfo(manifest.squad, path, manifest))
        return sorted(found, key=lambda info: info.squad), broken

    def find(self, squad: str) -> Path | None:
        """The folder whose manifest names ``squad``, if any (works without the store)."""
        return next((info.path for info in self.scan() if info.squad == squad), None)

    # -- internals -----------------------------------------------------------------------

    def _ensure_root(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise WorkspaceError(f"workspace root {self.root} exists and is not a folder")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(
                f"cannot create workspace root {self.root}: {exc.strerror}"
            ) from None

    def _lock(self, squad: str) -> TimedLock:
        from squad.workspace.timed_lock import TimedLock

        check_name(squad, what="squad name")
        try:
            self._locks.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(
                f"cannot create lock folder {self._locks}: {exc.strerror}"
            ) from None
        return TimedLock(str(self._locks / f"workspace-{squad}.lock"), timeout=LOCK_TIMEOUT_S)

    def _create_locked(self, path: Path, spec: SquadSpec, source: Path | None) -> CreateReport:
        created: list[str] = []
        previous = self._existing_manifest(path, spec)
        try:
            self._mkdir(path, "", created)
            for folder in STANDARD_FOLDERS:
                self._mkdir(contained(path, folder), folder, created)
            for agent in spec.agents:
                agent_dir = contained(path, "agents", agent.id)
                self._mkdir(agent_dir, f"agents/{agent.id}", created)
                memory = contained(path, "agents", agent.id, MEMORY_FILE)
                if create_new(memory, memory_seed().encode()):
                    created.append(f"agents/{agent.id}/{MEMORY_FILE}")
            status, manifest = self._next_manifest(previous, spec, source)
            if status != "unchanged":
                target = contained(path, MANIFEST_NAME)
                atomic_write(target, manifest.to_json())
                if status == "created":
                    created.append(MANIFEST_NAME)
        except OSError as exc:
            from squad.diskfull import as_disk_full

            full = as_disk_full(exc, path)
            if full is not None:  # which disk, how much is free, what to do
                raise full from None
            raise WorkspaceError(
                f"cannot write workspace {path}: {exc.strerror or exc}"
                + (f" ({exc.filename})" if exc.filename else "")
            ) from None
        return CreateReport(spec.name, path, status, created)

    def _already_made(
        self, path: Path, spec: SquadSpec, source: Path | None
    ) -> CreateReport | None:
        """The report of a create that would change nothing: the manifest current, every
        folder and memory file there. None when anything is to be made or is wrong (the
        locked create then makes it, or says what is wrong)."""
        try:
            check_name(spec.name, what="squad name")
            previous = self._existing_manifest(path, spec)
            if previous is None or self._next_manifest(previous, spec, source)[0] != "unchanged":
                return None
            folders = [path, *(contained(path, folder) for folder in STANDARD_FOLDERS)]
            folders += [contained(path, "agents", agent.id) for agent in spec.agents]
            if not all(stat.S_ISDIR(os.lstat(folder).st_mode) for folder in folders):
                return None
            for agent in spec.agents:
                os.lstat(contained(path, "agents", agent.id, MEMORY_FILE))
        except (SquadError, OSError):
            return None
        return CreateReport(spec.name, path, "unchanged", [])

    def _existing_manifest(self, path: Path, spec: SquadSpec) -> Manifest | None:
        if not (path / MANIFEST_NAME).exists():
            return None
        manifest = self.read_manifest(path)
        if manifest.squad != spec.name:
            raise WorkspaceError(
                f"workspace {path} belongs to squad {manifest.squad!r}, not {spec.name!r}; "
                "choose another `workspace:` name"
            )
        return manifest

    def _next_manifest(
        self, previous: Manifest | None, spec: SquadSpec, source: Path | None
    ) -> tuple[Literal["created", "updated", "unchanged"], Manifest]:
        source_path = str(source.resolve()) if source else None
        if previous is None:
            now = self._clock()
            return "created", Manifest(spec.name, spec, now, now, source_path)
        if source is None:  # restore: keep what the manifest says about its source
            source_path = previous.source_path
        if (previous.definition_sha256, previous.source_path) == (
            definition_sha256(spec),
            source_path,
        ):
            return "unchanged", previous
        return "updated", Manifest(spec.name, spec, previous.created_at, self._clock(), source_path)

    @staticmethod
    def _mkdir(path: Path, relative: str, created: list[str]) -> None:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            path.mkdir()
            if relative:
                created.append(relative + "/")
            return
        if not stat.S_ISDIR(mode):
            raise WorkspaceError(f"{path} exists and is not a folder; move it out of the way")


def _read_manifest_bytes(path: Path) -> bytes:
    """The manifest's bytes, refusing what cannot be one before reading it.

    Only a regular file of at most :data:`MAX_MANIFEST_BYTES` is read: a FIFO would block the
    read, a device never end it. The type is checked before the open and again on the open
    file, in case it was replaced in between.
    """
    _check_manifest_mode(os.lstat(path).st_mode, path)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        _check_manifest_mode(info.st_mode, path)
        if info.st_size > MAX_MANIFEST_BYTES:
            raise ConfigError([manifest_too_large(info.st_size, str(path))])
        # past the limit (it grew): Manifest.from_json refuses it
        return read_up_to(fd, MAX_MANIFEST_BYTES + 1)
    finally:
        os.close(fd)


def _check_manifest_mode(mode: int, path: Path) -> None:
    """Refuse, naming what it is, a manifest path that is not a regular file."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        kind = "a symbolic link"
    elif stat.S_ISDIR(mode):
        kind = "a folder"
    elif stat.S_ISFIFO(mode):
        kind = "a FIFO (named pipe)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "a special file"
    raise ConfigError(
        [
            Problem(
                f"manifest is {kind}, not a regular file",
                source=str(path),
                hint=f"squad writes {MANIFEST_NAME} as a regular file; move this one aside and "
                "put back the workspace's copy from a backup",
            )
        ]
    )
