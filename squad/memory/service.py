"""The memory service: one agent's layers brought together from files and the store.

This is the edge the CLI, the agent tools and the runtime use. It stands on two bases: where
each layer lives (:mod:`squad.memory.layers`) and what a prompt gets of them
(:mod:`squad.memory.prompting`); here are the writes (remember, forget, revive, the archive)
and the workspace's history of memory changes (change, history_of, revert).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from squad.errors import NotFound, UsageError
from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog, AuditRecord
from squad.memory.prompting import PromptMemory
from squad.memory.recall import RecalledLine
from squad.store.records import MessageRecord, MessageRole, NewFact

if TYPE_CHECKING:
    from squad.history.change import Change
    from squad.history.log import MemoryEntry
    from squad.history.message import FactChange, FactOp
    from squad.memory.fold import Folded, TopicSummaries
    from squad.store.records import FactRecord


__all__ = ["MemoryService", "Remembered", "Reverted"]


Layer = Literal["project", "experiential"]
KNOWN_FACT_CANDIDATES = 20
"""Closest active facts a hand-remembered experiential fact is checked against for a repeat."""


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
class Remembered:
    layer: Layer
    where: str
    """``agents/<id>/memory.md#Section`` or ``fact:<id>``."""
    fact: FactRecord | None = None
    already: str | None = None
    """When nothing was stored: the memory.md line or ``fact:<id>`` that already says it."""


class MemoryService(PromptMemory):
    """An agent's memory, read (:class:`~squad.memory.prompting.PromptMemory`), written and
    reverted: the edge the CLI, the agent tools and the runtime use."""

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
        from squad.history.message import FactChange, FactOp
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
        from squad.history.message import FactChange

        change = active(ctx.workspace)
        if change is not None:
            change.fact(FactChange(op, fact_id, ctx.agent.id, text))

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
        from squad.history.message import FactChange, FactOp
        from squad.text.secrets import refuse_secrets

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
        from squad.memory.search import ARCHIVE_SOURCE
        from squad.text.secrets import contains_secret

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
        from squad.history.message import FactChange, FactOp
        from squad.text.secrets import redact

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
        from squad.history.message import FactChange, FactOp

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
