"""A full disk, named: which filesystem, how much is free, what to do.

Every writer of squad's state (the store, checkpoints, memory files, workspaces) turns the
system's "no space" errors, and SQLite's ways of saying the same, into one
:class:`~squad.errors.DiskFull` whose message a person can act on.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from squad.errors import DiskFull

__all__ = ["ALMOST_FULL_BYTES", "FULL_ERRNOS", "as_disk_full", "disk_full"]

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""No room left: on the disk, in the user's quota, or under the file-size limit."""
_SQLITE_FULL = 13
_SQLITE_MAYBE_FULL = frozenset({8, 10, 14})
"""READONLY, IOERR, CANTOPEN: what SQLite says when it cannot make or grow its WAL index or
journal on a full disk; a full disk only if the filesystem really has (almost) no room."""
ALMOST_FULL_BYTES = 1 << 20
"""Less free space than this on the database's filesystem is a full disk for SQLite's sake."""


def disk_full(path: Path) -> DiskFull:
    """The error for a write under ``path`` that found no room: the filesystem (its mount
    point and device), its free space, and what to do."""
    mount = _mount_point(path)
    try:
        usage = shutil.disk_usage(mount)
        free, total = usage.free, usage.total
    except OSError:
        free = total = 0
    device = _device(mount)
    on = f"{mount} ({device})" if device else mount
    return DiskFull(
        f"the disk holding {str(path)!r} is full: {on} has {_size(free)} free of "
        f"{_size(total)}, so squad cannot write its state there and nothing was changed. "
        "Free some space on it (or move SQUAD_HOME and the workspaces to a disk with room) and "
        "try again; reading commands (squad status, squad runs list, squad memory show) still "
        "work meanwhile",
        path=str(path),
        mount=mount,
        free=free,
        total=total,
    )


def as_disk_full(exc: BaseException, path: Path | None) -> DiskFull | None:
    """``exc`` (or what caused it) as a :class:`DiskFull` about ``path`` when it means that
    the disk is full: ENOSPC, EDQUOT or EFBIG, SQLite's "database or disk is full", or its
    I/O and read-only errors on a filesystem with (almost) no room left."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFull):
            return current
        where = path if path is not None else Path(getattr(current, "filename", None) or ".")
        if isinstance(current, OSError) and current.errno in FULL_ERRNOS:
            return disk_full(where)
        if isinstance(current, sqlite3.Error) and path is not None:
            code = getattr(current, "sqlite_errorcode", 0) & 0xFF
            if code == _SQLITE_FULL or (code in _SQLITE_MAYBE_FULL and _almost_full(path)):
                return disk_full(path)
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return None


def _almost_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(_mount_point(path)).free < ALMOST_FULL_BYTES
    except OSError:
        return False


def _mount_point(path: Path) -> str:
    current = path.absolute()
    while not current.exists() and current.parent != current:
        current = current.parent
    while not os.path.ismount(current) and current.parent != current:
        current = current.parent
    return str(current)


def _device(mount: str) -> str | None:
    """The device mounted at ``mount`` (from /proc/self/mounts where there is one)."""
    device = None
    try:
        with Path("/proc/self/mounts").open(encoding="utf-8") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) >= 2 and fields[1].replace("\\040", " ") == mount:
                    device = fields[0]  # the last mount there is the one seen
    except OSError:
        return None
    return device


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
