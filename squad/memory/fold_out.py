"""A full ``memory.md`` folded into today's daily log: how much fits, and its lines kept there.

What to fold is the pure choice of :mod:`squad.memory.fold`; this is its edge, between
:class:`~squad.memory.files.MemoryFile` and :class:`~squad.memory.daily.DailyLog`: the plan is
made within what the day's log can still take, and the lines go to the log whole before
``memory.md`` loses them.
"""

from __future__ import annotations

from datetime import date, datetime

from squad.errors import MemoryError_
from squad.history.hooks import Wrote
from squad.memory.audit import AuditRecord
from squad.memory.daily import DailyLog
from squad.memory.dedupe import SameAs
from squad.memory.document import MemoryDocument
from squad.memory.file_io import version_of
from squad.memory.fold import (
    FOLD_SECTION,
    Folded,
    FoldPlan,
    TopicSummaries,
    daily_entry,
    plan_fold,
)

__all__ = ["FOLD_ENTRY_SLACK", "fold_out", "fold_record", "plan_within"]

FOLD_ENTRY_SLACK = 64
"""Bytes of a daily log kept free beyond a fold entry's estimate (its counts may grow)."""


def plan_within(
    log: DailyLog,
    document: MemoryDocument,
    *,
    need: int,
    today: date,
    file: str,
    actor: str,
    same_as: SameAs,
    summarise: TopicSummaries | None = None,
) -> FoldPlan | None:
    """What to fold out of ``document`` (``file``) to free ``need`` bytes, within what
    today's daily log can still take; None when nothing can be."""
    try:
        room = log.room(today, daily_entry(FoldPlan((), ()), file), actor)
    except MemoryError_:
        return None  # no usable daily log: nowhere to keep the lines
    return plan_fold(
        document,
        need=need,
        room=room - FOLD_ENTRY_SLACK,
        day=today,
        pointer=log.relative(today),
        same_as=same_as,
        summarise=summarise,
    )


def fold_out(
    log: DailyLog,
    plan: FoldPlan,
    *,
    file: str,
    actor: str,
    wrote: Wrote,
    today: date,
    kept: set[str] | None = None,
) -> Folded | None:
    """Keep the plan's lines whole in today's daily log, before ``file`` loses them (but for
    items of ``kept``, there already from an earlier try, which it gains); None when the log
    refuses them (then nothing is folded)."""
    kept = set() if kept is None else kept
    new = FoldPlan(tuple(item for item in plan.items if item not in kept), plan.summaries)
    try:
        daily = log.relative(today)
        if new.items:
            daily = log.append_within(daily_entry(new, file), actor=actor, day=None, wrote=wrote)
    except MemoryError_:
        return None
    kept.update(new.items)
    return Folded(len(plan.lines), len(plan.summaries), daily)


def fold_record(
    folded: Folded,
    file: str,
    *,
    actor: str,
    at: datetime,
    old_version: str,
    old_size: int,
    data: bytes,
) -> AuditRecord:
    """The audit record of a fold of ``file`` from ``old_version`` to ``data``."""
    return AuditRecord(
        time=at.isoformat(),
        actor=actor,
        operation="fold",
        file=file,
        section=FOLD_SECTION,
        old_sha256=old_version or None,
        new_sha256=version_of(data),
        bytes=len(data),
        note=(
            f"{folded.moved} oldest {FOLD_SECTION} lines moved whole to {folded.daily}; "
            f"{folded.summaries} summary lines in their place"
        ),
        details={
            "moved": folded.moved,
            "summaries": folded.summaries,
            "daily": folded.daily,
            "bytes_before": old_size,
        },
    )
