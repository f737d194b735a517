"""Runs started by the daemon: each on a queue worker, each with its own SquadRunner.

A runner's ``stop`` event is per runner, so asking every run to stop at its next checkpoint
means setting each one's. The runners come from the daemon's :class:`~squad.app.App`, so they
share its memory service, checkpoints and background extractor (drained when the daemon
stops). Everything a run can raise is reported in the daemon's log and counted; no run can take
a worker (or the daemon) down with it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from squad.daemon.runqueue import RunQueue, RunRequest
from squad.errors import NotFound, SquadBusy, SquadError, UsageError

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.catalog import LoadedSquad
    from squad.daemon.eventlog import DaemonLog
    from squad.runtime.run_result import RunResult
    from squad.runtime.runner import SquadRunner
    from squad.store import Store

__all__ = [
    "SCHEDULED",
    "RunDispatcher",
    "RunEndFields",
    "log_asked",
    "run_end_fields",
    "waiting_approval",
]

SCHEDULED = frozenset({"schedule", "on_start", "missed"})
"""Triggers of runs nobody asked for by hand. While a squad has a run waiting for approval,
such a fire starts no new run (``fire_skipped_waiting_approval``): a gated squad on a schedule
keeps one run waiting, not one per tick. A person's request (dashboard, API) still starts one.
"""


def log_asked(log: DaemonLog, request: RunRequest, accepted: bool) -> bool:
    """Log a person's request for a run (``run_requested``, or ``run_coalesced`` when it
    was merged into one already waiting); ``accepted``, for the caller to return."""
    log.emit(
        "run_requested" if accepted else "run_coalesced",
        squad=request.squad,
        trigger=request.trigger,
        run_id=request.run_id,
    )
    return accepted


class RunEndFields(TypedDict):
    """What a ``run_end`` event says of a run."""

    run_id: str
    status: str
    duration_s: float | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    error: str | None
    awaiting: str | None


def run_end_fields(result: RunResult) -> RunEndFields:
    """What a ``run_end`` event says of a run; its duration is the store's, as ``squad
    status`` shows it."""
    return {
        "run_id": result.run_id,
        "status": result.status,
        "duration_s": result.duration_s,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "cost_usd": result.cost_usd,
        "error": result.error,
        "awaiting": result.awaiting,
    }


def waiting_approval(store: Store, squad: str) -> str | None:
    """The id of the squad's newest run waiting for approval, if it has one."""
    from squad.store.records import RunStatus

    for run in store.interrupted_runs(squad):
        if run.status is RunStatus.AWAITING_APPROVAL:
            return run.id
    return None


@dataclass
class _Active:
    request: RunRequest
    since: datetime
    runner: SquadRunner | None = None


