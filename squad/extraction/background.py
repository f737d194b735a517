"""The trigger: every ``trigger_interval`` replies of an agent, an extraction pass in the
background, on one worker thread per process.

:meth:`BackgroundExtractor.notify` is what a reply path calls; it only counts and, at the
interval, queues the agent: no store access and no waiting, so replies are never delayed.
Queued agents are not queued twice, and the store's claim makes a pass that finds another one
in flight (in any process) coalesce into it. The first notify of an agent in a process asks
the worker to check the store, so replies counted by an earlier process are not lost.

A queued pass starts in the first quiet moment: once no reply has been notified for
``quiet_s`` (a person reading the answer), or after ``max_delay_s`` at the latest, so a pass
never competes with a reply for the interpreter while replies come back to back (a run, a
script). :meth:`BackgroundExtractor.drain` and :meth:`~BackgroundExtractor.close` start
queued passes at once. A pass still running when :meth:`~BackgroundExtractor.close` gives up
waiting (a slow model, a process that must end) is given up: its claim is handed back, so the
next process's pass runs instead of finding the agent busy for :data:`~.job.STALE_CLAIM`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from squad.extraction.job import AgentExtractor, PassControl, interval_of
from squad.extraction.record import PassReport
from squad.memory.agent import AgentContext

__all__ = ["BackgroundExtractor", "Worker"]

Key = tuple[str, str, str]
QUIET_S = 0.25
"""A pass waits for this long without a reply before it starts ..."""
MAX_DELAY_S = 30.0
"""... but never longer than this after it was queued."""


def _key(ctx: AgentContext) -> Key:
    """One agent of one squad in one workspace."""
    return (ctx.squad.name, ctx.agent.id, str(ctx.workspace))


class Worker(threading.Thread):
    """The worker thread of one :class:`BackgroundExtractor` (its ``owner``)."""

    def __init__(self, owner: BackgroundExtractor) -> None:
        super().__init__(target=owner._work, name="squad-extractor", daemon=True)
        self.owner = owner


@dataclass
class _Agent:
    ctx: AgentContext
    replies: int = 0
    checked: bool = False


class BackgroundExtractor:
    """Queues and runs extraction passes; :meth:`close` drains it before the process ends."""

    def __init__(
        self,
        extractor: AgentExtractor,
        *,
        on_error: Callable[[AgentContext, BaseException], None] | None = None,
        on_pass: Callable[[AgentContext, list[PassReport]], None] | None = None,
        quiet_s: float = QUIET_S,
        max_delay_s: float = MAX_DELAY_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.extractor = extractor
        self.quiet_s = quiet_s
        self.max_delay_s = max_delay_s
        self._monotonic = monotonic
        self._last_reply = -float("inf")
        self._hurry = 0
        self._on_error = on_error or (lambda ctx, exc: None)
        self._on_pass = on_pass or (lambda ctx, reports: None)
        self._agents: dict[Key, _Agent] = {}
        self._queue: deque[tuple[Key, bool, float]] = deque()
        self._queued: set[Key] = set()
        self._busy = False
        self._running: PassControl | None = None
        self._given_up = False
        self._closed = False
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None

    def notify(self, ctx: AgentContext, replies: int = 1) -> None:
        """The agent gave ``replies`` more replies; queue a pass when the interval is reached."""
        if not ctx.extraction_enabled or replies <= 0:
            return
        key = _key(ctx)
        with self._lock:
            if self._closed:
                return
            self._last_reply = self._monotonic()
            agent = self._agents.setdefault(key, _Agent(ctx))
            agent.ctx = ctx
            agent.replies += replies
            if not agent.checked:
                agent.checked = True
                self._enqueue(key, check=True)
            elif agent.replies >= interval_of(ctx):
                self._enqueue(key, check=False)

    def check(self, ctx: AgentContext) -> None:
        """Queue a look at the store: a pass runs if the agent has ``trigger_interval`` unread
        replies (a sweep for replies whose process ended before their pass ran)."""
        if not ctx.extraction_enabled:
            return
        key = _key(ctx)
        with self._lock:
            if self._closed:
                return
            agent = self._agents.setdefault(key, _Agent(ctx))
            agent.checked = True
            self._enqueue(key, check=True)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running; False on timeout."""
        with self._lock:
            self._hurry += 1
            self._lock.notify_all()
            try:
                return self._lock.wait_for(lambda: not self._queue and not self._busy, timeout)
            finally:
                self._hurry -= 1

    def close(self, timeout: float | None = 30.0, *, abandon: bool = False) -> bool:
        """Finish what is queued (up to ``timeout``), then stop the worker; ``abandon`` drops
        the queue instead (a pass already running gets ``timeout`` to end). A pass still
        running then is given up: it writes nothing more and its claim is released. Either
        way, replies not yet processed stay past the watermark: the next pass (any process)
        reads them."""
        done = False if abandon else self.drain(timeout)
        with self._lock:
            self._closed = True
            if abandon:
                self._queue.clear()
                self._queued.clear()
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout if done or abandon else 0.1)
            if self._thread.is_alive():
                with self._lock:
                    self._given_up = True
                    running = self._running
                if running is not None:
                    running.give_up(self.extractor.memory)
        return done

    # -- worker ----------------------------------------------------------------------------

    def _enqueue(self, key: Key, *, check: bool) -> None:
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.append((key, check, self._monotonic()))
        if self._thread is None:
            self._thread = Worker(self)
            self._thread.start()
        self._lock.notify_all()

    def _work(self) -> None:
        while True:
            with self._lock:
                while True:
                    self._lock.wait_for(lambda: self._queue or self._closed)
                    if not self._queue:
                        return
                    wait = self._wait_before_next()
                    if wait <= 0:
                        break
                    self._lock.wait(wait)
                key, check, _ = self._queue.popleft()
                self._queued.discard(key)
                agent = self._agents[key]
                counted, agent.replies = agent.replies, 0
                self._busy = True
            try:
                self._run(agent.ctx, check)
            except Exception as exc:  # noqa: BLE001 - a pass must never take the worker down
                with self._lock:
                    agent.replies += counted
                self._on_error(agent.ctx, exc)
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()

    def _wait_before_next(self) -> float:
        """Seconds until the head of the queue may start (0: now). Called under the lock."""
        if self._hurry or self._closed:
            return 0.0
        now = self._monotonic()
        queued_at = self._queue[0][2]
        return min(self._last_reply + self.quiet_s - now, queued_at + self.max_delay_s - now)

    def _run(self, ctx: AgentContext, check: bool) -> None:
        if check:
            conversation = self.extractor.memory.store.conversation
            mark = conversation.watermark(ctx.squad.name, ctx.agent.id).last_processed_seq
            waiting = conversation.replies_after(ctx.squad.name, ctx.agent.id, mark)
            if waiting < interval_of(ctx):
                with self._lock:  # too early: go on counting from what the store has
                    self._agents[_key(ctx)].replies += waiting
                return
        control = PassControl()
        with self._lock:
            self._running = control
            given_up = self._given_up
        if given_up:  # close stopped waiting just before this pass began
            control.give_up(self.extractor.memory)
        try:
            reports = self.extractor.run(ctx, control=control)
        finally:
            with self._lock:
                self._running = None
        self._on_pass(ctx, reports)
