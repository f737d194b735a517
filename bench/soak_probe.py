"""What ``bench.soak`` reads from outside the daemon while it runs: ``/proc/<pid>``, the
home's and workspaces' sizes, the SQLite files (opened read-only), and the daemon's log as
it grows (across its rotations)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["LogTail", "process_metrics", "run_rows", "table_rows", "tree_size"]


def process_metrics(pid: int) -> dict[str, float]:
    """Resident set size, open descriptors and threads of a live process (empty if gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return {}
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "rss_bytes": int(fields["VmRSS"].split()[0]) * 1024,
        "fds": fds,
        "threads": int(fields["Threads"]),
    }


def tree_size(root: Path, *, skip: str | None = None) -> tuple[int, int]:
    """(bytes, files) under ``root``; a folder named ``skip`` is left out. Files that vanish
    while counted (retention at work) are not counted."""
    total = files = 0
    stack = [root]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != skip:
                        stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
                    files += 1
            except OSError:
                continue
    return total, files


def _read_only(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    connection.execute("PRAGMA query_only = 1")
    return connection


def table_rows(path: Path) -> dict[str, int]:
    """Rows of every table of a SQLite file (empty if it does not exist yet)."""
    if not path.exists():
        return {}
    connection = _read_only(path)
    try:
        names = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {
            name: connection.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            for name in sorted(names)
        }
    except sqlite3.Error:
        return {}
    finally:
        connection.close()


def run_rows(path: Path) -> dict[str, dict[str, Any]]:
    """Every run in the store: id -> squad, trigger, status."""
    if not path.exists():
        return {}
    connection = _read_only(path)
    try:
        return {
            run_id: {"squad": squad, "trigger": trigger, "status": status}
            for run_id, squad, trigger, status in connection.execute(
                "SELECT id, squad, trigger, status FROM runs"
            )
        }
    except sqlite3.Error:
        return {}
    finally:
        connection.close()


class LogTail:
    """The events appended to a JSONL log since the last :meth:`read`, including those in
    a file that was rotated (renamed to ``<name>.1``) in between."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._inode: int | None = None
        self._offset = 0

    def read(self) -> list[dict[str, Any]]:
        try:
            inode = self.path.stat().st_ino
        except FileNotFoundError:
            return []
        events: list[dict[str, Any]] = []
        if self._inode is not None and inode != self._inode:
            rotated = self.path.with_name(self.path.name + ".1")
            if rotated.exists() and rotated.stat().st_ino == self._inode:
                events.extend(self._lines(rotated, self._offset))
            self._offset = 0
        self._inode = inode
        events.extend(self._lines(self.path, self._offset))
        return events

    def _lines(self, path: Path, offset: int) -> Iterator[dict[str, Any]]:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
        complete = data[: data.rfind(b"\n") + 1]
        if path == self.path:
            self._offset = offset + len(complete)
        for line in complete.splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue
