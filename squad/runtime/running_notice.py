"""A task's ``running`` status, written only when its turn lasts long enough to be seen.

Recording ``running`` when a turn starts and the outcome when it ends cost two fsynced store
transactions and two ``status.json`` rewrites a turn, the larger part of a turn with a fast
model. The ``running`` record is for someone looking while the turn works (``squad status``,
the dashboard, the task's ``status.json``); resuming never needs it (a task the store says is
running is redone like a pending one). So it waits: a turn still working after
:data:`SHOW_AFTER_S` has it written then, from a thread of its own; a turn that ends sooner
(or is abandoned) writes it in the same transaction as its outcome (``started_at`` is then
stamped at most that late). The task's ``status.json``, a file, says ``running`` at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from squad.store import Store

__all__ = ["SHOW_AFTER_S", "RunningNotices"]

SHOW_AFTER_S = 0.2
"""How long a turn works before its ``running`` status is written on its own."""

StoreWrite = Callable[["Store"], object]
T = TypeVar("T")


class RunningNotices(Generic[T]):
    """The ``running`` records of a run's tasks not written yet, one per task (or whatever
    else a turn holds back until it lasts: ``T``, what :meth:`take` gives back).

    A notice whose turn lasts is shown by its ``show`` (the store write in a transaction of
    its own) under this object's lock, so a turn's outcome, which
    :meth:`take` s the notice first, never lands before the ``running`` record it follows.
    One thread shows them; it lives while notices come (a thread a turn cost a fast turn a
    few percent) and ends when none waits.
    """

    def __init__(self, *, delay: float = SHOW_AFTER_S) -> None:
        self._delay = delay
        self._due = threading.Condition(threading.Lock())
        self._waiting: dict[str, tuple[T, Callable[[], None], float]] = {}
        self._showing = False

    def wait(self, task_id: str, write: T, show: Callable[[], None]) -> None:
        """Hold ``task_id``'s ``running`` record (``write``): ``show`` writes it in
        :data:`SHOW_AFTER_S` unless :meth:`take` comes first."""
        with self._due:
            self._waiting[task_id] = (write, show, time.monotonic() + self._delay)
            if not self._showing:
                self._showing = True
                threading.Thread(target=self._show, name="running notices", daemon=True).start()

    def take(self, task_id: str) -> T | None:
        """The task's ``running`` write if it was not written yet (the caller writes it with
        the outcome, in one transaction); None if it was, or there was none."""
        with self._due:
            waiting = self._waiting.pop(task_id, None)
        return None if waiting is None else waiting[0]

    def _show(self) -> None:
        with self._due:
            try:
                while self._waiting:
                    now = time.monotonic()
                    for task_id, (_, show, due) in list(self._waiting.items()):
                        if due <= now:
                            del self._waiting[task_id]
                            show()
                    if self._waiting:
                        self._due.wait(min(due for _, _, due in self._waiting.values()) - now)
            finally:
                self._showing = False
