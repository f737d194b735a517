"""Reading a workspace's history: its runs, their diffs, and one agent's memory changes.

Everything here reads the repository only (no lock: git's objects never change once written,
and a ref moves atomically). History is linear (squad never merges), so "the previous run"
is the nearest earlier commit of another run on the first-parent line from ``HEAD``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from squad.errors import NotFound, UsageError
from squad.history.describe import line_changes
from squad.history.engine import blob_bytes
from squad.history.message import FactChange, Kind, Trailers, parse_trailers

if TYPE_CHECKING:
    import pygit2

__all__ = [
    "CommitInfo",
    "FileChange",
    "MemoryEntry",
    "RunEntry",
    "commits",
    "diff_both",
    "diff_patch",
    "diff_stat",
    "find_run",
    "memory_entries",
    "previous_run",
    "resolve",
    "run_at",
    "run_entries",
    "run_ids",
]

SHORT = 10
"""Hex digits of a commit id shown and accepted as an id (git's ``--short`` is 7; 10 keeps
ids unique in a workspace of millions of commits)."""


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parent: str | None
    author: str
    time: datetime
    subject: str
    message: str
    trailers: Trailers

    @property
    def short(self) -> str:
        return self.sha[:SHORT]

    @property
    def kind(self) -> str | None:
        return self.trailers.kind


def _info(commit: Any) -> CommitInfo:
    offset = timezone(timedelta(minutes=commit.commit_time_offset))
    message = commit.message
    return CommitInfo(
        sha=str(commit.id),
        parent=str(commit.parent_ids[0]) if commit.parent_ids else None,
        author=commit.author.name,
        time=datetime.fromtimestamp(commit.commit_time, offset).astimezone(UTC),
        subject=message.split("\n", 1)[0],
        message=message,
        trailers=parse_trailers(message),
    )


def commits(repo: pygit2.Repository, *, start: str | None = None) -> Iterator[Any]:
    """pygit2 commits on the first-parent line from ``start`` (default HEAD), newest first."""
    if start is None:
        if repo.head_is_unborn:
            return
        start = str(repo.head.target)
    commit: Any = repo[start]
    while True:
        yield commit
        if not commit.parent_ids:
            return
        commit = repo[commit.parent_ids[0]]


def resolve(repo: pygit2.Repository, ref: str) -> str:
    """The full id of a commit named by (a prefix of) its id; NotFound when there is none."""
    try:
        obj = repo.revparse_single(ref)
        commit = obj.peel(_commit_type())
    except (KeyError, ValueError) as exc:
        raise NotFound(f"no commit {ref!r} in this workspace's history ({exc})") from None
    return str(commit.id)


def _commit_type() -> Any:
    from squad.history.engine import git

    return git().Commit


# -- runs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunEntry:
    """A run as its (latest) commit records it."""

    run_id: str
    squad: str
    status: str
    trigger: str
    started_at: datetime | None
    ended_at: datetime | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    commit: str
    committed_at: datetime
    tasks: tuple[tuple[str, str, str], ...] = field(default=())
    """(task, agent, status)."""
    outputs: str = "tasks"

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, (self.ended_at - self.started_at).total_seconds())


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _run_entry(info: CommitInfo) -> RunEntry | None:
    t = info.trailers
    run_id = t.get("Squad-Run")
    if t.kind != Kind.RUN.value or not run_id:
        return None
    try:
        cost = float(t.get("Squad-Cost-USD") or 0)
    except ValueError:
        cost = 0.0
    tasks = []
    for value in t.all("Squad-Task"):
        parts = value.split(" ")
        if len(parts) == 3:
            tasks.append((parts[0], parts[1], parts[2]))
    return RunEntry(
        run_id=run_id,
        squad=t.get("Squad-Squad") or "",
        status=t.get("Squad-Status") or "unknown",
        trigger=t.get("Squad-Trigger") or "unknown",
        started_at=_time(t.get("Squad-Started")),
        ended_at=_time(t.get("Squad-Ended")),
        tokens_in=_int(t.get("Squad-Tokens-In")),
        tokens_out=_int(t.get("Squad-Tokens-Out")),
        cost_usd=cost,
        commit=info.sha,
        committed_at=info.time,
        tasks=tuple(tasks),
        outputs=t.get("Squad-Outputs") or "tasks",
    )


def run_entries(repo: pygit2.Repository, *, limit: int | None = None) -> list[RunEntry]:
    """The runs of the history, newest first, each once (as its latest commit says)."""
    seen: set[str] = set()
    found: list[RunEntry] = []
    for commit in commits(repo):
        if limit is not None and len(found) >= limit:
            break
        if b"Squad-Kind: run" not in commit.raw_message:
            continue  # most commits are not runs' ones: skip parsing them
        entry = _run_entry(_info(commit))
        if entry is None or entry.run_id in seen:
            continue
        seen.add(entry.run_id)
        found.append(entry)
    return found


def run_ids(repo: pygit2.Repository, prefix: str = "") -> list[str]:
    """Ids of the runs with a ``refs/runs/`` ref starting with ``prefix``."""
    from squad.history.repository import RUN_REFS

    start = RUN_REFS + prefix
    return [name.removeprefix(RUN_REFS) for name in repo.references if name.startswith(start)]


def find_run(repo: pygit2.Repository, run_id: str) -> RunEntry | None:
    """The latest commit of run ``run_id`` (its ``refs/runs/`` ref, else a walk)."""
    from squad.history.repository import RUN_REFS

    ref = repo.references.get(RUN_REFS + run_id)
    if ref is not None:
        found = run_at(repo, str(ref.target), run_id)
        if found is not None:
            return found
    needle = f"Squad-Run: {run_id}".encode()
    for commit in commits(repo):
        if needle in commit.raw_message:
            entry = _run_entry(_info(commit))
            if entry is not None and entry.run_id == run_id:
                return entry
    return None


def run_at(repo: pygit2.Repository, sha: str, run_id: str) -> RunEntry | None:
    """Run ``run_id`` as its commit ``sha`` records it (None if that commit is not its)."""
    try:
        commit = repo[sha]
    except (KeyError, ValueError):
        return None
    entry = _run_entry(_info(commit))
    return entry if entry is not None and entry.run_id == run_id else None


def previous_run(repo: pygit2.Repository, entry: RunEntry) -> RunEntry | None:
    """The run committed before ``entry``'s commit (another run), if any."""
    walk = commits(repo, start=entry.commit)
    next(walk, None)
    for commit in walk:
        if b"Squad-Kind: run" not in commit.raw_message:
            continue
        other = _run_entry(_info(commit))
        if other is not None and other.run_id != entry.run_id:
            return other
    return None


