"""One daemon per squad home: an OS file lock on ``$SQUAD_HOME/daemon.pid`` holding its pid.

The lock is :mod:`squad.flock`'s ``flock(2)``, which the kernel releases when the process dies
however it dies, so a crashed daemon's lock is simply taken by the next one; the pid written
inside is only for people and for ``squad stop``/``squad status``. A clean stop empties it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from squad import flock
from squad.errors import SquadError

__all__ = ["PID_FILE", "DaemonLock", "LockState", "pid_alive", "probe_lock"]

PID_FILE = "daemon.pid"


@dataclass(frozen=True)
class LockState:
    """What the pid file of a home says, probed without disturbing its owner."""

    held: bool
    """A live process holds the lock: a daemon runs for this home."""
    pid: int | None
    """The pid written in the file (None when empty or unreadable)."""


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists (it may belong to another user) and has not
    exited: a zombie (exited, not yet reaped by its parent) is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: the state after the command name in /proc/PID/stat; Z is a zombie
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _pid(note: str) -> int | None:
    return int(note) if note.isdigit() else None


def probe_lock(home: Path) -> LockState:
    """Whether a daemon holds ``home``'s lock, and the pid in the file."""
    found = flock.probe(home / PID_FILE)
    return LockState(held=found.held, pid=_pid(found.note))


class DaemonLock:
    """The exclusive lock of one squad home, held for the daemon's lifetime."""

    def __init__(self, home: Path) -> None:
        self.path = home / PID_FILE
        self._held: flock.HeldLock | None = None
        self.previous_pid: int | None = None
        """The pid left in the file by a daemon that died without cleaning up, if any."""

    def acquire(self, pid: int | None = None) -> None:
        """Take the lock and write ``pid`` (default: ours); SquadError if a daemon has it."""
        try:
            held = flock.acquire(self.path, str(pid if pid is not None else os.getpid()))
        except flock.LockBusy as busy:
            owner = _pid(busy.note)
            raise SquadError(
                f"a daemon is already running for {self.path.parent} "
                f"(pid {owner if owner is not None else 'unknown'}); "
                "stop it with `squad stop`, or set SQUAD_HOME to another home"
            ) from None
        left = _pid(held.previous)
        self.previous_pid = left if left is not None and left != os.getpid() else None
        self._held = held

    def release(self) -> None:
        """Empty the file, then let go of the lock; harmless when not held."""
        if self._held is not None:
            self._held.release()
            self._held = None

    def __enter__(self) -> DaemonLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
