"""Safe writes to an agent's ``memory.md`` and its dated detail logs.

Every write: takes a lock that holds across processes, re-reads the file under it, refuses a
write based on a stale read (version check), refuses credentials, refuses to grow the file
past its cap (never truncating), refuses an automatic writer emptying a non-empty section,
writes atomically (temp file, fsync, rename), and appends an audit record.

A person editing the file takes no lock, so a write never clobbers a change made between its
read and its rename (:func:`_write_unclobbered`): the file is held open from the read on; a
rename over it or a rewrite seen before the rename (identity, size, bytes) makes the write
start again on the new bytes, and lines appended to it meanwhile are carried over to the new
file. A file someone keeps rewriting is a :class:`StaleWriteError`, nothing written.

A write never changes bytes it did not mean to: it refuses (:class:`MemoryFileError`, nothing
written) a ``memory.md`` that is not valid UTF-8 (it could not be rewritten exactly) and one
made read-only; it keeps a byte-order mark, the line ending and the permission bits. Reading
either for a prompt or display still works, with U+FFFD for bytes that are not UTF-8. A folder
or other non-file where the file belongs is a clear error for reads and writes alike. A daily
log is appended to byte for byte, so what it already holds is kept whatever it is.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from filelock import FileLock, Timeout

from squad.clock import Clock, utc_now
from squad.diskfull import as_disk_full
from squad.errors import MemoryError_, MemoryFileError, MemoryFullError, StaleWriteError
from squad.fsutil import append, atomic_write, read_all, read_when_no_writer, replace_if_unchanged
from squad.history.history import NO_HISTORY, WriteHook, Wrote
from squad.history.merge import carry_over
from squad.memory.audit import AuditLog, AuditRecord, sha256_text
from squad.memory.dedupe import Known, SameAs, fresh_lines, same_key
from squad.memory.document import (
    BOM,
    MemoryDocument,
    StructureError,
    line_ending,
    with_line_ending,
)
from squad.memory.fold import (
    FOLD_SECTION,
    FOLD_TO,
    NIGHTLY_AT,
    Folded,
    FoldPlan,
    TopicSummaries,
    apply_fold,
    daily_entry,
    plan_fold,
)
from squad.paths import check_name, contained
from squad.text.secrets import refuse_secrets
from squad.workspace.layout import MEMORY_FILE

__all__ = [
    "DailyLog",
    "MemoryFile",
    "Snapshot",
    "WriteResult",
    "locked",
    "read_file_bytes",
    "refuse_read_only",
    "refuse_unencodable",
    "rewrite",
]

LOCK_TIMEOUT_S = 30.0
DEFAULT_CAP_BYTES = 50 * 1024
FOLD_ATTEMPTS = 4
"""Tries of a write that must fold first (a person adding lines meanwhile can use up room)."""
FOLD_ENTRY_SLACK = 64
"""Bytes of a daily log kept free beyond a fold entry's estimate (its counts may grow)."""
WRITE_ATTEMPTS = 20
"""How often a write starts again on a file someone else keeps rewriting before giving up."""


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


def locked(path: Path) -> FileLock:
    """The lock every writer of ``path`` holds (a ``.<name>.lock`` file beside it)."""
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
        history: WriteHook = NO_HISTORY,
    ) -> None:
        """``history`` is held around each write and told its bytes (the workspace's
        history: committed alone outside a run, with the run inside one)."""
        self.workspace = workspace
        self.agent = check_name(agent, what="agent id")
        self.cap_bytes = cap_bytes
        self._clock = clock
        self._audit = AuditLog(workspace)
        self._history = history


