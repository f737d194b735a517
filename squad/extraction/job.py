"""One extraction pass over one agent's new messages: claim, read, extract, check, write, record.

The watermark in the store says how far the agent's messages have been read. A pass claims the
agent (one pass per agent at a time, across processes; a trigger meanwhile is coalesced into
one more pass), reads the user and assistant messages past the watermark in batches, and moves
the watermark past each batch it finished: written (when the model's answer is invalid twice,
the offline extractor's facts are written instead, and the pass says so). It does not move it
when the pass is skipped because there is too little to read or the model cannot be reached:
those messages wait for the next pass. Every pass is recorded in the
store and in the workspace's ``logs/memory-audit.jsonl``.

A pass can be given up (:class:`PassControl`): a process that must end while a model call is
still out hands the claim back, with the watermark of the batches already written, so the
next pass (any process) runs at once instead of waiting :data:`STALE_CLAIM` for it; the pass
itself then writes nothing more.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from squad.clock import Clock, utc_now
from squad.errors import ModelError
from squad.extraction.apply import Applied, apply_decisions, existing_facts, related_facts
from squad.extraction.candidates import ConversationMessage
from squad.extraction.decision_filing import file_decisions
from squad.extraction.extract import extract_batch
from squad.extraction.quality import decide
from squad.extraction.record import MessagesRead, PassReport, Status, record_pass
from squad.extraction.review import hold_for_review
from squad.memory.agent import AgentContext
from squad.memory.decisions.log import DecisionLog
from squad.memory.service import MemoryService
from squad.model.types import ChatModel, Message
from squad.store.records import MessageRecord
from squad.telemetry import NO_TELEMETRY, Attributes, Telemetry

__all__ = [
    "BATCH_MESSAGES",
    "MODEL_MIN_CONFIDENCE",
    "AgentExtractor",
    "PassControl",
    "interval_of",
]

BATCH_MESSAGES = 40
"""User and assistant messages per extraction call."""
MODEL_MIN_CONFIDENCE = 0.5
"""Model facts below this confidence are dropped (the offline classifier has its own bar)."""
STALE_CLAIM = timedelta(minutes=15)
"""A claim older than this belongs to a process that died: it is taken over."""

ModelFor = Callable[[AgentContext], ChatModel | None]
"""The agent's extraction model; None when no model is configured (offline extractor)."""


def interval_of(ctx: AgentContext) -> int:
    """Turns between extractions: the agent's setting, else the squad's (default 6)."""
    own = ctx.agent.memory.trigger_interval
    return own if own is not None else ctx.squad.memory.trigger_interval


class PassControl:
    """Shared by a running pass and the thread that may give it up (a process on its way out).

    Whichever comes first ends the claim: the pass finishing, or :meth:`give_up` handing it
    back with the watermark of the batches written so far. After a give-up the pass writes
    nothing more and leaves the claim alone: by then another process may hold it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._given_up = False
        self._claim: tuple[str, str] | None = None
        self._processed = 0

    @property
    def given_up(self) -> bool:
        return self._given_up

    def give_up(self, memory: MemoryService) -> bool:
        """Stop the pass and release its claim; True if there was a claim to release."""
        with self._lock:
            self._given_up = True
            claim, self._claim = self._claim, None
            if claim is None:
                return False
            memory.store.conversation.finish_extraction(*claim, self._processed)
            return True

    def _claimed(self, squad: str, agent: str, processed: int) -> bool:
        """The pass claimed the agent; False if it was given up meanwhile (then it releases)."""
        with self._lock:
            if not self._given_up:
                self._claim, self._processed = (squad, agent), processed
                return True
        return False

    def _progress(self, processed: int) -> None:
        with self._lock:
            self._processed = processed

    def _finish(self, memory: MemoryService, processed: int) -> bool | None:
        """End the claim as the pass: the finish's ``pending``, or None once given up."""
        with self._lock:
            if self._claim is None:
                return None
            squad, agent = self._claim
            self._claim = None
            return memory.store.conversation.finish_extraction(squad, agent, processed)


