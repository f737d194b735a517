"""The decisions log: what a squad decided, why, instead of what, and who decided, when.

Decisions live in the store (the truth) and are mirrored to ``decisions.md`` at the workspace
root, a file a person reads and diffs: every decision of the squad in the order recorded,
each under an HTML anchor (``<a id="decision-7"></a>``). The file only grows: a decision that a
later one supersedes stays, struck through, with a link to its successor. It is rendered whole
from the store at every record
(:func:`~squad.memory.decisions.text.render_decisions`), under the file's lock and written
atomically, so it always matches the store.

Decisions are not part of the memory block injected into every prompt: agents, people and MCP
clients look them up on demand (:meth:`DecisionLog.search`).
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import Timeout

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_, NotFound, StoreError, UsageError, WorkspaceError
from squad.fsutil import atomic_write
from squad.history.history import NO_HISTORY, History, RunWrites, WriteHook
from squad.memory.audit import AuditLog, AuditRecord, sha256_text
from squad.memory.decisions.text import (
    decision_key,
    rank_decisions,
    render_decisions,
)
from squad.memory.file_io import locked, refuse_read_only, refuse_unencodable
from squad.paths import contained
from squad.store.decisions import DecisionRecord, NewDecision
from squad.text.secrets import refuse_secrets

if TYPE_CHECKING:
    from squad.store import Store

__all__ = [
    "DECISIONS_FILE",
    "Decision",
    "DecisionLog",
]

DECISIONS_FILE = "decisions.md"
TITLE_MAX_CHARS = 200
TEXT_MAX_CHARS = 2000
"""For the decision and for each reason or alternative."""
ITEMS_MAX = 20
"""Reasons, and alternatives, per decision."""
QUERY_MAX_CHARS = 1000
MAX_ID = 2**31 - 1
"""Ids are INTEGER columns: 32 bits on PostgreSQL. A larger one names no decision."""
ACTOR_MAX_CHARS = 200
_ACTOR_KINDS = ("agent", "person", "mcp")


Decision = DecisionRecord
"""One recorded decision, as the store keeps it."""


class DecisionLog:
    """Records, finds and mirrors squads' decisions; thread-safe, like the store it wraps."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock = utc_now,
        histories: Callable[[Path, str], History] | None = None,
    ) -> None:
        """``histories`` gives each workspace's history: decisions.md changes are then
        committed (alone outside a run, with the run inside one)."""
        self._store = store
        self._clock = clock
        self._histories = histories

    def _hook(self, squad: str, workspace: Path, run_id: str | None) -> WriteHook:
        if self._histories is None:
            return NO_HISTORY
        history = self._histories(workspace, squad)
        if not history.enabled:
            return NO_HISTORY
        return RunWrites(workspace) if run_id is not None else history

    def record(
        self,
        squad: str,
        workspace: Path,
        *,
        title: str,
        decision: str,
        reasons: Sequence[str],
        alternatives: Sequence[str] = (),
        decided_by: str,
        supersedes: int | None = None,
        run_id: str | None = None,
    ) -> Decision:
        """Record a decision of ``squad`` and rewrite the ``decisions.md`` of ``workspace``
        (``run_id``: the run recording it, whose commit then takes the change).

        UsageError for text that cannot be a decision (empty, over a cap, no reason, a title
        on several lines), SecretInMemoryError for a credential in any field, NotFound or
        UsageError when ``supersedes`` is not a current decision of the same squad. Nothing is
        stored and the file is untouched unless the whole write succeeds; then an audit
        record names ``decided_by``.
        """
        return self._record(
            squad,
            workspace,
            title=title,
            decision=decision,
            reasons=reasons,
            alternatives=alternatives,
            decided_by=decided_by,
            supersedes=supersedes,
            once=False,
            run_id=run_id,
        )[0]

    def record_once(
        self,
        squad: str,
        workspace: Path,
        *,
        title: str,
        decision: str,
        reasons: Sequence[str],
        alternatives: Sequence[str] = (),
        decided_by: str,
        supersedes: int | None = None,
        run_id: str | None = None,
    ) -> tuple[Decision, bool]:
        """:meth:`record`, unless the squad already holds the same decision text (spacing,
        case and final punctuation aside): then that one, and False (nothing written)."""
        return self._record(
            squad,
            workspace,
            title=title,
            decision=decision,
            reasons=reasons,
            alternatives=alternatives,
            decided_by=decided_by,
            supersedes=supersedes,
            once=True,
            run_id=run_id,
        )

    def get(self, decision_id: int) -> Decision:
        """The decision with this id; NotFound if there is none."""
        record = None
        if 1 <= decision_id <= MAX_ID:
            record = self._store.decisions.get(decision_id)
        if record is None:
            raise NotFound(f"no decision {decision_id}; `squad decisions list` shows them")
        return record

    def list(
        self,
        squad: str | None = None,
        *,
        include_superseded: bool = True,
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[Decision]:
        """Decisions of ``squad`` (None: of every squad), the newest first."""
        _check_page(limit, offset)
        records = self._store.decisions.recent(
            None if squad is None else [squad],
            include_superseded=include_superseded,
            limit=limit,
            offset=offset,
        )
        return list(records)

    def search(
        self,
        query: str,
        *,
        squads: Sequence[str] | None = None,
        limit: int = 20,
        include_superseded: bool = False,
    ) -> builtins.list[Decision]:
        """Decisions holding every word of ``query`` (case-insensitive) in their title,
        decision, reasons or alternatives, best first (:func:`rank_decisions`).

        ``squads`` limits the search to those squads (None: every squad). A decision log is
        sized for people, so the chosen squads' decisions are read and matched here, in
        Python: the same Unicode case folding on every database.
        """
        words = _query_words(query)
        _check_page(limit, 0)
        if squads is not None and not squads:
            return []
        records = self._store.decisions.recent(
            None if squads is None else list(squads), include_superseded=include_superseded
        )
        return rank_decisions(list(records), words)[:limit]

    def regenerate(self, squad: str, workspace: Path) -> Path:
        """Rewrite ``decisions.md`` from the store (after a hand edit or a failed write)."""
        path = _file_of(workspace)
        try:
            with self._hook(squad, workspace, None).writing("squad") as wrote, locked(path):
                refuse_read_only(path, DECISIONS_FILE)
                before = _current(path)
                records = self._store.decisions.of_squad(squad)
                text = render_decisions(squad, list(records))
                _write(path, text, outcome="it is left as it was")
                wrote(DECISIONS_FILE, before, text.encode())
                _describe(workspace, "decisions.md written again from the state database")
        except Timeout:
            raise MemoryError_(_locked_message()) from None
        return path

    def _record(
        self,
        squad: str,
        workspace: Path,
        *,
        title: str,
        decision: str,
        reasons: Sequence[str],
        alternatives: Sequence[str],
        decided_by: str,
        supersedes: int | None,
        once: bool,
        run_id: str | None = None,
    ) -> tuple[Decision, bool]:
        new = self._checked(squad, title, decision, reasons, alternatives, decided_by, supersedes)
        path = _file_of(workspace)
        written: list[bytes] = []

        def mirror(records: Sequence[DecisionRecord]) -> None:
            text = render_decisions(squad, list(records))
            _write(path, text)
            written.append(text.encode())

        hook = self._hook(squad, workspace, run_id)
        try:
            with hook.writing(decided_by) as wrote, locked(path):
                refuse_read_only(path, DECISIONS_FILE)
                before = _current(path)
                try:
                    record, created = self._store.decisions.add(new, mirror=mirror, once=once)
                except StoreError:
                    if written:  # the file got ahead of a commit that failed: put it back
                        with contextlib.suppress(StoreError, OSError, MemoryError_):
                            records = self._store.decisions.of_squad(squad)
                            _write(path, render_decisions(squad, list(records)))
                    raise
                if written:
                    wrote(DECISIONS_FILE, before, written[-1])
                    _describe(workspace, f"decision {record.id} recorded: {record.title}")
        except Timeout:
            raise MemoryError_(_locked_message()) from None
        if created:
            AuditLog(workspace).append(
                AuditRecord(
                    time=record.decided_at.isoformat(),
                    actor=record.decided_by,
                    operation="decision",
                    file=f"decision:{record.id}",
                    new_sha256=sha256_text(written[-1]) if written else None,
                    bytes=len(written[-1]) if written else None,
                    note=record.title,
                    details={
                        "squad": squad,
                        "mirror": DECISIONS_FILE,
                        "supersedes": record.supersedes,
                    },
                )
            )
        return record, created

    def _checked(
        self,
        squad: str,
        title: str,
        decision: str,
        reasons: Sequence[str],
        alternatives: Sequence[str],
        decided_by: str,
        supersedes: int | None,
    ) -> NewDecision:
        """The decision as it will be stored, or the error saying what is wrong with it."""
        if isinstance(reasons, str) or isinstance(alternatives, str):
            raise UsageError("reasons and alternatives are lists of texts, not one text")
        title = _checked_text(title, "the title", TITLE_MAX_CHARS)
        if "\n" in title or "\r" in title:
            raise UsageError(f"the title {title!r} spans several lines; give a one-line title")
        decision = _checked_text(decision, "the decision", TEXT_MAX_CHARS)
        reason_list = _checked_items(reasons, "reason")
        if not reason_list:
            raise UsageError(
                "a decision needs at least one reason: say why it was decided (--reason)"
            )
        alternative_list = _checked_items(alternatives, "alternative")
        actor = _checked_actor(decided_by)
        if supersedes is not None:
            if isinstance(supersedes, bool) or not isinstance(supersedes, int):
                raise UsageError(f"supersedes must be a decision id, got {supersedes!r}")
            if not 1 <= supersedes <= MAX_ID:
                raise NotFound(
                    f"no decision {supersedes} to supersede; `squad decisions list` shows them"
                )
        for what, text in [
            ("the title", title),
            ("the decision", decision),
            *((f"reason {i}", r) for i, r in enumerate(reason_list, 1)),
            *((f"alternative {i}", a) for i, a in enumerate(alternative_list, 1)),
            ("decided_by", actor),
        ]:
            refuse_secrets(text, what=what)
        now = self._clock()
        if now.utcoffset() is None:
            raise ValueError(f"the decision log's clock returned naive {now!r}")
        return NewDecision(
            squad=squad,
            title=title,
            decision=decision,
            decision_key=decision_key(decision),
            reasons=reason_list,
            alternatives=alternative_list,
            decided_by=actor,
            decided_at=now,
            supersedes=supersedes,
        )


# pure core


def _checked_text(text: str, what: str, cap: int) -> str:
    if not isinstance(text, str):
        raise UsageError(f"{what} must be text, got {text!r}")
    text = text.strip()
    if not text:
        raise UsageError(f"{what} is empty; say it in words")
    if len(text) > cap:
        raise UsageError(
            f"{what} is {len(text):,} characters, over the {cap:,}-character limit; shorten it "
            "(a decision log holds the gist, the details belong in the workspace)"
        )
    if "\x00" in text:
        raise UsageError(f"{what} holds a NUL character, which cannot be stored; remove it")
    refuse_unencodable(text, what=what)
    return text


def _checked_items(items: Sequence[str], noun: str) -> tuple[str, ...]:
    items = builtins.list(items)
    if len(items) > ITEMS_MAX:
        raise UsageError(
            f"{len(items)} {noun}s given, over the limit of {ITEMS_MAX}; keep the ones that "
            "carried the decision"
        )
    return tuple(
        _checked_text(item, f"{noun} {i}", TEXT_MAX_CHARS) for i, item in enumerate(items, 1)
    )


def _checked_actor(actor: str) -> str:
    if not isinstance(actor, str):
        raise UsageError(f"decided_by must be text, got {actor!r}")
    actor = actor.strip()
    kind, _, name = actor.partition(":")
    if actor == "cli" or (kind in _ACTOR_KINDS and name.strip()):
        if len(actor) > ACTOR_MAX_CHARS or not actor.isprintable():
            raise UsageError(
                f"decided_by {actor[:60]!r} must be one printable line of at most "
                f"{ACTOR_MAX_CHARS} characters"
            )
        return actor
    raise UsageError(
        f"decided_by {actor!r} names nobody squad knows how to credit; use 'cli', "
        "'person:<name>', 'agent:<agent id>' or 'mcp:<client name>'"
    )


def _query_words(query: str) -> builtins.list[str]:
    if not isinstance(query, str):
        raise UsageError(f"the query must be text, got {query!r}")
    if len(query) > QUERY_MAX_CHARS:
        raise UsageError(
            f"the query is {len(query):,} characters, over the {QUERY_MAX_CHARS:,}-character "
            "limit; search for a few words"
        )
    words = builtins.list(dict.fromkeys(query.casefold().split()))
    if not words:
        raise UsageError("the query is empty; give the words to look for")
    return words


def _check_page(limit: int, offset: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError(f"limit must be a whole number of at least 1, got {limit!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise UsageError(f"offset must be a whole number of 0 or more, got {offset!r}")


def _file_of(workspace: Path) -> Path:
    if not workspace.is_dir():
        raise WorkspaceError(
            f"the workspace folder {str(workspace)!r} does not exist; `squad create FILE` or "
            "`squad restore FOLDER` makes it"
        )
    return contained(workspace, DECISIONS_FILE)


def _describe(workspace: Path, subject: str) -> None:
    """Name the memory change open for ``workspace`` (its commit's first line), if any."""
    from squad.history.change import active

    change = active(workspace)
    if change is not None and change.subject is None:
        change.subject = subject


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    except OSError as exc:
        raise MemoryError_(f"cannot read {DECISIONS_FILE}: {exc.strerror or exc}") from None


def _write(path: Path, text: str, *, outcome: str = "nothing was recorded") -> None:
    try:
        atomic_write(path, text.encode())
    except OSError as exc:
        raise MemoryError_(
            f"cannot write {DECISIONS_FILE}: {exc.strerror or exc}; {outcome}"
        ) from None


def _locked_message() -> str:
    return f"{DECISIONS_FILE} is locked by another writer; try again"
