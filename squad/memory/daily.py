"""An agent's dated detail logs, ``agents/<agent>/daily/YYYY-MM-DD.md``.

Long details an agent or a fold of ``memory.md`` puts aside: read on demand, never injected.
A log is only ever appended to, in place and byte for byte, so what it holds is kept whatever
it is; each entry is audited like a write of ``memory.md``.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from squad.errors import MemoryError_, MemoryFullError
from squad.history.hooks import Wrote
from squad.memory.audit import AuditRecord
from squad.memory.document import (
    BOM,
    line_ending,
    with_line_ending,
)
from squad.memory.file_io import (
    AgentFile,
    append_unclobbered,
    mkdir_lock,
    read_file_bytes,
    refuse_read_only,
    refuse_unencodable,
    version_of,
    write_failed,
)
from squad.paths import contained

__all__ = ["DailyLog"]


class DailyLog(AgentFile):
    """``agents/<agent>/daily/YYYY-MM-DD.md``: long details, read on demand, never injected."""

    def path_for(self, day: date) -> Path:
        return contained(self.workspace, "agents", self.agent, "daily", f"{day.isoformat()}.md")

    def relative(self, day: date) -> str:
        return f"agents/{self.agent}/daily/{day.isoformat()}.md"

    def append(self, text: str, *, actor: str, day: date | None = None) -> str:
        """Add a timestamped entry to the day's log; returns the log's workspace path."""
        from filelock import Timeout

        try:
            with self._history.writing(actor) as wrote:
                return self.append_within(text, actor=actor, day=day, wrote=wrote)
        except Timeout:
            raise MemoryError_(
                f"{self.relative(day or self._clock().date())} is locked; try again"
            ) from None

    def append_within(self, text: str, *, actor: str, day: date | None, wrote: Wrote) -> str:
        """:meth:`append` inside a history hook its caller holds already (a fold of
        ``memory.md`` writes its lines here within its own write)."""
        from filelock import Timeout

        from squad.text.secrets import refuse_secrets

        refuse_secrets(text, what="text for the daily log")
        refuse_unencodable(actor + text, what="text for the daily log")
        now = self._clock()
        day = day or now.date()
        path = self.path_for(day)
        relative = self.relative(day)
        try:
            with mkdir_lock(path):

                def appended(existing: bytes | None) -> bytes:
                    if existing is not None:
                        refuse_read_only(path, relative)
                    old = existing if existing is not None else self.header(day)
                    # latin-1 maps each byte to one character: finds the line ending of any bytes.
                    nl = line_ending(old.decode("latin-1"))
                    body = with_line_ending(text.strip(), nl)
                    data = old + self.entry(body, actor, nl).encode()
                    if len(data) > self.cap_bytes:
                        raise MemoryFullError(
                            f"{relative} would pass its {self.cap_bytes:,}-byte cap; "
                            "start a new file or raise memory.file_cap_kb"
                        )
                    return data

                existing, data = append_unclobbered(path, relative, appended)
                wrote(relative, existing, data)
                old = existing or b""
        except Timeout:
            raise MemoryError_(f"{relative} is locked; try again") from None
        except OSError as exc:
            raise write_failed(exc, path, relative) from None
        self._audit.append(
            AuditRecord(
                time=now.isoformat(),
                actor=actor,
                operation="daily",
                file=self.relative(day),
                section=None,
                old_sha256=version_of(old) or None,
                new_sha256=version_of(data),
                bytes=len(data),
            )
        )
        return self.relative(day)

    @staticmethod
    def header(day: date) -> bytes:
        """A new day's log before its first entry."""
        return f"# {day.isoformat()}\n".encode()

    def entry(self, body: str, actor: str, newline: str = "\n") -> str:
        """One entry as appended: a timestamped heading naming ``actor``, then ``body``."""
        stamp = self._clock().strftime("%H:%M:%S")
        return f"{newline}## {stamp} {actor}{newline}{newline}{body}{newline}"

    def room(self, day: date, body: str, actor: str) -> int:
        """Bytes of ``body`` (an entry for ``day``) the log can still take."""
        path = self.path_for(day)
        size = len(read_file_bytes(path, self.relative(day)) or self.header(day))
        return self.cap_bytes - size - len(self.entry(body, actor).encode())

    def read(self, day: date) -> str:
        """The day's log for reading: ``\\n`` line endings, U+FFFD for bytes not UTF-8."""
        raw = read_file_bytes(self.path_for(day), self.relative(day))
        if raw is None:
            raise MemoryError_(f"no daily log for {day.isoformat()} ({self.relative(day)})")
        return with_line_ending(raw.decode("utf-8", "replace").removeprefix(BOM), "\n")

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
