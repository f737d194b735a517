"""The memory audit log: one JSON line per memory write, in ``logs/memory-audit.jsonl``.

The line format, appending and reading are the event logs' (:mod:`squad.eventlines`): one
``write`` on an ``O_APPEND`` descriptor, here fsynced too, so concurrent writers never
interleave within a line and an acknowledged write is on disk; a reader skips a torn last line
(a killed writer) instead of failing on the whole log.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from squad.eventlines import encode_event, open_for_append, read_events
from squad.paths import contained

__all__ = ["AuditLog", "AuditRecord", "sha256_text"]

AUDIT_FILE = "memory-audit.jsonl"


def sha256_text(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class AuditRecord:
    time: str
    actor: str
    """Who wrote: ``cli``, ``agent:<id>``, ``extractor``, ``user`` ..."""
    operation: str
    """``append``, ``replace``, ``write``, ``daily``, ``remember``, ``forget`` ..."""
    file: str
    """Path relative to the workspace (or a store reference like ``fact:12``)."""
    section: str | None = None
    old_sha256: str | None = None
    new_sha256: str | None = None
    bytes: int | None = None
    note: str | None = None
    details: dict[str, Any] | None = None
    """Structured detail, e.g. an extraction's messages, writes and drops."""


class AuditLog:
    """Appends records to one workspace's audit file."""

    def __init__(self, workspace: Path) -> None:
        self.path = contained(workspace, "logs", AUDIT_FILE)

    def append(self, record: AuditRecord) -> None:
        """Append ``record``; on disk when this returns."""
        fd = open_for_append(self.path)
        try:
            os.write(fd, encode_event(asdict(record)))
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[AuditRecord]:
        """Every complete record, oldest first ([] before the first write)."""
        known = {f.name for f in fields(AuditRecord)}
        return [
            AuditRecord(**{k: v for k, v in event.items() if k in known})
            for event in read_events(self.path, missing_ok=True)
            if isinstance(event, dict) and {"time", "actor", "operation", "file"} <= event.keys()
        ]
