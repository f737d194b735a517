"""What an extraction pass did: its report, and its record in the store and the audit log.

Both records of a pass carry the same fields (:func:`record_pass`): which messages it read,
what it wrote and dropped, and why when it wrote nothing; a pass that changed and refused
nothing is recorded in the store alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypedDict

from squad.extraction.apply import Applied
from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog, AuditRecord
from squad.memory.service import MemoryService

__all__ = [
    "MessagesRead",
    "PassReport",
    "PassReportDict",
    "Status",
    "record_pass",
]

Status = Literal["done", "skipped", "failed"]


class PassReportDict(TypedDict):
    """:meth:`PassReport.to_dict`: one batch of ``squad memory extract --json``."""

    status: Status
    extractor: str
    from_seq: int
    to_seq: int
    reason: str | None
    written: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    id: int | None


@dataclass(frozen=True)
class PassReport:
    """One batch (or one skipped pass) of an agent's extraction."""

    status: Status
    extractor: str
    from_seq: int
    to_seq: int
    reason: str | None = None
    written: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    record_id: int | None = None

    def to_dict(self) -> PassReportDict:
        return {
            "status": self.status,
            "extractor": self.extractor,
            "from_seq": self.from_seq,
            "to_seq": self.to_seq,
            "reason": self.reason,
            "written": self.written,
            "dropped": self.dropped,
            "id": self.record_id,
        }


@dataclass(frozen=True)
class MessagesRead:
    """Which messages a pass read: store seqs ``from_seq..to_seq`` and their ids (a
    transcript's messages are not in the store: seqs 0, ids ``transcript:<file>#<turn>``)."""

    from_seq: int
    to_seq: int
    ids: tuple[str, ...]


def record_pass(
    memory: MemoryService,
    ctx: AgentContext,
    *,
    started: datetime,
    status: Status,
    extractor: str,
    read: MessagesRead,
    applied: Applied,
    reason: str | None = None,
) -> int:
    """Record one pass, in the store and in the workspace's audit log, with the same fields;
    the store record's id."""
    record = memory.store.extraction.record(
        ctx.squad.name,
        ctx.agent.id,
        started_at=started,
        status=status,
        extractor=extractor,
        from_seq=read.from_seq,
        to_seq=read.to_seq,
        message_ids=read.ids,
        written=applied.written,
        dropped=applied.dropped,
        reason=reason,
    )
    summary = f"{status}: {len(applied.written)} written, {len(applied.dropped)} dropped" + (
        f" ({reason})" if reason else ""
    )
    if status == "done" and not applied.written and not applied.dropped:
        return record.id  # changed nothing, refused nothing: the store's record is enough
    AuditLog(ctx.workspace).append(
        AuditRecord(
            time=started.isoformat(),
            actor="extractor",
            operation="extract",
            file=f"extraction:{record.id}",
            note=summary,
            details={
                "agent": ctx.agent.id,
                "extractor": extractor,
                "messages": {"from_seq": read.from_seq, "to_seq": read.to_seq, "ids": read.ids},
                "written": applied.written,
                "dropped": applied.dropped,
            },
        )
    )
    return record.id
