"""Cron and interval parsing: standard cron semantics, clear errors."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squad.spec.schedule import parse_cron, parse_interval


def test_weekday_range_means_monday_to_friday() -> None:
    assert parse_cron("0 9 * * 1-5").days_of_week == {1, 2, 3, 4, 5}


def test_sunday_is_both_zero_and_seven() -> None:
    assert parse_cron("0 0 * * 7").days_of_week == {0}
    assert parse_cron("0 0 * * sun").days_of_week == {0}


def test_names_steps_and_lists_combine() -> None:
    cron = parse_cron("*/20 8-18/5 1,15 jan-mar mon,FRI")
    assert cron.minutes == {0, 20, 40}
    assert cron.hours == {8, 13, 18}
    assert cron.days_of_month == {1, 15}
    assert cron.months == {1, 2, 3}
    assert cron.days_of_week == {1, 5}
    assert cron.day_of_month_restricted and cron.day_of_week_restricted


def test_start_with_step_runs_to_the_end_of_the_field() -> None:
    assert parse_cron("5/15 * * * *").minutes == {5, 20, 35, 50}


@pytest.mark.parametrize(
    ("macro", "expanded"),
    [("@daily", "0 0 * * *"), ("@hourly", "0 * * * *"), ("@weekly", "0 0 * * 0")],
)
def test_macros_expand_to_their_cron(macro: str, expanded: str) -> None:
    a, b = parse_cron(macro), parse_cron(expanded)
    assert (a.minutes, a.hours, a.days_of_week) == (b.minutes, b.hours, b.days_of_week)


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("60 * * * *", "minute: 60 is out of range 0-59"),
        ("* 24 * * *", "hour: 24 is out of range 0-23"),
        ("* * 0 * *", "day of month: 0 is out of range 1-31"),
        ("* * * 13 *", "month: 13 is out of range 1-12"),
        ("* * * * 8", "day of week: 8 is out of range 0-7"),
        ("* * * * funday", "not a number"),
        ("² * * * *", "minute: '²' is not a number"),
        ("1" * 5000 + " * * * *", "minute: 1111111111"),
        ("*/0 * * * *", "step '0'"),
        ("10-5 * * * *", "runs backwards"),
        ("1,,2 * * * *", "empty entry"),
        ("* * * *", "5 fields"),
        ("* * * * * *", "5 fields"),
        ("@sometimes", "5 fields"),
    ],
)
def test_bad_cron_names_the_field_at_fault(expression: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_cron(expression)


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("45s", timedelta(seconds=45)),
        ("30m", timedelta(minutes=30)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1h30m", timedelta(minutes=90)),
        (" 2H ", timedelta(hours=2)),
    ],
)
def test_interval_units(text: str, delta: timedelta) -> None:
    assert parse_interval(text) == delta


@pytest.mark.parametrize(
    "text",
    ["", "30", "30x", "m30", "-5m", "30m1h", "1.5h", "0m", "367d", "99999999999999999999d", "١h"],
)
def test_bad_interval_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_interval(text)


@given(
    st.integers(0, 59),
    st.integers(0, 23),
    st.integers(1, 31),
    st.integers(1, 12),
    st.integers(0, 7),
)
def test_any_single_value_cron_parses_to_exactly_that_value(
    minute: int, hour: int, day: int, month: int, weekday: int
) -> None:
    cron = parse_cron(f"{minute} {hour} {day} {month} {weekday}")
    assert (cron.minutes, cron.hours, cron.days_of_month, cron.months) == (
        {minute},
        {hour},
        {day},
        {month},
    )
    assert cron.days_of_week == {weekday % 7}


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("0 0 30 2 *", "February has no day 30"),
        ("0 0 31 4 *", "April has no day 31"),
        ("0 0 30,31 feb *", "February has no day 30 or 31"),
        ("0 0 31 4,6,9,11 *", "April, June, September and November have no day 31"),
    ],
)
def test_a_cron_that_can_never_fire_is_refused(expression: str, words: str) -> None:
    with pytest.raises(ValueError, match=f"it can never fire: {words}"):
        parse_cron(expression)


@pytest.mark.parametrize(
    "expression",
    ["0 0 31 * *", "0 0 30 2 1", "0 0 31 4 */2", "0 0 31 1-12/2 *", "0 0 29 2 *", "0 0 */30 2 *"],
)
def test_a_cron_that_fires_somewhere_is_kept(expression: str) -> None:
    parse_cron(expression)


def test_only_the_29th_of_february_counts_as_a_leap_day_schedule() -> None:
    assert parse_cron("0 0 29 2 *").only_on_leap_day
    assert parse_cron("0 0 29-31 2 *").only_on_leap_day
    assert not parse_cron("0 0 29 2 mon").only_on_leap_day  # or every Monday of February
    assert not parse_cron("0 0 29 1,2 *").only_on_leap_day


@given(
    st.frozensets(st.integers(1, 31), min_size=1),
    st.frozensets(st.integers(1, 12), min_size=1),
)
def test_never_fires_agrees_with_a_leap_year_calendar(
    days: frozenset[int], months: frozenset[int]
) -> None:
    """2024 is a leap year, so it holds every (month, day) any year has: the oracle."""
    expression = f"0 0 {','.join(map(str, sorted(days)))} {','.join(map(str, sorted(months)))} *"
    start = date(2024, 1, 1)
    fires = any(
        (d.month in months and d.day in days) for d in (start + timedelta(n) for n in range(366))
    )
    if fires:
        cron = parse_cron(expression)
        assert cron.calendar_days() == {(m, d) for m in months for d in days if _exists(m, d)}
    else:
        with pytest.raises(ValueError, match="never fire"):
            parse_cron(expression)


def _exists(month: int, day: int) -> bool:
    try:
        date(2024, month, day)
    except ValueError:
        return False
    return True
