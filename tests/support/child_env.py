"""The environment of a child ``squad`` process a test starts on its own settings."""

from __future__ import annotations

import os

from squad.settings import Settings

__all__ = ["child_env"]


def child_env(settings: Settings) -> dict[str, str]:
    """This process's environment, pointed at ``settings``' home, workspaces and configs,
    with the key the stub model server expects (``STUB_KEY``)."""
    return {
        **os.environ,
        "SQUAD_HOME": str(settings.home),
        "SQUAD_WORKSPACES": str(settings.workspaces),
        "SQUAD_CONFIGS": str(settings.configs),
        "STUB_KEY": "stub-key",
    }
