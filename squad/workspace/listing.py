"""One folder of a workspace, one level deep: what the explorer draws when a folder opens.

It reads that folder alone (one ``scandir``), so opening the root of a workspace of any size
costs what listing the root costs. The folder is reached through :func:`~squad.paths.contained`:
``..``, absolute paths and any symbolic link on the way are refused, so a link planted in the
workspace cannot show what lies outside it; links inside are listed, never entered.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal

from squad import views
from squad.errors import NotFound, PathEscapeError, WorkspaceError
from squad.paths import contained
from squad.text.natural import natural_key
from squad.workspace.layout import HIDDEN_AT_ROOT

__all__ = ["FolderEntry", "FolderListing", "list_folder"]

EntryKind = Literal["dir", "file", "link", "other"]


@dataclass(frozen=True)
class FolderEntry:
    """A child of the folder; ``size`` is a file's own (None for folders, links, others)."""

    name: str
    path: str
    kind: EntryKind
    size: int | None
    mtime: datetime

    def view(self) -> views.FolderEntry:
        return views.FolderEntry(
            name=self.name,
            path=self.path,
            kind=self.kind,
            size=self.size,
            mtime=self.mtime.isoformat(),
        )


@dataclass(frozen=True)
class FolderListing:
    path: str
    """The folder, relative to the workspace ('' for the root)."""
    entries: list[FolderEntry]

    def view(self) -> views.Folder:
        """As the API and the explorer show it."""
        return views.Folder(path=self.path, entries=[e.view() for e in self.entries])


def _parts(relative: str) -> list[str]:
    text = relative.replace("\\", "/").strip("/")
    if relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise PathEscapeError(f"path {relative!r} must be relative to the workspace")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")] if text else []
    if ".." in parts:
        raise PathEscapeError(f"path {relative!r} must stay inside the workspace (no '..')")
    return parts


def _kind(mode: int) -> EntryKind:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def list_folder(root: Path, relative: str = "") -> FolderListing:
    """The entries of one folder of the workspace at ``root``: folders first, then by name."""
    parts = _parts(relative)
    folder = contained(root, *parts)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        raise NotFound(f"no folder {'/'.join(parts)!r} in the workspace") from None
    if not stat.S_ISDIR(mode):
        raise NotFound(f"{'/'.join(parts)!r} is not a folder; preview it instead")
    prefix = "/".join(parts)
    entries: list[FolderEntry] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                if not prefix and entry.name in HIDDEN_AT_ROOT:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # vanished while listing
                kind = _kind(st.st_mode)
                entries.append(
                    FolderEntry(
                        entry.name,
                        f"{prefix}/{entry.name}" if prefix else entry.name,
                        kind,
                        st.st_size if kind == "file" else None,
                        datetime.fromtimestamp(st.st_mtime, tz=UTC),
                    )
                )
    except OSError as exc:
        raise WorkspaceError(f"cannot read folder {prefix or '.'!r}: {exc.strerror}") from exc
    entries.sort(key=lambda e: (e.kind != "dir", natural_key(e.name)))
    return FolderListing(prefix, entries)
