"""squad: run teams of LLM agents defined in YAML, each in a workspace folder you can open.

The public API is what ``__all__`` lists; it loads lazily so ``import squad`` (and
``squad --help``) stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from squad.app import App
    from squad.errors import (
        ConfigError,
        PathEscapeError,
        Problem,
        SquadError,
        StoreError,
        UsageError,
        WorkspaceError,
    )
    from squad.manager import SquadManager
    from squad.settings import Settings
    from squad.spec.loader import squad_from_dict, squad_from_file, squad_from_text
    from squad.spec.models import AgentSpec, SquadSpec, TaskSpec
    from squad.workspace.folders import CreateReport, WorkspaceFolders
    from squad.workspace.manifest import Manifest

__all__ = [
    "AgentSpec",
    "App",
    "ConfigError",
    "CreateReport",
    "Manifest",
    "PathEscapeError",
    "Problem",
    "Settings",
    "SquadError",
    "SquadManager",
    "SquadSpec",
    "StoreError",
    "TaskSpec",
    "UsageError",
    "WorkspaceError",
    "WorkspaceFolders",
    "squad_from_dict",
    "squad_from_file",
    "squad_from_text",
]

_HOMES = {
    "squad.app": ["App"],
    "squad.errors": [
        "ConfigError",
        "PathEscapeError",
        "Problem",
        "SquadError",
        "StoreError",
        "UsageError",
        "WorkspaceError",
    ],
    "squad.manager": ["SquadManager"],
    "squad.settings": ["Settings"],
    "squad.spec.loader": ["squad_from_dict", "squad_from_file", "squad_from_text"],
    "squad.spec.models": ["AgentSpec", "SquadSpec", "TaskSpec"],
    "squad.workspace.folders": ["CreateReport", "WorkspaceFolders"],
    "squad.workspace.manifest": ["Manifest"],
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'squad' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
