"""Durable file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import stat
import threading
from pathlib import Path

__all__ = ["atomic_write", "create_new", "fsync_dir", "read_up_to"]


@functools.cache
def _token(pid: int) -> str:
    """This process's part of temporary names: its pid and a random part (a pid alone
    repeats across containers sharing a folder). Keyed by pid, so a fork gets its own."""
    return f"{pid:x}-{secrets.token_hex(4)}"


def fsync_dir(path: Path) -> None:
    """Make a rename or creation inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_name(path: Path) -> Path:
    """A temporary name beside ``path`` that no other writer uses: this process's token and
    this thread's id."""
    return path.with_name(f".{path.name}.{_token(os.getpid())}-{threading.get_ident():x}.tmp")


def _write_temp(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> Path:
    """``data`` in a new temporary file beside ``path``; ``mode`` sets its permission bits
    exactly (no umask), otherwise it gets 0o644 less the umask, like any new file."""
    temp = _temp_name(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None and hasattr(os, "fchmod"):  # Windows before 3.13 has none
            os.fchmod(fd, mode)
        if durable:
            os.fsync(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    finally:
        os.close(fd)
    return temp


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data``: temporary file, fsync, rename, fsync the folder.

    ``durable=False`` skips the fsyncs: still atomic for readers and across a process kill
    (the page cache survives it), but an OS crash may lose it. For files derived from the
    store (``status.json``) that the next write rewrites anyway.

    The new file keeps the permission bits of the regular file it replaces (a 0o600 file
    stays 0o600, a read-only one stays read-only): a rename would otherwise swap in a
    default-mode file. Refusing to replace a read-only file is the caller's policy.
    """
    temp = _write_temp(path, data, durable=durable, mode=_permissions(path))
    try:
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    if durable:
        fsync_dir(path.parent)


def _permissions(path: Path) -> int | None:
    """The permission bits of the regular file at ``path`` (links followed), if there is one."""
    try:
        status = path.stat()
    except OSError:  # missing, or not reachable: the rename will say what is wrong
        return None
    return stat.S_IMODE(status.st_mode) & 0o777 if stat.S_ISREG(status.st_mode) else None


def create_new(path: Path, data: bytes) -> bool:
    """Create ``path`` with ``data`` unless it exists; never clobbers. True if created.

    A path that is there already costs a ``stat`` (no temporary file, no fsync): a daemon
    start asks this of every agent's memory.md of every squad."""
    if os.path.lexists(path):
        return False  # as the link below would say; one made meanwhile makes that say it
    temp = _write_temp(path, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink()
    fsync_dir(path.parent)
    return True


def read_up_to(fd: int, count: int) -> bytes:
    """At most ``count`` bytes from ``fd``, read in chunks, so a huge or still-growing file
    (or ``/dev/zero``) never fills memory. Ask for one byte past a limit to tell a file that
    reached it from one that passed it."""
    chunks = []
    while count > 0:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)
