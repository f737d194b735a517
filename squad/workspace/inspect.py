"""Read-only views of a workspace folder for ``squad ws tree|show|health``.

Everything here reads the disk and returns frozen dataclasses; rendering (rich or JSON through
``to_dict``) is the CLI's job. Workspaces are live while agents run, so files may appear and
vanish mid-walk: an entry that disappears is simply not reported. Symbolic links are listed
but never followed, so a link planted in a workspace cannot make squad read outside it.
Full-text search lives in :mod:`squad.workspace.search` and shares the walker below.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal, TypedDict

from squad import views
from squad.errors import NotFound, UsageError, WorkspaceError
from squad.fsutil import read_up_to
from squad.paths import resolve_inside
from squad.text.natural import natural_key
from squad.workspace.layout import HIDDEN_AT_ROOT

__all__ = [
    "FolderStats",
    "Health",
    "MemoryFileHealth",
    "Preview",
    "PreviewDict",
    "TreeEntry",
    "TreeEntryDict",
    "health",
    "preview",
    "tree",
]

PreviewKind = Literal["markdown", "json", "jsonl", "yaml", "text"]

_BINARY_SNIFF_BYTES = 8192
_KINDS: dict[str, PreviewKind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
}


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _mtime(st: os.stat_result) -> datetime:
    return datetime.fromtimestamp(st.st_mtime, tz=UTC)


class TreeEntryDict(TypedDict):
    """:meth:`TreeEntry.to_dict`: an entry of ``squad ws tree --json``."""

    path: str
    name: str
    depth: int
    is_dir: bool
    size: int
    mtime: str
    is_link: bool
    link_target: str | None


class PreviewDict(TypedDict):
    """:meth:`Preview.to_dict`: what ``squad ws show --json`` prints."""

    path: str
    kind: PreviewKind
    text: str
    size: int
    truncated: bool
    language: str


@dataclass(frozen=True)
class TreeEntry:
    """One file, folder or link; folders carry the size and newest mtime of all they hold."""

    path: str
    name: str
    depth: int
    is_dir: bool
    size: int
    mtime: datetime
    is_link: bool
    link_target: str | None

    def to_dict(self) -> TreeEntryDict:
        return {
            "path": self.path,
            "name": self.name,
            "depth": self.depth,
            "is_dir": self.is_dir,
            "size": self.size,
            "mtime": _iso(self.mtime),
            "is_link": self.is_link,
            "link_target": self.link_target,
        }


@dataclass(frozen=True)
class Preview:
    """The text of one file, ready to show; ``size`` is the whole file's, not what was read."""

    path: str
    kind: PreviewKind
    text: str
    size: int
    truncated: bool
    language: str

    def to_dict(self) -> PreviewDict:
        return {
            "path": self.path,
            "kind": self.kind,
            "text": self.text,
            "size": self.size,
            "truncated": self.truncated,
            "language": self.language,
        }


@dataclass(frozen=True)
class FolderStats:
    """Files and bytes below one top-level folder."""

    files: int
    bytes: int


@dataclass(frozen=True)
class MemoryFileHealth:
    """How full one agent's ``memory.md`` is against the squad's cap."""

    agent: str
    path: str
    size: int
    cap: int
    percent: float
    over_cap: bool


@dataclass(frozen=True)
class Health:
    """Figures that tell whether a workspace is growing out of hand or has gone quiet."""

    path: str
    total_bytes: int
    file_count: int
    folder_count: int
    links: int
    folders: dict[str, FolderStats]
    largest_files: list[tuple[str, int]]
    memory_files: list[MemoryFileHealth]
    last_activity: datetime | None
    last_activity_age_s: float | None

    def view(self) -> views.Health:
        """As ``squad ws health --json``, the API and the squad page show it."""
        return views.Health(
            path=self.path,
            total_bytes=self.total_bytes,
            file_count=self.file_count,
            folder_count=self.folder_count,
            links=self.links,
            folders={
                name: views.FolderStats(files=stats.files, bytes=stats.bytes)
                for name, stats in self.folders.items()
            },
            largest_files=[views.LargeFile(path=p, size=s) for p, s in self.largest_files],
            memory_files=[views.MemoryFileHealth(**asdict(m)) for m in self.memory_files],
            last_activity=None if self.last_activity is None else _iso(self.last_activity),
            last_activity_age_s=self.last_activity_age_s,
        )


# -- walking -------------------------------------------------------------------------------


