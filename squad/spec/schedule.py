"""Pure parsing of schedule expressions: five-field cron (standard semantics) and intervals.

Parsed here rather than by the scheduler because APScheduler 3's ``from_crontab`` numbers
weekdays from Monday = 0, unlike cron (Sunday = 0); the daemon maps the parsed fields to its
trigger explicitly, so ``0 9 * * 1-5`` means Monday to Friday, as every cron user expects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

__all__ = ["CronExpression", "parse_cron", "parse_interval"]

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_MONTH_NAMES = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
"""Most days each month can have (February in a leap year)."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]


_FIELDS = (
    _Field("minute", 0, 59, {}),
    _Field("hour", 0, 23, {}),
    _Field("day of month", 1, 31, {}),
    _Field("month", 1, 12, {m: i + 1 for i, m in enumerate(_MONTHS)}),
    _Field("day of week", 0, 7, {d: i for i, d in enumerate(_DAYS)}),
)


@dataclass(frozen=True)
class CronExpression:
    """A validated cron expression as sets of allowed values (weekday 0 = Sunday)."""

    source: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    day_of_month_restricted: bool
    day_of_week_restricted: bool

    def calendar_days(self) -> frozenset[tuple[int, int]] | None:
        """The (month, day) pairs the expression can fire on, or None when it fires in every
        allowed month (the day-of-month field is ``*``, or a restricted day of week is OR-ed
        with it, as cron does: every month has every weekday). February counts its 29th."""
        if not self.day_of_month_restricted or self.day_of_week_restricted:
            return None
        return frozenset(
            (month, day)
            for month in self.months
            for day in self.days_of_month
            if day <= _DAYS_IN_MONTH[month - 1]
        )

    @property
    def only_on_leap_day(self) -> bool:
        """Whether it fires only on 29 February, so once in four years."""
        return self.calendar_days() == frozenset({(2, 29)})


def parse_cron(expression: str) -> CronExpression:
    """Parse a five-field cron expression or an ``@daily``-style macro.

    Raises ``ValueError`` with a message that names the field at fault.
    """
    text = expression.strip()
    fields = _MACROS.get(text.lower(), text).split()
    if len(fields) != 5:
        raise ValueError(
            f"a cron expression has 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(fields)} in {expression!r}"
        )
    parsed = [_parse_field(raw, spec) for raw, spec in zip(fields, _FIELDS, strict=True)]
    days_of_week = frozenset(0 if d == 7 else d for d in parsed[4])
    cron = CronExpression(
        source=expression,
        minutes=parsed[0],
        hours=parsed[1],
        days_of_month=parsed[2],
        months=parsed[3],
        days_of_week=days_of_week,
        day_of_month_restricted=fields[2] != "*",
        day_of_week_restricted=fields[4] != "*",
    )
    if cron.calendar_days() == frozenset():
        raise ValueError(_never_fires(cron))
    return cron


def _never_fires(cron: CronExpression) -> str:
    days = _joined([str(d) for d in sorted(cron.days_of_month)], "or")
    months = [_MONTH_NAMES[m - 1] for m in sorted(cron.months)]
    if len(months) == 1:
        return f"it can never fire: {months[0]} has no day {days}"
    return f"it can never fire: {_joined(months, 'and')} have no day {days}"


def _joined(items: list[str], word: str) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]


def _parse_field(raw: str, spec: _Field) -> frozenset[int]:
    values: set[int] = set()
    for item in raw.split(","):
        values.update(_parse_item(item, spec))
    return frozenset(values)


def _parse_item(item: str, spec: _Field) -> range:
    if not item:
        raise ValueError(f"{spec.name}: empty entry in a list (two commas in a row?)")
    base, _, step_text = item.partition("/")
    step = 1
    if step_text:
        step = _whole(step_text) or 0
        if step == 0:
            shown = _clip(step_text)
            raise ValueError(f"{spec.name}: step {shown!r} must be a positive whole number")
    if base == "*":
        low, high = spec.low, spec.high
    elif "-" in base:
        start_text, _, end_text = base.partition("-")
        low, high = _value(start_text, spec), _value(end_text, spec)
        if low > high:
            raise ValueError(f"{spec.name}: range {base!r} runs backwards")
    else:
        low = _value(base, spec)
        high = spec.high if step_text else low
    return range(low, high + 1, step)


def _value(text: str, spec: _Field) -> int:
    lowered = text.lower()
    if lowered in spec.names:
        return spec.names[lowered]
    value = _whole(text)
    if value is None:
        valid = f"{spec.low}-{spec.high}"
        if spec.names:
            valid += " or " + ", ".join(spec.names)
        raise ValueError(f"{spec.name}: {_clip(text)!r} is not a number ({valid})")
    if not spec.low <= value <= spec.high:
        shown = value if value < _HUGE else _clip(text)
        raise ValueError(f"{spec.name}: {shown} is out of range {spec.low}-{spec.high}")
    return value


_HUGE = 10**9
"""Numbers are read up to nine digits; a longer one stands in as this, past every limit (and
``int()`` would refuse one of more than 4,300 digits)."""


def _whole(text: str) -> int | None:
    """``text`` as a whole number when it is ASCII digits, else None; capped at :data:`_HUGE`."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= 9 else _HUGE


def _clip(text: str) -> str:
    return text if len(text) <= 20 else text[:20] + "…"


_INTERVAL = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", re.ASCII)
MAX_INTERVAL = timedelta(days=366)


def parse_interval(text: str) -> timedelta:
    """Parse ``30m``, ``2h``, ``1h30m``, ``45s`` or ``1d`` (units in that order)."""
    match = _INTERVAL.fullmatch(text.strip().lower())
    if not text.strip() or match is None:
        raise ValueError(
            f"{text!r} is not an interval; write a number with a unit: "
            "'45s', '30m', '2h', '1d' or a mix like '1h30m'"
        )
    days, hours, minutes, seconds = (_whole(g) or 0 if g else 0 for g in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds  # no timedelta overflow
    if total <= 0:
        raise ValueError(f"interval {text!r} must be longer than zero")
    if total > MAX_INTERVAL.total_seconds():
        raise ValueError(f"interval {_clip(text)!r} is longer than a year; use a cron expression")
    return timedelta(seconds=total)
