"""Packing a workspace's history: what ``git gc`` does, which libgit2 lacks.

New loose objects go into a delta-compressed pack of their own (libgit2's pack builder),
then their loose copies are deleted; every :data:`MAX_PACKS` packs (or when asked), every
commit reachable from ``HEAD``, with its trees' paths for better deltas, goes into one pack
and the rest is dropped (objects of killed commits no ref reaches). Refs are packed too
(``refs/runs/*`` into one ``packed-refs`` file). Nothing of the history is ever pruned.
Call :func:`pack_repository` holding the workspace's history lock.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squad.history.engine import git
from squad.history.repository import Repository

__all__ = [
    "AUTO_PACK_OBJECTS",
    "MAX_PACKS",
    "PackReport",
    "folder_bytes",
    "loose_estimate",
    "pack_repository",
]

MAX_PACKS = 16
"""Past this many packs, the next pack repacks everything into one."""
AUTO_PACK_OBJECTS = 6700
"""Loose objects (estimated, as git does, from one of the 256 fan-out folders) past which a
run's start packs them (git's ``gc.auto``)."""


@dataclass(frozen=True)
class PackReport:
    objects: int
    bytes_before: int
    bytes_after: int
    full: bool


def pack_repository(repository: Repository, *, full: bool) -> PackReport:
    from squad.history.log import commits

    repo = repository.ensure()
    objects = repository.git_dir / "objects"
    loose = _loose_objects(objects)
    packs = sorted((objects / "pack").glob("*.pack"))
    before = folder_bytes(repository.git_dir)
    full = full or len(packs) >= MAX_PACKS
    if not loose and not (full and len(packs) > 1):
        return PackReport(0, before, before, full=False)

    def everything(builder: Any) -> None:
        for commit in commits(repo):
            builder.add_recur(commit.id)  # with its trees' paths: better deltas

    def new_ones(builder: Any) -> None:
        for oid in loose:
            builder.add(git().Oid(hex=oid))

    written = repo.pack(None, everything if full else new_ones, 0)
    repo.compress_references()  # refs/runs/* into packed-refs: one file, not 10,000
    for oid in loose:
        with contextlib.suppress(FileNotFoundError):
            (objects / oid[:2] / oid[2:]).unlink()
    if full:
        keep = set((objects / "pack").glob("*.pack")) - set(packs)
        for old in packs:
            if old in keep:
                continue
            for suffix in (".pack", ".idx", ".rev", ".keep", ".mtimes"):
                with contextlib.suppress(FileNotFoundError):
                    old.with_suffix(suffix).unlink()
    for folder in objects.glob("[0-9a-f][0-9a-f]"):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only empty ones go
    return PackReport(written, before, folder_bytes(repository.git_dir), full=full)


def folder_bytes(folder: Path) -> int:
    total = 0
    for path, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(path, name)).st_size  # noqa: PTH118
    return total


def loose_estimate(objects: Path) -> int:
    """About how many loose objects there are: 256 times those in ``objects/17``."""
    try:
        return 256 * sum(1 for _ in os.scandir(objects / "17"))
    except OSError:
        return 0


def _loose_objects(objects: Path) -> list[str]:
    found = []
    for folder in objects.glob("[0-9a-f][0-9a-f]"):
        for entry in folder.iterdir():
            name = entry.name
            if len(name) == 38 and all(c in "0123456789abcdef" for c in name):
                found.append(folder.name + name)
    return found