NodeKind = Literal["dir", "file", "link", "other"]


@dataclass(frozen=True)
class _Node:
    """An entry met by the walk, with its own (``lstat``) metadata."""

    rel: str
    path: Path
    st: os.stat_result
    kind: NodeKind

    @property
    def depth(self) -> int:
        return self.rel.count("/") + 1


def _check_root(root: Path) -> Path:
    """The root the user chose may itself be a link; only what lies below it is distrusted."""
    if not root.is_dir():
        raise WorkspaceError(f"workspace {str(root)!r} is not an existing folder")
    return root


def _kind(mode: int) -> NodeKind:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _children(folder: Path, rel: str) -> list[_Node]:
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(f"cannot read folder {str(folder)!r}: {exc.strerror}") from exc
    nodes = []
    for entry in entries:
        if not rel and entry.name in HIDDEN_AT_ROOT:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        nodes.append(_Node(child_rel, Path(entry.path), st, _kind(st.st_mode)))
    nodes.sort(key=lambda n: (n.kind != "dir", natural_key(n.path.name)))
    return nodes


def _walk(root: Path) -> Iterator[_Node]:
    """Every entry below ``root``, depth-first, folders before files; links are not entered.

    Iterative, so a deeply nested workspace cannot exhaust the recursion limit.
    """
    stack = [iter(_children(root, ""))]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        yield node
        if node.kind == "dir":
            stack.append(iter(_children(node.path, node.rel)))


# -- reading -------------------------------------------------------------------------------

ReadStatus = Literal["text", "binary", "missing", "folder", "special", "unreadable"]


@dataclass(frozen=True)
class _Read:
    status: ReadStatus
    text: str = ""
    size: int = 0
    truncated: bool = False


def _read_text(path: Path, limit: int) -> _Read:
    """Up to ``limit`` bytes of ``path`` as UTF-8, or why not.

    ``O_NOFOLLOW`` refuses a last component swapped for a link after it was checked, and
    ``O_NONBLOCK`` keeps a FIFO from hanging the open; the type is checked on the open file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return _Read("missing")
    except OSError:
        return _Read("unreadable")
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return _Read("folder", size=st.st_size)
        if not stat.S_ISREG(st.st_mode):
            return _Read("special", size=st.st_size)
        data = read_up_to(fd, limit + 1)
    except OSError:
        return _Read("unreadable")
    finally:
        os.close(fd)
    size = max(st.st_size, len(data))
    truncated = len(data) > limit
    data = data[:limit]
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return _Read("binary", size=size)
    try:
        # An incremental decoder keeps a multi-byte character cut by the limit out of the text.
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=not truncated)
    except UnicodeDecodeError:
        return _Read("binary", size=size)
    return _Read("text", text, size, truncated)


# -- tree ----------------------------------------------------------------------------------


def tree(root: Path, *, depth: int | None = None) -> list[TreeEntry]:
    """Every entry below ``root`` down to ``depth`` levels; folder sizes count all levels."""
    root = _check_root(root)
    if depth is not None and depth < 1:
        raise UsageError(f"depth must be 1 or more (or unlimited), got {depth!r}")
    nodes = list(_walk(root))
    sizes = {n.rel: 0 for n in nodes if n.kind == "dir"}
    newest = {n.rel: _mtime(n.st) for n in nodes if n.kind == "dir"}
    for node in nodes:
        size = node.st.st_size if node.kind in ("file", "other") else 0
        moment = _mtime(node.st)
        for parent in PurePosixPath(node.rel).parents:
            key = parent.as_posix()
            if key == ".":
                break
            sizes[key] += size
            newest[key] = max(newest[key], moment)
    entries = []
    for node in nodes:
        if depth is not None and node.depth > depth:
            continue
        is_dir = node.kind == "dir"
        entries.append(
            TreeEntry(
                path=node.rel,
                name=node.path.name,
                depth=node.depth,
                is_dir=is_dir,
                size=sizes[node.rel] if is_dir else _own_size(node),
                mtime=newest[node.rel] if is_dir else _mtime(node.st),
                is_link=node.kind == "link",
                link_target=_link_target(node) if node.kind == "link" else None,
            )
        )
    return entries


def _own_size(node: _Node) -> int:
    return 0 if node.kind == "link" else node.st.st_size


def _link_target(node: _Node) -> str | None:
    try:
        # os.readlink keeps the target exactly as written; Path.readlink normalises it.
        return os.readlink(node.path)  # noqa: PTH115
    except OSError:
        return None


# -- preview -------------------------------------------------------------------------------


def preview(root: Path, relative: str, *, max_bytes: int = 1_000_000) -> Preview:
    """The text of one workspace file, JSON pretty-printed, refusing anything not text."""
    root = _check_root(root)
    if max_bytes < 1:
        raise UsageError(f"max_bytes must be 1 or more, got {max_bytes!r}")
    target = resolve_inside(root, relative)
    shown = PurePosixPath(relative.replace("\\", "/")).as_posix()
    read = _read_text(target, max_bytes)
    if read.status == "missing":
        raise NotFound(f"no file {shown!r} in the workspace; see `squad ws tree`")
    if read.status == "folder":
        raise WorkspaceError(f"{shown!r} is a folder; use `squad ws tree`")
    if read.status == "special":
        raise WorkspaceError(f"{shown!r} is not a regular file (a pipe, socket or device)")
    if read.status == "unreadable":
        raise WorkspaceError(f"{shown!r} cannot be read; check its permissions")
    if read.status == "binary":
        raise WorkspaceError(
            f"{shown!r} is a binary file ({read.size} bytes); squad shows only text, "
            "so open it with another tool (a hex viewer or the program that made it)"
        )
    kind = _KINDS.get(PurePosixPath(shown).suffix.lower(), "text")
    text = read.text
    if kind == "json" and not read.truncated:
        text = _pretty_json(text)
    return Preview(shown, kind, text, read.size, read.truncated, _language(shown, kind))


def _pretty_json(text: str) -> str:
    """Indented JSON, or the text unchanged: a half-written file is still worth reading."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return text


