"""Memory search across every agent's memory.md (Layer B) and the experiential store (Layer A).

Each hit says where it lives (squad, agent, section, fact id, or for an earlier message of an
agent's conversation archive ``layer: conversation`` and ``where: message:<seq>``, the seq it
was last said at) so a person can jump to it;
line matching and context follow grep, like ``squad ws search``, and so do its bounds: a line
or a fact that takes too long to match ends the search with an error naming it, and a memory
file that is not read (a link, too large, not a regular file) is listed as skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from squad.errors import PathEscapeError
from squad.fsutil import read_up_to
from squad.memory.document import heading_lines
from squad.paths import contained
from squad.text.grep import (
    DEFAULT_TIMEOUT_S,
    LineMatch,
    LineMatchDict,
    SearchPattern,
    Skipped,
    find_spans,
    matching_lines,
    split_lines,
    with_context,
)
from squad.workspace.layout import MEMORY_FILE

if TYPE_CHECKING:
    from squad.store.memory import MemoryStore
    from squad.store.records import FactRecord

__all__ = [
    "ARCHIVE_SOURCE",
    "MAX_MEMORY_FILE_BYTES",
    "HitLayer",
    "MemoryHit",
    "MemoryHitDict",
    "MemorySearch",
    "scan_memory_files",
    "search_all_memory",
    "search_facts",
    "search_memory_files",
]

ARCHIVE_SOURCE = "archive"
"""``source`` of a conversation archive's entries, one per distinct message text."""
MAX_MEMORY_FILE_BYTES = 5_000_000
"""A memory.md past this is skipped (and listed): far past any cap, so edited by hand."""


HitLayer = Literal["project", "experiential", "conversation"]


class MemoryHitDict(LineMatchDict):
    """:meth:`MemoryHit.to_dict`: where the hit is, then the match."""

    layer: HitLayer
    squad: str | None
    agent: str | None
    where: str
    section: str | None
    namespace: str | None


@dataclass(frozen=True)
class MemoryHit:
    layer: HitLayer
    squad: str | None
    agent: str | None
    where: str
    """``agents/<agent>/memory.md`` for project hits, ``fact:<id>`` for experiential ones,
    ``message:<seq>`` for a message of the conversation archive."""
    section: str | None
    match: LineMatch
    namespace: str | None = None

    def to_dict(self) -> MemoryHitDict:
        return {
            "layer": self.layer,
            "squad": self.squad,
            "agent": self.agent,
            "where": self.where,
            "section": self.section,
            "namespace": self.namespace,
            **self.match.to_dict(),
        }


@dataclass(frozen=True)
class MemorySearch:
    """The hits, and the memory files not read (paths as ``<squad>/agents/<agent>/...``)."""

    hits: list[MemoryHit]
    skipped: list[Skipped]


def scan_memory_files(
    workspaces: Iterable[tuple[str, Path]],
    pattern: SearchPattern,
    *,
    agent: str | None = None,
    section: str | None = None,
    context: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_file_bytes: int = MAX_MEMORY_FILE_BYTES,
) -> MemorySearch:
    """Matches in ``agents/*/memory.md`` of each ``(squad, workspace)``, optionally filtered,
    and the files skipped; a line slower than ``timeout_s`` to match is a UsageError."""
    hits: list[MemoryHit] = []
    skipped: list[Skipped] = []
    for squad, workspace in workspaces:
        agents_dir = workspace / "agents"
        if not agents_dir.is_dir():
            continue
        for agent_dir in sorted(p for p in agents_dir.iterdir() if p.is_dir()):
            if agent is not None and agent_dir.name != agent:
                continue
            shown = f"{squad}/agents/{agent_dir.name}"
            if agent_dir.is_symlink():
                skipped.append(Skipped(shown, "link"))
                continue
            shown += f"/{MEMORY_FILE}"
            try:
                path = contained(workspace, "agents", agent_dir.name, MEMORY_FILE)
            except PathEscapeError:  # memory.md is a link, or the folder a name squad refuses
                skipped.append(Skipped(shown, "link"))
                continue
            read = _read_memory(path, shown, max_file_bytes)
            if read is None:  # an agent without a memory file yet
                continue
            if isinstance(read, Skipped):
                skipped.append(read)
                continue
            hits.extend(
                _search_text(squad, agent_dir.name, read, pattern, section, context, timeout_s)
            )
    return MemorySearch(hits, skipped)


