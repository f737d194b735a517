"""The agents' file tool: read anywhere in the workspace, write only into the task's folder.

Paths are resolved strictly inside the workspace (no '..', no absolute paths, no link out of
it); writes go to ``tasks/<task-id>/`` (or, for a run approved after newer runs finished,
``runs/<run-id>/tasks/<task-id>/``) and are atomic, so a killed run never leaves half a
file. Manifest, logs and memory files are not reachable for writing here (memory has its
own tools with their own safeguards), and the workspace's history (``.git``) is neither
listed nor read.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from squad.errors import PathEscapeError, WorkspaceError
from squad.fsutil import atomic_write
from squad.paths import check_name, contained, resolve_inside

__all__ = ["WorkspaceFiles"]

MAX_WRITE_BYTES = 2 * 1024 * 1024
MAX_READ_BYTES = 200_000


class WorkspaceFiles:
    """File access for one agent working on one task."""

    def __init__(
        self,
        workspace: Path,
        task_id: str,
        *,
        outputs: str = "tasks",
        touched: Callable[[str], None] | None = None,
    ) -> None:
        """``outputs`` is the folder of the run's task outputs, relative to the workspace;
        ``touched`` hears the workspace path of each file read or written (the agent's
        working memory keeps them)."""
        self.workspace = workspace
        self._touched = touched or (lambda _: None)
        self.task_id = check_name(task_id, what="task id")
        self._outputs = tuple(outputs.split("/"))
        self.task_dir = contained(workspace, *self._outputs, task_id)

    def write_file(self, path: str, content: str) -> str:
        """Write ``content`` to ``path`` inside this task's folder (tasks/<task-id>/...)."""
        target = self._task_path(path)
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            return f"refused: {len(data):,} bytes is over the {MAX_WRITE_BYTES:,}-byte limit"
        relative = target.relative_to(self.workspace.resolve()).as_posix()
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(target.stat().st_mode)
            if not mode & 0o222:  # made read-only on purpose; a rename would defeat that
                return f"refused: {relative} is read-only (mode {mode:04o}); it was left as it is"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        except OSError as exc:
            raise WorkspaceError(f"cannot write {target}: {exc.strerror}") from None
        self._touched(relative)
        return f"wrote {relative} ({len(data):,} bytes)"

    def read_file(self, path: str) -> str:
        """Read a text file anywhere in the workspace (relative path)."""
        if PurePosixPath(path.replace("\\", "/")).parts[:1] == (".git",):
            return f"{path!r} is in the workspace's history folder, which is not for reading"
        target = resolve_inside(self.workspace, path)
        if not target.is_file():
            return f"no file {path!r} in the workspace"
        with target.open("rb") as handle:
            data = handle.read(MAX_READ_BYTES + 1)
        if b"\x00" in data[:8192]:
            return f"{path!r} is a binary file"
        text = data[:MAX_READ_BYTES].decode("utf-8", "replace")
        self._touched(target.relative_to(self.workspace.resolve()).as_posix())
        return text + ("\n[... truncated]" if len(data) > MAX_READ_BYTES else "")

    def list_files(self, folder: str = "") -> str:
        """List files under a workspace folder (relative path; default: the whole workspace)."""
        base = resolve_inside(self.workspace, folder or ".")
        if not base.is_dir():
            return f"no folder {folder!r} in the workspace"
        root = self.workspace.resolve()
        found = []
        for folder_path, folders, files in os.walk(base):  # hidden folders (.git) pruned
            folders[:] = [f for f in folders if not f.startswith(".")]
            here = Path(folder_path)
            for name in files:
                p = here / name
                relative = p.relative_to(root).as_posix()
                if not name.startswith(".") and p.is_file() and not p.is_symlink():
                    found.append(relative)
        found.sort()
        return "\n".join(found[:500]) or "(empty)"

    def _task_path(self, path: str) -> Path:
        pure = PurePosixPath(path.replace("\\", "/"))
        parts = pure.parts
        prefix = (*self._outputs, self.task_id)
        if parts[: len(prefix)] == prefix:
            parts = parts[len(prefix) :]
        elif parts[:2] == ("tasks", self.task_id):
            parts = parts[2:]
        folder = "/".join(prefix)
        if not parts or pure.is_absolute() or ".." in parts:
            raise PathEscapeError(f"path {path!r} must be a relative path inside {folder}/")
        return contained(self.workspace, *prefix, *parts)
