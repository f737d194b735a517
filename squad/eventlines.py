"""Event logs as JSON Lines: the line format, appending and reading, shared by run logs
(:mod:`squad.runtime.runlog`) and the daemon's log (:mod:`squad.daemon.eventlog`).

A line is written with one ``write`` on an ``O_APPEND`` descriptor, so a reader never sees
half of one; a reader skips a torn last line (a killed writer) and lines that do not parse. A
writer that finds a torn last line ends it before its own first line, so what it appends stays
readable instead of being glued to the torn one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["encode_event", "open_for_append", "read_events"]


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


def read_events(path: Path, *, missing_ok: bool = False) -> list[dict[str, Any]]:
    """Every complete event in ``path``; none for a missing file with ``missing_ok``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return []
        raise
    events = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
