"""Rewrite relative dates ("tomorrow", "next Friday", "내일", "다음 주 금요일") as ISO dates.

A stored fact is read weeks later, when "tomorrow" means something else, so every fact carries
absolute dates. Pure: ``today`` is passed in, never read from a clock.

Conventions, English and Korean alike:

- "this Friday", "on Friday", "by Friday", a bare "Friday", "이번 주 금요일", "금요일까지": the
  next Friday from today, today included (0 to 6 days ahead).
- "next Friday", "다음 주 금요일": Friday of next calendar week (weeks start on Monday).
- "last Friday", "지난주 금요일": Friday of the previous calendar week.
- "at the end of next month": "on" the month's last day.
- "next week", "다음 주": the Monday that starts it, as "the week of YYYY-MM-DD" (English) or
  "YYYY-MM-DD 주" (Korean); "next month", "다음 달": "YYYY-MM"; "다음 달 15일": a full date.
- Recurring days ("every Friday", "on Fridays", "매주 금요일", "금요일마다") are left alone.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, timedelta
from functools import partial

__all__ = ["absolutise"]

_EN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_KO_DAYS = ("월", "화", "수", "목", "금", "토", "일")
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _upcoming(today: date, weekday: int) -> date:
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _week_start(today: date, weeks: int) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(weeks=weeks)


def _month(today: date, months: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 + months
    return index // 12, index % 12 + 1


def _month_text(today: date, months: int) -> str:
    year, month = _month(today, months)
    return f"{year:04d}-{month:02d}"


def _month_end(today: date, months: int) -> date:
    year, month = _month(today, months)
    return date(year, month, calendar.monthrange(year, month)[1])


def _shift(today: date, count: str, unit: str, sign: int) -> str:
    n = int(count) if count.isdigit() else _EN_NUMBERS[count.lower()]
    days = n * (7 if unit.lower().startswith("week") else 1)
    return (today + timedelta(days=days * sign)).isoformat()


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], str]]

_EN_DAY = r"(?P<day>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_EN_COUNT = r"(?P<n>\d{1,3}|an?|one|two|three|four|five|six)"


def _en_day(m: re.Match[str], today: date) -> str:
    weekday = _EN_DAYS.index(m["day"].lower())
    which = (m["which"] or "").lower()
    if which == "next":
        found = _week_start(today, 1) + timedelta(days=weekday)
    elif which == "last":
        found = _week_start(today, -1) + timedelta(days=weekday)
    else:
        found = _upcoming(today, weekday)
    return found.isoformat()


_EN_RULES: list[_Rule] = [
    (
        re.compile(r"\b(?:the\s+)?day\s+after\s+tomorrow\b", re.I),
        lambda m, t: (t + timedelta(days=2)).isoformat(),
    ),
    (
        re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I),
        lambda m, t: (t - timedelta(days=2)).isoformat(),
    ),
    (re.compile(r"\btomorrow\b", re.I), lambda m, t: (t + timedelta(days=1)).isoformat()),
    (re.compile(r"\byesterday\b", re.I), lambda m, t: (t - timedelta(days=1)).isoformat()),
    (re.compile(r"\b(?:today|tonight)\b", re.I), lambda m, t: t.isoformat()),
    (
        re.compile(
            r"(?<!every )\b(?:(?P<which>next|this|coming|last)\s+)?" + _EN_DAY + r"\b", re.I
        ),
        _en_day,
    ),
    (
        re.compile(
            r"\b(?:(?P<prep>at|by|before|until)\s+)?(?:the\s+)?end\s+of\s+(?P<which>this|the|next)"
            r"\s+month\b",
            re.I,
        ),
        lambda m, t: (
            ("on " if (m["prep"] or "").lower() == "at" else (m["prep"] or "") + " ").lstrip()
            + _month_end(t, 1 if m["which"].lower() == "next" else 0).isoformat()
        ),
    ),
    (
        re.compile(r"\b(?P<which>next|this|last)\s+week\b", re.I),
        lambda m, t: (
            "the week of "
            + _week_start(t, {"next": 1, "this": 0, "last": -1}[m["which"].lower()]).isoformat()
        ),
    ),
    (
        re.compile(r"\b(?P<which>next|this|last)\s+month\b", re.I),
        lambda m, t: _month_text(t, {"next": 1, "this": 0, "last": -1}[m["which"].lower()]),
    ),
    (
        re.compile(r"\bin\s+" + _EN_COUNT + r"\s+(?P<unit>days?|weeks?)\b", re.I),
        lambda m, t: _shift(t, m["n"], m["unit"], 1),
    ),
    (
        re.compile(r"\b" + _EN_COUNT + r"\s+(?P<unit>days?|weeks?)\s+ago\b", re.I),
        lambda m, t: _shift(t, m["n"], m["unit"], -1),
    ),
]


def _ko_day(m: re.Match[str], today: date) -> str:
    weekday = _KO_DAYS.index(m["day"])
    which = m["which"] or ""
    if which.startswith("다음"):
        found = _week_start(today, 1) + timedelta(days=weekday)
    elif which.startswith("지난"):
        found = _week_start(today, -1) + timedelta(days=weekday)
    else:
        found = _upcoming(today, weekday)
    return found.isoformat()


def _ko_month_day(m: re.Match[str], today: date) -> str:
    year, month = _month(today, {"다음": 1, "이번": 0, "지난": -1}[m["which"]])
    day = min(int(m["d"]), calendar.monthrange(year, month)[1])
    return date(year, month, day).isoformat()


_KO_RULES: list[_Rule] = [
    (re.compile(r"글피"), lambda m, t: (t + timedelta(days=3)).isoformat()),
    (re.compile(r"모레"), lambda m, t: (t + timedelta(days=2)).isoformat()),
    (re.compile(r"내일"), lambda m, t: (t + timedelta(days=1)).isoformat()),
    (re.compile(r"그저께|그제"), lambda m, t: (t - timedelta(days=2)).isoformat()),
    (re.compile(r"어제"), lambda m, t: (t - timedelta(days=1)).isoformat()),
    (re.compile(r"오늘"), lambda m, t: t.isoformat()),
    (
        re.compile(r"(?P<which>다음|이번|지난) ?달 ?(?P<d>\d{1,2})일"),
        _ko_month_day,
    ),
    (
        re.compile(
            r"(?<!매주 )(?:(?P<which>다음 ?주|이번 ?주|지난 ?주|담주)\s*)?"
            r"(?P<day>[월화수목금토일])요일(?!마다)"
        ),
        _ko_day,
    ),
    (
        re.compile(r"(?P<which>다음|이번|지난) ?주(?!\s*[월화수목금토일]요일|말)"),
        lambda m, t: (
            _week_start(t, {"다음": 1, "이번": 0, "지난": -1}[m["which"]]).isoformat() + " 주"
        ),
    ),
    (
        re.compile(r"(?P<which>다음|이번|지난) ?달"),
        lambda m, t: _month_text(t, {"다음": 1, "이번": 0, "지난": -1}[m["which"]]),
    ),
    (
        re.compile(r"(?P<n>\d{1,3}) ?(?P<unit>일|주) ?(?P<dir>후|뒤|전)"),
        lambda m, t: (
            t
            + timedelta(days=int(m["n"]) * (7 if m["unit"] == "주" else 1))
            * (-1 if m["dir"] == "전" else 1)
        ).isoformat(),
    ),
]


def absolutise(text: str, today: date) -> str:
    """``text`` with each relative date replaced by the absolute date it meant on ``today``."""
    for pattern, render in (*_EN_RULES, *_KO_RULES):
        text = pattern.sub(partial(_apply, render, today), text)
    return text


def _apply(render: Callable[[re.Match[str], date], str], today: date, m: re.Match[str]) -> str:
    return render(m, today)
