"""memory.md lines the extractor writes and reads: ``- <fact> (YYYY-MM-DD)``. Pure.

A superseded line stays, struck through and dated: ``- ~~<fact>~~ (2026-11-02; superseded
2026-11-29)``; it is history, not a current fact, and is never offered as one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from squad.memory.document import superseded, unstruck

__all__ = ["MemoryLine", "parse_line", "render_line", "struck"]

_LINE = re.compile(
    r"^\s*[-*]\s+(?P<text>.*?)(?:\s+\((?P<date>\d{4}-\d\d-\d\d)(?P<rest>[^)]*)\))?\s*$"
)


@dataclass(frozen=True)
class MemoryLine:
    text: str
    day: str | None
    superseded: bool


def parse_line(line: str) -> MemoryLine | None:
    """A bullet line's fact, its date, and whether it is struck out; None for other lines."""
    m = _LINE.match(line)
    if m is None or not m.group("text").strip():
        return None
    text = m.group("text").strip()
    return MemoryLine(unstruck(text) or text, m.group("date"), superseded(line))


def render_line(text: str, day: date, *, pointer: str | None = None) -> str:
    """A new fact's line; ``pointer`` names the daily log that holds more detail."""
    details = f"; details: {pointer}" if pointer else ""
    return f"- {text} ({day.isoformat()}{details})"


def struck(line: str, day: date) -> str:
    """``line`` marked superseded on ``day``, keeping its text and first date."""
    parsed = parse_line(line)
    if parsed is None or parsed.superseded:
        return line
    since = f"{parsed.day}; " if parsed.day else ""
    return f"- ~~{parsed.text}~~ ({since}superseded {day.isoformat()})"
