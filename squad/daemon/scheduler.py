"""APScheduler 3 behind the few operations the daemon needs.

Squad jobs are named ``squad:<name>`` and only *ask* for a run (the run queue decides when
it starts), so the scheduler's own thread pool stays tiny. Misfire grace and coalescing are
APScheduler's: a fire time missed by up to ``misfire_grace_s`` still fires, and several
missed ones fire once. The scheduler thread sleeps until the next fire time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from squad.daemon.triggers import build_trigger, cron_trigger

if TYPE_CHECKING:
    from squad.spec.models import Schedule

__all__ = ["JobScheduler"]

_SQUAD = "squad:"


class JobScheduler:
    """Cron/interval jobs of squads plus the daemon's own background jobs."""

    def __init__(
        self,
        *,
        misfire_grace_s: int,
        on_error: Callable[[str, BaseException], object],
        on_missed: Callable[[str, datetime], object],
        anchored: bool = False,
    ) -> None:
        """``anchored``: intervals fire at the same times in every scheduler (a cluster);
        otherwise each squad's interval keeps its own stable offset
        (:func:`~squad.daemon.triggers.build_trigger`). Either way an interval is anchored:
        scheduling a squad again does not move its fire times."""
        self._grace = misfire_grace_s
        self._anchored = anchored
        self._on_error = on_error
        self._on_missed = on_missed
        self._scheduler: Any = None

    def start(self) -> None:
        import logging

        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MISSED
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        # Misses and errors reach the daemon's log through the listener, not stderr.
        quiet = logging.getLogger("apscheduler")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=2)},
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": self._grace,
            },
            daemon=True,
        )
        scheduler.add_listener(self._listen, EVENT_JOB_ERROR | EVENT_JOB_MISSED)
        scheduler.start()
        self._scheduler = scheduler

    def shutdown(self) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None

    def schedule_squad(
        self, name: str, schedule: Schedule | None, fire: Callable[[str], None]
    ) -> datetime | None:
        """(Re)schedule a squad's job; its next fire time (None: it has no cron/interval)."""
        trigger = build_trigger(schedule, anchored=self._anchored, squad=name)
        if trigger is None:
            self.unschedule_squad(name)
            return None
        job = self._scheduler.add_job(
            fire,
            trigger=trigger,
            args=[name],
            id=_SQUAD + name,
            name=name,
            replace_existing=True,
        )
        found: datetime | None = job.next_run_time
        return found

    def unschedule_squad(self, name: str) -> None:
        if self._scheduler is not None and self._scheduler.get_job(_SQUAD + name) is not None:
            self._scheduler.remove_job(_SQUAD + name)

    def next_fire(self, name: str) -> datetime | None:
        """When the squad's job fires next; None without one, or once shut down."""
        if self._scheduler is None:
            return None
        job = self._scheduler.get_job(_SQUAD + name)
        found: datetime | None = None if job is None else job.next_run_time
        return found

    def job(self, job_id: str) -> tuple[str, datetime | None] | None:
        """A background job's trigger (as text) and next fire time; None if there is none."""
        if self._scheduler is None:
            return None
        found = self._scheduler.get_job(job_id)
        if found is None:
            return None
        when: datetime | None = found.next_run_time
        return str(found.trigger), when

    def add_cron_job(self, job_id: str, cron: str, work: Callable[[], None]) -> None:
        """A background job on a cron expression read in the machine's local time."""
        self._scheduler.add_job(
            work,
            trigger=cron_trigger(cron, timezone=None),
            id=job_id,
            name=job_id,
            replace_existing=True,
        )

    def _listen(self, event: Any) -> None:
        job = str(event.job_id).removeprefix(_SQUAD)
        exception = getattr(event, "exception", None)
        if exception is not None:
            self._on_error(job, exception)
        else:
            self._on_missed(job, event.scheduled_run_time)
