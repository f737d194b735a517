"""The history lock of a workspace: who may commit, and who must wait while someone does.

One file, ``.squad-history.lock`` in the workspace's root, locked with ``flock(2)``, so it
holds across processes and, on a shared filesystem whose ``flock`` works across machines,
across a cluster's nodes (the same guarantee ``memory.md``'s lock needs):

- A commit, and a memory change made outside a run with its commit, hold it **exclusively**:
  nothing else writes a memory file of the workspace meanwhile, so the change's commit holds
  that change and nothing else.
- A memory write inside a run holds it **shared**: such writes go on side by side, and wait
  only while an exclusive holder works (milliseconds).

The lock is re-entrant within one context of execution (thread or task): code already holding
it exclusively (a memory change's session) writes memory files without locking again, which
would otherwise wait for itself. Other threads of the same process exclude it as other
processes do (``flock`` locks belong to open files).
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from squad.errors import WorkspaceError

__all__ = ["LOCK_NAME", "LOCK_TIMEOUT_S", "exclusive", "holds", "shared"]

LOCK_NAME = ".squad-history.lock"
LOCK_TIMEOUT_S = 60.0
_POLL_S = 0.005
_POLL_MAX_S = 0.05

_HELD: ContextVar[frozenset[str]] = ContextVar("squad_history_held", default=frozenset())
"""Workspaces whose history lock this context holds exclusively."""


def holds(workspace: Path) -> bool:
    """Whether this context holds ``workspace``'s history lock exclusively."""
    return str(workspace) in _HELD.get()


@contextmanager
def exclusive(workspace: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold the history lock alone for the block (re-entrant in this context)."""
    key = str(workspace)
    if key in _HELD.get():
        yield
        return
    fd = _take(workspace, fcntl.LOCK_EX, timeout)
    token = _HELD.set(_HELD.get() | {key})
    try:
        yield
    finally:
        _HELD.reset(token)
        _release(fd)


@contextmanager
def shared(workspace: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold the history lock beside other shared holders (a no-op inside an exclusive hold
    of this context; skipped where the lock cannot be had within ``timeout``: a write is
    never refused for the history's sake)."""
    if str(workspace) in _HELD.get():
        yield
        return
    try:
        fd: int | None = _take(workspace, fcntl.LOCK_SH, timeout)
    except WorkspaceError:
        # No workspace folder yet, or a commit that has held the lock for over the timeout:
        # the write goes on (a memory write never fails for the history's sake); at worst a
        # commit made meanwhile takes its lines too.
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            _release(fd)


def _take(workspace: Path, operation: int, timeout: float | None) -> int:
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    path = workspace / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise WorkspaceError(
            f"cannot open the history lock {path}: {exc.strerror or exc}"
        ) from None
    deadline = time.monotonic() + timeout
    pause = _POLL_S
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                os.close(fd)
                raise WorkspaceError(f"cannot lock {path}: {exc.strerror or exc}") from None
        if time.monotonic() >= deadline:
            os.close(fd)
            raise WorkspaceError(
                f"another squad process has held {path} for over {timeout:.0f}s; "
                "try again when it finishes"
            )
        time.sleep(pause)
        pause = min(pause * 2, _POLL_MAX_S)


def _release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
