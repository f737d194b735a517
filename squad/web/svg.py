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


def duration_text(seconds: float, words: Words) -> str:
    """A duration for a reader: ``4.2 s``, ``3 min 5 s``, ``2 h 10 min``."""
    if seconds < 60:
        return words("{seconds} s", seconds=words.number(seconds, 1 if seconds < 10 else 0))
    whole = round(seconds)
    if whole < 3600:
        return words("{minutes} min {seconds} s", minutes=whole // 60, seconds=whole % 60)
    return words("{hours} h {minutes} min", hours=whole // 3600, minutes=whole % 3600 // 60)
