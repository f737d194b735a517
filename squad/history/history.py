"""A workspace's history as the rest of squad uses it: runs, memory changes, hand edits.

:class:`History` wraps the workspace's :class:`~squad.history.repository.Repository` with the
policy: what each kind of commit says and who it names, that a workspace whose history cannot
be written is *paused* (reported through ``report``, never raised into a run or a memory
write), and the hooks memory writers use (:meth:`History.writing` outside runs,
:class:`RunWrites` inside them).

Who commits what:

- a **run**: at its end (and when it pauses for an approval), everything its tasks wrote
  (:meth:`commit_run`); before it starts, changes found in the working tree are committed
  first, as ``unattributed`` (a person's edits) or as the partial work of a run that was
  killed (:meth:`begin_run`);
- a **memory change outside a run** (extraction pass, remember, forget, revert, edits from
  the dashboard or MCP, an agent in ``squad chat``): one commit of exactly what it wrote
  (:meth:`change`);
- squad's own **workspace changes** (a definition updated, a new agent's folder):
  :meth:`record_paths`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from squad.clock import Clock, utc_now
from squad.errors import HistoryUnavailable, WorkspaceError
from squad.fsutil import atomic_write
from squad.history import lock
from squad.history.author import UNATTRIBUTED, Author
from squad.history.change import Change, active, opened
from squad.history.describe import memory_message
from squad.history.engine import blob_at, git
from squad.history.health import HistoryHealth
from squad.history.hooks import NO_HISTORY, WriteHook, Wrote
from squad.history.hooks import ignore_write as _ignore
from squad.history.merge import carry_over
from squad.history.message import Kind, RunNote, compose, run_message
from squad.history.pack import (
    AUTO_PACK_OBJECTS,
    PackReport,
    folder_bytes,
    loose_estimate,
    pack_repository,
)
from squad.history.repository import CommitResult, HistoryState, Repository
from squad.history.staging import StagingPolicy
from squad.paths import contained

if TYPE_CHECKING:
    import pygit2

__all__ = [
    "NO_HISTORY",
    "History",
    "HistoryEvents",
    "RunWrites",
    "WriteHook",
    "Wrote",
]

HistoryEvents = Callable[[str, dict[str, Any]], None]
"""``(event, fields)``: ``history_paused`` with the squad, workspace and reason."""
RUN_MARKER = "squad/run.json"
T = TypeVar("T")


class RunWrites:
    """Writes inside a run: they hold the history lock shared (so a memory change's commit
    made meanwhile holds only its own lines) and are committed with the run."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    @contextmanager
    def writing(self, actor: str) -> Iterator[Wrote]:
        change = active(self.workspace)
        if change is not None:  # a session of this context: it holds the lock already
            yield change.wrote
            return
        with lock.shared(self.workspace):
            yield _ignore