class AgentExtractor:
    """Runs extraction passes; shared by chat, runs and the daemon (thread-safe: no state
    besides its collaborators)."""

    def __init__(
        self,
        memory: MemoryService,
        model_for: ModelFor,
        *,
        clock: Clock = utc_now,
        log: Callable[[str, dict[str, Any]], None] | None = None,
        decisions: DecisionLog | None = None,
        telemetry: Telemetry = NO_TELEMETRY,
    ) -> None:
        """``decisions`` is where reasoned decisions are filed (default: a log on the memory
        service's store); each batch is an ``extract`` span of ``telemetry``."""
        self.memory = memory
        self.telemetry = telemetry
        self.model_for = model_for
        self._clock = clock
        self._log = log or (lambda event, fields: None)
        self.decisions = decisions or DecisionLog(memory.store, clock=clock)

    def run(
        self, ctx: AgentContext, *, force: bool = False, control: PassControl | None = None
    ) -> list[PassReport]:
        """Extract what is new for the agent; [] when another pass holds the claim (this
        trigger is then coalesced into that pass's next round). ``force`` ignores the
        minimum number of messages; ``control`` lets another thread give the pass up."""
        control = control or PassControl()
        conversation = self.memory.store.conversation
        squad, agent = ctx.squad.name, ctx.agent.id
        if not conversation.claim_extraction(squad, agent, stale_after=STALE_CLAIM):
            self._log("extraction_coalesced", {"squad": squad, "agent": agent})
            return []
        reports: list[PassReport] = []
        self._settle_hand_edits(ctx)
        # History read before archives existed is archived once, at the first pass after.
        self.memory.catch_up_archive(ctx, conversation.watermark(squad, agent).last_processed_seq)
        while True:
            processed = conversation.watermark(squad, agent).last_processed_seq
            if not control._claimed(squad, agent, processed):
                conversation.finish_extraction(squad, agent, processed)
                return reports
            try:
                processed = self._drain(ctx, processed, force, reports, control)
            finally:
                again = control._finish(self.memory, processed)
            if again is None:
                self._log("extraction_given_up", {"squad": squad, "agent": agent})
                return reports
            if not again or not conversation.claim_extraction(
                squad, agent, stale_after=STALE_CLAIM
            ):
                return reports

    def _settle_hand_edits(self, ctx: AgentContext) -> None:
        """Before a pass: a person's edits of the workspace committed as theirs, unless a run
        of the squad is going (its own writes are not committed yet; edits made meanwhile go
        into its commit)."""
        history = self.memory.history(ctx.workspace, ctx.squad.name)
        if history is None:
            return
        from squad import flock
        from squad.paths import run_lock

        live = flock.probe(run_lock(self.memory.settings.locks_dir, ctx.squad.name)).held
        history.record_hand_edits(run_live=live)

    def _drain(
        self,
        ctx: AgentContext,
        processed: int,
        force: bool,
        reports: list[PassReport],
        control: PassControl,
    ) -> int:
        """Batches past ``processed`` until none is left; returns the new watermark."""
        conversation = self.memory.store.conversation
        squad, agent = ctx.squad.name, ctx.agent.id
        interval = interval_of(ctx)
        first = True
        while True:
            page = conversation.messages(squad, agent, after_seq=processed, limit=500)
            talk = [m for m in page if m.role in ("user", "assistant")][:BATCH_MESSAGES]
            if talk and len(talk) < BATCH_MESSAGES:
                # The whole batch fits the page: nothing after it is left out.
                last = page[-1].seq
            elif talk:
                last = talk[-1].seq
            else:
                last = page[-1].seq if page else processed
            if control.given_up:
                return processed
            if not talk:
                return last
            if first and not force and len(talk) < interval:
                reports.append(
                    self._skip(
                        ctx,
                        processed,
                        last,
                        f"{len(talk)} messages, fewer than the trigger interval of {interval}",
                    )
                )
                return processed
            first = False
            self.memory.archive(ctx, talk)  # recall reads it; independent of the model
            attributes: Attributes = {
                "squad.operation": "extract",
                "squad.name": squad,
                "gen_ai.agent.name": agent,
                "squad.extraction.messages": len(talk),
            }
            with self.telemetry.span(f"extract {agent}", attributes):
                report = self._batch(ctx, talk, processed, last, control)
            if report is None:
                return processed  # given up during the model call: nothing was written
            reports.append(report)
            if report.status == "skipped":
                return processed  # the model is unreachable: the messages wait
            processed = last
            control._progress(processed)

    def _batch(
        self,
        ctx: AgentContext,
        talk: Sequence[MessageRecord],
        processed: int,
        last: int,
        control: PassControl,
    ) -> PassReport | None:
        """One batch extracted, checked, written and recorded; None when the pass was given
        up while the model was answering (the next pass reads the batch again)."""
        started = self._clock()
        batch = [
            ConversationMessage(i, _role(m), m.content, m.seq, m.author) for i, m in enumerate(talk)
        ]
        existing = existing_facts(self.memory, ctx)
        model = self.model_for(ctx)
        if model is not None and not self._affordable(ctx, model, batch):
            model = None  # the offline extractor, free: the squad's spend cap holds
        try:
            result = extract_batch(batch, existing, started.date(), model)
            if control.given_up:
                return None
        except ModelError as exc:
            if control.given_up:
                return None
            return self._record(
                ctx,
                started,
                "skipped",
                "model",
                processed,
                last,
                talk,
                Applied(),
                reason=f"the model is unreachable: {exc}",
            )
        self._spend(ctx, [reply.spend() for reply in result.replies])
        decisions = decide(
            result.candidates,
            related_facts(self.memory, ctx, result.candidates, existing),
            min_confidence=MODEL_MIN_CONFIDENCE if result.extractor == "model" else 0.0,
        )
        run_id = _run_of(talk)
        seqs = {m.index: m.seq for m in batch}
        with self.memory.change(ctx, "extractor") as change:  # one commit: what the pass wrote
            # Facts the agent's memory.review holds back wait in the queue, written nowhere.
            now_apply, held = hold_for_review(
                self.memory, ctx, decisions, source=_source(talk), seqs=seqs, run_id=run_id
            )
            applied = apply_decisions(
                self.memory,
                ctx,
                now_apply,
                now=started,
                source=_source(talk),
                seqs=seqs,
                run_id=run_id,
            )
            applied.dropped += held
            file_decisions(
                self.decisions,
                ctx,
                now_apply,
                batch,
                written=applied.written,
                on_error=lambda text, exc: self._log(
                    "decision_not_filed",
                    {
                        "squad": ctx.squad.name,
                        "agent": ctx.agent.id,
                        "text": text,
                        "error": str(exc),
                    },
                ),
            )
            report = self._record(
                ctx,
                started,
                "done",
                result.extractor,
                processed,
                last,
                talk,
                applied,
                reason=result.fallback,
            )
            if change is not None:
                change.subject = f"memory: extractor pass {report.record_id} for {ctx.agent.id}"
                change.trailers.append(("Squad-Pass", str(report.record_id)))
                if run_id is not None:
                    change.trailers.append(("Squad-Run", run_id))
                    change.notes.append(f"from the conversation of run {run_id}")
            return report

    def _skip(self, ctx: AgentContext, processed: int, last: int, reason: str) -> PassReport:
        # Logged, not audited: the audit log records memory changes, and this is none.
        self._log(
            "extraction_skipped", {"squad": ctx.squad.name, "agent": ctx.agent.id, "reason": reason}
        )
        return PassReport("skipped", "none", processed, last, reason)

    def _record(
        self,
        ctx: AgentContext,
        started: datetime,
        status: Status,
        extractor: str,
        processed: int,
        last: int,
        talk: Sequence[MessageRecord],
        applied: Applied,
        *,
        reason: str | None = None,
    ) -> PassReport:
        record_id = record_pass(
            self.memory,
            ctx,
            started=started,
            status=status,
            extractor=extractor,
            read=MessagesRead(processed + 1, last, tuple(m.message_id for m in talk)),
            applied=applied,
            reason=reason,
        )
        self._log(
            "extraction",
            {
                "squad": ctx.squad.name,
                "agent": ctx.agent.id,
                "status": status,
                "extractor": extractor,
                "written": len(applied.written),
                "dropped": len(applied.dropped),
                "reason": reason,
            },
        )
        return PassReport(
            status,
            extractor,
            processed + 1,
            last,
            reason,
            applied.written,
            applied.dropped,
            record_id,
        )

    def _affordable(
        self, ctx: AgentContext, model: ChatModel, batch: Sequence[ConversationMessage]
    ) -> bool:
        """Whether a model pass over ``batch`` fits the squad's spend cap: what the squad spent
        plus the most the call may cost (its batch as the prompt, with room for the answer,
        as a run reserves it) stays within ``limits.max_cost_usd``. A pass that does not fit
        is done by the offline extractor, and says so in the log."""
        prompt = [Message.user("\n".join(m.content for m in batch))]
        estimate = model.reserve_usd(prompt, ())
        if estimate <= 0:
            return True
        cap = ctx.squad.limits.max_cost_usd
        spent = self.memory.store.spend.of_squad(ctx.squad.name).cost_usd
        if spent + estimate <= cap:
            return True
        self._log(
            "extraction_offline",
            {
                "squad": ctx.squad.name,
                "agent": ctx.agent.id,
                "reason": f"a model pass may cost up to ${estimate:.4f} and the squad has spent "
                f"${spent:.4f} of its ${cap:g} cap (limits.max_cost_usd)",
            },
        )
        return False

    def _spend(self, ctx: AgentContext, spent: Sequence[Mapping[str, Any]]) -> None:
        for spend in spent:
            self.memory.store.spend.record(ctx.squad.name, agent=ctx.agent.id, **spend)


def _role(message: MessageRecord) -> Literal["user", "assistant", "task"]:
    """In a run nobody types: the user side of the conversation is the task prompt."""
    if message.role != "user":
        return "assistant"
    return "task" if message.run_id else "user"


def _run_of(talk: Sequence[MessageRecord]) -> str | None:
    runs = [m.run_id for m in talk if m.run_id]
    return runs[-1] if runs else None


def _source(talk: Sequence[MessageRecord]) -> str:
    """Where most of the batch came from: a run id, or a chat session and its day."""
    counts = Counter(
        m.run_id or f"{m.session_id or 'chat'}:{m.created_at.date().isoformat()}" for m in talk
    )
    return counts.most_common(1)[0][0]
