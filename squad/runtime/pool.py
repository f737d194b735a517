"""Tasks running on threads of their own across the run graph's steps.

LangGraph runs a step's tasks together and starts the next step when the slowest ends (the
bulk-synchronous model of Pregel): a task that becomes ready while a slow sibling still works
would wait for it. The run's ``dispatch`` node keeps its tasks here instead: it starts every
task that can run, returns as soon as one (or more) has ended, so that the step checkpoints
what ended, and the next step starts what that made ready while the others go on working.

Each task's thread runs in a copy of the context of the step that started it, as LangGraph's
own pool would. A task that raises (a stop, a full disk, a bug) ends the wait: the others are
waited for, then the first error is raised from the step.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["TaskPool"]

V = TypeVar("V")


class TaskPool(Generic[V]):
    """The run's tasks at work, by id, and the results they ended with, in the order they
    ended. Only the graph's stepping thread calls it."""

    def __init__(self) -> None:
        self._running: dict[str, threading.Thread] = {}
        self._ended: queue.SimpleQueue[tuple[str, V | None, BaseException | None]] = (
            queue.SimpleQueue()
        )

    @property
    def running(self) -> frozenset[str]:
        """The ids of the tasks at work."""
        return frozenset(self._running)

    def start(self, key: str, work: Callable[[], V]) -> None:
        """Run ``work`` for task ``key`` on a thread of its own."""
        if key in self._running:
            raise RuntimeError(f"task {key!r} is already running")
        context = contextvars.copy_context()

        def run() -> None:
            try:
                self._ended.put((key, context.run(work), None))
            except BaseException as exc:  # noqa: BLE001  # raised on the stepping thread
                self._ended.put((key, None, exc))

        thread = threading.Thread(target=run, name=f"squad-task-{key}")
        self._running[key] = thread
        thread.start()

    def next(self) -> list[tuple[str, V]]:
        """Wait until a task ends; its result, and those of every task that ended meanwhile.

        A task that raised ends the wait too: the others are waited for, then its error is
        raised (their results are lost to the step, which the run redoes on resume)."""
        if not self._running:
            return []
        ended = [self._ended.get()]
        while True:
            try:
                ended.append(self._ended.get_nowait())
            except queue.Empty:
                break
        return self._settle(ended)

    def rest(self) -> list[tuple[str, V]]:
        """Wait for every task at work; their results in the order they ended."""
        ended = [self._ended.get() for _ in range(len(self._running))]
        return self._settle(ended)

    def close(self) -> None:
        """Wait for every task at work and drop what they return: the graph has stopped."""
        for _ in range(len(self._running)):
            key, _value, _error = self._ended.get()
            self._running.pop(key).join()

    def _settle(
        self, ended: list[tuple[str, V | None, BaseException | None]]
    ) -> list[tuple[str, V]]:
        results: list[tuple[str, V]] = []
        error: BaseException | None = None
        for key, value, raised in ended:
            self._running.pop(key).join()
            if raised is not None:
                error = error or raised
            else:
                results.append((key, value))  # type: ignore[arg-type]  # set when none raised
        if error is not None:
            self.close()
            raise error
        return results
