"""The daemon's run queue: at most N runs at once, never two of one squad, FIFO otherwise.

Schedules only *ask* for runs; this queue decides when they start. A squad has at most one
request waiting: asking again while one waits is coalesced into it (a cron that fires while
the last run still goes on starts one more run after it, not a pile). Workers are threads that
sleep on a condition variable, so an idle queue costs nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from squad.daemon.handoff import Ticket

__all__ = ["RunQueue", "RunRequest"]


@dataclass(frozen=True)
class RunRequest:
    """A run to start (``run_id`` None) or to resume (``run_id`` set)."""

    squad: str
    trigger: str
    """``schedule``, ``on_start``, ``missed``, ``resume``, ``web``..."""
    run_id: str | None = None
    goal: str | None = None
    """For a new run: the goal it is given (None: the squad's own)."""
    decision: tuple[str, bool, str] | None = None
    """For a paused run: (task, approved, reason), the answer to its approval gate."""
    ticket: Ticket | None = field(default=None, compare=False, repr=False)
    """For a run handed over by ``squad run``: who waits on it (:mod:`squad.daemon.handoff`)."""


class RunQueue:
    """Runs ``work(request)`` on ``workers`` threads under the rules in the module docstring."""

    def __init__(
        self,
        workers: int,
        work: Callable[[RunRequest], None],
        *,
        on_change: Callable[[], None] = lambda: None,
        name: str = "squad-run",
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        self._work = work
        self._on_change = on_change
        self._name = name
        self._cond = threading.Condition()
        self._queued: list[RunRequest] = []
        self._running: dict[str, RunRequest] = {}
        self._closed = False
        self._limit = workers
        self._threads: list[threading.Thread] = []
        self._started = False

    @property
    def limit(self) -> int:
        """Runs at once (``daemon.max_concurrent_runs``)."""
        return self._limit

    def start(self) -> None:
        with self._cond:
            self._started = True
            self._add_threads()

    def resize(self, workers: int) -> None:
        """Allow ``workers`` runs at once from now on. More start waiting requests at once;
        fewer let running work finish and start nothing new until under the limit."""
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        with self._cond:
            self._limit = workers
            if self._started and not self._closed:
                self._add_threads()
            self._cond.notify_all()
        self._on_change()

    def _add_threads(self) -> None:
        """Threads up to the limit (called under the lock); idle ones beyond it just wait."""
        while len(self._threads) < self._limit:
            thread = threading.Thread(
                target=self._loop, name=f"{self._name}-{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def submit(self, request: RunRequest, *, first: bool = False) -> bool:
        """Queue ``request`` (at the front with ``first``); False if it was coalesced into a
        request of the same squad already waiting, or the queue is closed. Approval answers
        are never coalesced."""
        with self._cond:
            if self._closed:
                return False
            # A person's answer to an approval gate is never merged into another request.
            if request.decision is None and any(
                q.squad == request.squad and q.decision is None for q in self._queued
            ):
                return False
            if first:
                self._queued.insert(0, request)
            else:
                self._queued.append(request)
            self._cond.notify_all()
        self._on_change()
        return True

    def submit_now(self, request: RunRequest) -> bool:
        """Queue ``request`` only if it starts at once: a run slot is free and its squad has
        no run going or waiting; False (nothing queued) otherwise."""
        with self._cond:
            if (
                self._closed
                or not self._started
                or len(self._running) >= self._limit
                or request.squad in self._running
                or any(q.squad == request.squad for q in self._queued)
            ):
                return False
            self._queued.insert(0, request)
            self._cond.notify_all()
        self._on_change()
        return True

    def snapshot(self) -> tuple[list[RunRequest], list[RunRequest]]:
        """(running, queued) requests, each in order."""
        with self._cond:
            return list(self._running.values()), list(self._queued)

    def idle(self) -> bool:
        with self._cond:
            return not self._queued and not self._running

    def close(self) -> list[RunRequest]:
        """Accept nothing more and drop what waits (returned); running work goes on."""
        with self._cond:
            self._closed = True
            dropped, self._queued = self._queued, []
            self._cond.notify_all()
        return dropped

    def join(self, timeout: float | None = None) -> bool:
        """After :meth:`close`, wait for running work to end; True if it all did in time."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._running:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        if self._started:
            with self._cond:
                threads = list(self._threads)
            for thread in threads:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return True

    # -- internals -------------------------------------------------------------------------

    def _next(self) -> RunRequest | None:
        """The first waiting request whose squad is not running, if the limit allows one
        more run (called under the lock)."""
        if len(self._running) >= self._limit:
            return None
        for request in self._queued:
            if request.squad not in self._running:
                self._queued.remove(request)
                self._running[request.squad] = request
                return request
        return None

    def _loop(self) -> None:
        while True:
            with self._cond:
                request = self._next()
                while request is None:
                    if self._closed:
                        return
                    self._cond.wait()
                    request = self._next()
            self._on_change()
            try:
                self._work(request)
            finally:
                with self._cond:
                    del self._running[request.squad]
                    self._cond.notify_all()
                self._on_change()