class MemoryFile(_AgentFile):
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
            text, problem = raw.decode("utf-8", "replace"), _not_utf8(raw, exc, self.relative)
        return Snapshot(MemoryDocument.parse(text), _version(raw), len(raw), problem, found)

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
        from squad.errors import UsageError
        from squad.history.describe import line_changes

        removed, added = line_changes(before, after)
        refuse_secrets("\n".join(removed), what=f"text restored to {self.relative}")
        try:
            with self._history.writing(actor) as wrote, locked(self.path):

                def reverted(current: Snapshot) -> bytes:
                    if current.problem is not None:
                        raise MemoryFileError(current.problem)
                    refuse_read_only(self.path, self.relative)
                    raw = current.raw or b""
                    target = _undo_lines(raw, before or b"", removed, added)
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
        """What to fold so that a file of ``size`` bytes comes back to :data:`FOLD_TO` of the
        cap, within what today's daily log can still take; None when nothing can be."""
        if current.problem is not None:
            return None
        day = self._clock().date()
        log = self._daily()
        try:
            room = log.room(day, daily_entry(FoldPlan((), ()), self.relative), actor)
        except MemoryError_:
            return None  # no usable daily log: nowhere to keep the lines
        return plan_fold(
            current.document,
            need=size - int(FOLD_TO * self.cap_bytes),
            room=room - FOLD_ENTRY_SLACK,
            day=day,
            pointer=log.relative(day),
            same_as=self.same_as,
            summarise=summarise,
        )

    def _fold_out(
        self, plan: FoldPlan, actor: str, wrote: Wrote, kept: set[str] | None = None
    ) -> Folded | None:
        """Keep the plan's lines whole in today's daily log, before memory.md loses them
        (but for items of ``kept``, there already from an earlier try, which it gains); None
        when the log refuses them (then nothing is folded)."""
        kept = set() if kept is None else kept
        new = FoldPlan(tuple(item for item in plan.items if item not in kept), plan.summaries)
        log = self._daily()
        try:
            daily = log.relative(self._clock().date())
            if new.items:
                daily = log.append_within(
                    daily_entry(new, self.relative), actor=actor, day=None, wrote=wrote
                )
        except MemoryError_:
            return None
        kept.update(new.items)
        return Folded(len(plan.lines), len(plan.summaries), daily)

    def _daily(self) -> DailyLog:
        return DailyLog(self.workspace, self.agent, cap_bytes=self.cap_bytes, clock=self._clock)

    def _audit_fold(self, folded: Folded, current: Snapshot, data: bytes, actor: str) -> None:
        self._audit.append(
            AuditRecord(
                time=self._clock().isoformat(),
                actor=actor,
                operation="fold",
                file=self.relative,
                section=FOLD_SECTION,
                old_sha256=current.version or None,
                new_sha256=_version(data),
                bytes=len(data),
                note=(
                    f"{folded.moved} oldest {FOLD_SECTION} lines moved whole to {folded.daily}; "
                    f"{folded.summaries} summary lines in their place"
                ),
                details={
                    "moved": folded.moved,
                    "summaries": folded.summaries,
                    "daily": folded.daily,
                    "bytes_before": current.size,
                },
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
            before, data = _write_unclobbered(
                self.path, self.relative, lambda raw: make(self._snapshot_of(raw))
            )
        except OSError as exc:
            raise _write_failed(exc, self.path, self.relative) from None
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


class _NoFile(Exception):  # control flow inside one rewrite: never raised out of it
    """The file to rewrite is not there (a rewrite never makes one)."""


class _Full(Exception):  # control flow inside one write: never raised out of it
    """A write's bytes would pass the cap: fold first, then write again."""


def _undo_lines(raw: bytes, before: bytes, removed: list[str], added: list[str]) -> bytes:
    """``raw`` with one occurrence of each ``added`` line taken out (the last) and each
    ``removed`` line put back after the nearest line above it in ``before`` that ``raw``
    still has (at the top when none is)."""
    nl = line_ending(raw.decode("latin-1")) if raw else "\n"
    ended = not raw or raw.endswith((b"\n", b"\r"))
    lines = raw.decode("utf-8").splitlines()
    kept = list(lines)
    for line in added:
        if line in lines:
            del lines[len(lines) - 1 - lines[::-1].index(line)]
    old = before.decode("utf-8", "replace").splitlines()
    for line in removed:
        if line in lines:
            continue
        at = 0
        if line in old:
            for above in reversed(old[: old.index(line)]):
                if above in lines:
                    at = lines.index(above) + 1
                    break
        lines.insert(at, line)
    if lines == kept:
        return raw
    text = nl.join(lines)
    return (text + (nl if ended else "")).encode() if lines else b""


class DailyLog(_AgentFile):
    """``agents/<agent>/daily/YYYY-MM-DD.md``: long details, read on demand, never injected."""

    def path_for(self, day: date) -> Path:
        return contained(self.workspace, "agents", self.agent, "daily", f"{day.isoformat()}.md")

    def relative(self, day: date) -> str:
        return f"agents/{self.agent}/daily/{day.isoformat()}.md"

    def append(self, text: str, *, actor: str, day: date | None = None) -> str:
        """Add a timestamped entry to the day's log; returns the log's workspace path."""
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
        refuse_secrets(text, what="text for the daily log")
        refuse_unencodable(actor + text, what="text for the daily log")
        now = self._clock()
        day = day or now.date()
        path = self.path_for(day)
        relative = self.relative(day)
        try:
            with _mkdir_lock(path):

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

                existing, data = _append_unclobbered(path, relative, appended)
                wrote(relative, existing, data)
                old = existing or b""
        except Timeout:
            raise MemoryError_(f"{relative} is locked; try again") from None
        except OSError as exc:
            raise _write_failed(exc, path, relative) from None
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


def rewrite(
    path: Path,
    relative: str,
    make: Callable[[bytes], bytes],
    *,
    lock: Path | None = None,
) -> tuple[bytes, bytes] | None:
    """Replace the file at ``path`` with ``make(its bytes)`` as squad's memory writes do: under
    the lock its writers take (:func:`locked` of ``lock``, the file itself by default), losing
    no change a person makes meanwhile (:func:`_write_unclobbered`), atomically. For rewrites
    of a whole file that are no section edit (a credential scan's redactions). The bytes before
    and after; None when there is no file (none is made). A read-only file is refused
    (:class:`MemoryFileError`), a lock held past its timeout is a :class:`MemoryError_`."""

    def made(raw: bytes | None) -> bytes:
        if raw is None:
            raise _NoFile
        refuse_read_only(path, relative)
        return make(raw)

    try:
        with locked(lock or path):
            before, after = _write_unclobbered(path, relative, made)
    except _NoFile:
        return None
    except Timeout:
        raise MemoryError_(f"{relative} is locked by another writer; try again") from None
    except OSError as exc:
        raise _write_failed(exc, path, relative) from None
    assert before is not None  # made() refuses a missing file
    return before, after


def _append_unclobbered(
    path: Path, relative: str, make: Callable[[bytes | None], bytes]
) -> tuple[bytes | None, bytes]:
    """Add to the end of ``path``, in place (``O_APPEND``, as ``>>`` does), what ``make(its
    bytes)`` adds after them; a file not there yet is made whole (:func:`_write_unclobbered`).
    Nothing is replaced, so a person appending at the same time, even through a descriptor
    opened long before, loses nothing: both writes land whole, one after the other. Returns
    the bytes read and those bytes with squad's addition (what history and audit record)."""
    with _held(path, relative) as (_, raw):
        if raw is not None:
            data = make(raw)
            if not data.startswith(raw):
                raise ValueError("an append must keep the file's bytes as they are")
            append(path, data[len(raw) :])
            return raw, data
    return _write_unclobbered(path, relative, make)


def _write_unclobbered(
    path: Path, relative: str, make: Callable[[bytes | None], bytes]
) -> tuple[bytes | None, bytes]:
    """Replace ``path`` with ``make(its bytes)`` (None: no file) and lose nobody's change.

    The caller holds the file's lock, which squad's writers share; a person does not take it.
    So the file is held open from the read on. Replaced or rewritten before the rename, the
    write starts again on what the file holds then. Lines appended to it meanwhile (the usual
    hand edit: ``>>``, an editor's append) went to the file the rename takes away: they are
    read there and appended to the new file, as the person appended them (after any lines they
    appended since the rename, which are there already). A rewrite in the instant between the
    check and the rename is carried over with a line merge (:func:`carry_over`). Returns the
    bytes the write was made from and the bytes it wrote (so history and audit record squad's
    own change; what a person wrote stays theirs).
    """
    made: tuple[bytes | None, bytes] | None = None
    late: tuple[bytes, bytes] | None = None  # (the file as replaced, what a person made it)
    for _ in range(WRITE_ATTEMPTS):
        with _held(path, relative) as (fd, raw):
            if late is None:
                data = make(raw)
                if raw is not None and data == raw:
                    return raw, data  # nothing to change: the file is left as it is
            else:
                carried = carry_over(*late, raw or b"")
                if carried is None:
                    raise MemoryFileError(_unmerged(path, relative, late[1]))
                data = carried
            if not replace_if_unchanged(path, data, fd, raw):
                continue
            after = read_when_no_writer(fd) if fd is not None and raw is not None else None
        if made is None:
            made = (raw, data)
        if after is None or after == raw:
            return made
        assert raw is not None
        if after.startswith(raw):
            tail = after[len(raw) :]
            if data and not data.endswith((b"\n", b"\r")) and not tail.startswith(b"\n"):
                tail = b"\n" + tail
            append(path, tail)
            return made
        late = (raw, after)
    if made is None:
        raise StaleWriteError(
            f"{relative} kept changing while squad wrote it ({WRITE_ATTEMPTS} tries): someone "
            "else is rewriting it; nothing was written, try again when they are done"
        )
    assert late is not None
    raise MemoryFileError(_unmerged(path, relative, late[1]))


def _unmerged(path: Path, relative: str, theirs: bytes) -> str:
    """Keep a change squad could not carry over beside the file; the message saying where."""
    kept = path.with_name(f"{path.name}.{utc_now().strftime('%Y%m%dT%H%M%S%f')}.unmerged")
    atomic_write(kept, theirs)
    return (
        f"{relative} was changed by someone else at the moment squad wrote it, and squad could "
        f"not merge that change into its own; their version is kept whole in {kept.name} "
        "beside it: merge it by hand"
    )


@contextmanager
def _held(path: Path, relative: str) -> Iterator[tuple[int | None, bytes | None]]:
    """The descriptor and bytes of the regular file at ``path`` (both None: no file), the
    descriptor open for the block."""
    fd = _open_regular(path, relative)
    if fd is None:
        yield None, None
        return
    try:
        try:
            raw = read_all(fd)
        except OSError as exc:
            raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
        yield fd, raw
    finally:
        os.close(fd)


def _write_failed(exc: OSError, path: Path, relative: str) -> MemoryError_:
    """A memory write the disk refused; on a full disk, which disk, its free space and what
    to do (still a memory error: the agent or person who wrote is told the write failed)."""
    full = as_disk_full(exc, path)
    said = f"cannot write {relative}: {exc.strerror}; nothing was written"
    return MemoryError_(said if full is None else f"{said}: {full}")


def _mkdir_lock(path: Path) -> FileLock:
    path.parent.mkdir(parents=True, exist_ok=True)
    return locked(path)


def _version(raw: bytes) -> str:
    return sha256_text(raw) if raw else ""


def read_file_bytes(path: Path, relative: str) -> bytes | None:
    """The bytes of the regular file at ``path``; None when there is none.

    A folder, pipe or other non-file in its place, or a file that cannot be read, is a
    :class:`MemoryFileError` naming ``relative`` (never a wait on a pipe, never a traceback).
    """
    fd = _open_regular(path, relative)
    if fd is None:
        return None
    try:
        return read_all(fd)  # a regular file (checked): read whole, however large it grew
    except OSError as exc:
        raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _open_regular(path: Path, relative: str) -> int | None:
    """A descriptor of the regular file at ``path``; None when there is none."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MemoryFileError(_not_a_file(relative, "a folder")) from None
    except OSError as exc:
        raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise MemoryFileError(_not_a_file(relative, _kind(mode)))
    return fd


def refuse_read_only(path: Path, relative: str) -> None:
    """Refuse to replace a file someone made read-only: a rename would quietly defeat that."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(status.st_mode)
    if not mode & 0o222:
        raise MemoryFileError(
            f"{relative} is read-only (mode {mode:04o}), so squad leaves it as it is and "
            f"nothing was written; to let squad write it again: chmod u+w {path}"
        )
    if not os.access(path, os.W_OK):
        raise MemoryFileError(
            f"{relative} is not writable by this user (mode {mode:04o}, owner uid "
            f"{status.st_uid}); nothing was written. Fix its owner or mode to let squad write it"
        )


def refuse_unencodable(text: str, *, what: str) -> None:
    """Refuse text that cannot be stored as UTF-8 (a lone surrogate, from broken JSON say)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MemoryError_(
            f"the {what} holds {text[exc.start]!r} at character {exc.start}, which is not a "
            "Unicode character and cannot be stored; nothing was written"
        ) from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def _not_a_file(relative: str, what: str) -> str:
    return (
        f"{relative} is {what}, not a file squad can read or write; move it aside (squad "
        "creates the file when it first writes), then try again"
    )


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def _not_utf8(raw: bytes, exc: UnicodeDecodeError, relative: str) -> str:
    """Where ``raw`` stops being UTF-8, as a person fixes it: byte offset, line, column."""
    start = exc.start
    line = len(_LINE_BREAK.findall(raw, 0, start)) + 1
    column = start - max(raw.rfind(b"\n", 0, start), raw.rfind(b"\r", 0, start))
    bad = " ".join(f"0x{byte:02x}" for byte in raw[start : exc.end])
    hint = (
        "it looks like UTF-16: save it as UTF-8"
        if raw.startswith((b"\xff\xfe", b"\xfe\xff"))
        else "fix or delete that byte in an editor, or convert the whole file to UTF-8 "
        "(iconv -f latin1 -t utf-8, say)"
    )
    return (
        f"{relative} is not valid UTF-8: byte offset {start} (line {line}, column {column}) "
        f"holds {bad}. squad will not rewrite a file it cannot read exactly, so nothing was "
        f"written; {hint}, then try again"
    )
