"""Durable file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "create_new", "fsync_dir"]


def fsync_dir(path: Path) -> None:
    """Make a rename or creation inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(path: Path, data: bytes, *, durable: bool = True) -> Path:
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(name).unlink()
        raise
    return Path(name)


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data``: temporary file, fsync, rename, fsync the folder.

    ``durable=False`` skips the fsyncs: still atomic for readers and across a process kill
    (the page cache survives it), but an OS crash may lose it. For files derived from the
    store (``status.json``) that the next write rewrites anyway.
    """
    temp = _write_temp(path, data, durable=durable)
    try:
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    if durable:
        fsync_dir(path.parent)


def create_new(path: Path, data: bytes) -> bool:
    """Create ``path`` with ``data`` unless it exists; never clobbers. True if created."""
    temp = _write_temp(path, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink()
    fsync_dir(path.parent)
    return True
