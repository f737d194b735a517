"""The memory review queue as the front ends show it: the facts the extractor proposed that
wait for a person, and what each decision did."""

from __future__ import annotations

from typing import Literal

from squad.views._base import View

__all__ = ["Action", "ReviewDecision", "ReviewItem", "ReviewList", "ReviewResult", "StatusFilter"]

Action = Literal["approve", "reject", "edit"]
StatusFilter = Literal["pending", "approved", "rejected", "all"]


class ReviewItem(View):
    """A fact the extractor proposed, and what a person decided."""

    id: int
    squad: str
    agent: str
    layer: Literal["project", "experiential"]
    section: str | None
    """The memory.md section of a project fact."""
    text: str
    """As proposed."""
    confidence: float
    extractor: str
    source: str
    """The run, or chat session and day, it came from."""
    turns: list[int]
    """Seqs of the messages it came from."""
    run_id: str | None
    proposed_at: str
    status: Literal["pending", "approved", "rejected"]
    decided_at: str | None
    decided_by: str | None
    edited_text: str | None
    """The text approved instead, when it was edited."""
    outcome: str | None
    """Where the approved fact went, or why nothing was written."""


class ReviewList(View):
    squad: str
    agent: str
    mode: Literal["off", "low_confidence", "all"]
    """The agent's ``memory.review`` (its own, else the squad's)."""
    status: StatusFilter
    items: list[ReviewItem]


class ReviewDecision(View):
    item: ReviewItem
    written: bool
    """The approved fact was written now (False: rejected, or memory already said it)."""
    where: str | None
    note: str


class ReviewResult(View):
    squad: str
    agent: str
    action: Action
    decided: list[ReviewDecision]