def _language(name: str, kind: PreviewKind) -> str:
    """A Pygments lexer alias for highlighting, guessed from the suffix alone."""
    if kind != "text":
        return "json" if kind == "jsonl" else kind
    from rich.syntax import Syntax  # imported here: pygments is slow to load

    guess = Syntax.guess_lexer(name)
    return "text" if guess == "default" else guess


# -- health --------------------------------------------------------------------------------


def health(
    root: Path, *, memory_cap_bytes: int, largest: int = 5, now: datetime | None = None
) -> Health:
    """Size, spread, memory-file fill and last activity of a workspace."""
    root = _check_root(root)
    if memory_cap_bytes < 1:
        raise UsageError(f"memory_cap_bytes must be 1 or more, got {memory_cap_bytes!r}")
    if largest < 0:
        raise UsageError(f"largest must be 0 or more, got {largest!r}")
    if now is None:
        now = datetime.now(UTC)
    elif now.tzinfo is None:
        raise UsageError(f"now must be timezone-aware, got {now!r}")
    counts: dict[str, list[int]] = {".": [0, 0]}
    files: list[tuple[str, int]] = []
    memory: list[MemoryFileHealth] = []
    folder_count = links = 0
    last: datetime | None = None
    for node in _walk(root):
        top = node.rel.split("/", 1)[0] if "/" in node.rel else "."
        if node.kind == "dir":
            folder_count += 1
            if node.depth == 1:
                counts[node.rel] = [0, 0]
            continue
        if node.kind == "link":
            links += 1
            continue
        size = node.st.st_size
        counts[top][0] += 1
        counts[top][1] += size
        files.append((node.rel, size))
        moment = _mtime(node.st)
        last = moment if last is None else max(last, moment)
        parts = node.rel.split("/")
        if len(parts) == 3 and parts[0] == "agents" and parts[2] == "memory.md":
            memory.append(_memory_health(parts[1], node.rel, size, memory_cap_bytes))
    folders = {".": FolderStats(*counts.pop("."))}
    folders.update({name: FolderStats(*counts[name]) for name in sorted(counts)})
    files.sort(key=lambda item: (-item[1], item[0]))
    return Health(
        path=str(root),
        total_bytes=sum(size for _, size in files),
        file_count=len(files),
        folder_count=folder_count,
        links=links,
        folders=folders,
        largest_files=files[:largest],
        memory_files=sorted(memory, key=lambda m: m.agent),
        last_activity=last,
        last_activity_age_s=None if last is None else (now - last).total_seconds(),
    )


def _memory_health(agent: str, path: str, size: int, cap: int) -> MemoryFileHealth:
    return MemoryFileHealth(agent, path, size, cap, size * 100 / cap, size > cap)
