"""``squad daemon``: load the squads folder, schedule its squads, run them, keep watching.

One :class:`Daemon` per squad home (an OS lock on ``daemon.pid``). Its threads:

* the caller's (main) thread: heartbeats and the stop request; it sleeps on an event that a
  signal, a run starting or ending, or a reload sets, and otherwise wakes every few seconds
  to beat;
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

import contextlib
import functools
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from squad.daemon.catalog import LoadedSquad, SquadCatalog
from squad.daemon.definition_cache import CACHE_FILE as DEFINITIONS_CACHE
from squad.daemon.definition_cache import DefinitionCache
from squad.daemon.definitions import is_definition_file
from squad.daemon.eventlog import DAEMON_LOG, DaemonLog
from squad.daemon.lock import DaemonLock
from squad.daemon.malloc import give_back
from squad.daemon.runqueue import RunRequest
from squad.daemon.runs import RunDispatcher
from squad.daemon.scheduler import JobScheduler
from squad.daemon.status import PUBLISHED_FILE, publish, store_view
from squad.daemon.triggers import build_trigger, missed_fire
from squad.daemon.watcher import FolderWatcher, Watch
from squad.errors import SquadError, UsageError
from squad.runtime.runlock import settle_dead_runs

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.shared import SharedRuns, SharedRunsFactory
    from squad.memory.service import AgentContext
    from squad.settings import Settings
    from squad.store import Store

__all__ = ["DAEMON_TRIGGERS", "HEARTBEAT_S", "Attachment", "Daemon"]

HEARTBEAT_S = 5.0
GIVE_BACK_S = 60.0
"""How often the daemon returns freed memory to the system (a few milliseconds each time)."""
"""Seconds between heartbeats (and between wake-ups of an idle daemon's main thread)."""
STORE_VIEW_S = 15.0
"""Seconds at most between two reads of the store's part of the published status."""
DAEMON_TRIGGERS = frozenset({"schedule", "on_start"})
"""Run triggers only a daemon uses: a ``running`` run with one of them, found at start, was
left by a daemon that died, and is resumed. Other ``running`` runs may belong to a
``squad run`` still at work, and are left alone."""
BACKGROUND_JOBS = ("consolidation", "retention", "extraction")
"""The daemon's own cron jobs (``daemon.<job>_cron``)."""
BOOT_NAMES = frozenset({"SOUL.md", "USER.md", "AGENTS.md"})
"""Boot memory files (squad.memory.boot): watched only to log changes, since prompts read
them fresh at every turn and nothing caches them."""


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _queued(shared: SharedRuns, job: str) -> dict[str, Any]:
    shared.maintain(job)
    return {"queued": job}


def _stat_mark(path: Path) -> tuple[int, int, int] | None:
    """A file's identity, size and modification time; None when it is missing."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _content_mark(path: Path) -> str | None:
    """SHA-256 of a boot file's bytes; None when it is missing or not a readable file."""
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


@functools.cache
def _default_soul_mark() -> str:
    """The mark of the default persona squad writes into a home that has no SOUL.md."""
    import hashlib

    from squad.prompts import load

    return hashlib.sha256(load("SOUL.md").encode()).hexdigest()


class Attachment(Protocol):
    """A service that lives as long as the daemon (the HTTP API and dashboard)."""

    name: str
    """Its key in the heartbeat state and the prefix of its log events."""

    def start(self, daemon: Daemon) -> dict[str, Any]:
        """Start; what to publish in the heartbeat state (never a secret). A SquadError
        means it could not start."""
        ...

    def stop(self) -> None: ...


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
        shared_runs: SharedRunsFactory | None = None,
    ) -> None:
        """The daemon of ``app``'s home, on its services (the caller closes the app).

        ``reload_settings`` reads the settings again (as the caller first did) when
        ``settings.yaml`` changes; without it, an edit is not applied (see
        :mod:`squad.daemon.reload`). ``attachments`` start once the daemon holds the home
        and is ready (the HTTP server) and stop first when it stops. ``shared_runs`` makes
        the cluster's queue the runs go to (cluster mode, :mod:`squad.cluster`)."""
        settings = app.settings
        clock = app.clock
        self.app = app
        self.settings = settings
        self.squads_dir = (squads_dir or settings.squads_dir).resolve()
        self.config = settings.daemon
        self.exit_when_idle = exit_when_idle
        retention = settings.daemon.retention
        self.log = DaemonLog(
            settings.home / DAEMON_LOG,
            clock=clock,
            echo=echo,
            max_bytes=retention.daemon_log_mb * 1024 * 1024,
            keep=retention.daemon_log_files,
        )
        self._auto_approve = auto_approve
        self._clock = clock
        self._heartbeat_s = heartbeat_s
        self._debounce_s = debounce_s
        self._lock = DaemonLock(settings.home)
        self._pid = os.getpid()
        self._host = socket.gethostname()
        self._started_at = clock()
        self._phase = "starting"
        self._wake = threading.Event()
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._force = threading.Event()
        self._stop_reason = "signal"
        self._last_state: str | None = None
        self._scheduler: JobScheduler | None = None
        self._watcher: FolderWatcher | None = None
        self._configs_missing = False
        self._reload_reason: str | None = None
        self._catalog: SquadCatalog | None = None
        self._runs: RunDispatcher | SharedRuns | None = None
        self._shared: SharedRuns | None = None
        """The cluster's queue, when the runs go there (``shared_runs``)."""
        self._shared_runs = shared_runs
        self._reload = reload_settings
        self._restart_needed: tuple[str, ...] = ()
        self._attachments = tuple(attachments)
        self._attached: dict[str, dict[str, Any]] = {}
        self._left_behind: frozenset[str] = frozenset()
        """Runs whose checkpoints a switch of store backends left in the home's SQLite file."""
        self._view: dict[str, Any] | None = None
        """The store's part of the status as last read (:meth:`_publish`)."""
        self._store_view_due = 0.0
        self._give_back_due = time.monotonic() + GIVE_BACK_S
        self._published: str | None = None
        """The text of the status file as last written."""
        self._rules: dict[Path, tuple[int, int, int] | None] = {}
        """Each workspace AGENTS.md followed (:meth:`_watch_workspaces`), as last stat'ed."""
        self._rules_lock = threading.Lock()
        self._boot_marks: dict[Path, str | None] = {}
        """Each boot file's content as last seen (:func:`_content_mark`), so that an event
        that changed no byte, or squad's own default SOUL.md, is not logged as a change."""
        self._scan_thread: threading.Thread | None = None
        """The credential scan of stored text after a detector upgrade, while it runs."""
        self._scan_stop = threading.Event()

    # -- public ----------------------------------------------------------------------------

    def request_stop(self, reason: str = "signal") -> None:
        """Stop gracefully (safe from a signal handler); a second call stops at once."""
        if self._stopping.is_set():
            self._force.set()
        else:
            self._stop_reason = reason
            self._stopping.set()
        self._wake.set()

    def request_reload(self, reason: str = "signal") -> None:
        """Read the settings and the squads folder again at the next tick (safe from a signal
        handler): what SIGHUP asks of a daemon."""
        self._reload_reason = reason
        self._wake.set()

    def submit(self, request: RunRequest) -> bool:
        """Ask for a run, resume or approval answer from another front end (the dashboard);
        False when it was coalesced into one already waiting, or the daemon is stopping.
        A squad the daemon does not know is a NotFound."""
        from squad.errors import NotFound

        if not self._ready.wait(timeout=60) or self._runs is None or self._catalog is None:
            return False
        if self._catalog.get(request.squad) is None:
            raise NotFound(
                f"the daemon runs no squad named {request.squad!r}; put its YAML file in "
                f"{self.squads_dir}"
            )
        accepted = self._runs.ask(request)
        self._wake.set()
        return accepted

    def run(self) -> int:
        """Hold the home's lock and schedule until asked to stop; the exit code.

        0 after a requested stop; with ``exit_when_idle``, once no run is left: 0 if every
        run ended without failing (a run paused for approval has not failed), else 1.
        """
        if self.settings.clustered and self._shared_runs is None:
            raise UsageError(
                "this home is one node of a cluster (cluster.enabled), and this daemon was "
                "started without the cluster's queue; start it with `squad daemon`"
            )
        if self.settings.clustered and self.exit_when_idle:
            raise UsageError(
                "--once runs a squad home on its own; in a cluster (cluster.enabled) the "
                "queue is shared, so start `squad daemon` without --once, or run the squads "
                "with `squad run`"
            )
        if not self.squads_dir.is_dir():
            raise UsageError(
                f"the squads folder {str(self.squads_dir)!r} does not exist; create it "
                "(one YAML file per squad) or pass --configs FOLDER"
            )
        self._lock.acquire(self._pid)
        try:
            self._start()
            self._loop()
        finally:
            try:
                self._shutdown()
            finally:
                self._lock.release()
        failures = self._runs.failures if self._runs is not None else 0
        return 1 if self.exit_when_idle and failures else 0

    @property
    def store(self) -> Store:
        return self.app.store

    def state(self) -> dict[str, Any]:
        """What the heartbeat reports: squads, next fire times, runs, queue, failed files."""
        if self._catalog is None or self._runs is None:
            return {"phase": self._phase, "configs": str(self.squads_dir), "squads": []}
        running, queued = self._runs.queue.snapshot()
        since = self._runs.running_since()
        busy = {r.squad for r in running}
        waiting = {r.squad for r in queued}
        scheduler = self._scheduler
        squads = self._catalog.describe(
            lambda name: None if scheduler is None else scheduler.next_fire(name)
        )
        for squad in squads:
            squad["next_fire"] = _iso(squad["next_fire"])
            squad["running"] = squad["name"] in busy
            squad["queued"] = squad["name"] in waiting
        return {
            "phase": self._phase,
            **self._attached,
            "configs": str(self.squads_dir),
            "configs_missing": self._configs_missing,
            "max_concurrent_runs": self.config.max_concurrent_runs,
            "squads": squads,
            "running": [
                {
                    "squad": r.squad,
                    "trigger": r.trigger,
                    "run_id": r.run_id,
                    "since": _iso(since.get(r.squad)),
                }
                for r in running
            ],
            "queue": [{"squad": r.squad, "trigger": r.trigger} for r in queued],
            "failed_files": self._catalog.failed_files(),
            "settings_restart_needed": list(self._restart_needed),
            "jobs": self._jobs(),
            **self._cluster_state(),
        }

    def _cluster_state(self) -> dict[str, Any]:
        return {} if self._shared is None else {"cluster": self._shared.state()}

    def _jobs(self) -> dict[str, dict[str, str | None]]:
        """The background jobs' triggers and next fire times."""
        found = {}
        for name in BACKGROUND_JOBS:
            job = None if self._scheduler is None else self._scheduler.job(name)
            if job is not None:
                found[name] = {"trigger": job[0], "next_fire": _iso(job[1])}
        return found

    # -- start and stop --------------------------------------------------------------------

    def _start(self) -> None:

        self.log.emit(
            "start",
            pid=self._pid,
            home=str(self.settings.home),
            configs=str(self.squads_dir),
            max_concurrent_runs=self.config.max_concurrent_runs,
            once=self.exit_when_idle or None,
            took_over_from=self._lock.previous_pid,
        )
        self._beat()
        self._prepare_checkpoints()
        self.app.on_extraction_error(self._extraction_error)
        self.app.on_history_event(self._history_event)
        if not self.exit_when_idle:
            self._scheduler = JobScheduler(
                anchored=self.settings.clustered,
                misfire_grace_s=self.config.misfire_grace_s,
                on_error=lambda job, exc: self.log.emit("job_error", job=job, error=_describe(exc)),
                on_missed=lambda job, at: self.log.emit("fire_missed", job=job, scheduled=_iso(at)),
            )
            self._scheduler.start()
        self._catalog = SquadCatalog(
            self.squads_dir,
            self.app.squads,
            self.log,
            scheduler=self._scheduler,
            fire=self._fire,
            on_added=self._added,
            cache=DefinitionCache(self.settings.home / DEFINITIONS_CACHE),
        )
        self._runs = self._dispatcher(self._catalog)
        if not self.exit_when_idle:
            # Before the first scan, so no file written meanwhile goes unnoticed; what it
            # sees waits for start-up to finish (``_ready``).
            self._note_boot_files()
            self._start_watcher()
        self._catalog.reconcile(starting=True)
        self._watch_workspaces()
        self._queue_start_runs()
        self._runs.queue.start()
        self._schedule_jobs(BACKGROUND_JOBS)
        self._start_job("extraction")
        self._scan_after_upgrade()
        self._phase = "running"
        self._ready.set()
        self._attach()
        self._beat()
        running, queued = self._runs.queue.snapshot()
        self.log.emit(
            "ready",
            squads=len(self._catalog.squads()),
            failed_files=len(self._catalog.failed_files()),
            runs=len(running) + len(queued),
        )

    def _dispatcher(self, catalog: SquadCatalog) -> RunDispatcher | SharedRuns:
        """Where runs go: this process's run queue, or the cluster's queue (whose node in
        this daemon works too)."""
        if self._shared_runs is not None:
            from squad.daemon.shared import SharedRunsWiring

            self._shared = self._shared_runs(
                SharedRunsWiring(
                    self.app,
                    self.log,
                    lookup=catalog.get,
                    auto_approve=self._auto_approve,
                    on_change=self._wake.set,
                )
            )
            return self._shared
        return RunDispatcher(
            self.app,
            self.log,
            lookup=catalog.get,
            workers=self.config.max_concurrent_runs,
            auto_approve=self._auto_approve,
            on_change=self._wake.set,
        )

    def _start_job(self, job: str) -> None:
        """A background job now: in this process, or as a cluster job any node takes."""
        shared = self._shared
        if shared is not None:
            self._background(job, lambda: _queued(shared, job))
            return
        work = {
            "consolidation": self._consolidate,
            "retention": self._retain,
            "extraction": self._sweep_extraction,
        }
        self._background(job, work[job])

    def _schedule_jobs(self, jobs: Sequence[str]) -> None:
        """(Re)schedule background jobs at their cron times in the daemon settings."""
        if self._scheduler is None:
            return
        crons = {
            "consolidation": self.config.consolidation_cron,
            "retention": self.config.retention_cron,
            "extraction": self.config.extraction_cron,
        }
        for job in jobs:
            self._scheduler.add_cron_job(job, crons[job], functools.partial(self._start_job, job))

    def _loop(self) -> None:
        assert self._runs is not None
        while True:
            woken = self._wake.wait(self._heartbeat_s)
            self._wake.clear()
            if self._stopping.is_set():
                return
            if self.exit_when_idle and self._runs.queue.idle():
                self._stop_reason = "idle"
                return
            changed = self._check_folders()
            if self._reload_reason is not None:
                reason, self._reload_reason = self._reload_reason, None
                self._reload_all(reason)
                changed = True
            # Woken by a change (a run, a reload, a fire): report the new state. Timed out:
            # nothing changed, so only the beat's time moves.
            self._safe_beat(changed=woken or changed)
            self._check_workspace_rules()
            self._give_back_memory()

    def _give_back_memory(self) -> None:
        """Once every :data:`GIVE_BACK_S`, hand the allocator's free pages back to the
        system (:func:`~squad.daemon.malloc.give_back`), so what runs freed leaves the RSS."""
        now = time.monotonic()
        if now >= self._give_back_due:
            self._give_back_due = now + GIVE_BACK_S
            give_back()

    def _attach(self) -> None:
        """Start each attachment; one that cannot start is logged, and the daemon goes on
        scheduling without it."""
        for attachment in self._attachments:
            try:
                self._attached[attachment.name] = attachment.start(self)
            except SquadError as exc:
                self.log.emit(f"{attachment.name}_failed", error=str(exc))
            else:
                self.log.emit(f"{attachment.name}_ready", **self._attached[attachment.name])

    def _detach(self) -> None:
        for attachment in reversed(self._attachments):
            if attachment.name in self._attached:
                try:
                    attachment.stop()
                except Exception as exc:  # noqa: BLE001 - the daemon must still stop
                    self.log.emit(f"{attachment.name}_error", error=_describe(exc))

    def _shutdown(self) -> None:
        self._phase = "stopping"
        self._stopping.set()
        self._ready.set()
        self._detach()
        if self._watcher is not None:
            self._watcher.stop()
        if self._scheduler is not None:
            self._scheduler.shutdown()
        self._end_scan()
        left: list[str] = []
        if self._runs is not None:
            for request in self._runs.queue.close():
                self.log.emit("run_dropped", squad=request.squad, trigger=request.trigger)
            running = sorted(self._runs.running_since())
            if running:
                self.log.emit("stopping", running=running, grace_s=self.config.shutdown_grace_s)
            deadline = time.monotonic() + self.config.shutdown_grace_s
            if not self._runs.wait(self.config.shutdown_grace_s, force=self._force):
                left = self._runs.abandon()
            remaining = 0.0 if self._force.is_set() else deadline - time.monotonic()
            if not self.app.drain_extraction(max(1.0, remaining)):
                self.log.emit("extraction_left", reason="stopped before queued passes ran")
        self._safe_beat()
        try:
            self.store.daemon.mark_stopped(str(self.settings.home), pid=self._pid)
        except SquadError as exc:
            self.log.emit("job_error", job="heartbeat", error=str(exc))
        with contextlib.suppress(OSError):
            (self.settings.home / PUBLISHED_FILE).unlink(missing_ok=True)
        self.log.emit(
            "stop",
            reason=self._stop_reason,
            interrupted=left or None,
            forced=self._force.is_set() or None,
        )

    def _prepare_checkpoints(self) -> None:
        """Create the checkpoint tables once, before runs use them side by side; say which
        checkpoints a switch of store backends left behind (they are not migrated)."""
        from squad.checkpoints import left_behind

        checkpoints = self.app.checkpoints
        checkpoints.setup()
        kept = left_behind(self.settings.home, checkpoints)
        self._left_behind = frozenset(kept.runs) if kept is not None else frozenset()
        if kept is not None:
            self.log.emit(
                "checkpoints_left_behind",
                file=str(kept.path),
                runs=len(kept.runs),
                using=checkpoints.where,
                note=kept.describe(),
            )

    def _history_event(self, event: str, fields: dict[str, Any]) -> None:
        """``history_paused``: a workspace whose history cannot be written, in the log."""
        self.log.emit(event, **fields)

    def _extraction_error(self, ctx: AgentContext, exc: BaseException) -> None:
        self.log.emit(
            "job_error",
            job="extraction",
            squad=ctx.squad.name,
            agent=ctx.agent.id,
            error=_describe(exc),
        )

    # -- runs ------------------------------------------------------------------------------

    def _fire(self, name: str) -> None:
        assert self._runs is not None
        if self._shared is not None:
            try:
                self._shared.fire(name)
            except SquadError as exc:
                self.log.emit("job_error", job="schedule", squad=name, error=str(exc))
            self._wake.set()
            return
        if not self._runs.submit(RunRequest(name, "schedule")):
            self.log.emit("run_coalesced", squad=name, reason="a run of it is already waiting")
        self._wake.set()  # its next fire time moved

    def _added(self, squad: LoadedSquad) -> None:
        """A squad that appeared while running: its first load counts as its start."""
        assert self._runs is not None
        schedule = squad.spec.schedule
        if schedule is not None and schedule.run_on_start:
            self._runs.submit(RunRequest(squad.spec.name, "on_start"))

    def _queue_start_runs(self) -> None:
        """Resumes of interrupted runs first, then late cron runs, then on-start runs."""
        from squad.store.records import RunStatus

        assert self._catalog is not None and self._runs is not None
        loaded = self._catalog.squads()
        for run in settle_dead_runs(self.store, self.settings.locks_dir):
            self.log.emit("run_settled", squad=run.squad, run_id=run.id, error=run.error)
        for run in reversed(self.store.interrupted_runs()):
            if run.status is RunStatus.AWAITING_APPROVAL:
                continue  # waits for `squad approve`
            if run.status is RunStatus.RUNNING and run.trigger not in DAEMON_TRIGGERS:
                continue  # a `squad run` elsewhere may still be at it
            if run.job is not None:
                continue  # a cluster job's: the queue hands it on when its node is lost
            reason = None
            if run.id in self._left_behind:
                reason = (
                    "its checkpoints are in the home's checkpoints.sqlite, from before the store "
                    "moved to PostgreSQL (not migrated); it stays resumable there"
                )
            elif run.squad not in loaded:
                reason = "its squad is not in the squads folder"
            elif not self._runs.submit(RunRequest(run.squad, "resume", run.id)):
                reason = "another run of the squad resumes first; `squad resume` this one"
            if reason is not None:
                self.log.emit("resume_skipped", squad=run.squad, run_id=run.id, reason=reason)
        if not self.exit_when_idle:
            self._queue_late_runs(loaded)
        for name, squad in loaded.items():
            if squad.spec.schedule is not None and squad.spec.schedule.run_on_start:
                self._runs.submit(RunRequest(name, "on_start"))

    def _queue_late_runs(self, loaded: dict[str, LoadedSquad]) -> None:
        """A cron time that passed while no daemon ran, within the misfire grace, runs now."""
        assert self._runs is not None
        now = self._clock()
        grace = timedelta(seconds=self.config.misfire_grace_s)
        for name, squad in loaded.items():
            schedule = squad.spec.schedule
            if schedule is None or schedule.cron is None:
                continue
            missed = missed_fire(build_trigger(schedule), now, grace)
            if missed is None:
                continue
            latest = self.store.list_runs(name, limit=1)
            if not latest or latest[0].created_at < missed:
                self.log.emit("fire_late", squad=name, scheduled=_iso(missed))
                self._submit_late(name, missed)

    def _submit_late(self, name: str, missed: datetime) -> None:
        assert self._runs is not None
        if self._shared is not None:
            self._shared.fire(name, at=missed)
        else:
            self._runs.submit(RunRequest(name, "schedule"))

    # -- background jobs -------------------------------------------------------------------

    def _background(self, job: str, work: Callable[[], dict[str, Any]]) -> None:
        self.log.emit("job_start", job=job)
        try:
            report = work()
        except SquadError as exc:
            self.log.emit("job_error", job=job, error=str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - logged, and the daemon must go on
            self.log.emit("job_error", job=job, error=_describe(exc))
            return
        self.log.emit("job_end", job=job, report=report)

    def _scan_after_upgrade(self) -> None:
        """When the credential detector is not the one the home was last scanned with (an
        upgrade, or a home never scanned), scan every stored place with ``fix`` in the
        background (:mod:`squad.scan`): start-up does not wait for it. It logs ``job_start``
        and ``job_end`` (job ``secrets_scan``, with the figures) and records the detector
        once the scan settles, so the next start does not scan again."""
        from squad.scan import needs_scan

        if not needs_scan(self.settings.home):
            return
        self._scan_thread = threading.Thread(
            target=self._background,
            args=("secrets_scan", self._scan_secrets),
            name="squad-secrets-scan",
            daemon=True,
        )
        self._scan_thread.start()

    def _scan_secrets(self) -> dict[str, Any]:
        from squad.scan import record_scan, scan_home

        report = scan_home(self.app, fix=True, stop=self._scan_stop.is_set)
        summary = report.summary()
        if report.settled:
            record_scan(self.settings.home, report.detector, self._clock().isoformat(), summary)
        return {**summary, "recorded": report.settled}

    def _end_scan(self) -> None:
        """Let the scan end before the app closes: asked to stop at its next file or group,
        except when ``--once`` ends idle (it finishes: a one-shot daemon may never run long
        enough otherwise); a second stop request stops it too."""
        thread = self._scan_thread
        if thread is None:
            return
        if not (self.exit_when_idle and self._stop_reason == "idle"):
            self._scan_stop.set()
        while thread.is_alive():
            thread.join(0.2)
            if self._force.is_set():
                self._scan_stop.set()

    def _consolidate(self) -> dict[str, Any]:
        from squad.daemon.jobs import run_consolidation

        return run_consolidation(self.app, now=self._clock())

    def _sweep_extraction(self) -> dict[str, Any]:
        from squad.daemon.jobs import sweep_extraction

        assert self._catalog is not None
        return sweep_extraction(self.app, self._catalog.squads())

    def _retain(self) -> dict[str, Any]:
        from squad.daemon.jobs import retain_loaded

        assert self._catalog is not None and self._runs is not None
        loaded, busy = self._catalog.squads(), self._runs.running_since()
        policy = self.config.retention
        return retain_loaded(self.app, loaded, busy, now=self._clock(), policy=policy)

    # -- watching --------------------------------------------------------------------------

    def _start_watcher(self) -> None:
        home = self.settings.home
        squads_dir = self.squads_dir

        def config_file(path: Path) -> bool:
            return path.parent == squads_dir and is_definition_file(path)

        def home_boot(path: Path) -> bool:
            return path.parent == home and path.name in BOOT_NAMES

        watches = [Watch(squads_dir, config_file), Watch(home, home_boot)]
        if self._reload is not None and self.settings.configs.is_dir():
            watches.append(Watch(self.settings.configs, self._is_settings_file))

        self._watcher = FolderWatcher(
            self._on_files_changed,
            delay=self._debounce_s,
            on_error=lambda exc: self.log.emit("job_error", job="reload", error=_describe(exc)),
        )
        self._watcher.start(watches)

    def _reload_all(self, reason: str) -> None:
        """Settings, every squad file and the watches, read again (``request_reload``)."""
        self.log.emit("reload", reason=reason)
        if self._catalog is None:
            return
        try:
            self._reload_settings()
            self._catalog.reconcile()
            self._watch_workspaces()
        except Exception as exc:  # noqa: BLE001 - logged; the daemon goes on as it was
            self.log.emit("job_error", job="reload", error=_describe(exc))

    def _check_folders(self) -> bool:
        """Re-establish the watch of a folder that was deleted and made again (its inotify
        watch died with it), and say while the squads folder is missing; True on a change."""
        if self._watcher is None or self._catalog is None:
            return False
        try:
            missing, restored = self._watcher.refresh()
        except Exception as exc:  # noqa: BLE001 - logged; the next tick tries again
            self.log.emit("job_error", job="watch", error=_describe(exc))
            return False
        configs = self.squads_dir
        changed = False
        if configs in missing and not self._configs_missing:
            self._catalog.reconcile()  # first: a state that says missing has no squads left
            self._configs_missing = changed = True
            self.log.emit(
                "configs_missing",
                folder=str(configs),
                note="its squads are unscheduled until the folder is back",
            )
        if configs in restored:
            self._configs_missing, changed = False, True
            self.log.emit("configs_restored", folder=str(configs))
            self._catalog.reconcile()
            self._watch_workspaces()
        for folder in sorted(restored - {configs}):
            self.log.emit("watch_restored", folder=str(folder))
        return changed

    def _watch_workspaces(self) -> None:
        """Follow each loaded squad's workspace ``AGENTS.md``: remember how it is now (a
        squad new to the daemon) and forget those of squads gone.

        Looked at from the main thread at every tick (:meth:`_check_workspace_rules`), not
        watched: a watch costs a thread each (watchdog's emitter), so a daemon of 100
        squads idled at 100 more threads; a ``stat`` of each file every few seconds costs
        next to nothing, and the change is only logged (prompts read the file fresh)."""
        if self._catalog is None or self.exit_when_idle:
            return
        wanted = {squad.workspace / "AGENTS.md" for squad in self._catalog.squads().values()}
        with self._rules_lock:
            for path in set(self._rules) - wanted:
                del self._rules[path]
                self._boot_marks.pop(path, None)
            for path in wanted - set(self._rules):
                self._rules[path] = _stat_mark(path)
                self._boot_marks[path] = _content_mark(path)

    def _check_workspace_rules(self) -> None:
        """Log ``boot_changed`` for each workspace ``AGENTS.md`` whose content changed."""
        with self._rules_lock:
            moved = set()
            for path, before in self._rules.items():
                mark = _stat_mark(path)
                if mark != before:
                    self._rules[path] = mark
                    moved.add(path)
            changed = self._boot_changes(moved) if moved else []
        if changed:
            self.log.emit("boot_changed", files=changed)

    def _note_boot_files(self) -> None:
        """Remember the home's boot files as they are before watching starts."""
        for name in BOOT_NAMES:
            path = self.settings.home / name
            self._boot_marks[path] = _content_mark(path)

    def _boot_changes(self, paths: set[Path]) -> list[str]:
        """The boot files among ``paths`` whose content a person changed.

        Left out: a file whose bytes are as last seen (a touch, a rewrite of the same text),
        and the default SOUL.md that squad itself writes where the home had none (a run's
        first prompt does): the daemon's own write is no news."""
        changed = []
        for path in sorted(p for p in paths if p.name in BOOT_NAMES):
            mark = _content_mark(path)
            unknown = path not in self._boot_marks
            before = self._boot_marks.get(path)
            self._boot_marks[path] = mark
            if not unknown and mark == before:
                continue
            own_default = (
                path == self.settings.home / "SOUL.md"
                and before is None
                and mark == _default_soul_mark()
            )
            if not own_default:
                changed.append(str(path))
        return changed

    def _on_files_changed(self, paths: set[Path]) -> None:
        with self._rules_lock:
            boot = self._boot_changes(paths)
        if boot:
            # Prompts read boot files fresh at every turn (squad.memory.boot) and nothing
            # caches them, so live agents see the change at their next turn: just log it.
            self.log.emit("boot_changed", files=boot)
        configs = any(p.parent == self.squads_dir for p in paths)
        self._ready.wait()
        if any(self._is_settings_file(p) for p in paths) and not self._stopping.is_set():
            self._reload_settings()
        if configs and self._catalog is not None and not self._stopping.is_set():
            self._catalog.reconcile()
            self._watch_workspaces()
            self._wake.set()

    def _is_settings_file(self, path: Path) -> bool:
        return path.parent == self.settings.configs and path.name == "settings.yaml"

    def _reload_settings(self) -> None:
        """Apply an edited settings.yaml: what can change live now, the rest reported."""
        from squad.daemon.reload import compare

        if self._reload is None:
            return
        try:
            new = self._reload()
        except SquadError as exc:  # a bad edit: keep running as before, and say why
            self.log.emit("settings_error", error=str(exc), kept="the running settings")
            return
        change = compare(self.settings, new)
        self._restart_needed = change.restart_needed
        if change.applied:
            self.settings, self.config = change.effective, change.effective.daemon
            self._schedule_jobs(
                [
                    j
                    for j in ("consolidation", "retention", "extraction")
                    if f"daemon.{j}_cron" in change.applied
                ]
            )
            if self._runs is not None and "daemon.max_concurrent_runs" in change.applied:
                self._runs.queue.resize(self.config.max_concurrent_runs)
            retention = self.config.retention
            self.log.set_limits(
                max_bytes=retention.daemon_log_mb * 1024 * 1024, keep=retention.daemon_log_files
            )
        if change.applied or change.restart_needed:
            self.log.emit(
                "settings_reloaded",
                applied=list(change.applied) or None,
                restart_needed=list(change.restart_needed) or None,
            )
        self._wake.set()

    # -- heartbeat -------------------------------------------------------------------------

    def _beat(self, *, changed: bool = True) -> None:
        home = str(self.settings.home)
        if not changed and self._last_state and self.store.daemon.touch(home, pid=self._pid):
            self._publish(json.loads(self._last_state), changed=False)
            return
        state = self.state()
        text = json.dumps(state, sort_keys=True)
        if text == self._last_state and self.store.daemon.touch(home, pid=self._pid):
            self._publish(state, changed=changed)
            return
        self.store.daemon.beat(
            home, pid=self._pid, host=self._host, started_at=self._started_at, state=state
        )
        self._last_state = text
        self._publish(state, changed=True)

    def _publish(self, state: dict[str, Any], *, changed: bool) -> None:
        """What ``squad status`` shows, in the home (:func:`~squad.daemon.status.publish`):
        the state and the store's part, read again when something changed and at least
        every :data:`STORE_VIEW_S` (runs of ``squad run`` and chats change the store too);
        otherwise only the file's time moves with the beat."""
        due = time.monotonic() >= self._store_view_due
        if state.get("phase") == "running" and (changed or due or self._view is None):
            names = [str(squad["name"]) for squad in state.get("squads", [])]
            self._store_view_due = time.monotonic() + STORE_VIEW_S
            try:
                self._view = store_view(self.app, names, now=self._clock(), settle=False)
            except Exception as exc:  # noqa: BLE001 - logged; the last view is published again
                self.log.emit("job_error", job="heartbeat", error=f"status: {_describe(exc)}")
        payload = {
            "pid": self._pid,
            "host": self._host,
            "started_at": _iso(self._started_at),
            "state": state,
            "store": self._view,
        }
        try:
            self._published = publish(self.settings.home, payload, previous=self._published)
        except OSError as exc:
            self.log.emit("job_error", job="heartbeat", error=f"publishing the status: {exc}")

    def _safe_beat(self, *, changed: bool = True) -> None:
        try:
            self._beat(changed=changed)
        except SquadError as exc:
            self.log.emit("job_error", job="heartbeat", error=str(exc))
