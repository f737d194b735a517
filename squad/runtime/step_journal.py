"""A run step's store writes, held until the step ends, then written in one transaction.

Nothing is held open while the model works: a turn's messages and the spend of its calls are
kept per thread (tasks that run at once each keep, and flush, their own) and land together
when the step ends. A step that ends by an error is redone on resume, so an aborted flush
writes only what must outlive it. Steps of tasks that end together share a transaction
(:class:`GroupCommits`): one commit, one fsync, for the four middle tasks of a diamond whose
answers come at once, instead of four in turn (each waiting for SQLite's write lock by
sleeping and polling).
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

__all__ = ["GroupCommits", "StepJournal"]

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
        self._commits = GroupCommits(store)

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
        if writes and aborted:
            with self._store.batch(f"{action} of run {self._run_id!r}"):
                for write in writes:
                    write(self._store)
        elif writes:
            self._commits.write(writes, f"{action} of run {self._run_id!r}")
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


class GroupCommits:
    """Store writes of several threads made in one transaction (a group commit).

    A thread that finds no commit under way writes its own writes and those of every thread
    that came meanwhile, in one :meth:`~squad.store.Store.batch`; a thread that finds one
    under way waits for the next, which takes its writes too. Each returns once its writes
    are committed (durable: the store's commit), or raises what the transaction raised: the
    writes of a group land together or not at all, as each thread's did alone."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._turn = threading.Condition(threading.Lock())
        self._waiting: list[_Group] = []
        self._writing = False

    def write(self, writes: list[Callable[[Store], object]], action: str) -> None:
        """Commit ``writes`` (in order), with whatever other threads' writes wait."""
        mine = _Group(writes)
        with self._turn:
            self._waiting.append(mine)
            while self._writing and not mine.done:
                self._turn.wait()
            if mine.done:
                mine.raise_failure()
                return
            self._writing = True
            groups, self._waiting = self._waiting, []
        failure: BaseException | None = None
        try:
            with self._store.batch(action):
                for group in groups:
                    for write in group.writes:
                        write(self._store)
        except BaseException as exc:  # noqa: BLE001  # every writer of the group raises it
            failure = exc
        with self._turn:
            for group in groups:
                group.done, group.failure = True, failure
            self._writing = False
            self._turn.notify_all()
        mine.raise_failure()


class _Group:
    """One thread's writes waiting for a group commit, and how it ended."""

    def __init__(self, writes: list[Callable[[Store], object]]) -> None:
        self.writes = writes
        self.done = False
        self.failure: BaseException | None = None

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure
