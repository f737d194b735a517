"""What an extractor proposes, and what the memory already holds: plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

__all__ = ["Candidate", "ConversationMessage", "Existing", "ExtractorName", "Scope"]

Scope = Literal["project", "experiential"]
ExtractorName = Literal["offline", "model"]
"""Who proposed a fact: the offline classifier, or the extraction model."""


@dataclass(frozen=True)
class ConversationMessage:
    """One message of a batch; ``index`` is its place in the source.

    ``task`` is a run's task prompt: written by the orchestrator, not by a person, so it is
    context for the extractor (what was asked), never a source of facts.
    """

    index: int
    role: Literal["user", "assistant", "task"]
    content: str
    seq: int = 0
    """The store's seq of the message (0 for transcript files)."""
    author: str | None = None
    """Who said it, when the store knows (a named person of a replayed transcript)."""


@dataclass(frozen=True)
class Candidate:
    """One fact an extractor found, before the quality checks."""

    text: str
    scope: Scope
    section: str | None = None
    """memory.md section for a project fact (default Insights)."""
    subject: str | None = None
    """What the fact is about ("backend port"), for supersession."""
    confidence: float = 1.0
    source_turns: tuple[int, ...] = ()
    """Indexes (:attr:`ConversationMessage.index`) of the messages it came from."""
    replaces: int | None = None
    """The :attr:`Existing.number` the extractor says this fact updates."""
    expires_on: date | None = None
    """For a time-bound fact: the day after which it no longer holds (stored transient)."""
    detail: str | None = None
    """Longer source text worth keeping in the daily log, with a pointer from memory.md."""
    dropped: str | None = None
    """Why the extractor itself rejects it (e.g. an assistant restating the user)."""
    extractor: ExtractorName = "offline"
    """Which extractor proposed it; recorded with each fact written or dropped."""


@dataclass(frozen=True)
class Existing:
    """A fact already in memory, as the extractor and the checks see it."""

    number: int
    """Small id shown to the model (1, 2, 3...)."""
    scope: Scope
    text: str
    subject: str | None
    ref: str
    """``fact:<id>`` (Layer A) or ``<section>#<line>`` (memory.md, line index in section)."""
    section: str | None = None
    fact_id: int | None = None
    line: str | None = None
    """The memory.md line as written (with its date), for editing it."""
    extra: dict[str, str] = field(default_factory=dict)
