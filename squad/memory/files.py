"""Safe writes to an agent's ``memory.md`` and its dated detail logs.

Every write: takes a lock that holds across processes, re-reads the file under it, refuses a
write based on a stale read (version check), refuses credentials, refuses to grow the file
past its cap (never truncating), refuses an automatic writer emptying a non-empty section,
writes atomically (temp file, fsync, rename), and appends an audit record.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from filelock import FileLock, Timeout

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_, MemoryFullError, StaleWriteError
from squad.fsutil import atomic_write
from squad.memory.audit import AuditLog, AuditRecord, sha256_text
from squad.memory.document import MemoryDocument, StructureError
from squad.paths import check_name, contained
from squad.text.secrets import refuse_secrets
from squad.workspace.layout import MEMORY_FILE

__all__ = ["DailyLog", "MemoryFile", "Snapshot", "WriteResult"]

LOCK_TIMEOUT_S = 30.0
DEFAULT_CAP_BYTES = 50 * 1024


@dataclass(frozen=True)
class Snapshot:
    """What a read saw: the document and its version (sha256 of the bytes; '' if missing)."""

    document: MemoryDocument
    version: str
    size: int


@dataclass(frozen=True)
class WriteResult:
    file: str
    section: str | None
    old_version: str
    new_version: str
    size: int


def _locked(path: Path) -> FileLock:
    return FileLock(str(path.with_name(f".{path.name}.lock")), timeout=LOCK_TIMEOUT_S)


class _AgentFile:
    """What every per-agent memory file shares: where, how big it may grow, clock, audit."""

    def __init__(
        self,
        workspace: Path,
        agent: str,
        *,
        cap_bytes: int = DEFAULT_CAP_BYTES,
        clock: Clock = utc_now,
    ) -> None:
        self.workspace = workspace
        self.agent = check_name(agent, what="agent id")
        self.cap_bytes = cap_bytes
        self._clock = clock
        self._audit = AuditLog(workspace)


class MemoryFile(_AgentFile):
    """One agent's ``memory.md`` inside a workspace."""

    @functools.cached_property
    def path(self) -> Path:
        return contained(self.workspace, "agents", self.agent, MEMORY_FILE)

    @property
    def relative(self) -> str:
        return f"agents/{self.agent}/{MEMORY_FILE}"

    def snapshot(self) -> Snapshot:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raw = b""
        return Snapshot(
            MemoryDocument.parse(raw.decode("utf-8", "replace")), _version(raw), len(raw)
        )

    def read(self, section: str | None = None) -> str:
        document = self.snapshot().document
        if section is not None and document.find(section) is None:
            raise MemoryError_(
                f"{self.relative} has no section {section!r}; sections: "
                + ", ".join(repr(n) for n in document.names)
            )
        return document.read(section)

    def append(self, section: str, text: str, *, actor: str) -> WriteResult:
        return self._edit("append", section, text, actor=actor, automatic=False, expected=None)

    def replace(
        self,
        section: str,
        text: str,
        *,
        actor: str,
        automatic: bool = False,
        expected_version: str | None = None,
    ) -> WriteResult:
        return self._edit(
            "replace", section, text, actor=actor, automatic=automatic, expected=expected_version
        )

    def _edit(
        self,
        operation: str,
        section: str,
        text: str,
        *,
        actor: str,
        automatic: bool,
        expected: str | None,
    ) -> WriteResult:
        refuse_secrets(text, what=f"text for {self.relative}")
        try:
            with _locked(self.path):
                current = self.snapshot()
                if expected is not None and expected != current.version:
                    raise StaleWriteError(
                        f"{self.relative} changed since it was read (version "
                        f"{expected[:12]} is now {current.version[:12]}); read it again and "
                        "redo the change"
                    )
                old = current.document.find(section)
                if (
                    automatic
                    and operation == "replace"
                    and old is not None
                    and old.content_lines()
                    and not text.strip()
                ):
                    raise MemoryError_(
                        f"an automatic writer may not empty the non-empty section {section!r} "
                        f"of {self.relative}"
                    )
                try:
                    if operation == "append":
                        document = current.document.append(section, text)
                    else:
                        document = current.document.replace(section, text)
                except StructureError as exc:
                    raise MemoryError_(f"{self.relative}: {exc}") from None
                return self._commit(document, current, section, operation, actor)
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked by another writer; try again") from None

    def _commit(
        self, document: MemoryDocument, current: Snapshot, section: str, operation: str, actor: str
    ) -> WriteResult:
        data = document.render().encode()
        if len(data) > self.cap_bytes:
            # Recorded so maintenance knows this file needs consolidating.
            self._audit.append(
                AuditRecord(
                    time=self._clock().isoformat(),
                    actor=actor,
                    operation="refused",
                    file=self.relative,
                    section=section,
                    old_sha256=current.version or None,
                    new_sha256=None,
                    bytes=len(data),
                    note="over cap: consolidate",
                )
            )
            raise MemoryFullError(
                f"{self.relative} would be {len(data):,} bytes, over its {self.cap_bytes:,}-byte "
                "cap; nothing was written. Consolidate it (move details to the daily log, merge "
                "or drop stale lines) or raise memory.file_cap_kb in configs/settings.yaml"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, data)
        result = WriteResult(self.relative, section, current.version, _version(data), len(data))
        self._audit.append(
            AuditRecord(
                time=self._clock().isoformat(),
                actor=actor,
                operation=operation,
                file=self.relative,
                section=section,
                old_sha256=current.version or None,
                new_sha256=result.new_version,
                bytes=len(data),
            )
        )
        return result


