"""The standard workspace layout: the names a person finds when opening the folder."""

from __future__ import annotations

__all__ = [
    "HIDDEN_AT_ROOT",
    "MANIFEST_NAME",
    "MEMORY_FILE",
    "MEMORY_SECTIONS",
    "STANDARD_FOLDERS",
    "memory_seed",
]

MANIFEST_NAME = ".squad-config.json"
HIDDEN_AT_ROOT = frozenset({".git", ".squad-history.lock"})
"""Names at a workspace's root that the explorer, tree, search and health leave out: the
history's git folder (read with ``squad runs`` / ``squad memory history`` or plain git) and
its lock. ``squad ws health`` reports the history's size on its own line."""
STANDARD_FOLDERS = ("plans", "tasks", "agents", "logs")
MEMORY_FILE = "memory.md"
MEMORY_SECTIONS = ("Project Context", "Coding Rules", "Decisions", "Insights")


def memory_seed() -> str:
    """A new agent's memory.md: the standard sections, empty, in their standard order."""
    return "\n".join(f"# {section}\n" for section in MEMORY_SECTIONS)
