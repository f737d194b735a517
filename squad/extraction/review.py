"""The review queue: facts the extractor proposes wait for a person before any prompt sees them.

``memory.review`` (the squad's, or an agent's own, which wins when set) says which:

- ``off`` (the default): none; facts are written as they are extracted;
- ``low_confidence``: facts whose classification confidence is under
  :data:`REVIEW_CONFIDENCE`;
- ``all``: every new fact.

Only facts the extractor would *write* wait (new ones, and those superseding an older fact);
a near-duplicate merge writes nothing new and a dropped candidate writes nothing at all, so
both go on as without review. A waiting fact is a row of ``store.review``, never a line of
memory.md nor a row of the facts table, so prompt assembly cannot see it. Its text was
redacted with the batch before extraction (a fact still holding a credential, or the marker
of one, is dropped by the quality checks) and is refused again here. The same text
(normalised as the dedup checks do) is not queued twice: not while it waits, and never again
once a person rejected it.

:class:`ReviewQueue` lists, approves, edits and rejects. Approving writes the fact through
the extractor's own path: checked again against memory as it is now (duplicates,
near-duplicate merges, supersession), written by :func:`~squad.extraction.apply.apply_decisions`
(memory.md's lock, its dedup and its fold at the cap, the credential check, Layer A with
provenance) and, for a reasoned decision, filed in the decisions log: what the extractor would
have written had it been approved on the spot. An edit is re-checked for credentials and then
approved. Each decision is audited (``review-approve``, ``review-reject``) and committed to
the workspace's history as the person's change; a rejection changes no file and is committed
all the same, so ``git log`` shows it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from squad.classifier.subjects import subject_for
from squad.clock import Clock, utc_now
from squad.errors import NotFound, SecretInMemoryError, UsageError
from squad.extraction.apply import _entry, apply_decisions, existing_facts, related_facts
from squad.extraction.candidates import Candidate, ConversationMessage
from squad.extraction.decision_filing import file_decisions
from squad.extraction.quality import Decision, decide, drop_reason, normalise
from squad.history.change import Change
from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog, AuditRecord
from squad.memory.decisions.log import DecisionLog
from squad.memory.service import MemoryService
from squad.store.review import NewProposal, ReviewRecord, ReviewStatus, already_decided
from squad.text.secrets import redact, refuse_secrets

__all__ = [
    "REVIEW_CONFIDENCE",
    "ReviewQueue",
    "Reviewed",
    "held",
    "hold_for_review",
    "review_key",
]

REVIEW_CONFIDENCE = 0.7
"""Under ``low_confidence``, a fact whose classifier (or model) confidence is below this waits.

On the offline classifier's own examples the facts it files below 0.7 are the bottom 13%, and
they hold every fact it files in the wrong layer; model facts under 0.5 are dropped anyway
(:data:`squad.extraction.job.MODEL_MIN_CONFIDENCE`)."""
MAX_ID = 2**31 - 1
"""The largest id the store's INTEGER key holds on every backend."""


def held(decision: Decision, mode: str) -> bool:
    """Whether ``decision`` waits for review under ``mode`` (pure)."""
    if mode == "off" or decision.kind != "write":
        return False
    return mode == "all" or decision.candidate.confidence < REVIEW_CONFIDENCE