def search_memory_files(
    workspaces: Iterable[tuple[str, Path]],
    pattern: SearchPattern,
    *,
    agent: str | None = None,
    section: str | None = None,
    context: int = 0,
) -> list[MemoryHit]:
    """The hits of :func:`scan_memory_files`, without the list of files skipped."""
    return scan_memory_files(
        workspaces, pattern, agent=agent, section=section, context=context
    ).hits


def search_facts(
    facts: Iterable[tuple[str, FactRecord]],
    pattern: SearchPattern,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[MemoryHit]:
    """Hits in experiential facts, given as ``(namespace name, fact)``: a fact is one line."""
    hits = []
    for namespace, fact in facts:
        layer: HitLayer = "experiential"
        where = f"fact:{fact.id}"
        if fact.source == ARCHIVE_SOURCE and fact.turns:
            layer, where = "conversation", f"message:{max(fact.turns)}"
        spans = find_spans(pattern, fact.text, timeout_s=timeout_s, where=where)
        if spans:
            match = LineMatch(1, fact.text, spans, [], [])
            hits.append(MemoryHit(layer, fact.squad, fact.agent, where, None, match, namespace))
    return hits


def search_all_memory(
    workspaces: Sequence[tuple[str, Path]],
    facts_store: MemoryStore | None,
    pattern: SearchPattern,
    *,
    squad: str | None = None,
    agent: str | None = None,
    section: str | None = None,
    layer: HitLayer | None = None,
    context: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    literal: str | None = None,
    case_sensitive: bool = False,
) -> MemorySearch:
    """The memory files of ``workspaces`` (``(squad, folder)`` pairs) and the experiential
    facts of ``facts_store`` (None: no database yet), filtered as ``squad memory search`` and
    the dashboard's memory search ask; ``squad`` limits facts to those learnt in it.

    ``literal`` is the query when ``pattern`` is that text searched literally (with
    ``case_sensitive`` as compiled): the database then hands over only the facts that can
    match (:meth:`MemoryStore.candidate_facts`), instead of every fact for the pattern to
    try."""
    hits: list[MemoryHit] = []
    skipped: list[Skipped] = []
    if layer in (None, "project"):
        found = scan_memory_files(
            workspaces,
            pattern,
            agent=agent,
            section=section,
            context=context,
            timeout_s=timeout_s,
        )
        hits += found.hits
        skipped += found.skipped
    if layer != "project" and section is None and facts_store is not None:
        facts = (
            (ns.name, fact)
            for ns in facts_store.list_namespaces()
            for fact in (
                facts_store.facts(ns.id)
                if not literal
                else facts_store.candidate_facts(ns.id, literal, case_sensitive=case_sensitive)
            )
            if not (squad and fact.squad != squad)
            and not (agent and fact.agent != agent)
            and (layer is None or (layer == "conversation") == (fact.source == ARCHIVE_SOURCE))
        )
        hits += search_facts(facts, pattern, timeout_s=timeout_s)
    return MemorySearch(hits, skipped)


def _read_memory(path: Path, shown: str, limit: int) -> str | Skipped | None:
    """The text of a memory file (bytes that are not UTF-8 shown as U+FFFD), why it is not
    read (as ``shown``), or None when there is none. ``O_NOFOLLOW`` and ``O_NONBLOCK``: a link
    swapped in is refused, a FIFO never hangs the search."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError:
        return Skipped(shown, "link" if path.is_symlink() else "unreadable")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Skipped(shown, "special")
        if st.st_size > limit:
            return Skipped(shown, "too_large")
        raw = read_up_to(fd, limit + 1)  # one byte more tells a file that grew past the limit
    except OSError:
        return Skipped(shown, "unreadable")
    finally:
        os.close(fd)
    if len(raw) > limit:
        return Skipped(shown, "too_large")
    return raw.decode("utf-8", errors="replace")


def _search_text(
    squad: str,
    agent: str,
    text: str,
    pattern: SearchPattern,
    section: str | None,
    context: int,
    timeout_s: float,
) -> list[MemoryHit]:
    lines = split_lines(text)
    headings = heading_lines(text)

    def section_of(index: int) -> str | None:
        name = None
        for line, heading in headings:
            if line > index:
                break
            name = heading
        return name

    where = f"agents/{agent}/{MEMORY_FILE}"
    found = matching_lines(
        pattern, lines, limit=len(lines) + 1, timeout_s=timeout_s, source=f"{squad}/{where}"
    )
    if section is not None:
        wanted = section.strip().casefold()
        found = [hit for hit in found if (section_of(hit[0]) or "").casefold() == wanted]
    return [
        MemoryHit("project", squad, agent, where, section_of(match.line_number - 1), match)
        for match in with_context(lines, found, context)
    ]
