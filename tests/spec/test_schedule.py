"""Cron and interval parsing: standard cron semantics, clear errors."""

from __future__ import annotations

from datetime import timedelta

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


@pytest.mark.parametrize("text", ["", "30", "30x", "m30", "-5m", "30m1h", "1.5h", "0m", "367d"])
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
