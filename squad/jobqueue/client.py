"""A process's way into the cluster's queue: one loop thread, one procrastinate App, opened on
first use and shared by everything in the process (a node's worker, its scheduler, a chat's
extraction passes). :meth:`squad.app.App.cluster` makes it."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from squad.errors import StoreError
from squad.jobqueue.loop import LoopThread
from squad.jobqueue.payloads import RunJobArgs
from squad.jobqueue.queue import ClusterQueue, JobInfo
from squad.jobqueue.schema import ensure_schema

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from squad.settings import Settings

__all__ = ["ClusterClient"]

CALL_TIMEOUT_S = 30.0


class ClusterClient:
    """Sync front of :class:`~squad.jobqueue.queue.ClusterQueue`; thread-safe."""

    def __init__(self, settings: Settings, *, pool_size: int = 4) -> None:
        self.settings = settings
        self._pool_size = pool_size
        self._lock = threading.Lock()
        self._loop: LoopThread | None = None
        self._queue: ClusterQueue | None = None
        self._closed = False

    def open(self) -> ClusterQueue:
        """The queue, its schema made and its pool open (StoreError when Postgres is not)."""
        with self._lock:
            if self._closed:
                raise StoreError("the cluster client is closed")
            if self._queue is None:
                ensure_schema(self.settings)
                queue = ClusterQueue(self.settings, pool_size=self._pool_size)
                loop = LoopThread()
                try:
                    loop.call(queue.open())
                except BaseException:
                    loop.close()
                    raise
                self._loop, self._queue = loop, queue
            return self._queue

    @property
    def loop(self) -> LoopThread:
        self.open()
        assert self._loop is not None
        return self._loop

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = CALL_TIMEOUT_S) -> Any:
        """Run a coroutine of the queue on its loop; database failures are StoreErrors."""
        self.open()
        assert self._loop is not None
        try:
            return self._loop.call(coroutine, timeout)
        except StoreError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("procrastinate", "psycopg")):
                raise StoreError(f"the cluster's queue failed: {exc}") from exc
            raise

    def defer_run(self, args: RunJobArgs, *, fire: tuple[str, int] | None = None) -> int | None:
        return self.call(self.open().defer_run(args, fire=fire))  # type: ignore[no-any-return]

    def defer_extraction(self, squad: str, agent: str) -> int | None:
        return self.call(self.open().defer_extraction(squad, agent))  # type: ignore[no-any-return]

    def defer_maintenance(self, name: str, timestamp: int) -> int | None:
        return self.call(self.open().defer_maintenance(name, timestamp))  # type: ignore[no-any-return]

    def waiting_run(self, squad: str) -> bool:
        return bool(self.call(self.open().waiting_run(squad)))

    def jobs(self, status: str) -> list[JobInfo]:
        return self.call(self.open().jobs(status))  # type: ignore[no-any-return]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            loop, queue = self._loop, self._queue
            self._loop = self._queue = None
        if loop is not None and queue is not None:
            with contextlib.suppress(Exception):  # closing anyway
                loop.call(queue.close(), 10.0)
            loop.close()
