"""The memory audit log: one JSON line per memory write, in ``logs/memory-audit.jsonl``.

Lines are appended with a single ``write`` on an ``O_APPEND`` descriptor and fsynced, so
concurrent writers never interleave within a line and an acknowledged write is on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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
        line = json.dumps(asdict(record), ensure_ascii=False, separators=(",", ":")) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags, 0o644)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[AuditRecord]:
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            if line.strip():
                out.append(AuditRecord(**json.loads(line)))
        return out
