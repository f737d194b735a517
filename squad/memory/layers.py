"""One agent's memory layers, reached from files and the store: the base of the service.

Where each layer of an agent lives: its Layer A namespace (and conversation archive) in the
store, its memory.md and daily logs in the workspace, its working memory per run; and the
workspace's history each write goes through. :class:`~squad.memory.prompting.PromptMemory`
builds prompts on these, :class:`~squad.memory.service.MemoryService` writes and reverts.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from squad.clock import Clock, utc_now
from squad.errors import UsageError
from squad.history.hooks import NO_HISTORY, WriteHook, Wrote
from squad.memory.agent import AgentContext
from squad.memory.daily import DailyLog
from squad.memory.dedupe import SameAs, same_key
from squad.memory.files import MemoryFile
from squad.memory.recall import ChatterFilter
from squad.memory.recall_reader import RecallReader
from squad.memory.working import summary
from squad.memory.working_file import (
    WorkingCache,
    WorkingMemoryFile,
    WorkingRecord,
    working_runs,
)
from squad.text.tokens import TokenCounter, counter_for_model

if TYPE_CHECKING:
    from squad.history.history import History
    from squad.memory.embeddings import Embedder
    from squad.settings import Settings
    from squad.store import Store
    from squad.store.records import NamespaceRecord

__all__ = ["HistoryFactory", "MemoryLayers"]

HistoryFactory = Callable[[Path, str], "History"]
"""A workspace's history by folder and squad name (``App.history``)."""

WORKING_MEMORY_ACTOR = "working-memory"
"""Who the daily log says wrote a run's working memory summary."""


class MemoryLayers:
    """An agent's memory layers and their places (see the module)."""

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
        self._working = WorkingCache()
        """The working memory files' records as last read or written (a turn reads its
        agent's three times)."""

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

    def working_file(self, ctx: AgentContext, run_id: str | None = None) -> WorkingMemoryFile:
        """The agent's working memory file of run ``run_id`` (default: ``ctx``'s run)."""
        run = run_id or ctx.run_id
        if run is None:
            raise UsageError("working memory belongs to a run; this agent is not in one")
        return WorkingMemoryFile(
            ctx.workspace, ctx.agent.id, run, clock=self._clock, cache=self._working
        )

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
        from squad.text.secrets import redact  # the credential scanner: only for a write

        if record.state.empty:
            return None
        text = summary(record.state, run_id=record.run_id, ended=ended)
        return self.daily_log(ctx).append(redact(text)[0], actor=WORKING_MEMORY_ACTOR)

    def history(self, workspace: Path, squad: str) -> History | None:
        """The workspace's history, None when history is off."""
        if self._histories is None:
            return None
        history = self._histories(workspace, squad)
        return history if history.enabled else None

    def _hook(self, ctx: AgentContext) -> WriteHook:
        """What a write of ``ctx``'s files holds (:meth:`write_hook`), looked up at the first
        write: reading the files (a prompt, ``squad memory context``) builds no history."""
        return _HookAtWrite(self, ctx)

    def write_hook(self, ctx: AgentContext) -> WriteHook:
        """The workspace's history outside a run, the run's writes inside one, no history
        when it is off."""
        history = self.history(ctx.workspace, ctx.squad.name)
        if history is None:
            return NO_HISTORY
        from squad.history.history import RunWrites

        return RunWrites(ctx.workspace) if ctx.run_id is not None else history

    def counter(self, ctx: AgentContext) -> TokenCounter:
        return counter_for_model(ctx.model)


class _HookAtWrite:
    """:meth:`MemoryLayers.write_hook` of one agent, looked up when a write begins."""

    def __init__(self, layers: MemoryLayers, ctx: AgentContext) -> None:
        self._layers = layers
        self._ctx = ctx
        self._found: WriteHook | None = None

    def writing(self, actor: str) -> AbstractContextManager[Wrote]:
        if self._found is None:
            self._found = self._layers.write_hook(self._ctx)
        return self._found.writing(actor)
