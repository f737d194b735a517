"""A squad's ``schedule`` as APScheduler triggers: pure mapping, no scheduler involved.

The cron expression is parsed by :mod:`squad.spec.schedule` (standard cron: weekday 0 or 7 =
Sunday) and its fields handed to ``CronTrigger`` as explicit value lists, weekdays by name.
``CronTrigger.from_crontab`` is never used: it numbers weekdays from Monday = 0, so ``1-5``
would mean Tuesday to Saturday.

Cron also has a rule APScheduler lacks: when both day-of-month and day-of-week are
restricted, a day matches if *either* does (``0 0 1 * 1`` is the 1st and every Monday).
That case becomes an ``OrTrigger`` of two cron triggers.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from squad.spec.schedule import CronExpression, parse_cron, parse_interval

if TYPE_CHECKING:
    from squad.spec.models import Schedule

__all__ = [
    "INTERVAL_ANCHOR",
    "CronFields",
    "Timing",
    "build_trigger",
    "cron_fields",
    "cron_trigger",
    "describe_schedule",
    "interval_offset",
    "missed_fire",
    "next_fire",
    "timing",
]

_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
"""Cron's weekday numbers (0 = Sunday) as the names APScheduler reads unambiguously."""
_WEEKDAY_ORDER = (1, 2, 3, 4, 5, 6, 0)
"""Monday first, as APScheduler lists weekdays (only for readable field strings)."""


@dataclass(frozen=True)
class CronFields:
    """Keyword arguments of one ``CronTrigger``: each field a value list or ``*``."""

    minute: str
    hour: str
    day: str
    month: str
    day_of_week: str

    def as_kwargs(self) -> dict[str, str]:
        return asdict(self)


def _values(values: frozenset[int], low: int, high: int) -> str:
    if values == frozenset(range(low, high + 1)):
        return "*"
    return ",".join(str(v) for v in sorted(values))


def _weekdays(values: frozenset[int]) -> str:
    if values == frozenset(range(7)):
        return "*"
    return ",".join(_WEEKDAYS[d] for d in _WEEKDAY_ORDER if d in values)


def cron_fields(expression: CronExpression) -> list[CronFields]:
    """The ``CronTrigger`` field sets that together fire exactly when ``expression`` does.

    One set, or two (to be OR-ed) when both day-of-month and day-of-week are restricted.
    """
    minute = _values(expression.minutes, 0, 59)
    hour = _values(expression.hours, 0, 23)
    month = _values(expression.months, 1, 12)
    days = _values(expression.days_of_month, 1, 31)
    weekdays = _weekdays(expression.days_of_week)
    if expression.day_of_month_restricted and expression.day_of_week_restricted:
        return [
            CronFields(minute, hour, days, month, "*"),
            CronFields(minute, hour, "*", month, weekdays),
        ]
    return [
        CronFields(
            minute,
            hour,
            days if expression.day_of_month_restricted else "*",
            month,
            weekdays if expression.day_of_week_restricted else "*",
        )
    ]


def cron_trigger(expression: str, timezone: str | None = "UTC") -> Any:
    """An APScheduler trigger for a cron expression read in ``timezone`` (None: local time)."""
    from apscheduler.triggers.combining import OrTrigger
    from apscheduler.triggers.cron import CronTrigger

    zone = ZoneInfo(timezone) if timezone is not None else None
    triggers = [
        CronTrigger(second=0, timezone=zone, **fields.as_kwargs())
        for fields in cron_fields(parse_cron(expression))
    ]
    return triggers[0] if len(triggers) == 1 else OrTrigger(triggers)


INTERVAL_ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)
"""Where intervals count from: every fire time of an interval is this plus whole intervals
(shifted by the squad's own offset, :func:`interval_offset`, outside a cluster)."""

Timing = tuple[str | None, str | None, int | None]
"""What decides when a schedule fires (:func:`timing`)."""


def timing(schedule: Schedule | None) -> Timing:
    """When ``schedule`` fires, as a value to compare: (cron, its time zone, interval seconds).

    ``run_on_start`` and the time zone of an interval do not change it, and ``60s`` is ``1m``:
    a new file whose timing is the old one's is no change of schedule, and its squad's next
    fire stays where it was."""
    if schedule is None:
        return (None, None, None)
    if schedule.cron is not None:
        return (schedule.cron, schedule.timezone, None)
    if schedule.interval is not None:
        return (None, None, int(parse_interval(schedule.interval).total_seconds()))
    return (None, None, None)


def interval_offset(squad: str, seconds: int) -> timedelta:
    """A squad's own shift of :data:`INTERVAL_ANCHOR`, under one interval: the same for the
    squad at every edit and restart, different from squad to squad, so that a hundred squads
    on one interval do not all ask for a run in the same second."""
    digest = hashlib.sha256(squad.encode()).digest()
    return timedelta(seconds=int.from_bytes(digest[:8], "big") % max(seconds, 1))


def build_trigger(
    schedule: Schedule | None, *, anchored: bool = False, squad: str | None = None
) -> Any | None:
    """The APScheduler trigger of a squad's schedule; None when it has neither cron nor
    interval (it runs on demand, or only on start).

    An interval counts from :data:`INTERVAL_ANCHOR`, never from when the trigger is made, so
    building it again (an edit of the squad's file, a restart) does not move its fire times.
    With ``squad`` the anchor is shifted by that squad's :func:`interval_offset`, unless
    ``anchored``: independent schedulers (a cluster's daemons) then share the bare anchor and
    agree on every fire time."""
    from apscheduler.triggers.interval import IntervalTrigger

    if schedule is None:
        return None
    if schedule.cron is not None:
        return cron_trigger(schedule.cron, schedule.timezone)
    if schedule.interval is not None:
        seconds = int(parse_interval(schedule.interval).total_seconds())
        start = INTERVAL_ANCHOR
        if squad is not None and not anchored:
            start += interval_offset(squad, seconds)
        return IntervalTrigger(seconds=seconds, timezone=UTC, start_date=start)
    return None


def describe_schedule(schedule: Schedule | None) -> str:
    """One line for people: ``cron '0 9 * * 1-5' (UTC)``, ``every 2h``, ``on demand``."""
    if schedule is None:
        return "on demand"
    parts = []
    if schedule.cron is not None:
        parts.append(f"cron {schedule.cron!r} ({schedule.timezone})")
    elif schedule.interval is not None:
        parts.append(f"every {schedule.interval}")
    if schedule.run_on_start:
        parts.append("on start")
    return ", ".join(parts) or "on demand"


def next_fire(trigger: Any, now: datetime) -> datetime | None:
    """When ``trigger`` fires next at or after ``now`` (None: never again)."""
    found: datetime | None = trigger.get_next_fire_time(None, now)
    return found


def missed_fire(trigger: Any, now: datetime, grace: timedelta) -> datetime | None:
    """The latest fire time of ``trigger`` in ``[now - grace, now)``, if there was one.

    A daemon that was down at that time starts the run late rather than not at all.
    """
    fire = next_fire(trigger, now - grace)
    missed = None
    while fire is not None and fire < now:
        missed = fire
        fire = trigger.get_next_fire_time(fire, fire + timedelta(seconds=1))
    return missed
