"""The daemon's background jobs: consolidation, retention and the extraction sweep at their
cron times (``daemon.<job>_cron``), and the credential scan after a detector upgrade.

What a job does is given: in this process (:func:`local_job`, bodies in
:mod:`squad.daemon.jobs`), or a cluster job any node takes (:mod:`squad.cluster.daemon`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from squad.daemon.context import BACKGROUND_JOBS
from squad.errors import SquadError
from squad.scan.report import ScanSummary

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext
    from squad.daemon.eventlog import DaemonLog
    from squad.jobqueue.reports import JobQueued, JobReport

__all__ = ["BackgroundJobs", "JobWork", "SecretsScan", "local_job", "run_job"]

JobWork = Callable[["DaemonContext", str], "JobReport | JobQueued"]
"""Runs one background job by name; its report (logged with ``job_end``)."""


def run_job(log: DaemonLog, job: str, work: Callable[[], Mapping[str, object]]) -> None:
    """Run ``work`` between ``job_start`` and ``job_end`` (``job_error`` when it fails: the
    daemon goes on)."""
    log.emit("job_start", job=job)
    try:
        report = work()
    except SquadError as exc:
        log.emit("job_error", job=job, error=str(exc))
        return
    except Exception as exc:  # noqa: BLE001 - logged, and the daemon must go on
        log.emit("job_error", job=job, error=f"{type(exc).__name__}: {exc}")
        return
    log.emit("job_end", job=job, report=report)


def local_job(ctx: DaemonContext, job: str) -> JobReport:
    """A background job in this process, over the squads the daemon has loaded."""
    from squad.daemon.jobs import retain_loaded, run_consolidation, sweep_extraction

    assert ctx.catalog is not None and ctx.runs is not None
    if job == "consolidation":
        return run_consolidation(ctx.app, now=ctx.app.clock())
    if job == "retention":
        busy = ctx.runs.dispatcher.running_since()
        loaded = ctx.catalog.squads()
        policy = ctx.config.retention
        return retain_loaded(ctx.app, loaded, busy, now=ctx.app.clock(), policy=policy)
    if job == "extraction":
        return sweep_extraction(ctx.app, ctx.catalog.squads())
    raise ValueError(f"no background job named {job!r}")


class BackgroundJobs:
    """Schedules the jobs at their cron times (not with ``--once``: no scheduler) and runs
    the extraction sweep once at start, for replies left unread by the last daemon."""

    name = "jobs"

    def __init__(self, work: JobWork) -> None:
        self._work = work

    def start(self, ctx: DaemonContext) -> None:
        self._schedule(ctx, BACKGROUND_JOBS)
        self._run(ctx, "extraction")

    def stop(self, ctx: DaemonContext) -> None:
        """The scheduler's stop ends the cron jobs."""

    def reconfigure(self, ctx: DaemonContext, applied: tuple[str, ...]) -> None:
        self._schedule(ctx, [j for j in BACKGROUND_JOBS if f"daemon.{j}_cron" in applied])

    def _run(self, ctx: DaemonContext, job: str) -> None:
        run_job(ctx.log, job, functools.partial(self._work, ctx, job))

    def _schedule(self, ctx: DaemonContext, jobs: Sequence[str]) -> None:
        """(Re)schedule ``jobs`` at their cron times in the daemon settings."""
        if ctx.scheduler is None:
            return
        crons = {
            "consolidation": ctx.config.consolidation_cron,
            "retention": ctx.config.retention_cron,
            "extraction": ctx.config.extraction_cron,
        }
        for job in jobs:
            ctx.scheduler.add_cron_job(job, crons[job], functools.partial(self._run, ctx, job))


class ScanDone(ScanSummary):
    """The credential scan's ``job_end`` report: its figures, and whether the detector was
    recorded as scanned with."""

    recorded: bool


class SecretsScan:
    """When the credential detector is not the one the home was last scanned with (an
    upgrade, or a home never scanned), scan every stored place with ``fix`` in the
    background (:mod:`squad.scan`): start-up does not wait for it. It logs ``job_start``
    and ``job_end`` (job ``secrets_scan``, with the figures) and records the detector
    once the scan settles, so the next start does not scan again."""

    name = "secrets_scan"

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, ctx: DaemonContext) -> None:
        from squad.scan import needs_scan

        if not needs_scan(ctx.settings.home):
            return
        self._thread = threading.Thread(
            target=run_job,
            args=(ctx.log, "secrets_scan", functools.partial(self._scan, ctx)),
            name="squad-secrets-scan",
            daemon=True,
        )
        self._thread.start()

    def stop(self, ctx: DaemonContext) -> None:
        """Let the scan end before the app closes: asked to stop at its next file or group,
        except when ``--once`` ends idle (it finishes: a one-shot daemon may never run long
        enough otherwise); a second stop request stops it too."""
        thread = self._thread
        if thread is None:
            return
        if not (ctx.once and ctx.stop_reason == "idle"):
            self._stop.set()
        while thread.is_alive():
            thread.join(0.2)
            if ctx.force.is_set():
                self._stop.set()

    def _scan(self, ctx: DaemonContext) -> ScanDone:
        from squad.scan import record_scan, scan_home

        report = scan_home(ctx.app, fix=True, stop=self._stop.is_set)
        summary = report.summary()
        if report.settled:
            now = ctx.app.clock().isoformat()
            record_scan(ctx.settings.home, report.detector, now, summary)
        return {**summary, "recorded": report.settled}
