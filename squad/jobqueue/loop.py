"""An asyncio event loop on a thread of its own, for sync code to hand coroutines to.

procrastinate is asyncio; squad's daemon and runs are threads. A node keeps one loop for the
whole process: the queue's connection pool, its worker and its heartbeats live on it, and sync
callers (a scheduler firing, a run deferring an extraction pass) wait on :meth:`call`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """One running event loop; :meth:`close` stops it after its tasks are cancelled."""

    def __init__(self, name: str = "squad-cluster") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = 30.0) -> T:
        """Run ``coroutine`` on the loop and wait for its result (its exception is raised)."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("LoopThread.call from the loop's own thread would deadlock")
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> Future[Any]:
        """Start ``coroutine`` on the loop without waiting for it."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self, timeout: float = 10.0) -> None:
        if not self.loop.is_running():
            return

        async def cancel_all() -> None:
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):  # closing anyway
            self.call(cancel_all(), timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()
