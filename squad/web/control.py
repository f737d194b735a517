"""How the web front end starts, resumes and answers runs: through the daemon when it serves
the app, else through a run queue of its own (``squad dashboard``).

Either way a request goes on the same :class:`~squad.daemon.runqueue.RunQueue` rules as a
schedule's (one run per squad at a time, a bounded number at once), and the HTTP request that
asked returns at once: the run goes on in the background and the pages follow it live.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from squad.daemon.runqueue import RunRequest

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.catalog import LoadedSquad
    from squad.daemon.handoff import HandOver, Ticket
    from squad.daemon.runs import RunDispatcher
    from squad.daemon.service import Daemon
    from squad.store.records import RunRecord

__all__ = ["DaemonControl", "LocalControl", "RunControl", "RunRequest", "approval_answer"]

DASHBOARD_LOG = "dashboard.jsonl"


def approval_answer(
    app: App, run: RunRecord, task: str, approved: bool, reason: str, *, trigger: str
) -> RunRequest:
    """The request that answers ``run``'s approval gate on ``task``; a UsageError when the run
    is not paused there (the dashboard, the API and MCP answer gates alike)."""
    from squad.errors import UsageError
    from squad.store.records import RunStatus, TaskStatus

    if run.status is not RunStatus.AWAITING_APPROVAL:
        raise UsageError(f"run {run.id!r} is {run.status.value}, not waiting for an approval")
    record = app.store.run_state.get_task(run.id, task)
    if record is None or record.status is not TaskStatus.AWAITING_APPROVAL:
        raise UsageError(f"run {run.id!r} does not wait on task {task!r}")
    return RunRequest(run.squad, trigger, run_id=run.id, decision=(task, approved, reason.strip()))


class RunControl(Protocol):
    """What the web front end may ask of runs."""

    mode: Literal["daemon", "dashboard", "process"]

    def submit(self, request: RunRequest) -> bool:
        """Queue ``request``; False when it was merged into one already waiting."""
        ...

    def hand_off(self, check: HandOver, ticket: Ticket) -> str | None:
        """Start a run ``squad run`` hands over, at once: None when it started, else why
        not (:mod:`squad.daemon.handoff`)."""
        ...

    def close(self) -> None: ...


class DaemonControl:
    """Requests go to the daemon serving the app (its queue, its log, its concurrency)."""

    mode: Literal["daemon", "dashboard", "process"] = "daemon"

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    def submit(self, request: RunRequest) -> bool:
        return self._daemon.submit(request)

    def hand_off(self, check: HandOver, ticket: Ticket) -> str | None:
        return self._daemon.hand_off(check, ticket)

    def close(self) -> None:
        """The daemon stops its own runs."""


class LocalControl:
    """Requests run in this process (``squad dashboard``, ``squad mcp``), logged to
    ``log_name`` in the squad home (``dashboard.jsonl`` by default)."""

    mode: Literal["daemon", "dashboard", "process"] = "dashboard"

    def __init__(
        self, app: App, *, workers: int | None = None, log_name: str = DASHBOARD_LOG
    ) -> None:
        from squad.daemon.eventlog import DaemonLog
        from squad.daemon.runs import RunDispatcher

        self._app = app
        self.log = DaemonLog(app.settings.home / log_name, clock=app.clock)
        self._runs: RunDispatcher = RunDispatcher(
            app,
            self.log,
            lookup=self._lookup,
            workers=workers or app.settings.daemon.max_concurrent_runs,
        )
        self._runs.queue.start()

    def _lookup(self, name: str) -> LoadedSquad | None:
        from squad.daemon.catalog import LoadedSquad
        from squad.daemon.definitions import Definition
        from squad.errors import SquadError

        try:
            spec, workspace = self._app.squads.definition(name)
        except SquadError:
            return None
        return LoadedSquad(Definition(Path(workspace), "", spec), workspace)

    def submit(self, request: RunRequest) -> bool:
        self._app.squads.locate(request.squad)  # NotFound for a squad with no workspace
        return self._runs.ask(request)

    def hand_off(self, check: HandOver, ticket: Ticket) -> str | None:
        """``squad run`` hands runs to a daemon only."""
        return "this server is not the home's daemon"

    def close(self, grace: float = 30.0) -> None:
        """Stop running runs at their next checkpoint (interrupted runs stay resumable)."""
        import threading

        self._runs.queue.close()
        self._runs.stop_all()
        if not self._runs.wait(grace, force=threading.Event()):
            self._runs.abandon()
