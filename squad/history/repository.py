"""One workspace's history: the ``.git`` inside it, written by squad alone, under its lock.

Every write happens under the workspace's history lock (:mod:`squad.history.lock`), and a
commit is made in steps a kill cannot tear:

1. an *intent* (``.git/squad/intent.json``: author, message, what to stage, the commit it
   goes on) is written;
2. the objects are written (libgit2 writes each to a temporary file and renames it);
3. ``refs/heads/main`` moves to the new commit (a lock file renamed over the ref);
4. the index is written (likewise), and the intent removed.

A process killed at any step leaves a repository git reads as it was before the commit, or
after it; the next holder of the lock finds the intent and completes the commit (the ref
moved: the index is rebuilt from it), or makes it again from the working tree (the ref did
not move), and removes the lock files the killed process left. A ``.git`` that cannot be opened,
whose ``HEAD`` cannot be read, or that squad did not make (no ``squad.workspace`` in its
config) raises :class:`~squad.errors.HistoryUnavailable`: history is paused for that
workspace, never the work.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from squad.clock import Clock, utc_now
from squad.errors import HistoryUnavailable
from squad.fsutil import atomic_write
from squad.history import lock
from squad.history.author import SQUAD, Author
from squad.history.engine import blob_at, git
from squad.history.ignore import GITIGNORE, GITIGNORE_NAME
from squad.history.message import Kind, compose

if TYPE_CHECKING:
    import pygit2

__all__ = [
    "BRANCH",
    "RUN_REFS",
    "CommitResult",
    "HistoryState",
    "Repository",
    "StageFilter",
]

BRANCH = "main"
REF = f"refs/heads/{BRANCH}"
RUN_REFS = "refs/runs/"
"""``refs/runs/<run-id>``: each run's latest commit."""
RUN_REF_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
OWNER_KEY = "squad.workspace"
INTENT = "squad/intent.json"
_GIT_LOCKS = ("index.lock", "HEAD.lock", f"{REF}.lock", "config.lock", "packed-refs.lock")

StateName = Literal["ok", "absent", "off", "foreign", "broken"]


@dataclass(frozen=True)
class HistoryState:
    """Whether a workspace's history can be written, and if not, why."""

    state: StateName
    detail: str | None = None
    head: str | None = None

    @property
    def paused(self) -> bool:
        """History exists (or should) but cannot be written: corrupt or not squad's."""
        return self.state in ("foreign", "broken")


@dataclass(frozen=True)
class CommitResult:
    sha: str
    left_out: tuple[str, ...] = ()
    """Paths kept out of the commit (a credential in them, or over the size cap), and why."""


StageFilter = Callable[[str, bytes | None, bytes], str | None]
"""``(path, committed bytes or None, new bytes) -> why it stays out, or None``."""