class RunDispatcher:
    """Starts and resumes runs from a :class:`RunQueue`; thread-safe."""

    def __init__(
        self,
        app: App,
        log: DaemonLog,
        *,
        lookup: Callable[[str], LoadedSquad | None],
        workers: int,
        auto_approve: bool = False,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self._app = app
        self._store = app.store
        self._log = log
        self._lookup = lookup
        self._clock = app.clock
        self._auto_approve = auto_approve
        self._lock = threading.Lock()
        self._active: dict[str, _Active] = {}
        self._stopping = False
        self.failures = 0
        """Runs that failed, stopped on a limit, or could not start or resume."""
        self.queue = RunQueue(workers, self._execute, on_change=on_change)

    def submit(self, request: RunRequest, *, first: bool = False) -> bool:
        return self.queue.submit(request, first=first)

    def ask(self, request: RunRequest) -> bool:
        """A request from a person (the dashboard): queued and logged ``run_requested``, or
        logged ``run_coalesced`` when it was merged into one already waiting."""
        return log_asked(self._log, request, self.queue.submit(request))

    def hand_off(self, request: RunRequest) -> bool:
        """A run ``squad run`` hands over (``request.ticket`` set): queued, and logged
        ``run_requested``, only if it starts at once (a free slot, its squad idle) and this
        daemon would run it as the command would (it approves no gate by itself); False,
        nothing queued and nothing logged, otherwise."""
        with self._lock:
            if self._stopping or self._auto_approve:
                return False
        if not self.queue.submit_now(request):
            return False
        return log_asked(self._log, request, True)

    def running_since(self) -> dict[str, datetime]:
        with self._lock:
            return {squad: active.since for squad, active in self._active.items()}

    def stop_all(self) -> None:
        """No new runs; every running one stops at its next checkpoint."""
        with self._lock:
            self._stopping = True
            for active in self._active.values():
                if active.runner is not None:
                    active.runner.stop.set()

    def wait(self, grace: float, *, force: threading.Event) -> bool:
        """After :meth:`stop_all`, wait up to ``grace`` seconds; True if every run ended."""
        deadline = time.monotonic() + grace
        while True:
            # Again each round: a run started since has a runner of its own.
            self.stop_all()
            remaining = deadline - time.monotonic()
            if self.queue.join(timeout=max(0.0, min(0.5, remaining))):
                return True
            if remaining <= 0 or force.is_set():
                return False

    def abandon(self) -> list[str]:
        """Runs still going after the grace period: recorded as interrupted (resumable)."""
        from squad.store.records import RunStatus

        with self._lock:
            squads = sorted(self._active)
        left = []
        for squad in squads:
            for run in self._store.interrupted_runs(squad):
                if run.status is RunStatus.RUNNING:
                    self._store.update_run(
                        run.id,
                        status=RunStatus.INTERRUPTED,
                        error="the daemon stopped before the step finished; the next start "
                        "resumes it (or `squad resume`)",
                    )
                    left.append(run.id)
        return left

    # -- a worker's side -------------------------------------------------------------------

    def _execute(self, request: RunRequest) -> None:
        """One run from the queue, on a worker thread; never raises. A handed-over run's
        ticket always hears how it ended."""
        try:
            self._execute_request(request)
        finally:
            if request.ticket is not None:
                request.ticket.close("the daemon is stopping: the run did not start")

    def _execute_request(self, request: RunRequest) -> None:
        squad = self._lookup(request.squad)
        with self._lock:
            if self._stopping:
                return
            active = _Active(request, self._clock())
            self._active[request.squad] = active
        try:
            if squad is None:
                reason = "the squad is no longer in the squads folder"
                self._log.emit(
                    "run_dropped", squad=request.squad, trigger=request.trigger, reason=reason
                )
                if request.ticket is not None:
                    request.ticket.failed(NotFound(f"{request.squad}: {reason}"))
                return
            self._run(request, squad, active)
        finally:
            with self._lock:
                self._active.pop(request.squad, None)

    def _run(self, request: RunRequest, squad: LoadedSquad, active: _Active) -> None:
        if request.run_id is None and request.trigger in SCHEDULED:
            waiting = waiting_approval(self._store, request.squad)
            if waiting is not None:
                self._log.emit(
                    "fire_skipped_waiting_approval",
                    squad=request.squad,
                    trigger=request.trigger,
                    waiting=waiting,
                )
                return
        self._log.emit(
            "run_start", squad=request.squad, trigger=request.trigger, run_id=request.run_id
        )
        ticket = request.ticket
        try:
            if ticket is None:
                runner = self._app.runner()
            else:
                runner = self._app.runner(progress=ticket.progress)
                runner.on_run = ticket.started
                ticket.bind(runner)
            with self._lock:
                active.runner = runner
                if self._stopping:
                    runner.stop.set()
            result = self._drive(runner, request, squad)
        except BaseException as exc:  # noqa: BLE001 - the ticket hears it; _report re-raises
            try:
                self._report(request, exc)
            finally:
                if ticket is not None:  # once logged: whoever waits finds it in the log
                    ticket.failed(exc)
            return
        if result.status in ("failed", "stopped"):
            self._count_failure()
        self._log.emit("run_end", squad=request.squad, **run_end_fields(result))
        if ticket is not None:
            ticket.ended(result)

    def _report(self, request: RunRequest, exc: BaseException) -> None:
        """Log (and count) what a run raised; anything but an Exception is raised again."""
        if not isinstance(exc, Exception):
            raise exc
        if isinstance(exc, SquadBusy):  # a `squad run` in another process has the squad
            self._log.emit(
                "run_skipped",
                squad=request.squad,
                trigger=request.trigger,
                run_id=request.run_id,
                reason=str(exc),
                running=exc.run_id,
            )
            return
        self._count_failure()
        if isinstance(exc, SquadError):
            self._log.emit("run_error", squad=request.squad, run_id=request.run_id, error=str(exc))
            if (
                request.run_id is not None
                and request.decision is None
                and isinstance(exc, UsageError)
            ):
                self._give_up_resume(request.run_id, str(exc))
            return
        # Logged, and the daemon goes on.
        self._log.emit(
            "run_error",
            squad=request.squad,
            run_id=request.run_id,
            error=f"{type(exc).__name__}: {exc}",
        )

    def _drive(self, runner: SquadRunner, request: RunRequest, squad: LoadedSquad) -> RunResult:
        if request.run_id is not None and request.decision is not None:
            task, approved, reason = request.decision
            result = runner.approve(request.run_id, task, approved=approved, reason=reason)
        elif request.run_id is not None:
            result = runner.resume(request.run_id)
        else:
            result = runner.run(
                squad.spec, squad.workspace, trigger=request.trigger, goal=request.goal
            )
        while self._auto_approve and result.awaiting and not self._stopping:
            self._log.emit(
                "auto_approve", squad=request.squad, run_id=result.run_id, task=result.awaiting
            )
            result = runner.approve(result.run_id, result.awaiting, approved=True)
        return result

    def _give_up_resume(self, run_id: str, reason: str) -> None:
        """A run that cannot be resumed (it has no checkpoint) is failed, so that no later
        start tries again; one stopped by a full disk, say, stays resumable."""
        from squad.store.records import RunStatus

        with self._lock:
            if self._stopping:
                return
        run = self._store.get_run(run_id)
        if run is not None and run.status in (RunStatus.RUNNING, RunStatus.INTERRUPTED):
            self._store.update_run(
                run_id, status=RunStatus.FAILED, error=f"could not resume: {reason}"
            )

    def _count_failure(self) -> None:
        with self._lock:
            self.failures += 1
