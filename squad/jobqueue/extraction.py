"""Extraction passes as cluster jobs: the reply counting of
:class:`~squad.extraction.background.BackgroundExtractor`, but a due pass is deferred as a
``squad.extract`` job (lock and queueing lock ``extract:<squad>/<agent>``) that any node's
worker runs, instead of running on a thread of this process. One pass per agent at a time
holds across machines: the job lock, and under it the store's extraction claim."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from squad.extraction.background import BackgroundExtractor, Key
from squad.extraction.job import AgentExtractor, interval_of
from squad.extraction.record import PassReport

if TYPE_CHECKING:
    from squad.memory.agent import AgentContext

__all__ = ["ClusterExtraction", "due"]


def due(extractor: AgentExtractor, ctx: AgentContext) -> bool:
    """Whether the agent has ``trigger_interval`` replies the extractor has not read."""
    conversation = extractor.memory.store.conversation
    mark = conversation.watermark(ctx.squad.name, ctx.agent.id).last_processed_seq
    return conversation.replies_after(ctx.squad.name, ctx.agent.id, mark) >= interval_of(ctx)


class ClusterExtraction(BackgroundExtractor):
    """Counts replies like the background extractor and defers each due pass as a job."""

    def __init__(
        self,
        extractor: AgentExtractor,
        defer: Callable[[str, str], object],
        *,
        on_error: Callable[[AgentContext, BaseException], None] | None = None,
    ) -> None:
        super().__init__(extractor, on_error=on_error)
        self._defer = defer

    def _enqueue(self, key: Key, *, check: bool) -> None:
        """Called under the lock by notify/check: hand the pass to the queue."""
        agent = self._agents[key]
        agent.replies = 0
        try:
            self._defer(agent.ctx.squad.name, agent.ctx.agent.id)
        except Exception as exc:  # noqa: BLE001 - a reply is never failed by its extraction
            self._on_error(agent.ctx, exc)

    def run_pass(self, ctx: AgentContext) -> list[PassReport]:
        """A job's pass: run it when it is due (another node may have run it meanwhile)."""
        if not due(self.extractor, ctx):
            return []
        return self.extractor.run(ctx)