class History:
    """The history of one squad's workspace."""

    def __init__(
        self,
        workspace: Path,
        squad: str,
        *,
        clock: Clock = utc_now,
        enabled: bool = True,
        committer: str = "squad",
        report: HistoryEvents | None = None,
        staging: StagingPolicy | None = None,
    ) -> None:
        self.workspace = workspace
        self.squad = squad
        self.enabled = enabled
        self._report = report if report is not None else (lambda event, fields: None)
        policy = staging or StagingPolicy()
        self.repository = Repository(
            workspace, squad, clock=clock, committer=committer, stage_filter=policy.refusal
        )

    # -- state ---------------------------------------------------------------------------

    def state(self) -> HistoryState:
        if not self.enabled:
            return HistoryState("off", "history is off (history.enabled in settings.yaml)")
        return self.repository.state()

    def open(self) -> pygit2.Repository:
        """The repository, for reading (HistoryUnavailable when there is none)."""
        return self.repository.open()

    def health(self) -> HistoryHealth:
        """The history's state, size on disk, commits and newest commit (``ws health``)."""
        state = self.state()
        size = folder_bytes(self.repository.git_dir)
        if state.state != "ok" or state.head is None:
            return HistoryHealth(state.state, state.detail, size_bytes=size)
        from squad.history.log import commits

        try:
            repo = self.repository.open()
            head: Any = repo[repo.head.target]
            count = sum(1 for _ in commits(repo))
        except (HistoryUnavailable, git().GitError, KeyError, ValueError) as exc:
            return HistoryHealth("broken", str(exc), size_bytes=size)
        when = datetime.fromtimestamp(head.commit_time, UTC)
        return HistoryHealth("ok", None, str(head.id)[:10], count, size, when)

    # -- writing -------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the workspace has a ``.git`` (squad's or not: :meth:`start` tells)."""
        return os.path.lexists(self.repository.git_dir)

    def start(self) -> str | None:
        """Make sure the history exists (``history starts``); its HEAD, None when paused."""
        if not self.enabled or not self.workspace.is_dir():
            return None
        with self._held() as held:
            repo = self._safely(self.repository.ensure) if held else None
            if repo is None or repo.head_is_unborn:
                return None
            return str(repo.head.target)

    def record_hand_edits(self, *, run_live: bool = False) -> str | None:
        """Commit what changed in the working tree since squad's last commit: a person's
        edits (``unattributed``), or what a killed run left (its partial commit). Skipped
        while a run of the squad is live (its writes are not committed yet)."""
        if not self.enabled or run_live or not self.workspace.is_dir():
            return None
        with self._held() as held:
            return self._safely(lambda: self._settle(None)) if held else None

    def begin_run(self, run_id: str) -> None:
        """Before a run (or its resume) starts: earlier changes committed by their authors,
        then the run marked as the one writing (so a kill's leftovers are its own)."""
        if not self.enabled or not self.workspace.is_dir():
            return
        with self._held() as held:

            def begin() -> None:
                self._settle(run_id)
                self._write_marker(run_id)

            if held:
                self._safely(begin)

    def commit_run(self, note: RunNote) -> CommitResult | None:
        """The run's commit: everything changed since the last commit; the marker goes."""
        if not self.enabled or not self.workspace.is_dir():
            return None
        with self._held() as held:

            def commit() -> CommitResult:
                repo = self.repository.ensure()
                result = self.repository.commit_all(
                    Author("run"),
                    lambda left_out: run_message(_with_left_out(note, left_out)),
                    repo=repo,
                )
                self.repository.mark_run(note.run_id, result.sha, repo)
                self._drop_marker()
                return result

            return self._safely(commit) if held else None

    def record_paths(self, author: str, message: str, paths: list[str]) -> str | None:
        """Commit ``paths`` as they are in the working tree (squad's own workspace changes)."""
        if not self.enabled or not self.workspace.is_dir():
            return None
        with self._held() as held:

            def commit() -> str:
                repo = self.repository.ensure()
                dirty = set(self.repository.dirty(repo))
                wanted = [p for p in paths if p in dirty]
                if not wanted:
                    return ""
                return self.repository.commit_all(Author(author), message, paths=wanted).sha

            return (self._safely(commit) or None) if held else None

    def record_all(self, author: str, message: str) -> str | None:
        """Commit everything changed in the working tree under ``message`` (always, even
        with no change: an ``import`` says where the squad came from)."""
        if not self.enabled or not self.workspace.is_dir():
            return None
        with self._held() as held:
            if not held:
                return None
            result = self._safely(lambda: self.repository.commit_all(Author(author), message))
            return None if result is None else result.sha

    @contextmanager
    def change(
        self, author: str, *, agent: str | None = None, subject: str | None = None
    ) -> Iterator[Change]:
        """A memory change outside a run: holds the lock exclusively while it is made, then
        commits exactly what was written (joins the change already open in this context)."""
        existing = active(self.workspace)
        if existing is not None:
            yield existing
            return
        with self._held() as held:
            change = Change(self.workspace, author, subject=subject, agent=agent)
            ready = (
                self._safely(self.repository.ensure)
                if held and self.enabled and self.workspace.is_dir()
                else None
            )
            with opened(change):
                try:
                    yield change
                finally:
                    if ready is not None and (change.keep or not change.empty):
                        self._safely(lambda: self._commit_change(change))

    @contextmanager
    def writing(self, actor: str) -> Iterator[Wrote]:
        """The hook of a memory writer outside a run: joins the open change, or makes one."""
        with self.change(actor) as change:
            yield change.wrote

    def run_commit(self, run_id: str) -> str | None:
        """The latest commit of run ``run_id`` (its ``refs/runs/`` ref), if it has one."""
        if not self.enabled:
            return None

        def find() -> str | None:
            from squad.history.log import find_run

            entry = find_run(self.repository.open(), run_id)
            return entry.commit if entry is not None else None

        try:
            return find()
        except (HistoryUnavailable, git().GitError, KeyError, ValueError):
            return None

    def restore_tasks(self, commit: str, into: str) -> list[str]:
        """Copy the ``tasks/`` folder as commit ``commit`` has it into the folder ``into``
        (relative), for a run that resumes after newer runs wrote over it; the paths made."""
        if not self.enabled:
            return []

        def restore() -> list[str]:
            repo = self.repository.open()
            tree = repo[commit].peel(git().Commit).tree
            try:
                tasks = repo[tree["tasks"].id]
            except KeyError:
                return []
            made = []
            for relative, data in _files(repo, tasks, ""):
                target = contained(self.workspace, *into.split("/"), *relative.split("/"))
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(target, data, durable=False)
                made.append(f"{into}/{relative}")
            return made

        return self._safely(restore) or []

    def pack(self, *, full: bool = False) -> PackReport | None:
        """Pack loose objects (delta-compressed, like ``git gc``): new ones into a pack of
        their own, or, every :data:`MAX_PACKS` packs (or ``full``), everything reachable into
        one pack and the rest dropped. Never prunes history; None when paused or off."""
        if not self.enabled or not self.workspace.is_dir():
            return None
        with self._held() as held:
            if not held:
                return None
            return self._safely(lambda: pack_repository(self.repository, full=full))

    # -- internals -----------------------------------------------------------------------

    def _commit_change(self, change: Change) -> CommitResult | None:
        repo = self.repository.ensure()
        head = None if repo.head_is_unborn else repo[repo.head.target].tree
        blobs: dict[str, bytes | None] = {}
        before_of: dict[str, bytes | None] = {}
        mixed: list[str] = []
        for path in dict.fromkeys(w.path for w in change.writes):
            committed = blob_at(repo, head, path)
            current = committed
            for write in (w for w in change.writes if w.path == path):
                if write.after is None:
                    current = None
                    continue
                merged = carry_over(write.before or b"", write.after, current or b"")
                if merged is None:
                    merged = write.after
                    mixed.append(path)
                current = merged
            if current != committed:
                blobs[path] = current
                before_of[path] = committed
        if not blobs and not change.facts and not change.keep:
            return None
        message = memory_message(change, before_of, blobs, mixed)
        return self.repository.commit_blobs(Author(change.author), message, blobs, repo=repo)

    def _settle(self, run_id: str | None) -> str | None:
        """Commit leftovers of the working tree (holding the lock); see :meth:`begin_run`.
        A history with many loose objects is packed first (squad with no daemon to pack it
        nightly still stays small), as git's own ``gc.auto`` does."""
        repo = self.repository.ensure()
        if loose_estimate(self.repository.git_dir / "objects") > AUTO_PACK_OBJECTS:
            pack_repository(self.repository, full=False)
        marker = self._read_marker()
        if marker is not None and marker == run_id:
            return None  # the same run again (a resume): its leftovers are its own
        dirty = self.repository.dirty(repo)
        if not dirty:
            if marker is not None:
                self._drop_marker()
            return None
        if marker is not None:
            note = RunNote(marker, self.squad, "interrupted", "unknown")
            message = run_message(note).replace(
                " interrupted: ", " interrupted (partial: what it wrote before it died): ", 1
            )
            result = self.repository.commit_all(Author("run"), message, repo=repo)
            self.repository.mark_run(marker, result.sha, repo)
            self._drop_marker()
            return result.sha
        shown = dirty[:20] + ([f"... and {len(dirty) - 20} more"] if len(dirty) > 20 else [])

        def hand_message(left_out: tuple[str, ...]) -> str:
            return compose(
                f"changes made by hand: {len(dirty)} file{'s' if len(dirty) != 1 else ''}",
                [
                    "Found in the working tree before squad's next run or memory pass, not "
                    "made by squad:",
                    *(f"  {path}" for path in shown),
                    *(f"left out: {path}" for path in left_out),
                ],
                [("Squad-Kind", Kind.HAND.value), ("Squad-Actor", UNATTRIBUTED.name)],
            )

        return self.repository.commit_all(UNATTRIBUTED, hand_message, repo=repo).sha

    def _marker_path(self) -> Path:
        return self.repository.git_dir / RUN_MARKER

    def _read_marker(self) -> str | None:
        try:
            data = json.loads(self._marker_path().read_bytes())
        except (OSError, ValueError):
            return None
        run = data.get("run_id") if isinstance(data, dict) else None
        return run if isinstance(run, str) else None

    def _write_marker(self, run_id: str) -> None:
        path = self._marker_path()
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, json.dumps({"run_id": run_id}).encode(), durable=False)

    def _drop_marker(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._marker_path().unlink()

    @contextmanager
    def _held(self) -> Iterator[bool]:
        """The history lock, held exclusively for the block; False (and ``history_paused``
        reported) when it cannot be had: the work goes on uncommitted, never waits forever
        and never fails for the history's sake (the next commit takes what it wrote)."""
        try:
            taking = lock.exclusive(self.workspace)
            taking.__enter__()
        except WorkspaceError as exc:
            self._report(
                "history_paused",
                {"squad": self.squad, "workspace": str(self.workspace), "reason": str(exc)},
            )
            yield False
            return
        try:
            yield True
        finally:
            taking.__exit__(None, None, None)

    def _safely(self, action: Callable[[], T]) -> T | None:
        """``action``'s result, or None with ``history_paused`` reported when the history
        cannot be written (never raised: history is paused, the work goes on)."""
        pygit2 = git()
        try:
            return action()
        except HistoryUnavailable as exc:
            reason = str(exc)
        except (pygit2.GitError, OSError, WorkspaceError, ValueError, KeyError) as exc:
            reason = f"{type(exc).__name__}: {str(exc).strip() or 'no detail'}"
        self._report(
            "history_paused",
            {"squad": self.squad, "workspace": str(self.workspace), "reason": reason},
        )
        return None


def _with_left_out(note: RunNote, left_out: tuple[str, ...]) -> RunNote:
    from dataclasses import replace

    return replace(note, left_out=left_out) if left_out else note


def _files(repo: pygit2.Repository, tree: Any, prefix: str) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of every file under ``tree``."""
    for entry in tree:
        path = f"{prefix}{entry.name}"
        obj = repo[entry.id]
        if isinstance(obj, git().Tree):
            yield from _files(repo, obj, path + "/")
        elif isinstance(obj, git().Blob):
            yield path, obj.data
