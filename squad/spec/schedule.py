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
    return CronExpression(
        source=expression,
        minutes=parsed[0],
        hours=parsed[1],
        days_of_month=parsed[2],
        months=parsed[3],
        days_of_week=days_of_week,
        day_of_month_restricted=fields[2] != "*",
        day_of_week_restricted=fields[4] != "*",
    )


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
        if not step_text.isdigit() or int(step_text) == 0:
            raise ValueError(f"{spec.name}: step {step_text!r} must be a positive whole number")
        step = int(step_text)
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
    if not text.isdigit():
        valid = f"{spec.low}-{spec.high}"
        if spec.names:
            valid += " or " + ", ".join(spec.names)
        raise ValueError(f"{spec.name}: {text!r} is not a number ({valid})")
    value = int(text)
    if not spec.low <= value <= spec.high:
        raise ValueError(f"{spec.name}: {value} is out of range {spec.low}-{spec.high}")
    return value


_INTERVAL = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
MAX_INTERVAL = timedelta(days=366)


def parse_interval(text: str) -> timedelta:
    """Parse ``30m``, ``2h``, ``1h30m``, ``45s`` or ``1d`` (units in that order)."""
    match = _INTERVAL.fullmatch(text.strip().lower())
    if not text.strip() or match is None:
        raise ValueError(
            f"{text!r} is not an interval; write a number with a unit: "
            "'45s', '30m', '2h', '1d' or a mix like '1h30m'"
        )
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    delta = timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    if delta <= timedelta(0):
        raise ValueError(f"interval {text!r} must be longer than zero")
    if delta > MAX_INTERVAL:
        raise ValueError(f"interval {text!r} is longer than a year; use a cron expression")
    return delta