def review_key(text: str) -> str:
    """What makes two proposals the same fact: the sha256 of the normalised text."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def hold_for_review(
    memory: MemoryService,
    ctx: AgentContext,
    decisions: Sequence[Decision],
    *,
    source: str,
    seqs: dict[int, int],
    run_id: str | None = None,
) -> tuple[list[Decision], list[dict[str, Any]]]:
    """Queue the decisions that wait under the agent's ``memory.review``; (the decisions to
    apply now, one entry per held fact for the pass's ``dropped`` list, saying where it
    waits or why it was not queued)."""
    mode = ctx.review
    if mode == "off":
        return list(decisions), []
    now_apply: list[Decision] = []
    entries: list[dict[str, Any]] = []
    for d in decisions:
        if not held(d, mode):
            now_apply.append(d)
            continue
        c = d.candidate
        text = " ".join(c.text.split())
        turns = tuple(seqs[i] for i in c.source_turns if i in seqs)
        try:
            refuse_secrets(text, what="the fact")
        except SecretInMemoryError as exc:
            entries.append(_entry(c, f"not queued: {exc}", source_seqs=list(turns)))
            continue
        record, queued = memory.store.review.propose(
            NewProposal(
                squad=ctx.squad.name,
                agent=ctx.agent.id,
                layer=c.scope,
                text=text,
                key=review_key(text),
                confidence=c.confidence,
                extractor=c.extractor,
                source=source,
                section=(c.section or "Insights") if c.scope == "project" else None,
                subject=c.subject,
                turns=turns,
                run_id=run_id,
                expires_on=c.expires_on,
                detail=redact(c.detail)[0] if c.detail else None,
            )
        )
        if queued:
            reason = f"awaiting review as #{record.id}"
        elif record.status == "rejected":
            reason = f"rejected in review before (#{record.id})"
        else:
            reason = f"already awaiting review as #{record.id}"
        entries.append(_entry(c, reason, review_id=record.id, source_seqs=list(turns)))
    return now_apply, entries


@dataclass(frozen=True)
class Reviewed:
    """One decision taken: the row as decided, and what approving it wrote."""

    record: ReviewRecord
    written: bool
    """True when the approved fact was written (False: rejected, or already in memory)."""
    where: str | None
    """``agents/<id>/memory.md#Section`` or ``fact:<id>`` when written."""
    note: str
    """What happened, for a person: where it went, or why nothing was written."""


