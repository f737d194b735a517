"""What the server-drawn pictures share (pure): the words a picture says in the reader's
language, round axis ticks, durations as text, and escaping.

A picture never hard-codes what it says: the page passes a :class:`Words` with the reader's
translation and number format, so the pictures localise like the templates around them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

__all__ = [
    "Words",
    "clock_label",
    "duration_text",
    "esc",
    "interval_text",
    "nice_ticks",
    "short",
    "text_width",
    "time_step",
]


def _same(text: str) -> str:
    return text


def _number(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}"


@dataclass(frozen=True)
class Words:
    """How a picture speaks: ``text`` translates an English source string (a gettext), and
    ``number`` formats a number with ``digits`` decimals. The defaults speak English."""

    text: Callable[[str], str] = _same
    number: Callable[[float, int], str] = _number

    def __call__(self, source: str, **values: object) -> str:
        """``source`` translated, then its ``{name}`` fields filled (values are not translated)."""
        translated = self.text(source)
        return translated.format(**values) if values else translated


def esc(text: object) -> str:
    """Text for an SVG element or attribute (quotes included)."""
    return escape(str(text), quote=True)


def short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (the full text goes in a title)."""
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def text_width(text: str, size: float = 11.0) -> float:
    """About how wide ``text`` is drawn at ``size`` pixels (wide for Hangul and CJK)."""
    return sum(size if ord(ch) >= 0x1100 else size * 0.6 for ch in text)


def nice_ticks(top: float, count: int = 4) -> tuple[list[float], int]:
    """Axis ticks from 0 in round steps (1, 2, 2.5 or 5 times a power of ten), the last at or
    above ``top``, at most ``count`` steps; with the decimals their labels need."""
    if not math.isfinite(top) or top <= 0:
        return [0.0, 1.0], 0
    raw = top / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    factor = next(f for f in (1.0, 2.0, 2.5, 5.0, 10.0) if f * power * count >= top * (1 - 1e-9))
    step = factor * power
    steps = max(1, math.ceil(top / step - 1e-9))
    digits = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if factor == 2.5 else 0)
    return [round(i * step, 12) for i in range(steps + 1)], digits


_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600)


def time_step(total_s: float, most: int = 6) -> int:
    """Seconds between time-axis ticks: the smallest round step giving at most ``most`` steps."""
    for step in _TIME_STEPS:
        if total_s / step <= most:
            return step
    return max(43200, math.ceil(total_s / most / 43200) * 43200)


def clock_label(seconds: float) -> str:
    """Elapsed time as a clock reads it: ``0:45``, ``12:30``, ``1:05:00`` (no words)."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


SECOND_DIGITS = 2
"""Significant digits of a duration under ten seconds (``0.15 s``, ``4.2 s``)."""
MOST_DECIMALS = 3
"""A millisecond: finer than that a duration reads as ``0 s``."""


def _significant(seconds: float) -> tuple[float, int]:
    """``seconds`` (under ten) to :data:`SECOND_DIGITS` significant digits, and the decimals
    that value needs (trailing zeros dropped): ``0.153`` -> ``(0.15, 2)``, ``0.0804`` ->
    ``(0.08, 2)``, ``4.0`` -> ``(4.0, 0)``."""
    if seconds <= 0:
        return 0.0, 0
    decimals = min(MOST_DECIMALS, max(0, SECOND_DIGITS - 1 - math.floor(math.log10(seconds))))
    value = round(seconds, decimals)
    needed = next(k for k in range(decimals + 1) if round(value, k) == value)
    return value, needed


def duration_text(seconds: float, words: Words) -> str:
    """A duration for a reader, as precise in every language (only the unit words are
    translated): two significant digits under ten seconds (``0.15 s``, ``0.08 s``,
    ``4.2 s``), whole seconds under a minute (``42 s``), then the two largest units:
    ``3 min 5 s``, ``2 h 10 min``, ``3 d 4 h`` (a zero second unit is left out: ``3 min``)."""
    seconds = max(0.0, seconds) if math.isfinite(seconds) else 0.0
    if seconds < 10:
        value, decimals = _significant(seconds)
        if value < 10:
            return words("{seconds} s", seconds=words.number(value, decimals))
    whole = round(seconds)
    if whole < 60:
        return words("{seconds} s", seconds=words.number(whole, 0))
    if whole < 3600:
        return _two_units(words, *divmod(whole, 60), "{minutes} min", "{seconds} s")
    minutes = round(seconds / 60)
    if minutes < 24 * 60:
        return _two_units(words, *divmod(minutes, 60), "{hours} h", "{minutes} min")
    return _two_units(words, *divmod(round(seconds / 3600), 24), "{days} d", "{hours} h")


def _two_units(words: Words, big: int, small: int, big_unit: str, small_unit: str) -> str:
    """``3 min 5 s``; ``3 min`` when the smaller unit is zero."""
    parts = [_unit(words, big_unit, big)]
    if small:
        parts.append(_unit(words, small_unit, small))
    return " ".join(parts)


def _unit(words: Words, unit: str, count: int) -> str:
    # each message spelled out so that the catalogue finds it
    number = words.number(count, 0)
    if unit == "{days} d":
        return words("{days} d", days=number)
    if unit == "{hours} h":
        return words("{hours} h", hours=number)
    if unit == "{minutes} min":
        return words("{minutes} min", minutes=number)
    return words("{seconds} s", seconds=number)


def interval_text(seconds: int, words: Words) -> str:
    """A schedule's interval, exact: every unit it has (``1 d 2 h 30 min``, ``45 s``)."""
    days, rest = divmod(max(0, seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        _unit(words, unit, count)
        for unit, count in (
            ("{days} d", days),
            ("{hours} h", hours),
            ("{minutes} min", minutes),
            ("{seconds} s", secs),
        )
        if count
    ]
    return " ".join(parts) or _unit(words, "{seconds} s", 0)
