"""The memory service: one agent's layers brought together from files and the store.

This is the edge the CLI, the agent tools and the runtime use: it resolves an agent's Layer A
namespace, its memory.md and boot files, and builds exactly the memory block a prompt gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from squad.clock import Clock, utc_now
from squad.errors import NotFound, UsageError
from squad.history.change import Change
from squad.history.history import NO_HISTORY, History, RunWrites, WriteHook
from squad.history.message import FactChange, FactOp
from squad.memory.agent import AgentContext
from squad.memory.assembly import (
    Budget,
    LayerResult,
    MemoryBlock,
    SupplementaryEntry,
    assemble_system_prompt,
    build_memory_block,
    build_supplementary_block,
    recall_share,
    with_recall,
)
from squad.memory.audit import AuditLog, AuditRecord
from squad.memory.boot import ensure_default_soul, load_boot_files
from squad.memory.boot_fit import FittedBoot, fit_boot_files
from squad.memory.daily import DailyLog
from squad.memory.dedupe import SameAs, same_key
from squad.memory.files import MemoryFile
from squad.memory.fold import Folded, TopicSummaries
from squad.memory.recall import ChatterFilter, RecalledLine, RecallPacker
from squad.memory.recall_reader import RecallReader
from squad.memory.regions import Region, Regions, plan_regions
from squad.memory.search import ARCHIVE_SOURCE
from squad.memory.working import summary
from squad.memory.working_file import WorkingMemoryFile, WorkingRecord, working_runs
from squad.model.window import ContextWindow
from squad.model.window import context_window as window_of
from squad.spec.models import ModelSpec
from squad.store.records import MessageRecord, MessageRole, NewFact
from squad.text.secrets import contains_secret, redact, refuse_secrets
from squad.text.tokens import TokenCounter, counter_for_model

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from squad.history.log import MemoryEntry
    from squad.memory.embeddings import Embedder
    from squad.settings import Settings
    from squad.store import Store
    from squad.store.records import FactRecord, NamespaceRecord

__all__ = [
    "HistoryFactory",
    "MemoryService",
    "Prompt",
    "Remembered",
    "Reverted",
    "working_tokens",
]

HistoryFactory = Callable[[Path, str], History]
"""A workspace's history by folder and squad name (``App.history``)."""

Layer = Literal["project", "experiential"]
EXPERIENCE_LIMIT = 200
"""Layer A candidates fetched per prompt: far more than a 2,000-token share can hold."""
SUPPLEMENTARY_PER_NAMESPACE = 50
KNOWN_FACT_CANDIDATES = 20
"""Closest active facts a hand-remembered experiential fact is checked against for a repeat."""
WORKING_MEMORY_ACTOR = "working-memory"
"""Who the daily log says wrote a run's working memory summary."""


@dataclass(frozen=True)
class Reverted:
    """What a revert did: the change it undid, and how."""

    change: MemoryEntry
    removed: tuple[str, ...]
    """memory.md lines taken out (the change had added them)."""
    restored: tuple[str, ...]
    """memory.md lines put back (the change had removed them)."""
    facts: tuple[FactChange, ...]


@dataclass(frozen=True)
class Prompt:
    """One system prompt, its regions, and the tokens each region of it holds."""

    text: str
    regions: Regions
    window: ContextWindow
    used: dict[Region, int]
    """Tokens used per region the system prompt holds (boot: the header, the memory block's
    frame and the boot files), plus the message's as ``turn``; the history is the caller's."""
    block: MemoryBlock
    supplementary: LayerResult
    boot: FittedBoot
    working: WorkingRecord | None = None
    """The working memory the prompt ends with, when :meth:`MemoryService.preview` read it."""

    def to_dict(self) -> dict[str, Any]:
        """What ``squad memory context --json`` and the dashboard show: the memory block
        (:meth:`MemoryBlock.to_dict`), the supplementary block, the boot files' cuts, the
        window and every region's budget and use (None: not measured here)."""
        data = self.block.to_dict()
        data["supplementary"] = {
            "text": self.supplementary.text,
            "tokens": self.supplementary.tokens,
            "budget": self.regions.budget("supplementary"),
            "dropped_lines": self.supplementary.dropped,
        }
        data["boot"] = {"tokens": self.used["boot"], "dropped_lines": dict(self.boot.dropped)}
        data["context_window"] = {"tokens": self.window.tokens, "source": self.window.source}
        data["regions"] = [row.to_dict() for row in self.regions.report(self.used)]
        data["working_memory"] = self.working.to_dict() if self.working is not None else None
        return data


