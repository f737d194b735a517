"""Which workspaces' histories are paused, as ``squad status`` shows them, without opening
every repository at every status.

Whether a history can be written is known by opening its ``.git`` with libgit2 (its config's
owner, its ``HEAD`` and the commit and tree it names): at 100 workspaces that is the pygit2
import and 100 opens, most of ``squad status`` with the daemon down.
``$SQUAD_HOME/status-histories.json`` keeps each workspace found writable with the identity,
size and times (modification and change) of every file and folder the check read: ``.git``,
its config, ``HEAD``, the ref ``HEAD`` names, ``packed-refs``, the objects folder, the loose
files of the head commit and its tree, the packs. While none of them changed the verdict
stands; any write to one of them (a commit, a repair, a ``git gc``, a ``chmod``) changes its
change time, and the workspace is checked again. Only writable verdicts are kept: a paused
history is checked every time, since it is the one a person is fixing.

A verdict is kept only when every file it rests on was last changed well before the check
began (:data:`SETTLED_NS`): file times move in clock ticks, so a file rewritten in the same
tick as it was read could look unchanged (git's "racily clean" entries). Writers race
harmlessly: each entry holds by itself, the file is replaced atomically, and a lost update
only costs a check.
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from squad.cache_file import read_cache, write_cache

__all__ = ["HISTORIES_FILE", "SETTLED_NS", "paused_histories"]

HISTORIES_FILE = "status-histories.json"
"""Workspaces whose history was found writable, with the marks of the files the check read."""
_VERSION = 1
SETTLED_NS = 2_000_000_000
"""A verdict is kept only if every file it rests on changed at least this long before the
check began (two seconds: far beyond any filesystem's timestamp tick)."""

_FIXED = ("", "config", "HEAD", "packed-refs", "objects", "objects/pack", "refs", "refs/heads")
"""What every check reads (relative to ``.git``; ``""`` is ``.git`` itself)."""

Mark = list[int] | None
Check = Callable[[Path, str], Any]
"""``(workspace, squad) -> HistoryState``: the full check (libgit2)."""


def _mark(path: str | Path) -> Mark:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _loose(sha: str) -> str:
    return f"objects/{sha[:2]}/{sha[2:]}"


def _tree_of(git_dir: Path, commit: str) -> str | None:
    """The tree a loose commit names (None when the commit is packed or unreadable: the
    packs are marked instead)."""
    try:
        raw = zlib.decompress((git_dir / _loose(commit)).read_bytes())
    except (OSError, zlib.error):
        return None
    body = raw.partition(b"\0")[2]
    if body.startswith(b"tree ") and len(body) >= 45:
        return body[5:45].decode("ascii", "replace")
    return None


def _marks(git_dir: Path, head: str | None) -> dict[str, Mark]:
    """The marks of what a check of ``git_dir`` with ``head`` read."""
    names = list(_FIXED)
    try:
        pointer = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        pointer = ""
    if pointer.startswith("ref:"):
        names.append(pointer[4:].strip())
    with contextlib.suppress(OSError):
        names += [f"objects/pack/{p.name}" for p in sorted((git_dir / "objects/pack").iterdir())]
    if head:
        names.append(_loose(head))
        tree = _tree_of(git_dir, head)
        if tree:
            names.append(_loose(tree))
    return {name: _mark(git_dir / name if name else git_dir) for name in names}


def _settled(marks: Mapping[str, Mark], before_ns: int) -> bool:
    return all(m is None or max(m[3], m[4]) < before_ns for m in marks.values())


def _still(git_dir: Path, marks: Mapping[str, Mark]) -> bool:
    where = str(git_dir)  # plain strings: pathlib's joins cost more than the lstat calls
    return all(_mark(f"{where}/{name}" if name else where) == mark for name, mark in marks.items())


def paused_histories(
    workspaces: Sequence[tuple[str, Path]],
    check: Check,
    *,
    cache: Path | None,
    settled_ns: int = SETTLED_NS,
) -> list[dict[str, Any]]:
    """The workspaces (``(squad, path)``) whose history is paused, each with why. A
    workspace without ``.git`` has no history to pause; one ``cache`` found writable and
    unchanged since is not checked again; any other is checked with ``check``. A verdict is
    kept only if its files last changed ``settled_ns`` before the check began."""
    known = read_cache(cache, _VERSION, "workspaces")
    kept: dict[str, Any] = {}
    paused = []
    for squad, path in workspaces:
        git_dir = path / ".git"
        if not os.path.lexists(git_dir):
            continue
        key = str(path)
        entry = known.get(key)
        if isinstance(entry, dict) and entry.get("squad") == squad:
            marks = entry.get("marks")
            if isinstance(marks, dict) and _still(git_dir, marks):
                kept[key] = entry
                continue
        began = time.time_ns()
        state = check(path, squad)
        if state.paused:
            paused.append(
                {
                    "squad": squad,
                    "workspace": str(path),
                    "state": state.state,
                    "reason": state.detail,
                }
            )
        elif state.state == "ok":
            marks = _marks(git_dir, state.head)
            if _settled(marks, began - settled_ns):
                kept[key] = {"squad": squad, "marks": marks}
    if cache is not None and kept != known:
        write_cache(cache, _VERSION, "workspaces", kept)
    return paused
