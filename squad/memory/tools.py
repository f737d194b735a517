"""The agent's memory tools: plain methods bound to one agent, wrapped for LangChain on demand.

Each tool returns text for the model. Refusals (stale write, cap, credential, bad section) are
returned as a sentence the model can act on, never raised into the agent loop. A write that
repeats a credential value found earlier in the agent's conversation (``known``) is refused
like one the detector recognises.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import date
from typing import TYPE_CHECKING

from squad.errors import MemoryError_, UsageError
from squad.memory.agent import AgentContext
from squad.memory.assembly import Budget, build_memory_block
from squad.memory.boot import BOOT_FILES, WORKSPACE_RULES_TITLE, load_boot_files
from squad.memory.dedupe import Known
from squad.memory.files import WriteResult
from squad.memory.reading import read_targets, render_read
from squad.memory.service import MemoryService
from squad.text.secrets import refuse_secrets

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["MemoryTools"]

SEARCH_RESULTS = 20


class MemoryTools:
    """Memory tools for ``ctx``'s agent; ``actor`` names the writer in the audit log;
    ``known``: credential values found earlier in its conversation (a chat session, a run),
    refused wherever a write repeats them."""

    def __init__(
        self, service: MemoryService, ctx: AgentContext, *, known: Collection[str] = ()
    ) -> None:
        self._service = service
        self._ctx = ctx
        self._actor = f"agent:{ctx.agent.id}"
        self._known = known

    def memory_read(self, section: str | None = None, target: str = "memory") -> str:
        """Read your memory. target: 'memory' (your memory.md: one section by name, or all
        of it), 'soul' (persona, SOUL.md), 'user' (user preferences, USER.md), 'agents' (work
        rules, AGENTS.md) or 'all'."""

        def run() -> str:
            wanted = target.strip().casefold()
            if wanted not in read_targets():
                raise UsageError(
                    f"unknown memory_read target {target!r}; use one of: "
                    + ", ".join(read_targets())
                )
            if section is not None and wanted != "memory":
                raise UsageError("section applies to target 'memory' (memory.md) only")
            titles = {title for name, (_, title) in BOOT_FILES.items() if wanted in (name, "all")}
            if wanted in ("agents", "all"):
                titles.add(WORKSPACE_RULES_TITLE)
            home = self._service.settings.home
            boot = [b for b in load_boot_files(home, self._ctx.workspace) if b.title in titles]
            memory = None
            if wanted in ("memory", "all"):
                memory = self._service.memory_file(self._ctx).read(section)
            if not boot and memory is None:
                return f"(nothing in {wanted}: the file is empty or missing)"
            return render_read(boot, memory)

        return _guard(run)

    def memory_append(self, section: str, text: str) -> str:
        """Add lines at the end of a memory.md section (created if missing); lines memory.md
        already says are not written again."""
        return _guard(
            lambda: self._written(
                self._service.memory_file(self._ctx).append(
                    section, self._checked(text), actor=self._actor, dedupe=True
                )
            )
        )

    def memory_replace(self, section: str, text: str) -> str:
        """Replace the whole body of a memory.md section; you cannot empty a non-empty one."""
        return _guard(
            lambda: self._written(
                self._service.memory_file(self._ctx).replace(
                    section, self._checked(text), actor=self._actor, automatic=True, dedupe=True
                )
            )
        )

    def memory_search(self, query: str) -> str:
        """Search your memory.md and your experience (case-insensitive substring)."""
        from squad.memory.search import search_memory_files
        from squad.text.grep import compile_query

        def run() -> str:
            # the same bounded engine as `squad memory search`: an agent's query is input too
            pattern = compile_query(query, regex=False, case_sensitive=False)
            hits = search_memory_files(
                [(self._ctx.squad.name, self._ctx.workspace)], pattern, agent=self._ctx.agent.id
            )
            lines = [
                f"memory.md [{h.section or '-'}] line {h.match.line_number}: {h.match.line}"
                for h in hits[:SEARCH_RESULTS]
            ]
            namespace = self._service.namespace(self._ctx)
            facts = self._service.store.memory.search_facts(
                query, namespace_ids=[namespace.id], limit=SEARCH_RESULTS
            )
            lines += [f"experience fact {f.id}: {f.text}" for f in facts]
            return "\n".join(lines) if lines else f"nothing in memory matches {query!r}"

        return _guard(run)

    def memory_read_daily(self, day: str) -> str:
        """Read your detail log of one day (YYYY-MM-DD)."""

        def run() -> str:
            try:
                when = date.fromisoformat(day)
            except ValueError:
                return f"{day!r} is not a date; use YYYY-MM-DD"
            return self._service.daily_log(self._ctx).read(when)

        return _guard(run)

    def memory_write_daily(self, text: str) -> str:
        """Keep long details in today's log; put a one-line pointer in memory.md if needed."""
        return _guard(
            lambda: (
                "written to "
                + self._service.daily_log(self._ctx).append(self._checked(text), actor=self._actor)
            )
        )

    def _checked(self, text: str) -> str:
        """``text``, unless it repeats a known credential value (the file's own write refuses
        what the detector finds)."""
        if self._known:
            refuse_secrets(text, what="the memory write", known=self._known)
        return text

    def _written(self, result: WriteResult) -> str:
        """Confirm a write, and say when the file no longer fits the prompt's project share.

        Counted with the same tokenizer and assembly the next prompt uses.
        """
        if not result.written:
            if not result.known:
                return f"nothing written: {result.file} already holds exactly that"
            return f"already known, nothing written: {_said(result.known)}"
        message = f"saved to {result.file} ({result.section}); file is now {result.size:,} bytes"
        if result.known:
            message += f"; already known, left out: {_said(result.known)}"
        if result.folded is not None:
            message += (
                f"; memory.md was full, so its {result.folded.moved} oldest Insights lines "
                f"were folded: moved whole to {result.folded.daily} (memory_read_daily reads "
                f"them), {result.folded.summaries} summary lines in their place"
            )
        budget = Budget(self._service.plan(self._ctx)[0].budget("memory"))
        document = self._service.memory_file(self._ctx).snapshot().document
        layer = build_memory_block([], document, budget, self._service.counter(self._ctx)).project
        if layer.dropped:
            message += (
                f"; {layer.dropped} of its lines no longer fit your {budget.project}-token "
                "project memory share and will be left out of prompts (oldest Insights first): "
                "merge lines or move details to the daily log"
            )
        return message

    def as_langchain_tools(self) -> list[BaseTool]:
        from langchain_core.tools import StructuredTool

        return [
            StructuredTool.from_function(
                func=method, name=method.__name__, description=(method.__doc__ or "").strip()
            )
            for method in (
                self.memory_read,
                self.memory_append,
                self.memory_replace,
                self.memory_search,
                self.memory_read_daily,
                self.memory_write_daily,
            )
        ]


KNOWN_SHOWN = 5
"""Lines left out as already known that an answer quotes."""


def _said(known: tuple[Known, ...]) -> str:
    """The lines left out, each with the line of memory.md that already says it."""
    shown = [f"{k.line.strip()!r} (memory.md has {k.same_as.strip()!r})" for k in known]
    more = len(shown) - KNOWN_SHOWN
    return "; ".join(shown[:KNOWN_SHOWN]) + (f"; and {more} more" if more > 0 else "")


def _guard(action: Callable[[], object]) -> str:
    try:
        return str(action())
    except (MemoryError_, UsageError) as error:
        return f"refused: {error}"
