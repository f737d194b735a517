"""What every checkpoint backend does: a saver per use, tables made once, threads listed,
their last write times read, and whole threads deleted."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from squad.checkpoints.redaction import CheckpointSweep

__all__ = ["Checkpoints", "Fence"]


@dataclass(frozen=True)
class Fence:
    """A cluster node's claim of a run: the run and the epoch its claim took."""

    run_id: str
    epoch: int


class _Creates(Protocol):
    """The savers squad uses (SQLite, Postgres) create their tables with ``setup()``."""

    def setup(self) -> None: ...


class Checkpoints(ABC):
    """The LangGraph checkpoints of runs: one thread per run, its id the run id.

    Thread-safe. :meth:`saver` gives each use (a run, a resume, a look at a paused run) a saver
    of its own, so concurrent runs never wait on one another's checkpointer lock.
    """

    backend: ClassVar[str]
    """``sqlite`` or ``postgres``."""

    def __init__(self) -> None:
        self._ready = False
        self._setup_lock = threading.Lock()

    @property
    @abstractmethod
    def where(self) -> str:
        """Where the checkpoints live, fit for a message (a path; a URL without its password)."""

    @abstractmethod
    def _connect(self) -> AbstractContextManager[BaseCheckpointSaver[str]]:
        """A saver on a connection of its own, closed (or handed back) when the block ends."""

    @abstractmethod
    def _list_threads(self) -> list[str]:
        """Every thread with a checkpoint, from the backend's own table."""

    def backend_errors(self) -> tuple[type[BaseException], ...]:
        """What the backend's driver raises when its database fails (a dropped connection, a
        locked or vanished file), for callers to report it as the store failing."""
        import sqlite3

        return (sqlite3.Error,)

    def _exists(self) -> bool:
        """Whether there can be checkpoints at all (a SQLite file not made yet holds none)."""
        return True

    def setup(self) -> None:
        """Create the checkpoint tables (idempotent; done once per instance, then remembered)."""
        with self._setup_lock:
            if not self._ready:
                self._create_tables()
                self._ready = True

    def _create_tables(self) -> None:
        """LangGraph's own set-up of its tables; a backend guards it against other processes."""
        with self._connect() as saver:
            cast(_Creates, saver).setup()

    @contextmanager
    def saver(self, fence: Fence | None = None) -> Iterator[BaseCheckpointSaver[str]]:
        """A checkpointer to compile one run's graph with, ready to use.

        ``fence`` (a cluster node's claim of the run) makes every checkpoint write check, in
        its own transaction, that the run is still at that epoch, and refuse it otherwise
        (:class:`~squad.errors.RunFenced`) where the checkpoints share the store's database
        (Postgres, which a cluster needs). A SQLite file cannot see the store's runs: there
        the store's own fenced writes are the check."""
        self.setup()
        with self._connect() as saver:
            yield saver if fence is None else self._fenced(saver, fence)

    def _fenced(self, saver: BaseCheckpointSaver[str], fence: Fence) -> BaseCheckpointSaver[str]:
        """``saver`` with its writes checked against ``fence``; by default unchanged."""
        return saver

    def threads(self) -> list[str]:
        """Every run id with checkpoints, sorted; [] when none was ever written."""
        return sorted(self._list_threads()) if self._exists() else []

    def last_written(self, threads: Iterable[str]) -> dict[str, datetime]:
        """When each thread's newest checkpoint was written (threads without one left out)."""
        wanted = list(threads)
        if not wanted or not self._exists():
            return {}
        found = {}
        with self.saver() as saver:
            for thread_id in wanted:
                latest = saver.get_tuple({"configurable": {"thread_id": thread_id}})
                if latest is not None:
                    written = datetime.fromisoformat(latest.checkpoint["ts"])
                    found[thread_id] = written if written.tzinfo else written.replace(tzinfo=UTC)
        return found

    def delete(self, threads: Iterable[str]) -> list[str]:
        """Delete every checkpoint of these threads; the ids that had any, sorted."""
        doomed = sorted(set(self.threads()).intersection(threads))
        if doomed:
            with self.saver() as saver:
                for thread_id in doomed:
                    saver.delete_thread(thread_id)
        return doomed

    def scrub(self, *, fix: bool, threads: Collection[str] | None = None) -> CheckpointSweep:
        """Credentials in the checkpoints of ``threads`` (all when None), found with the
        current detector; with ``fix`` redacted in place (:mod:`squad.checkpoints.redaction`).
        A backend that cannot sweep its checkpoints says so (``supported`` False)."""
        from squad.checkpoints.redaction import CheckpointSweep

        return CheckpointSweep(supported=False)

    def compact(self) -> int:
        """Give the space of deleted checkpoints back to the file system; the bytes given
        back (0 for a backend whose server reuses it, as Postgres's autovacuum does)."""
        return 0

    def close(self) -> None:  # noqa: B027 - only a backend with a pool has anything to close
        """Let go of pooled connections (calling it twice is harmless)."""