@dataclass(frozen=True)
class Remembered:
    layer: Layer
    where: str
    """``agents/<id>/memory.md#Section`` or ``fact:<id>``."""
    fact: FactRecord | None = None
    already: str | None = None
    """When nothing was stored: the memory.md line or ``fact:<id>`` that already says it."""


class MemoryService:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        clock: Clock = utc_now,
        embedder: Embedder | None = None,
        histories: HistoryFactory | None = None,
        same_as: SameAs = same_key,
        chatter: ChatterFilter | None = None,
    ) -> None:
        """``embedder`` ranks Layer A semantically (``load_embedder``); None: lexically.
        ``histories`` gives each workspace's history (None: memory changes are not
        committed, as in a home with ``history.enabled: false``). ``same_as`` judges
        whether a memory.md line repeats another (the App hands in the extractor's).
        ``chatter`` tells the model's chatter, which recall leaves out (None: recall leaves
        nothing out)."""
        self.settings = settings
        self.store = store
        self._clock = clock
        self.embedder = embedder
        self._histories = histories
        self.same_as = same_as
        self.recall = RecallReader(store, chatter=chatter)
        self._namespace_ids: dict[tuple[str, str], int] = {}

    # -- layers ----------------------------------------------------------------------------

    def namespace(self, ctx: AgentContext) -> NamespaceRecord:
        """The agent's Layer A namespace, created (disabled) on first use."""
        return self.store.memory.ensure_namespace(ctx.identity, ctx.namespace_name)

    def namespace_id(self, ctx: AgentContext) -> int:
        """The namespace id, ensured once per service (ids never change; a write per turn would)."""
        key = (ctx.identity, ctx.namespace_name)
        if key not in self._namespace_ids:
            self._namespace_ids[key] = self.namespace(ctx).id
        return self._namespace_ids[key]

    def archive_id(self, ctx: AgentContext) -> int:
        """The agent's conversation archive namespace id, created on first use."""
        key = (ctx.archive_identity, ctx.archive_name)
        if key not in self._namespace_ids:
            record = self.store.memory.ensure_namespace(*key)
            self._namespace_ids[key] = record.id
        return self._namespace_ids[key]

    def memory_file(self, ctx: AgentContext) -> MemoryFile:
        return MemoryFile(
            ctx.workspace,
            ctx.agent.id,
            cap_bytes=self.settings.memory_file_cap_bytes,
            clock=self._clock,
            history=self._hook(ctx),
            same_as=self.same_as,
        )

    def daily_log(self, ctx: AgentContext) -> DailyLog:
        return DailyLog(
            ctx.workspace,
            ctx.agent.id,
            cap_bytes=self.settings.memory_file_cap_bytes,
            clock=self._clock,
            history=self._hook(ctx),
        )

    # -- working memory --------------------------------------------------------------------

    def working_file(self, ctx: AgentContext, run_id: str | None = None) -> WorkingMemoryFile:
        """The agent's working memory file of run ``run_id`` (default: ``ctx``'s run)."""
        run = run_id or ctx.run_id
        if run is None:
            raise UsageError("working memory belongs to a run; this agent is not in one")
        return WorkingMemoryFile(ctx.workspace, ctx.agent.id, run, clock=self._clock)

    def working_runs(self, ctx: AgentContext) -> list[str]:
        """The runs that have a working memory file of the agent (not ended, or left behind)."""
        return working_runs(ctx.workspace, ctx.agent.id)

    def working_memory(self, ctx: AgentContext) -> WorkingRecord | None:
        """The agent's working memory: of ``ctx``'s run when it has one, else the one changed
        last (what ``squad memory context`` and the dashboard show); None when there is
        none, or memory is off for the agent."""
        if not ctx.memory_enabled:
            return None
        if ctx.run_id is not None:
            return self.working_file(ctx).read()
        records = [self.working_file(ctx, run).read() for run in self.working_runs(ctx)]
        found = [r for r in records if r is not None]
        return max(found, key=lambda r: r.updated_at) if found else None

    def log_working_memory(
        self, ctx: AgentContext, record: WorkingRecord, *, ended: str | None
    ) -> str | None:
        """Keep ``record`` in the agent's daily log as its run ends with status ``ended``
        (None: found left behind by a run that never ended it); the log's path, None when
        there was nothing to keep."""
        if record.state.empty:
            return None
        text = summary(record.state, run_id=record.run_id, ended=ended)
        return self.daily_log(ctx).append(redact(text)[0], actor=WORKING_MEMORY_ACTOR)

    # -- history ---------------------------------------------------------------------------

    def consolidate(
        self,
        ctx: AgentContext,
        *,
        actor: str = "consolidation",
        summarise: TopicSummaries | None = None,
    ) -> Folded | None:
        """Fold the oldest Insights of the agent's memory.md when it holds more than
        :data:`~squad.memory.fold.NIGHTLY_AT` of its cap (the nightly maintenance): the
        daily log and memory.md change together, audited, and committed as one change
        outside a run. None when the file needed no fold. ``summarise`` writes the summary
        lines (a model, :mod:`squad.memory.fold_summary`); without it they are extractive."""
        subject = f"memory: {actor} folded the oldest Insights of {ctx.agent.id}"
        with self.change(ctx, actor, subject=subject):
            return self.memory_file(ctx).consolidate(actor=actor, summarise=summarise)

    def history(self, workspace: Path, squad: str) -> History | None:
        """The workspace's history, None when history is off."""
        if self._histories is None:
            return None
        history = self._histories(workspace, squad)
        return history if history.enabled else None

    def _hook(self, ctx: AgentContext) -> WriteHook:
        history = self.history(ctx.workspace, ctx.squad.name)
        if history is None:
            return NO_HISTORY
        return RunWrites(ctx.workspace) if ctx.run_id is not None else history

    @contextmanager
    def change(
        self, ctx: AgentContext, actor: str, *, subject: str | None = None
    ) -> Iterator[Change | None]:
        """A memory change of ``ctx``'s agent outside a run, committed as one (None when
        history is off, or inside a run, whose commit takes the change)."""
        if ctx.run_id is not None:
            yield None
            return
        with self._change(ctx.workspace, ctx.squad.name, ctx.agent.id, actor, subject) as change:
            yield change

    @contextmanager
    def _change(
        self, workspace: Path | None, squad: str, agent: str, actor: str, subject: str | None
    ) -> Iterator[Change | None]:
        history = None if workspace is None else self.history(workspace, squad)
        if history is None:
            yield None
            return
        with history.change(actor, agent=agent, subject=subject) as change:
            yield change

    def history_of(self, ctx: AgentContext, *, limit: int | None = None) -> list[MemoryEntry]:
        """Every change to the agent's memory (memory.md lines and Layer A facts) in its
        workspace's history, newest first."""
        from squad.history.log import memory_entries

        return memory_entries(self._history_repo(ctx), ctx.agent.id, limit=limit)

    def revert(self, ctx: AgentContext, change_id: str, *, actor: str = "cli") -> Reverted:
        """Undo one change of :meth:`history_of` as a new change (committed, audited): the
        memory.md lines it added removed and those it removed put back, the facts it added
        forgotten and those it forgot, superseded or purged brought back. History is never
        rewritten; a revert of a revert does the change again."""
        from squad.errors import HistoryUnavailable
        from squad.history.engine import blob_at
        from squad.history.log import memory_entry, memory_path
        from squad.history.message import Kind

        repo = self._history_repo(ctx)
        entry = memory_entry(repo, ctx.agent.id, change_id)
        commit = repo[entry.commit]
        if entry.kind == Kind.START.value or not commit.parent_ids:
            raise UsageError(
                f"{entry.id} is where the history starts, not a change; revert the changes "
                "after it instead"
            )
        path = memory_path(ctx.agent.id)
        before = blob_at(repo, repo[commit.parent_ids[0]].tree, path)
        after = blob_at(repo, commit.tree, path)
        undone: list[FactChange] = []
        subject = f"memory: {actor} reverted {entry.id} for {ctx.agent.id}"
        with self.change(ctx, actor, subject=subject) as change:
            if change is None:
                raise HistoryUnavailable("history is off for this workspace")
            change.trailers.append(("Squad-Reverts", entry.commit))
            change.notes.append(f"undoes {entry.id}: {entry.subject}")
            if before != after:
                self.memory_file(ctx).undo(before, after, actor=actor)
            for fact in entry.facts:
                done = self._undo_fact(ctx, fact, actor)
                if done is not None:
                    undone.append(done)
                    change.fact(done)
            if before == after and not undone:
                raise UsageError(
                    f"nothing to undo: the facts {entry.id} changed are already as they were "
                    "before it"
                )
        removed, added = (list(entry.added), list(entry.removed)) if before != after else ([], [])
        return Reverted(entry, tuple(removed), tuple(added), tuple(undone))

    def _undo_fact(self, ctx: AgentContext, fact: FactChange, actor: str) -> FactChange | None:
        """Undo what happened to one fact; the change made (None: nothing left to undo)."""
        from squad.store.records import FactStatus

        op = fact.op.undo()
        if fact.op is FactOp.PURGED:
            made = self._remember_fact(ctx, fact.text, actor).fact
            return (
                None if made is None else FactChange(FactOp.ADDED, made.id, ctx.agent.id, fact.text)
            )
        record = self.store.memory.get_fact(fact.fact_id)
        if record is None:
            return None
        if op is FactOp.FORGOTTEN:
            if record.status is FactStatus.FORGOTTEN:
                return None
            self.store.memory.forget(fact.fact_id)
        else:
            if record.status is FactStatus.ACTIVE:
                return None
            self.store.maintenance.revive(fact.fact_id, any_status=True)
        self._audit(ctx.workspace, actor, f"revert:{op.value}", f"fact:{fact.fact_id}", None)
        return FactChange(op, fact.fact_id, ctx.agent.id, record.text)

    def _history_repo(self, ctx: AgentContext) -> Any:
        from squad.errors import HistoryUnavailable

        history = self.history(ctx.workspace, ctx.squad.name)
        if history is None:
            raise HistoryUnavailable(
                "history is off (history.enabled in settings.yaml), so memory changes are not kept",
                state="off",
            )
        return history.open()

    def note_fact(self, ctx: AgentContext, op: FactOp, fact_id: int, text: str) -> None:
        """Tell the memory change open for ``ctx``'s workspace (if any) what happened to a
        Layer A fact, so its commit records it."""
        from squad.history.change import active

        change = active(ctx.workspace)
        if change is not None:
            change.fact(FactChange(op, fact_id, ctx.agent.id, text))

    def counter(self, ctx: AgentContext) -> TokenCounter:
        return counter_for_model(ctx.model)

    # -- writes ----------------------------------------------------------------------------

    def remember(
        self,
        ctx: AgentContext,
        text: str,
        *,
        layer: Layer,
        section: str | None = None,
        actor: str = "cli",
    ) -> Remembered:
        """Store one fact: a dated line in memory.md (Insights by default) or a Layer A fact."""
        text = " ".join(text.split())
        if not text:
            raise UsageError("nothing to remember: the text is empty")
        refuse_secrets(text, what="the fact")
        if layer == "project":
            target = section or "Insights"
            day = self._clock().date().isoformat()
            with self.change(ctx, actor, subject=f"memory: {actor} remembered for {ctx.agent.id}"):
                result = self.memory_file(ctx).append(
                    target, f"- {text} ({day})", actor=actor, dedupe=True
                )
            where = f"agents/{ctx.agent.id}/memory.md#{target}"
            if not result.written and result.known:
                return Remembered("project", where, already=result.known[0].same_as.strip())
            return Remembered("project", where)
        if section is not None:
            raise UsageError("--section applies to project memory only")
        same = self._known_fact(ctx, text)
        if same is not None:
            return Remembered("experiential", f"fact:{same.id}", same, already=f"fact:{same.id}")
        with self.change(
            ctx, actor, subject=f"memory: {actor} remembered for {ctx.agent.id}"
        ) as change:
            remembered = self._remember_fact(ctx, text, actor)
            if change is not None and remembered.fact is not None:
                change.fact(FactChange(FactOp.ADDED, remembered.fact.id, ctx.agent.id, text))
            return remembered

    def _known_fact(self, ctx: AgentContext, text: str) -> FactRecord | None:
        """The agent's active experiential fact that already says ``text`` (the same judgement
        as memory.md writes: :attr:`same_as`, over the facts the index finds closest)."""
        candidates = self.store.memory.relevant_facts(
            self.namespace_id(ctx), text, limit=KNOWN_FACT_CANDIDATES
        )
        found = self.same_as(text, [f.text for f in candidates])
        return None if found is None else candidates[found]

    def _remember_fact(self, ctx: AgentContext, text: str, actor: str) -> Remembered:
        namespace = self.namespace(ctx)
        embedder = self.embedder
        vector = b""
        if embedder is not None:  # embedded before any write: a failing embedder stores nothing
            from squad.memory.embeddings import vector_bytes

            vector = vector_bytes(embedder.embed([text])[0])
        fact = self.store.memory.add_fact(
            namespace.id, text, squad=ctx.squad.name, agent=ctx.agent.id, source=actor
        )
        if embedder is not None:
            self.store.memory.set_vectors([(fact.id, embedder.name, vector, embedder.dimensions)])
        self._audit(ctx.workspace, actor, "remember", f"fact:{fact.id}", namespace.name)
        return Remembered("experiential", f"fact:{fact.id}", fact)

    def archive(self, ctx: AgentContext, messages: Sequence[MessageRecord]) -> int:
        """Keep the user and assistant ``messages`` in the agent's conversation archive, so
        later turns can recall them; returns how many were added.

        Idempotent: messages at or before the newest archived seq are skipped (a pass that
        ran again after a crash adds nothing twice). A message the credential check refuses
        is left out of the archive (stored messages are already redacted; this is the last
        gate, as for every fact).
        """
        namespace = self.archive_id(ctx)
        after = self.archived_to(ctx)
        new = [
            NewFact(
                text=f"{ctx.speaker(m)}: {m.content.strip()}",
                squad=ctx.squad.name,
                agent=ctx.agent.id,
                run_id=m.run_id,
                turns=(m.seq,),
                source=ARCHIVE_SOURCE,
            )
            for m in sorted(messages, key=lambda m: m.seq)
            if m.seq > after
            and m.role in (MessageRole.USER, MessageRole.ASSISTANT)
            and m.content.strip()
            and not contains_secret(m.content)
        ]
        fresh, repeats = self.store.archive.add(namespace, new)
        return fresh + repeats

    def archived_to(self, ctx: AgentContext) -> int:
        """The seq of the newest message in the agent's archive (0 when it is empty)."""
        namespace = self.archive_id(ctx)
        newest = self.store.memory.newest_fact(namespace)  # archives made before archive_texts
        before = max(newest.turns, default=0) if newest is not None else 0
        return max(before, self.store.archive.reaches(namespace))

    def catch_up_archive(self, ctx: AgentContext, up_to: int, *, page: int = 500) -> int:
        """Archive the messages up to seq ``up_to`` the archive lacks (history recorded before
        archives existed, which the extractor had already read); returns how many."""
        after, added = self.archived_to(ctx), 0
        while after < up_to:
            messages = self.store.conversation.messages(
                ctx.squad.name, ctx.agent.id, after_seq=after, limit=page
            )
            messages = [m for m in messages if m.seq <= up_to]
            if not messages:
                break
            added += self.archive(ctx, messages)
            after = messages[-1].seq
        return added

    def recalled(
        self,
        ctx: AgentContext,
        message: str,
        *,
        before_seq: int | None = None,
        exclude: Iterable[int] = (),
    ) -> list[RecalledLine]:
        """Earlier messages of the agent's conversation relevant to ``message``, best first,
        each text once (the prompt's recall takes the best that fit: :meth:`memory_block`).

        ``before_seq``: only messages older than it (the prompt holds the rest); ``exclude``:
        seqs already shown another way (as the source of a fact in Layer A).
        """
        if not message.strip():
            return []
        return self.recall.ranked(
            ctx, self.archive_id(ctx), message, before_seq=before_seq, exclude=tuple(exclude)
        )

    def forget(
        self,
        fact_id: int,
        *,
        purge: bool = False,
        actor: str = "cli",
        workspace: Path | None = None,
        reason: str | None = None,
    ) -> FactRecord | None:
        """Take a fact out of memory: kept for audit (forgotten), or ``purge``d for good;
        ``reason`` goes into the workspace's audit record and history, credentials redacted."""
        reason = redact(reason)[0] if reason else reason
        fact = self.store.memory.get_fact(fact_id)
        if fact is None:
            raise NotFound(f"no experiential fact with id {fact_id}; see `squad memory show`")
        verb = "purged" if purge else "forgot"
        subject = f"memory: {actor} {verb} fact {fact_id}"
        with self._change(workspace, fact.squad, fact.agent, actor, subject) as change:
            if purge:
                self.store.memory.purge(fact_id)
            else:
                fact = self.store.memory.forget(fact_id)
            if workspace is not None:
                operation = "purge" if purge else "forget"
                self._audit(workspace, actor, operation, f"fact:{fact_id}", reason)
            if change is not None:
                op = FactOp.PURGED if purge else FactOp.FORGOTTEN
                change.fact(FactChange(op, fact_id, fact.agent, fact.text))
                if reason:
                    change.notes.append(f"why: {reason}")
        return None if purge else fact

    def revive(
        self, fact_id: int, *, actor: str = "cli", workspace: Path | None = None
    ) -> FactRecord:
        """Bring a dormant fact back into retrieval (audited, and committed as a change)."""
        fact = self.store.memory.get_fact(fact_id)
        if fact is None:
            raise NotFound(f"no experiential fact with id {fact_id}; see `squad memory show`")
        subject = f"memory: {actor} revived fact {fact_id}"
        with self._change(workspace, fact.squad, fact.agent, actor, subject) as change:
            revived = self.store.maintenance.revive(fact_id)
            if workspace is not None:
                self._audit(workspace, actor, "revive", f"fact:{fact_id}", None)
            if change is not None and revived.status != fact.status:
                change.fact(FactChange(FactOp.REVIVED, fact_id, fact.agent, fact.text))
        return revived

    def _audit(
        self, workspace: Path, actor: str, operation: str, where: str, note: str | None
    ) -> None:
        AuditLog(workspace).append(
            AuditRecord(
                time=self._clock().isoformat(),
                actor=actor,
                operation=operation,
                file=where,
                note=note,
            )
        )

    # -- reads -----------------------------------------------------------------------------

    def plan(
        self,
        ctx: AgentContext,
        *,
        model: ModelSpec | None = None,
        context_window: int | None = None,
    ) -> tuple[Regions, ContextWindow]:
        """The regions of the agent's prompts (:mod:`squad.memory.regions`) and the window
        they are sized from: ``context_window`` if given, else ``model``'s (default: the
        agent's model). The squad's memory budgets that are set win over the window's."""
        spec = model or ctx.model_spec
        window = window_of(spec, option=context_window)
        policy = ctx.squad.memory
        settings: tuple[tuple[Region, int | None], ...] = (
            ("memory", policy.max_tokens),
            ("recall", policy.recall_max_tokens),
            ("supplementary", policy.supplementary_max_tokens),
        )
        explicit = {region: value for region, value in settings if value is not None}
        regions = plan_regions(window.tokens, answer_reserve=spec.max_tokens, explicit=explicit)
        return regions, window

    def memory_block(
        self,
        ctx: AgentContext,
        *,
        message: str = "",
        max_tokens: int | None = None,
        touch: bool = True,
        recall_tokens: int | None = None,
        recall_before: int | None = None,
        regions: Regions | None = None,
    ) -> MemoryBlock:
        """Exactly the ``## Agent Memory`` block of the agent's next prompt.

        ``max_tokens`` and ``recall_tokens`` override the memory and recall budgets of
        ``regions`` (default: :meth:`plan`'s); ``recall_before`` is the seq of the oldest
        message the prompt holds (older ones may be recalled).
        """
        if max_tokens is not None and max_tokens < 0:
            raise UsageError(f"--max-tokens must be 0 or more, got {max_tokens}")
        if recall_tokens is not None and recall_tokens < 0:
            raise UsageError(f"the recall budget must be 0 or more, got {recall_tokens}")
        total, recall_budget = max_tokens, recall_tokens
        if total is None or recall_budget is None:
            planned = regions or self.plan(ctx)[0]
            total = planned.budget("memory") if total is None else total
            recall_budget = planned.budget("recall") if recall_budget is None else recall_budget
        budget = Budget(total, flow=ctx.squad.memory.share_unused)
        counter = self.counter(ctx)
        if not ctx.memory_enabled:
            return build_memory_block([], None, budget, counter)
        facts = self.store.memory.relevant_facts(
            self.namespace_id(ctx), message, limit=EXPERIENCE_LIMIT
        )
        if self.embedder is not None and message.strip():
            facts = self._semantic_order(self.embedder, message, facts)
        document = self.memory_file(ctx).snapshot().document
        block = build_memory_block(
            [f.text for f in facts],
            document,
            budget,
            counter,
            message=message,
            recall_budget=recall_budget,
        )
        shown_in_a = set(block.shown[: block.experiential.kept])
        shown_facts = [f for f in facts if f.text in shown_in_a]
        sources = tuple(sorted({seq for f in shown_facts for seq in f.turns}))
        block = replace(block, experience_sources=sources)
        if recall_budget > 0 and message.strip():
            packer = RecallPacker(recall_share(block), counter, shown=block.shown)
            read = self.recall.fill(
                ctx,
                self.archive_id(ctx),
                message,
                packer,
                before_seq=recall_before,
                exclude=sources,
            )
            block = with_recall(block, packer, counter, read=read)
        if touch and shown_facts:
            self.store.memory.touch_facts(f.id for f in shown_facts)
        return block

    def _semantic_order(
        self, embedder: Embedder, message: str, facts: list[FactRecord]
    ) -> list[FactRecord]:
        """The lexical candidates reranked by similarity to ``message``.

        Candidates without a vector of this embedder are embedded (with the message, in one
        call) and their vectors stored, so each fact is embedded once, when first needed.
        """
        from squad.memory.embeddings import vector_bytes, vector_from_bytes
        from squad.memory.ranking import embedding_text, rerank

        if not facts:
            return facts
        stored = self.store.memory.vectors([f.id for f in facts], embedder.name)
        vectors: dict[int, npt.NDArray[np.float32]] = {}
        for fact_id, data in stored.items():
            vector = vector_from_bytes(data, embedder.dimensions)
            if vector is not None:
                vectors[fact_id] = vector
        missing = [f for f in facts if f.id not in vectors]
        embedded = embedder.embed([message, *(embedding_text(f.text, f.subject) for f in missing)])
        new = dict(zip((f.id for f in missing), embedded[1:], strict=True))
        if new:
            self.store.memory.set_vectors(
                (fact_id, embedder.name, vector_bytes(vector), embedder.dimensions)
                for fact_id, vector in new.items()
            )
        return rerank(embedded[0], facts, vectors | new)

    def supplementary_block(
        self, ctx: AgentContext, *, message: str = "", regions: Regions | None = None
    ) -> LayerResult:
        """Other agents' enabled experience; never the agent's own (it has Layer A), within
        the supplementary budget of ``regions`` (default: :meth:`plan`'s)."""
        budget = (regions or self.plan(ctx)[0]).budget("supplementary")
        counter = self.counter(ctx)
        own = ctx.identity
        columns: list[list[SupplementaryEntry]] = []
        for namespace in self.store.memory.enabled_namespaces():
            if namespace.identity == own:
                continue
            facts = self.store.memory.relevant_facts(
                namespace.id, message, limit=SUPPLEMENTARY_PER_NAMESPACE
            )
            columns.append([SupplementaryEntry(namespace.name, f.text) for f in facts])
        interleaved = [
            row[i]
            for i in range(max(map(len, columns), default=0))
            for row in columns
            if i < len(row)
        ]
        return build_supplementary_block(interleaved, budget, counter)

    def system_prompt(
        self,
        ctx: AgentContext,
        *,
        message: str = "",
        recall_before: int | None = None,
        model: ModelSpec | None = None,
    ) -> str:
        """The whole system prompt for the agent's next turn (:meth:`prompt`'s text)."""
        return self.prompt(ctx, message=message, recall_before=recall_before, model=model).text

    def preview(
        self,
        ctx: AgentContext,
        *,
        message: str = "",
        max_tokens: int | None = None,
        context_window: int | None = None,
    ) -> Prompt:
        """What the agent's next prompt in a run would hold, touching nothing: :meth:`prompt`
        ending with the working memory of its run under way (:meth:`working_memory`), which
        it carries (``squad memory context`` and the dashboard's agent page show this)."""
        working = self.working_memory(ctx)
        prompt = self.prompt(
            ctx,
            message=message,
            max_tokens=max_tokens,
            context_window=context_window,
            touch=False,
            working=working.state.render() if working is not None else "",
        )
        return replace(prompt, working=working)

    def prompt(
        self,
        ctx: AgentContext,
        *,
        message: str = "",
        recall_before: int | None = None,
        model: ModelSpec | None = None,
        context_window: int | None = None,
        max_tokens: int | None = None,
        touch: bool = True,
        working: str = "",
    ) -> Prompt:
        """The system prompt for the agent's next turn, read fresh from disk and store, with
        its regions (:meth:`plan` for ``model``, default the agent's, or ``context_window``)
        and the tokens each holds.

        ``recall_before``: the seq of the oldest message the turn sends as history (recall
        brings back only older ones). ``max_tokens`` overrides the memory budget (``squad
        memory context --max-tokens``). In a run (``ctx.run_id``) the prompt ends with the
        agent's working memory of that run, counted in the working region; a chat is no run
        and has none. ``working`` gives that section's text instead (rendered, '' for none).
        """
        from squad.prompts import load

        regions, window = self.plan(ctx, model=model, context_window=context_window)
        counter = self.counter(ctx)
        ensure_default_soul(self.settings.home)
        header = load("agent_header.md").format(
            name=ctx.agent.display_name,
            agent_id=ctx.agent.id,
            squad=ctx.squad.name,
            role=ctx.agent.role,
            instructions=f"Instructions: {ctx.agent.instructions.strip()}\n"
            if ctx.agent.instructions.strip()
            else "",
            goal=ctx.squad.goal.strip() or "(none given)",
            team="\n".join(
                f"- {a.id}: {a.role}" + (" (lead)" if a is ctx.squad.lead else "")
                for a in ctx.squad.agents
            ),
        )
        block = self.memory_block(
            ctx,
            message=message,
            max_tokens=max_tokens,
            touch=touch,
            recall_before=recall_before,
            regions=regions,
        )
        supplementary = (
            self.supplementary_block(ctx, message=message, regions=regions)
            if ctx.memory_enabled
            else LayerResult("", 0, 0, 0)
        )
        fixed = counter.count(header.strip()) + block.frame_tokens
        boot = fit_boot_files(
            load_boot_files(self.settings.home, ctx.workspace),
            regions.budget("boot") - fixed,
            counter,
        )
        if not working and ctx.run_id is not None and ctx.memory_enabled:
            record = self.working_memory(ctx)
            working = record.state.render() if record is not None else ""
        text = assemble_system_prompt(header, boot.files, block, supplementary, working)
        used: dict[Region, int] = {
            "boot": fixed + boot.tokens,
            "memory": block.experiential.tokens + block.project.tokens,
            "recall": block.recall.tokens,
            "supplementary": supplementary.tokens,
            "working": working_tokens(working, counter),
            "turn": counter.count(message),
        }
        return Prompt(text, regions, window, used, block, supplementary, boot)


def working_tokens(working: str, counter: TokenCounter) -> int:
    """Tokens the rendered working-memory section takes in the prompt (0: none)."""
    return counter.count(working.strip()) if working.strip() else 0
