"""Which squad each workspace under the root belongs to, found without validating anything:
a quick look that scales with the squads (``squad status``'s paused histories, ``squad runs``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from squad.workspace.layout import MANIFEST_NAME

__all__ = ["OWNER_KEY", "WorkspaceRef", "workspace_refs"]

OWNER_KEY = ("squad", "workspace")
"""The git config key naming a workspace's squad (:data:`squad.history.repository.OWNER_KEY`,
split: read here without importing the history's writer)."""


@dataclass(frozen=True)
class WorkspaceRef:
    squad: str
    path: Path


def workspace_refs(root: Path, squad: str | None = None) -> list[WorkspaceRef]:
    """Workspaces under ``root``, by squad (their git config or manifest says which; only
    ``squad``'s when given), without validating any manifest."""
    found: list[WorkspaceRef] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
            continue
        path = Path(entry.path)
        name = _owner(path) or _manifest_squad(path)
        if name is not None and (squad is None or name == squad):
            found.append(WorkspaceRef(name, path))
    return found


def _owner(path: Path) -> str | None:
    """The squad a workspace's history belongs to, from its ``.git/config`` (a quick read)."""
    config = path / ".git" / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section, key = OWNER_KEY
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[]").strip().lower()
        elif current == section and "=" in stripped:
            name, _, value = stripped.partition("=")
            if name.strip().lower() == key:
                return value.strip().strip('"') or None
    return None


def _manifest_squad(path: Path) -> str | None:
    try:
        data = json.loads((path / MANIFEST_NAME).read_bytes())
    except (OSError, ValueError):
        return None
    squad = data.get("squad") if isinstance(data, dict) else None
    return squad if isinstance(squad, str) else None