# -- diffs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str
    """``added``, ``modified``, ``deleted``, ``renamed``, ``typechange``."""
    added: int
    removed: int
    binary: bool = False


def matches(path: str, specs: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``specs``: the path itself, a folder above it, or a glob."""
    if not specs:
        return True
    for spec in specs:
        spec = spec.strip("/")
        if path == spec or path.startswith(spec + "/") or fnmatch.fnmatchcase(path, spec):
            return True
    return False


def _diff(repo: pygit2.Repository, old: str | None, new: str, context: int) -> Any:
    new_tree = repo[new].peel(_commit_type()).tree
    if old is None:
        return new_tree.diff_to_tree(context_lines=context, swap=True)
    old_tree = repo[old].peel(_commit_type()).tree
    return repo.diff(old_tree, new_tree, context_lines=context)


_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "typechange"}


def diff_stat(
    repo: pygit2.Repository, old: str | None, new: str, paths: Sequence[str] = ()
) -> list[FileChange]:
    """What changed from commit ``old`` (None: nothing) to ``new``, file by file."""
    out = []
    for patch in _diff(repo, old, new, 0):
        delta = patch.delta
        path = delta.new_file.path if delta.status_char() != "D" else delta.old_file.path
        if not matches(path, paths):
            continue
        _, added, removed = patch.line_stats
        out.append(
            FileChange(
                path, _STATUS.get(delta.status_char(), "modified"), added, removed, delta.is_binary
            )
        )
    return out


def diff_both(
    repo: pygit2.Repository,
    old: str | None,
    new: str,
    paths: Sequence[str] = (),
    *,
    patch: bool = True,
    context: int = 3,
) -> tuple[list[FileChange], str | None]:
    """:func:`diff_stat` and (with ``patch``) :func:`diff_patch` from one diff."""
    changes: list[FileChange] = []
    parts: list[str] = []
    for one in _diff(repo, old, new, context if patch else 0):
        delta = one.delta
        path = delta.new_file.path if delta.status_char() != "D" else delta.old_file.path
        if not matches(path, paths):
            continue
        _, added, removed = one.line_stats
        status = _STATUS.get(delta.status_char(), "modified")
        changes.append(FileChange(path, status, added, removed, delta.is_binary))
        if patch:
            parts.append(one.text or "")
    return changes, "".join(parts) if patch else None


def diff_patch(
    repo: pygit2.Repository,
    old: str | None,
    new: str,
    paths: Sequence[str] = (),
    *,
    context: int = 3,
) -> str:
    """The unified diff from ``old`` to ``new`` (git's format), limited to ``paths``."""
    parts = []
    for patch in _diff(repo, old, new, context):
        delta = patch.delta
        path = delta.new_file.path if delta.status_char() != "D" else delta.old_file.path
        if matches(path, paths):
            parts.append(patch.text or "")
    return "".join(parts)


# -- memory --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryEntry:
    """One change to an agent's memory: memory.md lines and Layer A facts, with its commit."""

    id: str
    commit: str
    time: datetime
    who: str
    kind: str
    subject: str
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    facts: tuple[FactChange, ...] = ()
    run_id: str | None = None
    pass_id: str | None = None
    reverts: str | None = None


def memory_path(agent: str) -> str:
    return f"agents/{agent}/memory.md"


def _entry_of(repo: pygit2.Repository, commit: Any, agent: str) -> MemoryEntry | None:
    path = memory_path(agent)
    raw = commit.raw_message
    facts: tuple[FactChange, ...] = ()
    info: CommitInfo | None = None
    if b"Squad-Fact: " in raw:
        info = _info(commit)
        facts = tuple(f for f in info.trailers.facts() if f.agent == agent)
    new = _entry_id(commit.tree, path)
    old = _entry_id(repo[commit.parent_ids[0]].tree, path) if commit.parent_ids else None
    if new == old and not facts:
        return None
    info = info or _info(commit)
    removed: list[str] = []
    added: list[str] = []
    if new != old:
        removed, added = line_changes(blob_bytes(repo, old), blob_bytes(repo, new))
    who = info.author
    if info.kind == Kind.RUN.value:
        who = f"agent:{agent}"
    return MemoryEntry(
        id=info.short,
        commit=info.sha,
        time=info.time,
        who=who,
        kind=info.kind or "unknown",
        subject=info.subject,
        removed=tuple(removed),
        added=tuple(added),
        facts=facts,
        run_id=info.trailers.get("Squad-Run"),
        pass_id=info.trailers.get("Squad-Pass"),
        reverts=info.trailers.get("Squad-Reverts"),
    )


def _entry_id(tree: Any, path: str) -> Any:
    try:
        return tree[path].id
    except KeyError:
        return None


def memory_entries(
    repo: pygit2.Repository, agent: str, *, limit: int | None = None
) -> list[MemoryEntry]:
    """Every change to ``agent``'s memory, newest first (at most ``limit``)."""
    found: list[MemoryEntry] = []
    for commit in commits(repo):
        if limit is not None and len(found) >= limit:
            break
        entry = _entry_of(repo, commit, agent)
        if entry is not None:
            found.append(entry)
    return found


def memory_entry(repo: pygit2.Repository, agent: str, ref: str) -> MemoryEntry:
    """The change ``ref`` (an id from :func:`memory_entries`) to ``agent``'s memory."""
    ref = ref.strip()
    if len(ref) < 4 or any(c not in "0123456789abcdef" for c in ref.lower()):
        raise UsageError(
            f"{ref!r} is not a memory change id: ids are the hex ids `squad memory history` lists"
        )
    sha = resolve(repo, ref.lower())
    entry = _entry_of(repo, repo[sha], agent)
    if entry is None:
        raise NotFound(f"change {ref!r} did not change {agent!r}'s memory")
    return entry
