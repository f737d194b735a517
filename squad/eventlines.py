"""Event logs as JSON Lines: the line format, appending and reading, shared by run logs
(:mod:`squad.runtime.runlog`), the daemon's log (:mod:`squad.daemon.eventlog`) and the memory
audit log (:mod:`squad.memory.audit`).

A line is written with one ``write`` on an ``O_APPEND`` descriptor, so a reader never sees
half of one; a reader skips a torn last line (a killed writer) and lines that are no event (not
UTF-8, not JSON, not a JSON object), and says which it skipped and why, so one bad byte never
costs the other lines. A writer that finds a torn last line ends it before its own first line,
so what it appends stays readable instead of being glued to the torn one.

Lines end at ``\\n`` only: ``str.splitlines`` would also end one at ``\\u2028`` or ``\\x85``,
which JSON strings may carry unescaped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "EventsRead",
    "SkippedLine",
    "decode_event",
    "encode_event",
    "open_for_append",
    "read_events",
    "scan_events",
]


@dataclass(frozen=True)
class SkippedLine:
    """A line a reader left out: its 1-based number and why."""

    number: int
    reason: str

    def render(self, path: Path | str) -> str:
        return f"{path}: line {self.number}: {self.reason}"


@dataclass(frozen=True)
class EventsRead:
    """The events of a log, in file order, and the lines that held none."""

    events: list[dict[str, Any]]
    skipped: list[SkippedLine]


def encode_event(record: dict[str, Any]) -> bytes:
    """One compact JSON line; values JSON cannot hold are written as text."""
    line = json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))
    return (line + "\n").encode()


def open_for_append(path: Path) -> int:
    """An append-only descriptor on ``path`` (its folder created; a symbolic link refused),
    positioned after a whole line: a torn last line is ended first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            os.write(fd, b"\n")
    except BaseException:
        os.close(fd)
        raise
    return fd


def decode_event(raw: bytes, number: int) -> dict[str, Any] | SkippedLine | None:
    """The event on one line (without its ``\\n``), why it holds none, or None when blank."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return SkippedLine(
            number, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
        )
    if not text.strip():
        return None
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        return SkippedLine(number, f"not JSON ({exc.msg} at column {exc.colno})")
    except (ValueError, RecursionError) as exc:  # a 5000-digit number, arrays nested too deep
        return SkippedLine(number, f"not JSON ({type(exc).__name__}: {str(exc)[:80]})")
    if not isinstance(event, dict):
        return SkippedLine(number, f"not a JSON object (a {type(event).__name__})")
    return event


def scan_events(path: Path, *, missing_ok: bool = False) -> EventsRead:
    """Every event in ``path`` and every line skipped; nothing for a missing file with
    ``missing_ok``. A last line without its ``\\n`` is skipped as torn."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if missing_ok:
            return EventsRead([], [])
        raise
    *lines, tail = data.split(b"\n")
    events: list[dict[str, Any]] = []
    skipped: list[SkippedLine] = []
    for number, raw in enumerate(lines, start=1):
        decoded = decode_event(raw, number)
        if isinstance(decoded, SkippedLine):
            skipped.append(decoded)
        elif decoded is not None:
            events.append(decoded)
    if tail.strip():
        skipped.append(SkippedLine(len(lines) + 1, "torn last line (no line end yet)"))
    return EventsRead(events, skipped)


def read_events(path: Path, *, missing_ok: bool = False) -> list[dict[str, Any]]:
    """Every event in ``path`` (see :func:`scan_events`); the skipped lines left unsaid."""
    return scan_events(path, missing_ok=missing_ok).events
