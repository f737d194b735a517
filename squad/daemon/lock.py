"""One daemon per squad home: an OS file lock on ``$SQUAD_HOME/daemon.pid`` holding its pid.

The lock is ``flock(2)`` on the file, which the kernel releases when the process dies however
it dies, so a crashed daemon's lock is simply taken by the next one; the pid written inside
is only for people and for ``squad stop``/``squad status``. The file is never deleted (that
would let two daemons lock two different files of one name): a clean stop empties it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path

from squad.errors import SquadError

__all__ = ["PID_FILE", "DaemonLock", "LockState", "pid_alive", "probe_lock"]

PID_FILE = "daemon.pid"
_ATTEMPTS = 5
"""Tries before giving up: ``probe_lock`` holds a shared lock for an instant."""


@dataclass(frozen=True)
class LockState:
    """What the pid file of a home says, probed without disturbing its owner."""

    held: bool
    """A live process holds the lock: a daemon runs for this home."""
    pid: int | None
    """The pid written in the file (None when empty or unreadable)."""


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", errors="replace").strip()
    return int(text) if text.isdigit() else None


def probe_lock(home: Path) -> LockState:
    """Whether a daemon holds ``home``'s lock, and the pid in the file."""
    path = home / PID_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return LockState(held=False, pid=None)
    try:
        pid = _read_pid(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockState(held=True, pid=pid)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return LockState(held=False, pid=pid)
    finally:
        os.close(fd)


class DaemonLock:
    """The exclusive lock of one squad home, held for the daemon's lifetime."""

    def __init__(self, home: Path) -> None:
        self.path = home / PID_FILE
        self._fd: int | None = None
        self.previous_pid: int | None = None
        """The pid left in the file by a daemon that died without cleaning up, if any."""

    def acquire(self, pid: int | None = None) -> None:
        """Take the lock and write ``pid`` (default: ours); SquadError if a daemon has it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            for attempt in range(_ATTEMPTS):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                        raise
                    if attempt == _ATTEMPTS - 1:
                        owner = _read_pid(fd)
                        raise SquadError(
                            f"a daemon is already running for {self.path.parent} "
                            f"(pid {owner if owner is not None else 'unknown'}); "
                            "stop it with `squad stop`, or set SQUAD_HOME to another home"
                        ) from None
                    time.sleep(0.05)
            left = _read_pid(fd)
            self.previous_pid = left if left is not None and left != os.getpid() else None
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{pid if pid is not None else os.getpid()}\n".encode())
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Empty the file, then let go of the lock; harmless when not held."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        finally:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None

    def __enter__(self) -> DaemonLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