class ReviewQueue:
    """A person's side of the queue, on the memory service (thread-safe: no state of its own)."""

    def __init__(
        self, memory: MemoryService, decisions: DecisionLog, *, clock: Clock = utc_now
    ) -> None:
        self.memory = memory
        self.decisions = decisions
        self._clock = clock

    def items(
        self, ctx: AgentContext, *, status: ReviewStatus | None = "pending", limit: int = 200
    ) -> list[ReviewRecord]:
        """The agent's proposals: pending oldest first; decided (or all) newest first."""
        return self.memory.store.review.items(
            ctx.squad.name, ctx.agent.id, status=status, limit=limit
        )

    def approve(self, ctx: AgentContext, ids: Sequence[int], *, actor: str) -> list[Reviewed]:
        """Write each pending proposal as the extractor would have; every id is checked
        before anything is written (one unknown or decided id: nothing changes)."""
        records = self._pending(ctx, ids)
        done: list[Reviewed] = []
        with self._change(ctx, actor, "approved", records) as change:
            for record in records:
                done.append(self._approve(ctx, record, None, actor, change))
        return done

    def edit(self, ctx: AgentContext, review_id: int, text: str, *, actor: str) -> Reviewed:
        """Approve a pending proposal with ``text`` instead (checked for credentials, and
        refused when the extractor's checks would not file it: a question, a suggestion)."""
        (record,) = self._pending(ctx, [review_id])
        text = " ".join(text.split())
        if not text:
            raise UsageError("the edited text is empty: give the fact as it should be kept")
        refuse_secrets(text, what="the edited fact")
        reason = drop_reason(_candidate(record, text))
        if reason is not None:
            raise UsageError(
                f"the edited text would not be kept as a fact ({reason}); state it as a "
                "plain, lasting fact"
            )
        with self._change(ctx, actor, "edited and approved", [record]) as change:
            return self._approve(ctx, record, text, actor, change)

    def reject(self, ctx: AgentContext, ids: Sequence[int], *, actor: str) -> list[Reviewed]:
        """Turn proposals down; kept as rejected, so the same text is never queued again."""
        records = self._pending(ctx, ids)
        done: list[Reviewed] = []
        with self._change(ctx, actor, "rejected", records) as change:
            for record in records:
                decided = self.memory.store.review.decide(record.id, "rejected", by=actor)
                note = "rejected: it is not written, and not proposed again"
                self._audit(ctx, actor, "review-reject", decided, note)
                if change is not None:
                    change.keep = True
                    change.notes.append(f"rejected #{record.id} ({record.layer}): {record.text}")
                done.append(Reviewed(decided, False, None, note))
        return done

    # -- internals ---------------------------------------------------------------------------

    def _pending(self, ctx: AgentContext, ids: Sequence[int]) -> list[ReviewRecord]:
        listing = f"`squad memory review list {ctx.squad.name} {ctx.agent.id}` lists them"
        if not ids:
            raise UsageError(f"no review item ids given; {listing}")
        found: list[ReviewRecord] = []
        for review_id in dict.fromkeys(ids):
            record = None
            if 1 <= review_id <= MAX_ID:
                record = self.memory.store.review.get(review_id)
            if record is None or (record.squad, record.agent) != (ctx.squad.name, ctx.agent.id):
                raise NotFound(
                    f"no review item {review_id} for {ctx.squad.name}/{ctx.agent.id}; {listing}"
                )
            if record.status != "pending":
                raise UsageError(already_decided(record))
            found.append(record)
        return found

    @contextmanager
    def _change(
        self, ctx: AgentContext, actor: str, verb: str, records: Sequence[ReviewRecord]
    ) -> Iterator[Change | None]:
        ids = ", ".join(f"#{r.id}" for r in records)
        noun = "review item" if len(records) == 1 else "review items"
        subject = f"memory: {actor} {verb} {noun} {ids} for {ctx.agent.id}"
        with self.memory.change(ctx, actor, subject=subject) as change:
            if change is not None:
                change.trailers += [("Squad-Review", str(r.id)) for r in records]
            yield change

    def _approve(
        self,
        ctx: AgentContext,
        record: ReviewRecord,
        text: str | None,
        actor: str,
        change: Change | None,
    ) -> Reviewed:
        store = self.memory.store.review
        store.decide(record.id, "approved", by=actor, edited_text=text)  # claimed: one winner
        try:
            candidate = _candidate(record, text)
            known = existing_facts(self.memory, ctx)
            decisions = decide([candidate], related_facts(self.memory, ctx, [candidate], known))
            applied = apply_decisions(
                self.memory,
                ctx,
                decisions,
                now=self._clock(),
                source=record.source,
                seqs=dict(enumerate(record.turns)),
                run_id=record.run_id,
            )
            file_decisions(
                self.decisions, ctx, decisions, self._sources(ctx, record), written=applied.written
            )
        except BaseException:
            store.reopen(record.id)
            raise
        if applied.written:
            entry = applied.written[0]
            where = entry.get("where")
            written = entry["reason"] != "merged"
            note = (
                f"written to {where}"
                if written
                else f"not written: memory already says it ({where}, merged)"
            )
        else:
            entry = applied.dropped[0] if applied.dropped else {"reason": "nothing to write"}
            where, written = None, False
            target = f" ({entry['target']})" if entry.get("target") else ""
            note = f"not written: {entry['reason']}{target}"
        decided = store.settle(record.id, note)
        self._audit(ctx, actor, "review-approve", decided, note)
        if change is not None:
            change.keep = True
            edited = f" (edited from: {record.text})" if text is not None else ""
            change.notes.append(f"approved #{record.id}: {decided.final_text}{edited}; {note}")
        return Reviewed(decided, written, where if written else None, note)

    def _sources(self, ctx: AgentContext, record: ReviewRecord) -> list[ConversationMessage]:
        """The messages the fact came from, where the store still has them (a decision's
        reason may be in them), redacted as the extractor read them."""
        from squad.extraction.extract import redacted

        if not record.turns:
            return []
        found = {
            m.seq: m
            for m in self.memory.store.conversation.messages_at(
                ctx.squad.name, ctx.agent.id, record.turns
            )
        }
        batch = [
            ConversationMessage(
                i, "user" if found[seq].role == "user" else "assistant", found[seq].content, seq
            )
            for i, seq in enumerate(record.turns)
            if seq in found
        ]
        return redacted(batch)

    def _audit(
        self, ctx: AgentContext, actor: str, operation: str, record: ReviewRecord, note: str
    ) -> None:
        AuditLog(ctx.workspace).append(
            AuditRecord(
                time=self._clock().isoformat(),
                actor=actor,
                operation=operation,
                file=f"review:{record.id}",
                note=note,
                details={
                    "agent": ctx.agent.id,
                    "layer": record.layer,
                    "text": record.final_text,
                    "proposed": record.text,
                    "edited": record.edited_text is not None,
                    "confidence": record.confidence,
                },
            )
        )


def _candidate(record: ReviewRecord, text: str | None) -> Candidate:
    """The proposal as the extractor's candidate again (an edit gets its own subject)."""
    layer: Literal["project", "experiential"] = record.layer
    return Candidate(
        text=record.text if text is None else text,
        scope=layer,
        section=record.section,
        subject=record.subject if text is None else subject_for(text, layer),
        confidence=record.confidence,
        source_turns=tuple(range(len(record.turns))),
        expires_on=record.expires_on,
        detail=record.detail,
        extractor="model" if record.extractor == "model" else "offline",
    )
