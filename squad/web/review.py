"""The review queue as every front end shows it: its views (:mod:`squad.views.review`), built
here once for the CLI's ``--json``, the HTTP API, the dashboard and MCP.

Texts leave with credentials redacted (the queue holds none: this is the last gate, as for
every other answer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from squad.text.secrets import redact
from squad.views.review import (
    Action,
    ReviewDecision,
    ReviewItem,
    ReviewList,
    ReviewResult,
    StatusFilter,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from squad.app import App
    from squad.extraction.review import Reviewed
    from squad.store.review import ReviewRecord

__all__ = ["review_decide", "review_list"]


def review_item(record: ReviewRecord) -> ReviewItem:
    return ReviewItem(
        id=record.id,
        squad=record.squad,
        agent=record.agent,
        layer=record.layer,
        section=record.section,
        text=redact(record.text)[0],
        confidence=round(record.confidence, 3),
        extractor=record.extractor,
        source=record.source,
        turns=list(record.turns),
        run_id=record.run_id,
        proposed_at=record.proposed_at.isoformat(),
        status=record.status,
        decided_at=None if record.decided_at is None else record.decided_at.isoformat(),
        decided_by=record.decided_by,
        edited_text=None if record.edited_text is None else redact(record.edited_text)[0],
        outcome=record.outcome,
    )


def _decision(done: Reviewed) -> ReviewDecision:
    return ReviewDecision(
        item=review_item(done.record), written=done.written, where=done.where, note=done.note
    )


def review_list(
    app: App, squad: str, agent: str, *, status: StatusFilter = "pending", limit: int = 200
) -> ReviewList:
    """The agent's proposals: pending ones oldest first, decided ones newest first."""
    ctx = app.agent(squad, agent)
    records = (
        app.review.items(ctx, status=None if status == "all" else status, limit=limit)
        if app.database_exists()
        else []
    )
    return ReviewList(
        squad=ctx.squad.name,
        agent=ctx.agent.id,
        mode=ctx.review,
        status=status,
        items=[review_item(r) for r in records],
    )


def review_decide(
    app: App,
    squad: str,
    agent: str,
    action: Action,
    ids: Sequence[int],
    *,
    actor: str,
    text: str | None = None,
) -> ReviewResult:
    """Approve or reject ``ids``, or (``edit``) approve the one id with ``text``."""
    from squad.errors import UsageError

    ctx = app.agent(squad, agent)
    queue = app.review
    done: list[Reviewed]
    if action == "approve":
        done = queue.approve(ctx, ids, actor=actor)
    elif action == "reject":
        done = queue.reject(ctx, ids, actor=actor)
    else:
        if len(ids) != 1 or text is None:
            raise UsageError("an edit takes one review item id and the text to keep instead")
        done = [queue.edit(ctx, ids[0], text, actor=actor)]
    return ReviewResult(
        squad=ctx.squad.name,
        agent=ctx.agent.id,
        action=action,
        decided=[_decision(d) for d in done],
    )
