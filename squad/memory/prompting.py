"""What a prompt gets of an agent's memory: the memory block, the supplementary block, and
the whole system prompt, as the model sees it or as a person previews it.

Layer A and Layer B share ``memory.max_tokens`` (B 40%, A 60%; :mod:`squad.memory.assembly`),
recall and working memory come after, and the global supplementary block has its own budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from squad.errors import UsageError
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
from squad.memory.boot import ensure_default_soul, load_boot_files
from squad.memory.boot_fit import FittedBoot, fit_boot_files
from squad.memory.layers import MemoryLayers
from squad.memory.recall import RecallPacker
from squad.memory.regions import Region, Regions, plan_regions
from squad.memory.working_file import WorkingRecord
from squad.model.window import ContextWindow
from squad.model.window import context_window as window_of
from squad.spec.models import ModelSpec
from squad.text.tokens import TokenCounter

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from squad.memory.embeddings import Embedder
    from squad.store.records import FactRecord

__all__ = ["Prompt", "PromptMemory", "working_tokens"]

EXPERIENCE_LIMIT = 200
"""Layer A candidates fetched per prompt: far more than a 2,000-token share can hold."""

SUPPLEMENTARY_PER_NAMESPACE = 50


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


class PromptMemory(MemoryLayers):
    """The prompt side of an agent's memory, on its layers (the base of the service)."""

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