class DailyLog(_AgentFile):
    """``agents/<agent>/daily/YYYY-MM-DD.md``: long details, read on demand, never injected."""

    def path_for(self, day: date) -> Path:
        return contained(self.workspace, "agents", self.agent, "daily", f"{day.isoformat()}.md")

    def relative(self, day: date) -> str:
        return f"agents/{self.agent}/daily/{day.isoformat()}.md"

    def append(self, text: str, *, actor: str, day: date | None = None) -> str:
        """Add a timestamped entry to the day's log; returns the log's workspace path."""
        refuse_secrets(text, what="text for the daily log")
        now = self._clock()
        day = day or now.date()
        path = self.path_for(day)
        entry = f"\n## {now.strftime('%H:%M:%S')} {actor}\n\n{text.strip()}\n"
        try:
            with _mkdir_lock(path):
                old = path.read_bytes() if path.exists() else f"# {day.isoformat()}\n".encode()
                data = old + entry.encode()
                if len(data) > self.cap_bytes:
                    raise MemoryFullError(
                        f"{self.relative(day)} would pass its {self.cap_bytes:,}-byte cap; "
                        "start a new file or raise memory.file_cap_kb"
                    )
                atomic_write(path, data)
        except Timeout:
            raise MemoryError_(f"{self.relative(day)} is locked; try again") from None
        self._audit.append(
            AuditRecord(
                time=now.isoformat(),
                actor=actor,
                operation="daily",
                file=self.relative(day),
                section=None,
                old_sha256=_version(old) or None,
                new_sha256=_version(data),
                bytes=len(data),
            )
        )
        return self.relative(day)

    def read(self, day: date) -> str:
        path = self.path_for(day)
        try:
            return path.read_text()
        except FileNotFoundError:
            raise MemoryError_(
                f"no daily log for {day.isoformat()} ({self.relative(day)})"
            ) from None

    def days(self) -> list[date]:
        folder = contained(self.workspace, "agents", self.agent, "daily")
        if not folder.is_dir():
            return []
        found = []
        for entry in folder.iterdir():
            try:
                found.append(date.fromisoformat(entry.stem))
            except ValueError:
                continue
        return sorted(found)


def _mkdir_lock(path: Path) -> FileLock:
    path.parent.mkdir(parents=True, exist_ok=True)
    return _locked(path)


def _version(raw: bytes) -> str:
    return sha256_text(raw) if raw else ""
