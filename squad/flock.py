"""An exclusive ``flock(2)`` on a small file saying who holds it: liveness the kernel vouches for.

The kernel releases the lock when its holder dies, however it dies (``kill -9`` included), so
"is the lock held?" answers "is the holder alive?" with no heartbeat, no pid reuse and no
clock. The file carries a line of text for people and for the next holder (a pid, a run id);
it is never deleted, since that would let two processes lock two different files of one name.
Locks are per open file: two holders in one process exclude each other like two processes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path

from squad.errors import SquadError
from squad.fsutil import private_dir

__all__ = ["HeldLock", "LockBusy", "Probe", "acquire", "probe"]

_RETRY_S = 0.05
"""A probe holds a shared lock for an instant; an exclusive attempt retries across it."""


class LockBusy(SquadError):
    """Another open file holds the lock; ``note`` is what its holder wrote in the file."""

    def __init__(self, path: Path, note: str) -> None:
        super().__init__(f"{path} is locked by {note or 'an unknown holder'}")
        self.path = path
        self.note = note


@dataclass(frozen=True)
class Probe:
    """What a lock file says, read without disturbing its holder."""

    held: bool
    note: str
    """The holder's note (a live holder's, or the last one's when ``held`` is False)."""


def _busy(exc: OSError) -> bool:
    return exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode("utf-8", errors="replace").strip()


def probe(path: Path) -> Probe:
    """Whether a live process holds ``path``'s lock, and the note in the file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return Probe(held=False, note="")
    try:
        note = _read(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if not _busy(exc):
                raise
            return Probe(held=True, note=note)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return Probe(held=False, note=note)
    finally:
        os.close(fd)


class HeldLock:
    """A lock this process holds; :meth:`release` (or the process's death) lets it go."""

    def __init__(self, path: Path, fd: int, previous: str) -> None:
        self.path = path
        self._fd: int | None = fd
        self.previous = previous
        """The note a holder that died without releasing left in the file ("" if none)."""

    def rewrite(self, note: str) -> None:
        """Replace the note in the file (the lock stays held)."""
        if self._fd is None:
            raise ValueError(f"the lock on {self.path} is not held")
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, f"{note}\n".encode())

    def release(self) -> None:
        """Empty the file, then let go; harmless when already released."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        finally:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None

    def __enter__(self) -> HeldLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire(path: Path, note: str, *, wait_s: float = 0.25) -> HeldLock:
    """Take ``path``'s lock and write ``note`` in it; :class:`LockBusy` when another holder
    keeps it for ``wait_s`` seconds."""
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if not _busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise LockBusy(path, _read(fd)) from None
                time.sleep(_RETRY_S)
        previous = _read(fd)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{note}\n".encode())
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return HeldLock(path, fd, previous)
