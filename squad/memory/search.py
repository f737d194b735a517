"""Memory search across every agent's memory.md (Layer B) and the experiential store (Layer A).

Each hit says where it lives (squad, agent, section or fact id) so a person can jump to it;
line matching and context follow grep, like ``squad ws search``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from squad.memory.document import heading_lines
from squad.paths import contained
from squad.text.search import LineMatch, matching_lines, split_lines, with_context
from squad.workspace.layout import MEMORY_FILE

__all__ = ["MemoryHit", "search_memory_files"]


@dataclass(frozen=True)
class MemoryHit:
    layer: Literal["project", "experiential"]
    squad: str | None
    agent: str | None
    where: str
    """``agents/<agent>/memory.md`` for project hits, ``fact:<id>`` for experiential ones."""
    section: str | None
    match: LineMatch
    namespace: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "squad": self.squad,
            "agent": self.agent,
            "where": self.where,
            "section": self.section,
            "namespace": self.namespace,
            **self.match.to_dict(),
        }


def search_memory_files(
    workspaces: Iterable[tuple[str, Path]],
    pattern: re.Pattern[str],
    *,
    agent: str | None = None,
    section: str | None = None,
    context: int = 0,
) -> list[MemoryHit]:
    """Matches in ``agents/*/memory.md`` of each ``(squad, workspace)``, optionally filtered."""
    hits: list[MemoryHit] = []
    for squad, workspace in workspaces:
        agents_dir = workspace / "agents"
        if not agents_dir.is_dir():
            continue
        for agent_dir in sorted(p for p in agents_dir.iterdir() if p.is_dir()):
            if agent is not None and agent_dir.name != agent:
                continue
            if agent_dir.is_symlink():
                continue
            path = contained(workspace, "agents", agent_dir.name, MEMORY_FILE)
            if not path.is_file() or path.is_symlink():
                continue
            hits.extend(_search_file(squad, agent_dir.name, path, pattern, section, context))
    return hits


def _search_file(
    squad: str, agent: str, path: Path, pattern: re.Pattern[str], section: str | None, context: int
) -> list[MemoryHit]:
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = split_lines(text)
    headings = heading_lines(text)

    def section_of(index: int) -> str | None:
        name = None
        for line, heading in headings:
            if line > index:
                break
            name = heading
        return name

    found = matching_lines(pattern, lines, limit=len(lines) + 1)
    if section is not None:
        wanted = section.strip().casefold()
        found = [hit for hit in found if (section_of(hit[0]) or "").casefold() == wanted]
    where = f"agents/{agent}/{MEMORY_FILE}"
    return [
        MemoryHit("project", squad, agent, where, section_of(match.line_number - 1), match)
        for match in with_context(lines, found, context)
    ]
