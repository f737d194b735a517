"""A small cache a command keeps in the home between runs: one JSON file, versioned.

Only ever a cache: a file that is missing, unreadable, of another version or of another
shape reads as empty, and a write that fails is dropped (the next command works it out
again). Written atomically, readable by its owner alone; a home that is not there is not
made for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["read_cache", "write_cache"]


def read_cache(path: Path | None, version: int, key: str) -> dict[str, Any]:
    """The mapping kept under ``key`` in the cache at ``path``; empty when there is none
    of this ``version``."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != version:
        return {}
    found = data.get(key)
    return found if isinstance(found, dict) else {}


def write_cache(path: Path, version: int, key: str, entries: Mapping[str, Any]) -> None:
    """Keep ``entries`` under ``key`` at ``path`` for next time."""
    from squad.fsutil import atomic_write

    if not path.parent.is_dir():
        return
    text = json.dumps({"version": version, key: entries}, sort_keys=True)
    try:
        atomic_write(path, text.encode(), durable=False)
        path.chmod(0o600)
    except OSError:
        pass  # only a cache
