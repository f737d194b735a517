"""A run step's store writes, held until the step ends, then written in one transaction.

Nothing is held open while the model works: a turn's messages and the spend of its calls are
kept per thread (tasks that run at once each keep, and flush, their own) and land together
when the step ends. A step that ends by an error is redone on resume, so an aborted flush
writes only what must outlive it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from squad.memory.agent import AgentContext

if TYPE_CHECKING:
    from squad.spec.models import SquadSpec
    from squad.store import Store
    from squad.text.secrets import SeenSecrets

__all__ = ["StepJournal"]

Messages = dict[str, list[tuple[str, str, str | None]]]


class StepJournal:
    """The pending store writes of one run's steps, one list per thread."""

    def __init__(
        self,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        store: Store,
        *,
        epoch: int | None,
        seen: SeenSecrets,
        on_replies: Callable[[AgentContext, int], None],
    ) -> None:
        """``epoch`` fences every flush (a cluster node's claim of the run); ``on_replies`` is
        told how many replies each agent gave in a flushed step (the extraction trigger)."""
        self._spec = spec
        self._workspace = workspace
        self._run_id = run_id
        self._store = store
        self._epoch = epoch
        self._seen = seen
        self._on_replies = on_replies
        self._pending = threading.local()

    @property
    def _journal(self) -> list[tuple[Callable[[Store], object], bool]]:
        if not hasattr(self._pending, "journal"):
            self._pending.journal = []
        journal: list[tuple[Callable[[Store], object], bool]] = self._pending.journal
        return journal

    @property
    def _messages(self) -> Messages:
        if not hasattr(self._pending, "messages"):
            self._pending.messages = {}
        messages: Messages = self._pending.messages
        return messages

    def write(self, write: Callable[[Store], object], *, keep_on_abort: bool = False) -> None:
        """Keep a store write for the end of the step."""
        self._journal.append((write, keep_on_abort))

    def message(self, agent: str, role: str, content: str, tool_name: str | None) -> None:
        """Keep one of the agent's messages for the end of the step; they land in order."""
        self._messages.setdefault(agent, []).append((role, content, tool_name))

    def flush(self, action: str = "record a step", *, aborted: bool = False) -> None:
        """Write the step's journal in one transaction, with nothing held while the model works.

        A step that ends by an error (a full disk, a stop) is redone on resume, messages and
        all, so ``aborted`` writes only what must outlive it: the spend of the calls it made.
        A hard kill loses that too; the redone step counts its own.
        """
        journal, self._pending.journal = self._journal, []
        writes = [write for write, keep in journal if keep or not aborted]
        messages, self._pending.messages = ({} if aborted else self._messages), {}
        for agent, items in messages.items():
            # Only the extractor (and recall, from its archive) reads a run's messages back:
            # an agent whose extractor is off keeps none (its run log and outputs remain).
            if AgentContext.of(self._spec, agent, self._workspace).extraction_enabled:
                writes.insert(0, self._message_write(agent, items))
        if writes and self._epoch is not None and not aborted:
            epoch = self._epoch
            writes.insert(0, lambda store: store.run_state.check_fence(self._run_id, epoch))
        if writes:
            with self._store.batch(f"{action} of run {self._run_id!r}"):
                for write in writes:
                    write(self._store)
        for agent, items in messages.items():
            replies = sum(role == "assistant" for role, _, _ in items)
            if replies:
                self._on_replies(AgentContext.of(self._spec, agent, self._workspace), replies)

    def _message_write(
        self, agent: str, items: list[tuple[str, str, str | None]]
    ) -> Callable[[Store], object]:
        return lambda store: store.conversation.record_messages(
            self._spec.name, agent, items, run_id=self._run_id, known=self._seen
        )
