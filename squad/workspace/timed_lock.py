"""The lock of one squad's workspace while squad changes it (create, restore, update).

Its own module so that filelock (and the logging it imports) loads with the first workspace
write, not with every command that only reads a workspace (``squad memory context``).
"""

from __future__ import annotations

from filelock import FileLock, Timeout

from squad.errors import WorkspaceError

__all__ = ["TimedLock"]


class TimedLock(FileLock):
    """A FileLock whose timeout becomes a WorkspaceError naming the lock file."""

    def acquire(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return super().acquire(*args, **kwargs)
        except Timeout:
            raise WorkspaceError(
                f"another squad process holds {self.lock_file} (waited {self.timeout:.0f}s); "
                "try again when it finishes"
            ) from None
