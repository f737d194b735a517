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

__all__ = ["blob_at", "blob_bytes", "git"]


@functools.cache
def git() -> ModuleType:
    """pygit2, configured for squad's use (once per process)."""
    import pygit2
    from pygit2.enums import ConfigLevel

    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM):
        pygit2.settings.search_path[level] = ""  # searched nowhere: not read at all
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
