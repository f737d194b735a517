"""Safe writes to an agent's ``memory.md``, section by section.

Every write: takes a lock that holds across processes, re-reads the file under it, refuses a
write based on a stale read (version check), refuses credentials, refuses to grow the file
past its cap (never truncating: a full file folds its oldest Insights into the daily log
first, :mod:`squad.memory.fold_out`), refuses an automatic writer emptying a non-empty
section, writes atomically without clobbering a person's edit (:mod:`squad.memory.file_io`),
and appends an audit record. It refuses (:class:`MemoryFileError`, nothing written) a file
that is not valid UTF-8 and keeps its byte-order mark, line ending and permission bits;
reading it for a prompt or display still works, with U+FFFD for bytes that are not UTF-8.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_, MemoryFileError, MemoryFullError, StaleWriteError
from squad.history.hooks import NO_HISTORY, WriteHook, Wrote
from squad.memory.audit import AuditRecord
from squad.memory.daily import DailyLog
from squad.memory.dedupe import Known, SameAs, fresh_lines, same_key
from squad.memory.document import MemoryDocument, StructureError, undo_lines
from squad.memory.file_io import (
    DEFAULT_CAP_BYTES,
    AgentFile,
    locked,
    not_utf8,
    read_file_bytes,
    refuse_read_only,
    refuse_unencodable,
    version_of,
    write_failed,
    write_unclobbered,
)
from squad.memory.fold import (
    FOLD_SECTION,
    FOLD_TO,
    NIGHTLY_AT,
    Folded,
    FoldPlan,
    TopicSummaries,
    apply_fold,
)
from squad.memory.fold_out import fold_out, fold_record, plan_within
from squad.paths import contained
from squad.workspace.layout import MEMORY_FILE

__all__ = ["MemoryFile", "Snapshot", "WriteResult"]

FOLD_ATTEMPTS = 4
"""Tries of a write that must fold first (a person adding lines meanwhile can use up room)."""


@dataclass(frozen=True)
class Snapshot:
    """What a read saw: the document and its version (sha256 of the bytes; '' if missing)."""

    document: MemoryDocument
    version: str
    size: int
    problem: str | None = None
    """Why the file must not be rewritten as it is (bytes that are not UTF-8, shown as U+FFFD
    in ``document``); a write refuses with this message."""
    raw: bytes | None = None
    """The bytes read (None: no file)."""


@dataclass(frozen=True)
class WriteResult:
    file: str
    section: str | None
    old_version: str
    new_version: str
    """Equal to ``old_version`` when nothing was written (every line already known)."""
    size: int
    known: tuple[Known, ...] = ()
    """Lines of a deduplicating write left out: the file already said them."""
    folded: Folded | None = None
    """The fold that made room for the write (the file was full)."""

    @property
    def written(self) -> bool:
        return self.new_version != self.old_version


class MemoryFile(AgentFile):
    """One agent's ``memory.md`` inside a workspace."""

    def __init__(
        self,
        workspace: Path,
        agent: str,
        *,
        cap_bytes: int = DEFAULT_CAP_BYTES,
        clock: Clock = utc_now,
        history: WriteHook = NO_HISTORY,
        same_as: SameAs = same_key,
    ) -> None:
        """``same_as`` judges whether a line says what another does, for deduplicating
        writes (the extractor's judgement, handed in by the memory service)."""
        super().__init__(workspace, agent, cap_bytes=cap_bytes, clock=clock, history=history)
        self.same_as = same_as

    @functools.cached_property
    def path(self) -> Path:
        return contained(self.workspace, "agents", self.agent, MEMORY_FILE)

    @property
    def relative(self) -> str:
        return f"agents/{self.agent}/{MEMORY_FILE}"

    def snapshot(self) -> Snapshot:
        return self._snapshot_of(read_file_bytes(self.path, self.relative))

    def _snapshot_of(self, found: bytes | None) -> Snapshot:
        raw = found or b""
        try:
            text, problem = raw.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            text, problem = raw.decode("utf-8", "replace"), not_utf8(raw, exc, self.relative)
        return Snapshot(MemoryDocument.parse(text), version_of(raw), len(raw), problem, found)

    def read(self, section: str | None = None) -> str:
        document = self.snapshot().document
        if section is not None and document.find(section) is None:
            raise MemoryError_(
                f"{self.relative} has no section {section!r}; sections: "
                + ", ".join(repr(n) for n in document.names)
            )
        return document.read(section)

    def append(self, section: str, text: str, *, actor: str, dedupe: bool = False) -> WriteResult:
        """Add ``text`` at the end of ``section``. With ``dedupe``, lines the file already says
        (in any section; superseded lines aside) or that repeat an earlier line of ``text``
        are left out and reported in :attr:`WriteResult.known`; when none is left, nothing is
        written."""
        return self._edit(
            "append", section, text, actor=actor, automatic=False, expected=None, dedupe=dedupe
        )

    def replace(
        self,
        section: str,
        text: str,
        *,
        actor: str,
        automatic: bool = False,
        expected_version: str | None = None,
        dedupe: bool = False,
    ) -> WriteResult:
        """Set ``section``'s body to ``text``; with ``dedupe``, a line repeating an earlier
        line of ``text`` is left out (other sections are not looked at: a replace may be
        moving a fact between sections)."""
        return self._edit(
            "replace",
            section,
            text,
            actor=actor,
            automatic=automatic,
            expected=expected_version,
            dedupe=dedupe,
        )

    def undo(self, before: bytes | None, after: bytes | None, *, actor: str) -> WriteResult:
        """Undo the change ``before -> after`` on the file as it is now: lines it added and
        the file still has are removed, lines it removed that the file lacks are put back
        after the line above them (a revert, itself a change). Undoing twice changes
        nothing the second time: UsageError, nothing to undo."""
        from filelock import Timeout

        from squad.errors import UsageError
        from squad.history.describe import line_changes
        from squad.text.secrets import refuse_secrets

        removed, added = line_changes(before, after)
        refuse_secrets("\n".join(removed), what=f"text restored to {self.relative}")
        try:
            with self._history.writing(actor) as wrote, locked(self.path):

                def reverted(current: Snapshot) -> bytes:
                    if current.problem is not None:
                        raise MemoryFileError(current.problem)
                    refuse_read_only(self.path, self.relative)
                    raw = current.raw or b""
                    target = undo_lines(raw, before or b"", removed, added)
                    if target == raw:
                        raise UsageError(
                            f"nothing to undo in {self.relative}: the lines that change added "
                            "are gone and the lines it removed are back"
                        )
                    try:
                        document = MemoryDocument.parse(target.decode("utf-8"))
                        document.render()
                    except (StructureError, UnicodeDecodeError) as exc:
                        raise MemoryError_(
                            f"undoing that change would leave {self.relative} unreadable "
                            f"({exc}); nothing was written"
                        ) from None
                    return self._capped(target, current, "revert", actor)

                current, data = self._write(reverted)
                result = self._written(data, current, "revert", actor)
                wrote(self.relative, current.raw, data)
                return result
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked by another writer; try again") from None

    def _edit(
        self,
        operation: str,
        section: str,
        text: str,
        *,
        actor: str,
        automatic: bool,
        expected: str | None,
        dedupe: bool = False,
    ) -> WriteResult:
        from filelock import Timeout

        from squad.text.secrets import refuse_secrets

        refuse_secrets(text, what=f"text for {self.relative}")
        refuse_unencodable(section + text, what=f"text for {self.relative}")
        try:
            with self._history.writing(actor) as wrote, locked(self.path):
                known: tuple[Known, ...] = ()
                plan: FoldPlan | None = None

                def built(current: Snapshot) -> bytes:
                    nonlocal known
                    new = text
                    if dedupe:
                        said = [line for _, line in current.document.live_lines()]
                        new, known = fresh_lines(
                            text, said if operation == "append" else [], self.same_as
                        )
                        if known and not new.strip() and operation == "append":
                            return current.raw or b""  # all known: nothing to write
                    base = current.document if plan is None else apply_fold(current.document, plan)
                    document = self._edited(
                        current, operation, section, new, automatic, expected, base
                    )
                    return document.render().encode()

                folded: Folded | None = None
                kept: set[str] = set()  # items the daily log holds already
                into_insights = section.casefold() == FOLD_SECTION.casefold()
                can_fold = operation == "append" or not into_insights
                for attempt in range(FOLD_ATTEMPTS):

                    def fitted(
                        current: Snapshot, fold: bool = can_fold and attempt < FOLD_ATTEMPTS - 1
                    ) -> bytes:
                        data = built(current)
                        if len(data) > self.cap_bytes and fold:
                            raise _Full
                        return self._capped(data, current, operation, actor, section)

                    try:
                        current, data = self._write(fitted)
                        break
                    except _Full:
                        # Fold, then write again: on the file as it is now (a person may
                        # have added to it since), with room made for a while.
                        snapshot = self.snapshot()
                        plan = None
                        plan = self._plan_fold(snapshot, len(built(snapshot)), actor)
                        if plan is not None and len(built(snapshot)) > self.cap_bytes:
                            plan = None  # folding all it can would not make room
                        folded = None if plan is None else self._fold_out(plan, actor, wrote, kept)
                        if folded is None:
                            plan, can_fold = None, False  # refused on the next try
                else:  # pragma: no cover - the last attempt never raises _Full
                    raise AssertionError("unreachable")
                if current.raw is not None and data == current.raw:
                    return WriteResult(
                        self.relative, section, current.version, current.version, len(data), known
                    )
                if folded is not None:
                    self._audit_fold(folded, current, data, actor)
                result = self._written(data, current, operation, actor, section)
                wrote(self.relative, current.raw, data)
                return replace(result, known=known, folded=folded)
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked by another writer; try again") from None

    def consolidate(
        self,
        *,
        actor: str = "consolidation",
        over: float = NIGHTLY_AT,
        summarise: TopicSummaries | None = None,
    ) -> Folded | None:
        """Fold the oldest Insights (see :mod:`squad.memory.fold`) when the file holds more
        than ``over`` of its cap; what was folded, None when nothing was (the nightly
        maintenance calls this for every agent).

        ``summarise`` (a model) is asked before the file is locked, so writers never wait on
        it; its lines are used only when the file is still the version it summarised."""
        from filelock import Timeout

        asked: tuple[str, FoldPlan] | None = None
        if summarise is not None:
            seen = self.snapshot()
            if seen.problem is None and seen.size > over * self.cap_bytes:
                ahead = self._plan_fold(seen, seen.size, actor, summarise)
                asked = None if ahead is None else (seen.version, ahead)
        try:
            with self._history.writing(actor) as wrote, locked(self.path):
                first = self.snapshot()
                if first.problem is not None or first.size <= over * self.cap_bytes:
                    return None
                if asked is not None and asked[0] == first.version:
                    plan: FoldPlan | None = asked[1]
                else:
                    plan = self._plan_fold(first, first.size, actor)
                if plan is None:
                    return None
                folded = self._fold_out(plan, actor, wrote)
                if folded is None:
                    return None

                def fold(current: Snapshot) -> bytes:
                    if current.problem is not None:
                        raise MemoryFileError(current.problem)
                    refuse_read_only(self.path, self.relative)
                    return apply_fold(current.document, plan).render().encode()

                current, data = self._write(fold)
                if current.raw is not None and data == current.raw:
                    return None
                self._audit_fold(folded, current, data, actor)
                wrote(self.relative, current.raw, data)
                return folded
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked by another writer; try again") from None

    def _plan_fold(
        self,
        current: Snapshot,
        size: int,
        actor: str,
        summarise: TopicSummaries | None = None,
    ) -> FoldPlan | None:
        if current.problem is not None:
            return None
        return plan_within(
            self._daily(),
            current.document,
            need=size - int(FOLD_TO * self.cap_bytes),
            today=self._clock().date(),
            file=self.relative,
            actor=actor,
            same_as=self.same_as,
            summarise=summarise,
        )

    def _fold_out(
        self, plan: FoldPlan, actor: str, wrote: Wrote, kept: set[str] | None = None
    ) -> Folded | None:
        today = self._clock().date()
        return fold_out(
            self._daily(),
            plan,
            file=self.relative,
            actor=actor,
            wrote=wrote,
            today=today,
            kept=kept,
        )

    def _daily(self) -> DailyLog:
        return DailyLog(self.workspace, self.agent, cap_bytes=self.cap_bytes, clock=self._clock)

    def _audit_fold(self, folded: Folded, current: Snapshot, data: bytes, actor: str) -> None:
        self._audit.append(
            fold_record(
                folded,
                self.relative,
                actor=actor,
                at=self._clock(),
                old_version=current.version,
                old_size=current.size,
                data=data,
            )
        )

    def _edited(
        self,
        current: Snapshot,
        operation: str,
        section: str,
        text: str,
        automatic: bool,
        expected: str | None,
        base: MemoryDocument | None = None,
    ) -> MemoryDocument:
        """The edit made to ``base`` (the document of ``current`` unless given: the same
        folded first), after the checks ``current`` must pass."""
        if current.problem is not None:
            raise MemoryFileError(current.problem)
        refuse_read_only(self.path, self.relative)
        if expected is not None and expected != current.version:
            raise StaleWriteError(
                f"{self.relative} changed since it was read (version "
                f"{expected[:12]} is now {current.version[:12]}); read it again and "
                "redo the change"
            )
        document = current.document if base is None else base
        old = document.find(section)
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
                return document.append(section, text)
            return document.replace(section, text)
        except StructureError as exc:
            # A line number means the file, not the text, is what needs fixing.
            error = MemoryError_ if exc.line is None else MemoryFileError
            raise error(f"{self.relative}: {exc}") from None

    def _write(self, make: Callable[[Snapshot], bytes]) -> tuple[Snapshot, bytes]:
        """Write ``make(what the file holds)`` without clobbering anyone (see the module);
        the snapshot the written bytes were made from, and those bytes."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            before, data = write_unclobbered(
                self.path, self.relative, lambda raw: make(self._snapshot_of(raw))
            )
        except OSError as exc:
            raise write_failed(exc, self.path, self.relative) from None
        return self._snapshot_of(before), data

    def _capped(
        self,
        data: bytes,
        current: Snapshot,
        operation: str,
        actor: str,
        section: str | None = None,
    ) -> bytes:
        """``data``, unless it passes the cap: then recorded and refused."""
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
        return data

    def _written(
        self,
        data: bytes,
        current: Snapshot,
        operation: str,
        actor: str,
        section: str | None = None,
    ) -> WriteResult:
        result = WriteResult(self.relative, section, current.version, version_of(data), len(data))
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


class _Full(Exception):  # control flow inside one write: never raised out of it
    """A write's bytes would pass the cap: fold first, then write again."""
