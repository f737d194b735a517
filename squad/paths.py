"""Containment of paths: nothing squad writes or reads leaves the folder it belongs to.

Names are checked lexically first (no separators, no '..', nothing absolute), then on disk:
no existing component below the base may be a symbolic link, so a link planted inside a
workspace can never redirect a read or a write out of it.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path, PurePosixPath

from squad.errors import PathEscapeError

__all__ = [
    "RUN_ID_PATTERN",
    "SLUG",
    "SLUG_PATTERN",
    "check_name",
    "contained",
    "is_within",
    "refuse_nul",
    "resolve_inside",
    "run_lock",
]

SLUG = r"[a-z0-9][a-z0-9-]{0,62}"
"""The id of a squad, an agent or a task, unanchored (to sit inside a larger pattern): 1-63
lowercase letters, digits and '-', starting with a letter or digit. Each names a folder
(``workspaces/<squad>``, ``agents/<agent>``, ``tasks/<task>``), so no id can climb or hide."""
SLUG_PATTERN = rf"^{SLUG}$"
""":data:`SLUG`, whole: what every front end and file format validates an id against."""

RUN_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
"""What the API and the command line accept as a run id (the store's are 32 hex digits)."""


def refuse_nul(path: str, *, what: str = "path") -> str:
    """``path`` unchanged, unless it holds a NUL byte: no file name can, and the system calls
    would refuse it with a ValueError, not the clear error a caller can show (HTTP 400)."""
    if "\x00" in path:
        raise PathEscapeError(
            f"{what} {path!r} contains a NUL byte (\\x00), which no file or folder name can "
            "hold; send the path without it"
        )
    return path


def check_name(name: str, *, what: str = "name") -> str:
    """A single path component that cannot climb, hide or jump: returned unchanged if safe."""
    refuse_nul(name, what=what)
    if not name or name in (".", "..") or "/" in name or "\\" in name or name != name.strip():
        raise PathEscapeError(f"{what} {name!r} is not a plain folder or file name")
    return name


def is_within(path: Path, base: Path) -> bool:
    """Lexical containment of two already-resolved paths."""
    return path == base or base in path.parents


def contained(base: Path, *parts: str) -> Path:
    """``base/parts...`` after checking every part and that no existing component is a link.

    ``base`` itself may be (or sit behind) a link: it is the trusted root the user chose.
    """
    current = _resolved(str(base)) if base.is_absolute() else base.resolve()
    for part in parts:
        check_name(part)
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise PathEscapeError(f"{part[:40]!r}... is longer than names can be") from None
        if stat.S_ISLNK(mode):
            raise PathEscapeError(
                f"{current} is a symbolic link; squad never follows links inside a workspace"
            )
    return current


@functools.lru_cache(maxsize=256)
def _resolved(base: str) -> Path:
    """A trusted root resolved once per process: workspace paths are built many times a turn,
    and the root's own links are the user's choice (see :func:`contained`)."""
    return Path(base).resolve()


def resolve_inside(base: Path, relative: str) -> Path:
    """Resolve a user-supplied relative path (``tasks/t1/output.md``) strictly inside ``base``.

    Links are allowed only where their target stays inside ``base``.
    """
    refuse_nul(relative)
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts:
        raise PathEscapeError(f"path {relative!r} must be relative to the workspace, without '..'")
    root = base.resolve()
    target = (root / Path(*pure.parts)).resolve() if pure.parts else root
    if not is_within(target, root):
        raise PathEscapeError(f"path {relative!r} leads outside the workspace (through a link)")
    return target


def run_lock(locks: Path, squad: str) -> Path:
    """``squad``'s run lock in the folder of cross-process locks (``Settings.locks_dir``): its
    live run holds it (:mod:`squad.runtime.runlock`), so probing it says whether one is live."""
    return locks / f"{check_name(squad, what='squad name')}.lock"