class Repository:
    """The history of the workspace at ``workspace`` (squad ``squad``)."""

    def __init__(
        self,
        workspace: Path,
        squad: str,
        *,
        clock: Clock = utc_now,
        committer: str = "squad",
        stage_filter: StageFilter | None = None,
    ) -> None:
        self.workspace = workspace
        self.squad = squad
        self._clock = clock
        self._committer = committer
        self._filter = stage_filter

    @property
    def git_dir(self) -> Path:
        return self.workspace / ".git"

    # -- state ---------------------------------------------------------------------------

    def state(self) -> HistoryState:
        """What the history is like now (reads only; no lock)."""
        if not os.path.lexists(self.git_dir):
            return HistoryState("absent")
        try:
            repo = self._open()
        except HistoryUnavailable as exc:
            return HistoryState(exc.state, str(exc))  # type: ignore[arg-type]
        if repo.head_is_unborn:
            return HistoryState("ok", "no commit yet")
        return HistoryState("ok", head=str(repo.head.target))

    def open(self) -> pygit2.Repository:
        """The repository for reading (HistoryUnavailable when there is none to read)."""
        if not os.path.lexists(self.git_dir):
            raise HistoryUnavailable(
                f"{self.workspace} has no history yet (it starts at the next run)", state="absent"
            )
        return self._open()

    def _open(self) -> pygit2.Repository:
        pygit2 = git()
        from pygit2.enums import RepositoryOpenFlag

        where = self.git_dir
        if where.is_symlink() or not where.is_dir():
            raise HistoryUnavailable(
                f"{where} is not a folder squad made (a link or a file); history is paused "
                "for this workspace: move it aside to let squad start its own",
                state="foreign",
            )
        try:
            repo = pygit2.Repository(str(self.workspace), RepositoryOpenFlag.NO_SEARCH)
        except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
            raise HistoryUnavailable(
                f"{where} cannot be opened ({_reason(exc)}); history is paused for this "
                "workspace: `squad ws health` says more, move it aside to start afresh"
            ) from None
        try:
            owner = repo.config[OWNER_KEY]
        except KeyError:
            owner = None
        except (pygit2.GitError, ValueError) as exc:
            raise HistoryUnavailable(f"{where}/config cannot be read ({_reason(exc)})") from None
        if owner != self.squad:
            whose = f"squad {owner!r}'s" if owner else "not made by squad"
            raise HistoryUnavailable(
                f"{where} is {whose}; squad does not write to a repository it did not make "
                f"for squad {self.squad!r}, so history is paused for this workspace (move "
                ".git aside to let squad start its own)",
                state="foreign",
            )
        if not repo.head_is_unborn:
            try:
                commit = repo[repo.head.target]
                commit.tree  # noqa: B018 - reading it is the check
            except (pygit2.GitError, KeyError, ValueError) as exc:
                raise HistoryUnavailable(
                    f"{where} is damaged: its HEAD cannot be read ({_reason(exc)}); history is "
                    "paused for this workspace (`git fsck` in it says more; move it aside to "
                    "start afresh)"
                ) from None
        return repo  # type: ignore[no-any-return]

    # -- writing -------------------------------------------------------------------------

    def ensure(self) -> pygit2.Repository:
        """The repository, made (with a first commit, ``history starts``) when there is none,
        and an interrupted commit completed; call it holding the lock."""
        assert lock.holds(self.workspace), "ensure() needs the history lock"
        if not os.path.lexists(self.git_dir):
            self._init()
        repo = self._open()
        self._recover(repo)
        self._put_gitignore()
        if repo.head_is_unborn:
            self.commit_all(
                SQUAD,
                compose(
                    f"history starts: {self.squad}",
                    ["The workspace as it was when squad began keeping its history."],
                    [("Squad-Kind", Kind.START.value)],
                ),
                repo=repo,
            )
        return repo

    def _init(self) -> None:
        """Make ``.git`` in a folder beside it, then rename it into place: a kill leaves
        either no repository or a whole one that says it is squad's."""
        pygit2 = git()
        staging = self.workspace / f".squad-git-init-{secrets.token_hex(4)}"
        try:
            repo = pygit2.init_repository(str(staging), initial_head=BRANCH)
            config = repo.config
            config[OWNER_KEY] = self.squad
            config["core.autocrlf"] = "false"
            config["core.logAllRefUpdates"] = "false"
            config["gc.auto"] = "0"
            del repo
            (staging / ".git").rename(self.git_dir)
        except (pygit2.GitError, OSError) as exc:
            raise HistoryUnavailable(
                f"cannot start the history of {self.workspace}: {_reason(exc)}"
            ) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _put_gitignore(self) -> None:
        path = self.workspace / GITIGNORE_NAME
        try:
            current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        except OSError:
            current = None
        if current != GITIGNORE.encode():
            with contextlib.suppress(FileNotFoundError):
                if path.is_symlink() or path.is_dir():
                    return  # not squad's to replace; what it ignores is then the person's
            atomic_write(path, GITIGNORE.encode(), durable=False)

    def commit_all(
        self,
        author: Author,
        message: str | Callable[[tuple[str, ...]], str],
        *,
        repo: pygit2.Repository | None = None,
        paths: Iterable[str] | None = None,
    ) -> CommitResult:
        """Commit every change of the working tree (or only ``paths``), always (a commit with
        no change still records what happened); call it holding the lock. ``message`` may be
        a function of the paths left out (see :data:`StageFilter`)."""
        assert lock.holds(self.workspace), "commit_all() needs the history lock"
        repo = repo or self.ensure()
        wanted = None if paths is None else set(paths)
        draft = message if isinstance(message, str) else message(())
        self._write_intent(
            {
                "mode": "all",
                "author": author.name,
                "message": draft,
                "paths": sorted(wanted) if wanted is not None else None,
            }
        )
        index = repo.index
        left_out = tuple(self._stage(repo, index, wanted))
        text = message if isinstance(message, str) else message(left_out)
        tree = index.write_tree()
        sha = self._commit(repo, author, text, tree)
        index.write()
        self._drop_intent()
        return CommitResult(sha, left_out)

    def commit_blobs(
        self,
        author: Author,
        message: str,
        blobs: dict[str, bytes | None],
        *,
        repo: pygit2.Repository | None = None,
    ) -> CommitResult:
        """Commit exactly ``blobs`` (path -> new bytes, None removes it) on top of HEAD, the
        rest of the tree as committed; the index follows for paths whose working file is
        those bytes. Holding the lock. Only the trees on the changed paths are rewritten."""
        assert lock.holds(self.workspace), "commit_blobs() needs the history lock"
        pygit2 = git()
        from pygit2.enums import FileMode

        repo = repo or self.ensure()
        self._write_intent(
            {"mode": "paths", "author": author.name, "message": message, "paths": sorted(blobs)}
        )
        head = None if repo.head_is_unborn else repo[repo.head.target]
        index = repo.index
        changes: dict[tuple[str, ...], Any] = {}
        for path, data in blobs.items():
            if data is None:
                changes[tuple(path.split("/"))] = None
                with contextlib.suppress(KeyError, OSError, pygit2.GitError):
                    index.remove(path)
                continue
            oid = repo.create_blob(data)
            changes[tuple(path.split("/"))] = oid
            read = self._read(path)
            if read is not None and read[0] == data:
                index.add(path)  # its stat too: the file shows as unchanged
                if self._unchanged(path, read[1]):
                    continue
            # The file differs, or was written again as it was staged: the entry is the
            # commit's, and the file shows as changed.
            index.add(pygit2.IndexEntry(path, oid, FileMode.BLOB))
        tree = _tree_with(repo, head.tree if head is not None else None, changes)
        sha = self._commit(repo, author, message, tree)
        index.write()
        self._drop_intent()
        return CommitResult(sha)

    def mark_run(self, run_id: str, sha: str, repo: pygit2.Repository | None = None) -> None:
        """Point ``refs/runs/<run-id>`` at the run's latest commit: runs are found without
        walking the history (and by plain git: ``git diff runs/<a> runs/<b>``)."""
        if RUN_REF_NAME.match(run_id):
            repo = repo or self.open()
            repo.references.create(f"{RUN_REFS}{run_id}", git().Oid(hex=sha), force=True)

    def dirty(self, repo: pygit2.Repository) -> list[str]:
        """Paths whose working file differs from the index (new, changed, removed)."""
        from pygit2.enums import FileStatus

        wt = (
            FileStatus.WT_NEW
            | FileStatus.WT_MODIFIED
            | FileStatus.WT_DELETED
            | FileStatus.WT_TYPECHANGE
            | FileStatus.WT_RENAMED
            | FileStatus.INDEX_NEW
            | FileStatus.INDEX_MODIFIED
            | FileStatus.INDEX_DELETED
        )
        return sorted(path for path, flags in repo.status().items() if flags & wt)

    def _stage(self, repo: pygit2.Repository, index: Any, wanted: set[str] | None) -> list[str]:
        from pygit2.enums import FileStatus

        left_out = []
        head_tree = None if repo.head_is_unborn else repo[repo.head.target].tree
        for path, flags in sorted(repo.status().items()):
            if wanted is not None and path not in wanted:
                continue
            if flags & (FileStatus.WT_DELETED | FileStatus.INDEX_DELETED) and not os.path.lexists(
                self.workspace / path
            ):
                with contextlib.suppress(KeyError, OSError):
                    index.remove(path)
                continue
            read = self._read(path)
            if read is None:
                continue  # gone since the status, or not a regular file
            data, stamp = read
            why = None
            if self._filter is not None:
                before = blob_at(repo, head_tree, path)
                why = self._filter(path, before, data)
            if why is not None:
                left_out.append(f"{path} ({why})")
                _as_committed(index, head_tree, path)  # whatever else the index held for it
                continue
            index.add(path)
            if self._filter is not None and not self._unchanged(path, stamp):
                # Written again since it was checked: the commit takes what was checked, and
                # the file shows as changed, so the next commit checks what it holds now.
                index.add(git().IndexEntry(path, repo.create_blob(data), index[path].mode))
        return left_out

    def _read(self, path: str) -> tuple[bytes, tuple[int, ...]] | None:
        """A regular file's bytes, with its stamp from before they were read (None when it
        is gone or not a regular file)."""
        full = self.workspace / path
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode):
                return None
            return full.read_bytes(), _stamp(st)
        except OSError:
            return None

    def _unchanged(self, path: str, stamp: tuple[int, ...]) -> bool:
        """Whether ``path`` still has ``stamp``: not written since it was read (libgit2
        staged the same bytes, filters applied as always)."""
        try:
            return _stamp(os.lstat(self.workspace / path)) == stamp
        except OSError:
            return False

    def _commit(self, repo: pygit2.Repository, author: Author, message: str, tree: Any) -> str:
        pygit2 = git()
        now = self._clock()
        parents = [] if repo.head_is_unborn else [repo.head.target]
        oid = repo.create_commit(
            None,
            _signature(pygit2, author, now),
            _signature(pygit2, Author(self._committer), now),
            message,
            tree,
            parents,
        )
        repo.references.create(REF, oid, force=True)
        return str(oid)

    # -- interrupted commits -------------------------------------------------------------

    def _intent_path(self) -> Path:
        return self.git_dir / INTENT

    def _write_intent(self, intent: dict[str, Any]) -> None:
        """What the commit about to be made is (a torn intent is read as none: the next
        holder then commits what it finds as a person's edits)."""
        path = self._intent_path()
        intent = {**intent, "parent": self._head(), "time": self._clock().isoformat()}
        data = json.dumps(intent).encode()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except FileNotFoundError:
            path.parent.mkdir(exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _head(self) -> str | None:
        try:
            return (self.git_dir / REF).read_text(encoding="ascii").strip() or None
        except (OSError, UnicodeDecodeError):
            return None

    def _drop_intent(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._intent_path().unlink()

    def _recover(self, repo: pygit2.Repository) -> None:
        """Complete a commit a killed process left (see the module docstring)."""
        path = self._intent_path()
        try:
            intent = json.loads(path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            intent = {}
        for name in _GIT_LOCKS:  # the killed committer's: the history lock was its alone
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                (self.git_dir / name).unlink()
        parent = intent.get("parent")
        head = None if repo.head_is_unborn else str(repo.head.target)
        message = intent.get("message")
        if head is not None and head != parent:
            # The ref moved: the commit was made; only the index may lag behind it.
            index = repo.index
            index.read_tree(repo[repo.head.target].tree)
            index.write()  # no stat data: the next status re-reads each file once
            self._drop_intent()
            return
        self._drop_intent()
        if not isinstance(message, str) or (head is None and intent.get("mode") != "all"):
            return
        paths = intent.get("paths")
        self.commit_all(
            Author(str(intent.get("author") or SQUAD.name)),
            _completed(message),
            repo=repo,
            paths=paths if isinstance(paths, list) else None,
        )


def _completed(message: str) -> str:
    subject, _, rest = message.partition("\n")
    return f"{subject} (completed after an interruption)\n{rest}"


def _signature(pygit2: Any, author: Author, when: datetime) -> Any:
    offset = when.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return pygit2.Signature(author.name, author.email, int(when.timestamp()), minutes)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _stamp(st: os.stat_result) -> tuple[int, ...]:
    """What changes when a file is written: its inode (a rename over it), size and times."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _as_committed(index: Any, head_tree: Any, path: str) -> None:
    """``path``'s index entry as ``head_tree`` holds it (none when it holds none): a file
    kept out of a commit adds nothing to it, whatever was staged for it before."""
    try:
        entry = head_tree[path] if head_tree is not None else None
    except KeyError:
        entry = None
    staged = index[path] if path in index else None  # noqa: SIM401  (no Index.get)
    if entry is None:
        if staged is not None:
            index.remove(path)
    elif staged is None or (staged.id, staged.mode) != (entry.id, entry.filemode):
        index.add(git().IndexEntry(path, entry.id, entry.filemode))  # else left, stat and all


def _tree_with(repo: Any, tree: Any, changes: dict[tuple[str, ...], Any]) -> Any:
    """The id of ``tree`` with ``changes`` (path parts -> blob id, None to remove) made: a
    new tree for each folder on a changed path, the others shared (an empty folder goes)."""
    from pygit2.enums import FileMode

    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    below: dict[str, dict[tuple[str, ...], Any]] = {}
    for parts, oid in changes.items():
        if len(parts) == 1:
            if oid is None:
                if builder.get(parts[0]) is not None:
                    builder.remove(parts[0])
            else:
                builder.insert(parts[0], oid, FileMode.BLOB)
        else:
            below.setdefault(parts[0], {})[parts[1:]] = oid
    for name, sub in below.items():
        entry = builder.get(name)
        subtree = repo[entry.id] if entry is not None and entry.type_str == "tree" else None
        new = _tree_with(repo, subtree, sub)
        if len(repo[new]) == 0:
            if entry is not None:
                builder.remove(name)
        else:
            builder.insert(name, new, FileMode.TREE)
    return builder.write()
