"""``squad daemon``: load the squads folder, schedule its squads, run them, keep watching.

One :class:`Daemon` per squad home (an OS lock on ``daemon.pid``), made of an ordered list of
components (:mod:`squad.daemon.components`; which ones: :mod:`squad.daemon.layout`, or
:mod:`squad.cluster.daemon` on a cluster node). They start in order and stop in reverse, also
when a start fails half-way. Its threads:

* the caller's (main) thread: the components' ticks (the heartbeat among them) and the stop
  request; it sleeps on an event that a signal, a run starting or ending, or a reload sets,
  and otherwise wakes every few seconds to beat;
* APScheduler's (:mod:`squad.daemon.scheduler`): fires cron and interval triggers, which only
  *ask* for runs;
* the run queue's workers (``daemon.max_concurrent_runs``, :mod:`squad.daemon.runs`);
* the folder watcher's (inotify) and its debouncer: hot reload of the squads folder, and a
  log line when a boot memory file changes.

Stopping (SIGTERM/SIGINT through :meth:`Daemon.request_stop`): no new runs start, running ones
are asked to stop at their next checkpoint and get ``daemon.shutdown_grace_s`` to do so. The
next start resumes interrupted runs from their checkpoints; runs paused for approval wait for
``squad approve``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.daemon.components.attached import Attached, Attachment
from squad.daemon.components.lifecycle import Lifecycle
from squad.daemon.context import DaemonContext
from squad.daemon.eventlog import DAEMON_LOG, DaemonLog
from squad.daemon.handoff import environment_digest
from squad.daemon.runqueue import RunRequest
from squad.errors import UsageError

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.catalog import LoadedSquad
    from squad.daemon.components.lifecycle import Component
    from squad.daemon.handoff import HandOver, Ticket
    from squad.daemon.layout import Layout
    from squad.settings import Settings
    from squad.store import Store

__all__ = ["HEARTBEAT_S", "Daemon"]

HEARTBEAT_S = 5.0
"""Seconds between heartbeats (and between wake-ups of an idle daemon's main thread)."""


class Daemon:
    """The scheduler of one squad home; :meth:`run` blocks until it is asked to stop."""

    def __init__(
        self,
        app: App,
        *,
        squads_dir: Path | None = None,
        exit_when_idle: bool = False,
        auto_approve: bool = False,
        echo: Callable[[dict[str, Any]], None] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        debounce_s: float = 0.5,
        reload_settings: Callable[[], Settings] | None = None,
        attachments: Sequence[Attachment] = (),
        layout: Layout | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """The daemon of ``app``'s home, on its services (the caller closes the app).

        ``reload_settings`` reads the settings again (as the caller first did) when
        ``settings.yaml`` changes; without it, an edit is not applied (see
        :mod:`squad.daemon.reload`). ``attachments`` start once the daemon holds the home
        and is ready (the HTTP server) and stop first when it stops. ``layout`` builds the
        components (default :func:`~squad.daemon.layout.local_components`; a cluster node's
        is :func:`~squad.cluster.daemon.cluster_components`). ``environ`` is the environment
        its runs see (default: this process's), which a run handed over by ``squad run``
        must share."""
        settings = app.settings
        retention = settings.daemon.retention
        log = DaemonLog(
            settings.home / DAEMON_LOG,
            clock=app.clock,
            echo=echo,
            max_bytes=retention.daemon_log_mb * 1024 * 1024,
            keep=retention.daemon_log_files,
        )
        self.ctx = DaemonContext(
            app,
            settings,
            log,
            (squads_dir or settings.squads_dir).resolve(),
            once=exit_when_idle,
            auto_approve=auto_approve,
            debounce_s=debounce_s,
            read_settings=reload_settings,
        )
        self.app = app
        self.log = log
        self._environment = environment_digest(os.environ if environ is None else environ)
        """This process's environment as it started (:mod:`squad.daemon.handoff`)."""
        self._heartbeat_s = heartbeat_s
        self._layout = layout
        self._attachments = tuple(attachments)

    # -- public ----------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    @property
    def squads_dir(self) -> Path:
        return self.ctx.squads_dir

    @property
    def store(self) -> Store:
        return self.app.store

    def request_stop(self, reason: str = "signal") -> None:
        """Stop gracefully (safe from a signal handler); a second call stops at once."""
        ctx = self.ctx
        if ctx.stopping.is_set():
            ctx.force.set()
        else:
            ctx.stop_reason = reason
            ctx.stopping.set()
        ctx.wake.set()

    def request_reload(self, reason: str = "signal") -> None:
        """Read the settings and the squads folder again at the next tick (safe from a signal
        handler): what SIGHUP asks of a daemon."""
        self.ctx.reload_reason = reason
        self.ctx.wake.set()

    def submit(self, request: RunRequest) -> bool:
        """Ask for a run, resume or approval answer from another front end (the dashboard);
        False when it was coalesced into one already waiting, or the daemon is stopping.
        A squad the daemon does not know is a NotFound."""
        from squad.errors import NotFound

        ctx = self.ctx
        if not ctx.ready.wait(timeout=60) or ctx.runs is None or ctx.catalog is None:
            return False
        if ctx.catalog.get(request.squad) is None:
            raise NotFound(
                f"the daemon runs no squad named {request.squad!r}; put its YAML file in "
                f"{ctx.squads_dir}"
            )
        accepted = ctx.runs.dispatcher.ask(request)
        ctx.wake.set()
        return accepted

    def hand_off(self, check: HandOver, ticket: Ticket) -> str | None:
        """Start the run ``squad run`` hands over (``check`` says what it is and what the
        command runs with) at once, if it would run here as in the command's process
        (:mod:`squad.daemon.handoff`); None when it started (``ticket`` hears the rest), else
        why not (nothing is queued then)."""
        from squad.daemon.handoff import settings_digest

        ctx = self.ctx
        if not ctx.ready.is_set() or ctx.runs is None or ctx.catalog is None:
            return "the daemon is not ready"
        if ctx.stopping.is_set():
            return "the daemon is stopping"
        if ctx.settings.clustered:
            return "a cluster node runs a squad's runs as jobs"
        if check.settings != settings_digest(ctx.settings):
            return "the daemon's settings differ from this command's"
        if check.environment != self._environment:
            return "the daemon's environment differs from this command's"
        if check.run_id is not None:
            request, refused = self._going_on(check, ticket)
        else:
            request, refused = self._new_run(check, ticket)
        if request is None:
            return refused
        if not ctx.runs.dispatcher.hand_off(request):
            return "the squad is running or queued, or every run slot is taken"
        ctx.wake.set()
        return None

    def _new_run(self, check: HandOver, ticket: Ticket) -> tuple[RunRequest | None, str]:
        """``squad run``'s request, or why the daemon would not run it as the command would."""
        from squad.store.records import RunStatus

        assert self.ctx.catalog is not None
        loaded = _loaded(self.ctx.catalog.squads(), check)
        if loaded is None:
            return None, "the daemon runs no such squad"
        if check.file is None:
            manifest = self.app.squads.workspaces.read_manifest(loaded.workspace)
            if manifest.definition != loaded.spec:
                return None, "the squad's workspace holds another definition than the daemon's"
        name = loaded.spec.name
        if any(run.status is RunStatus.INTERRUPTED for run in self.store.interrupted_runs(name)):
            return None, "the squad has an interrupted run (squad run offers to resume it)"
        return RunRequest(name, "manual", goal=check.goal, ticket=ticket), ""

    def _going_on(self, check: HandOver, ticket: Ticket) -> tuple[RunRequest | None, str]:
        """``squad resume``'s or ``squad approve``'s request, or why not (the command's own
        process then says what is wrong with the run, if anything)."""
        from squad.store.records import RunStatus, TaskStatus

        assert check.run_id is not None and self.ctx.catalog is not None
        run = self.store.get_run(check.run_id)
        if run is None or self.ctx.catalog.get(run.squad) is None:
            return None, "the daemon runs no such run's squad"
        if check.decision is None:
            if run.status is not RunStatus.INTERRUPTED:
                return None, f"the run is {run.status.value}, not interrupted"
            return RunRequest(run.squad, "resume", run_id=run.id, ticket=ticket), ""
        task = self.store.run_state.get_task(run.id, check.decision[0])
        if run.status is not RunStatus.AWAITING_APPROVAL or task is None:
            return None, "the run does not wait on that task"
        if task.status is not TaskStatus.AWAITING_APPROVAL:
            return None, "the run does not wait on that task"
        return (
            RunRequest(
                run.squad, "approval", run_id=run.id, decision=check.decision, ticket=ticket
            ),
            "",
        )

    def state(self) -> dict[str, Any]:
        """What the heartbeat reports: squads, next fire times, runs, queue, failed files."""
        return self.ctx.state()

    def run(self) -> int:
        """Hold the home's lock and schedule until asked to stop; the exit code.

        0 after a requested stop; with ``exit_when_idle``, once no run is left: 0 if every
        run ended without failing (a run paused for approval has not failed), else 1.
        """
        ctx = self.ctx
        life = Lifecycle(self._build())
        if not ctx.squads_dir.is_dir():
            raise UsageError(
                f"the squads folder {str(ctx.squads_dir)!r} does not exist; create it "
                "(one YAML file per squad) or pass --configs FOLDER"
            )
        ctx.components = life.components
        try:
            life.start(ctx)
            self._ready(life)
            self._loop(life)
        finally:
            ctx.phase = "stopping"
            ctx.stopping.set()
            ctx.ready.set()
            life.stop(ctx)
        failures = ctx.runs.dispatcher.failures if ctx.runs is not None else 0
        return 1 if ctx.once and failures else 0

    # -- inside ----------------------------------------------------------------------------

    def _build(self) -> list[Component]:
        if self._layout is None:
            from squad.daemon.layout import local_components

            built = local_components(self.ctx)
        else:
            built = self._layout(self.ctx)
        return [*built, *(Attached(a, self) for a in self._attachments)]

    def _ready(self, life: Lifecycle) -> None:
        ctx = self.ctx
        ctx.phase = "running"
        ctx.ready.set()
        self._tick(life, woken=True)
        assert ctx.catalog is not None and ctx.runs is not None
        running, queued = ctx.runs.dispatcher.queue.snapshot()
        ctx.log.emit(
            "ready",
            squads=len(ctx.catalog.squads()),
            failed_files=len(ctx.catalog.failed_files()),
            runs=len(running) + len(queued),
        )

    def _loop(self, life: Lifecycle) -> None:
        ctx = self.ctx
        assert ctx.runs is not None
        while True:
            woken = ctx.wake.wait(self._heartbeat_s)
            ctx.wake.clear()
            if ctx.stopping.is_set():
                return
            if ctx.once and ctx.runs.dispatcher.queue.idle():
                ctx.stop_reason = "idle"
                return
            self._tick(life, woken=woken)

    def _tick(self, life: Lifecycle, *, woken: bool) -> None:
        for component in life.ticking():
            component.tick(self.ctx, woken=woken)


def _loaded(squads: dict[str, LoadedSquad], check: HandOver) -> LoadedSquad | None:
    """The loaded squad ``check`` names: by name, or by its file as the command read it."""
    if check.file is None:
        return squads.get(check.squad or "")
    for loaded in squads.values():
        definition = loaded.definition
        if definition.path.resolve() == Path(check.file) and definition.digest == check.digest:
            return loaded
    return None
