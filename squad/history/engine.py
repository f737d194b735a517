"""The one module that imports pygit2 (libgit2): squad's git engine, loaded on first use.

pygit2 ships libgit2 inside its wheels, so a workspace's history needs no ``git`` command
(the README's promise: Python 3.11+ and nothing else). A person's own ``git`` reads the same
repositories. Why pygit2 rather than dulwich or the ``git`` command is measured in
``bench/history_engines.py`` (figures in docs/design/history.md).

Loading it also isolates squad's commits from the machine's git configuration: the global,
XDG and system config files are not read (a ``core.autocrlf = true`` there would otherwise
rewrite line endings in squad's commits), only the repository's own.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

__all__ = ["OBJECT_CACHE_BYTES", "PACK_FILES", "PACK_MAPPED_BYTES", "blob_at", "blob_bytes", "git"]

PACK_FILES = 32
"""Pack files libgit2 keeps open at once in this process; the least recently used close."""
PACK_MAPPED_BYTES = 64 * 1024 * 1024
"""Bytes of pack files libgit2 keeps mapped at once (its default is 8 GiB)."""
OBJECT_CACHE_BYTES = 16 * 1024 * 1024
"""libgit2's object cache, per repository (its default is 256 MiB)."""


@functools.cache
def git() -> ModuleType:
    """pygit2, configured for squad's use (once per process)."""
    import pygit2
    from pygit2.enums import ConfigLevel

    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM):
        pygit2.settings.search_path[level] = ""  # searched nowhere: not read at all
    # A daemon reads a hundred histories for weeks: libgit2 would keep every pack it opened
    # open and mapped (no file limit, 8 GiB of windows), a repacked one too, deleted or not.
    pygit2.settings.mwindow_file_limit = PACK_FILES
    pygit2.settings.mwindow_mapped_limit = PACK_MAPPED_BYTES
    pygit2.settings.cache_max_size(OBJECT_CACHE_BYTES)
    return pygit2


def blob_bytes(repo: Any, oid: Any) -> bytes | None:
    """The bytes of blob ``oid`` (None when it is missing or not a blob)."""
    if oid is None:
        return None
    obj = repo.get(oid)
    return obj.data if isinstance(obj, git().Blob) else None


def blob_at(repo: Any, tree: Any, path: str) -> bytes | None:
    """The bytes of ``path`` in ``tree`` (None when the tree has no such file)."""
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    return blob_bytes(repo, entry.id)
