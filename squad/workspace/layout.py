"""The standard workspace layout: the names a person finds when opening the folder."""

from __future__ import annotations

__all__ = [
    "MANIFEST_NAME",
    "MEMORY_FILE",
    "MEMORY_SECTIONS",
    "STANDARD_FOLDERS",
    "memory_seed",
]

MANIFEST_NAME = ".squad-config.json"
STANDARD_FOLDERS = ("plans", "tasks", "agents", "logs")
MEMORY_FILE = "memory.md"
MEMORY_SECTIONS = ("Project Context", "Coding Rules", "Decisions", "Insights")


def memory_seed() -> str:
    """A new agent's memory.md: the standard sections, empty, in their standard order."""
    return "\n".join(f"# {section}\n" for section in MEMORY_SECTIONS)
