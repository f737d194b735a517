"""What a writer of a workspace file holds around its write, and the hook of no history.

Memory writers take a :class:`WriteHook` (a :class:`~squad.history.history.History`, a run's
``RunWrites``, or :data:`NO_HISTORY`); this module names that seam without importing the
history itself (git, packing, commit messages), which a command that only reads memory never
uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

__all__ = ["NO_HISTORY", "WriteHook", "Wrote", "ignore_write"]

Wrote = Callable[[str, "bytes | None", "bytes | None"], None]
"""``(path relative to the workspace, bytes before, bytes after)``."""


class WriteHook(Protocol):
    """What a writer of a workspace file holds around its write (see :mod:`squad.memory`)."""

    def writing(self, actor: str) -> AbstractContextManager[Wrote]: ...


class _NoHistory:
    """No history: writes are neither locked for it nor recorded."""

    @contextmanager
    def writing(self, actor: str) -> Iterator[Wrote]:
        yield ignore_write


def ignore_write(path: str, before: bytes | None, after: bytes | None) -> None:
    """A :data:`Wrote` that records nothing."""
    return None


NO_HISTORY: WriteHook = _NoHistory()
