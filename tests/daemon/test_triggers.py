"""Schedule -> APScheduler trigger mapping: cron weekdays as cron means them (0 and 7 are
Sunday), cron's OR of day-of-month and day-of-week, time zones, intervals, late fires."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from squad.daemon.triggers import (
    INTERVAL_ANCHOR,
    CronFields,
    build_trigger,
    cron_fields,
    cron_trigger,
    describe_schedule,
    interval_offset,
    missed_fire,
    next_fire,
    timing,
)
from squad.spec.models import Schedule
from squad.spec.schedule import parse_cron

MONDAY = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)  # a Monday


def fires(trigger: Any, start: datetime, count: int) -> list[datetime]:
    """The first ``count`` fire times at or after ``start``."""
    found: list[datetime] = []
    moment = next_fire(trigger, start)
    while moment is not None and len(found) < count:
        found.append(moment)
        moment = trigger.get_next_fire_time(moment, moment + timedelta(seconds=1))
    return found


def test_weekdays_one_to_five_are_monday_to_friday_at_nine_in_the_squads_zone() -> None:
    zone = ZoneInfo("Asia/Seoul")
    times = fires(cron_trigger("0 9 * * 1-5", "Asia/Seoul"), MONDAY, 6)
    local = [t.astimezone(zone) for t in times]
    assert [t.strftime("%a %H:%M") for t in local] == [
        "Mon 09:00",
        "Tue 09:00",
        "Wed 09:00",
        "Thu 09:00",
        "Fri 09:00",
        "Mon 09:00",
    ]
    assert local[0].date().isoformat() == "2026-11-30"


@pytest.mark.parametrize("sunday", ["0", "7", "sun", "SUN"])
def test_weekday_zero_seven_and_sun_all_mean_sunday(sunday: str) -> None:
    times = fires(cron_trigger(f"0 0 * * {sunday}"), MONDAY, 3)
    assert [t.strftime("%a") for t in times] == ["Sun", "Sun", "Sun"]
    assert times[0] == datetime(2026, 12, 6, tzinfo=UTC)


def test_weekly_macro_is_sunday_midnight() -> None:
    assert fires(cron_trigger("@weekly"), MONDAY, 1) == [datetime(2026, 12, 6, tzinfo=UTC)]


def test_weekday_fields_are_passed_by_name_never_by_apschedulers_numbers() -> None:
    (fields,) = cron_fields(parse_cron("30 8 * * 1-5"))
    assert fields == CronFields("30", "8", "*", "*", "mon,tue,wed,thu,fri")
    (weekend,) = cron_fields(parse_cron("0 0 * * 6,0"))
    assert weekend.day_of_week == "sat,sun"


def test_steps_lists_and_ranges_keep_their_values() -> None:
    (fields,) = cron_fields(parse_cron("*/15 8-10 * jan-mar */2"))
    assert fields == CronFields("0,15,30,45", "8,9,10", "*", "1,2,3", "tue,thu,sat,sun")
    times = fires(cron_trigger("*/20 9-10 * * *"), MONDAY, 7)
    assert [t.strftime("%H:%M") for t in times] == [
        "09:00",
        "09:20",
        "09:40",
        "10:00",
        "10:20",
        "10:40",
        "09:00",
    ]


def test_day_of_month_and_day_of_week_together_fire_on_either() -> None:
    # Cron: the 1st of the month OR any Friday (not only Fridays that are the 1st).
    fields = cron_fields(parse_cron("0 12 1 * fri"))
    assert [(f.day, f.day_of_week) for f in fields] == [("1", "*"), ("*", "fri")]
    times = fires(cron_trigger("0 12 1 * fri"), MONDAY, 4)
    assert [t.date().isoformat() for t in times] == [
        "2026-12-01",  # a Tuesday, the 1st
        "2026-12-04",  # Friday
        "2026-12-11",
        "2026-12-18",
    ]


def test_only_one_day_field_restricted_narrows_by_that_field_alone() -> None:
    (fields,) = cron_fields(parse_cron("0 0 1,15 * *"))
    assert (fields.day, fields.day_of_week) == ("1,15", "*")
    times = fires(cron_trigger("0 0 1,15 * *"), MONDAY, 3)
    assert [t.day for t in times] == [1, 15, 1]


def test_interval_fires_every_period_and_none_means_no_trigger() -> None:
    trigger = build_trigger(Schedule(interval="1h30m"))
    assert trigger is not None
    first = trigger.get_next_fire_time(None, datetime.now(UTC))
    second = trigger.get_next_fire_time(first, first + timedelta(seconds=1))
    assert second - first == timedelta(hours=1, minutes=30)
    assert build_trigger(None) is None
    assert build_trigger(Schedule(run_on_start=True)) is None


def test_cron_schedule_uses_its_time_zone() -> None:
    trigger = build_trigger(Schedule(cron="0 9 * * *", timezone="America/New_York"))
    (first,) = fires(trigger, MONDAY, 1)
    assert first == datetime(2026, 11, 30, 14, 0, tzinfo=UTC)  # 09:00 EST


def test_missed_fire_is_the_latest_fire_time_within_the_grace() -> None:
    trigger = cron_trigger("*/5 * * * *")
    now = datetime(2026, 1, 1, 0, 7, tzinfo=UTC)
    assert missed_fire(trigger, now, timedelta(minutes=10)) == datetime(
        2026, 1, 1, 0, 5, tzinfo=UTC
    )
    assert missed_fire(trigger, now, timedelta(minutes=1)) is None


def test_schedules_are_described_for_people() -> None:
    assert describe_schedule(None) == "on demand"
    assert describe_schedule(Schedule(cron="0 9 * * 1-5")) == "cron '0 9 * * 1-5' (UTC)"
    assert describe_schedule(Schedule(interval="2h", run_on_start=True)) == "every 2h, on start"
    assert describe_schedule(Schedule(run_on_start=True)) == "on start"


def edited_every(schedule: Schedule, squad: str, *, edit_s: int, minutes: int) -> list[datetime]:
    """The fire times of ``squad`` over ``minutes`` of a simulated clock when its file is
    edited every ``edit_s`` seconds and each edit builds its trigger again (as a reload does),
    the next fire taken from the new trigger as APScheduler takes it."""
    now = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
    end = now + timedelta(minutes=minutes)
    trigger = build_trigger(schedule, squad=squad)
    pending = next_fire(trigger, now)
    fired: list[datetime] = []
    while now < end:
        now += timedelta(seconds=1)
        if (now - datetime(2026, 11, 29, tzinfo=UTC)).seconds % edit_s == 0:
            trigger = build_trigger(schedule, squad=squad)
            pending = next_fire(trigger, now)
        while pending is not None and pending <= now:
            fired.append(pending)
            pending = next_fire(trigger, now + timedelta(microseconds=1))
    return fired


def test_an_interval_edited_more_often_than_it_fires_keeps_its_rhythm() -> None:
    # A 60 s squad edited every 30 s: before, each edit started the 60 s over and it never ran.
    fired = edited_every(Schedule(interval="60s"), "alpha", edit_s=30, minutes=10)
    assert len(fired) == 10
    assert {b - a for a, b in itertools.pairwise(fired)} == {timedelta(seconds=60)}


def test_an_interval_counts_from_a_fixed_anchor_shifted_by_a_stable_per_squad_offset() -> None:
    now = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)
    hourly = Schedule(interval="1h")
    alpha = next_fire(build_trigger(hourly, squad="alpha"), now)
    assert alpha is not None
    assert alpha == next_fire(build_trigger(hourly, squad="alpha"), now)  # an edit, a restart
    assert (alpha - INTERVAL_ANCHOR) % timedelta(hours=1) == interval_offset("alpha", 3600)
    assert {interval_offset(name, 3600) for name in ("alpha", "beta", "gamma", "delta")} != {
        timedelta(0)
    }
    assert interval_offset("alpha", 3600) < timedelta(hours=1)
    # A cluster's daemons share one anchor, squad or not: they agree on every fire time.
    shared = next_fire(build_trigger(hourly, anchored=True, squad="alpha"), now)
    assert shared == datetime(2026, 11, 29, 13, 0, tzinfo=UTC)


def test_only_when_it_fires_counts_as_a_change_of_schedule() -> None:
    assert timing(Schedule(interval="60s")) == timing(Schedule(interval="1m", run_on_start=True))
    assert timing(Schedule(interval="60s")) != timing(Schedule(interval="90s"))
    assert timing(Schedule(cron="0 9 * * *")) != timing(
        Schedule(cron="0 9 * * *", timezone="Asia/Seoul")
    )
    assert timing(Schedule(interval="1h", timezone="Asia/Seoul")) == timing(Schedule(interval="1h"))
    assert timing(None) == timing(Schedule(run_on_start=True))
