"""The runtime's part of working memory: what one run keeps in each agent's, and when it ends.

For every agent of the run whose memory is on (:mod:`squad.memory.working` says what it holds):

- run start (a new run or a resume): a working memory file another run left (one that was
  interrupted or killed, or ended without removing it) is summarised into the agent's daily
  log, marked as left behind, and removed; the run's own (a resume's) is kept, and so is that
  of a run waiting for approval (it has not ended);
- a task starts: it is the agent's task in progress, and the agent's other tasks of the run
  not done yet are what remains. The start is held back (the turn's prompt, and every read
  in this process, see it at once): written when the turn has lasted
  :data:`~squad.runtime.running_notice.SHOW_AFTER_S`, or when anything else changes the
  file first, or with the task's end in one write when the turn ends sooner, or on the way
  out of a turn that ends by an error (a stop). A hard kill in a turn's first moment loses
  it from the file (the run's resume starts the task again, which makes it again), as it
  loses the store's ``running`` record (:mod:`squad.runtime.running_notice`);
- the files tool reads or writes a file: it is the newest file touched;
- a task ends: done, or (failed, blocked) out of what remains, a failure as a blocker;
- the run ends (succeeded, failed, stopped): the working memory is summarised into the daily
  log and its file removed. A run waiting for approval, interrupted or fenced has not ended:
  the file stays for its resume.

Chats are no runs and keep no working memory: a chat's continuity is its conversation.
A working memory write that fails (a locked or unwritable file) never fails the task: it is
in the run log as ``working_memory_failed`` and the work goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from squad.errors import SquadError
from squad.memory.agent import AgentContext
from squad.memory.service import MemoryService
from squad.memory.working import (
    LIMITS,
    WorkingMemory,
    drop_task,
    finish_task,
    start_task,
    touch_file,
)
from squad.runtime.runlog import RunLog
from squad.runtime.running_notice import SHOW_AFTER_S, RunningNotices
from squad.runtime.tasks import TaskNode, TaskStatus
from squad.spec.models import SquadSpec
from squad.text.secrets import redact

__all__ = ["RunWorkingMemory", "task_item"]

_NOT_REMAINING = frozenset({TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.BLOCKED})
_SHOWN_REMAINING = 2 * LIMITS["remaining"]
"""The agent's remaining tasks a task's start looks at, the last in the run's order: the field
keeps the newest :data:`LIMITS` of them, and at most as many are in it already (which an
addition does not move), so older ones could never be shown."""


def task_item(task: TaskNode, *, known: Collection[str] = ()) -> str:
    """A task as working memory shows it: ``<id>: <description>`` (credentials redacted, and
    the ``known`` values found earlier in the run)."""
    described = " ".join(task.description.split())
    return redact(f"{task.id}: {described}" if described else task.id, known=known)[0]


class RunWorkingMemory:
    """The working memory of every agent of one run."""

    def __init__(
        self,
        memory: MemoryService,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        log: RunLog,
        *,
        waiting: Callable[[str], bool],
        known: Collection[str] = (),
        hold_s: float = SHOW_AFTER_S,
    ) -> None:
        """``waiting`` says whether a run (by id) waits for approval: its files are kept;
        ``known``: credential values found in the run so far, redacted wherever they occur;
        ``hold_s``: how long a task's start is held back (see the module docstring)."""
        self._waiting = waiting
        self._known = known
        self._memory = memory
        self._spec = spec
        self._workspace = workspace
        self._run_id = run_id
        self._log = log
        self._items: dict[str, tuple[str, int, str]] = {}
        """Each task's item, with the description and the number of ``known`` values it was
        made from (they only grow): redacted once, not at every start of another task."""
        self._starts = RunningNotices[str](delay=hold_s)
        """Each working task's start held back, by task id: its agent until it is written."""

    def context(self, agent: str) -> AgentContext | None:
        """The agent in this run, None when its memory is off (it keeps no working memory)."""
        ctx = AgentContext.of(self._spec, agent, self._workspace, run_id=self._run_id)
        return ctx if ctx.memory_enabled else None

    def begin(self) -> None:
        """Summarise and remove what runs that never ended left in the agents' files."""
        for agent in self._spec.agents:
            ctx = self.context(agent.id)
            if ctx is None:
                continue
            self._guarded(agent.id, "summarise a working memory left behind", self._settle, ctx)

    def _settle(self, ctx: AgentContext) -> None:
        for run in self._memory.working_runs(ctx):
            if run == self._run_id or self._waiting(run):
                continue
            file = self._memory.working_file(ctx, run)
            record = file.read()
            logged = (
                None if record is None else self._memory.log_working_memory(ctx, record, ended=None)
            )
            file.take()
            self._log.emit(
                "working_memory_left_behind", agent=ctx.agent.id, previous_run=run, daily=logged
            )

    def task_started(
        self, task: TaskNode, tasks: Sequence[TaskNode], statuses: Mapping[str, str]
    ) -> None:
        """``task`` starts; ``tasks`` are the run's, ``statuses`` what the store says of them.

        Only the last of the agent's remaining tasks are made items (:data:`_SHOWN_REMAINING`),
        so a start costs the same in a plan of 200 tasks as in one of 20."""
        remaining: list[str] = []
        for other in reversed(tasks):
            if len(remaining) == _SHOWN_REMAINING:
                break
            if (
                other.agent == task.agent
                and other.id != task.id
                and statuses.get(other.id) not in _NOT_REMAINING
            ):
                remaining.append(self._item(other))
        remaining.reverse()
        item = self._item(task)
        ctx = self.context(task.agent)
        if ctx is None:
            return
        file = self._memory.working_file(ctx)
        file.defer(lambda state: start_task(state, item, remaining))
        self._starts.wait(task.id, task.agent, lambda: self._update(task.agent, _unchanged))

    def settle(self, task: TaskNode) -> None:
        """Write ``task``'s start now if it is still held back: its turn ends by an error,
        and the run may be resumed from what the file says."""
        agent = self._starts.take(task.id)
        if agent is not None:
            self._update(agent, _unchanged)

    def _item(self, task: TaskNode) -> str:
        """:func:`task_item` of ``task``, made again only when its description or the values
        found in the run changed."""
        known = len(self._known)
        kept = self._items.get(task.id)
        if kept is not None and kept[0] == task.description and kept[1] == known:
            return kept[2]
        item = task_item(task, known=self._known)
        self._items[task.id] = (task.description, known, item)
        return item

    def touched(self, agent: str, path: str) -> None:
        self._update(agent, lambda state: touch_file(state, path))

    def task_ended(self, task: TaskNode, status: TaskStatus, error: str | None = None) -> None:
        """``task`` reached ``status``: done, failed or blocked change what the agent is on
        (written with the task's start if that is still held back)."""
        if status in _NOT_REMAINING:
            self._starts.take(task.id)  # the start is written with this change, at once
        item = self._item(task)
        if status is TaskStatus.DONE:
            self._update(task.agent, lambda state: finish_task(state, item))
        elif status is TaskStatus.FAILED:
            failed = f"{task.id} failed: {error}" if error else f"{task.id} failed"
            why = redact(failed, known=self._known)[0]
            self._update(task.agent, lambda state: drop_task(state, item, why))
        elif status is TaskStatus.BLOCKED:
            self._update(task.agent, lambda state: drop_task(state, item))

    def end(self, status: str) -> None:
        """The run ended with ``status``: each agent's working memory to its daily log, its
        file removed (kept when the summary could not be written: the next run's start
        summarises it)."""
        for agent in self._spec.agents:
            ctx = self.context(agent.id)
            if ctx is not None:
                self._guarded(agent.id, "summarise the working memory", self._close, ctx, status)

    def _close(self, ctx: AgentContext, status: str) -> None:
        file = self._memory.working_file(ctx)
        record = file.read()
        if record is None:
            return
        logged = self._memory.log_working_memory(ctx, record, ended=status)
        file.take()
        if logged is not None:
            self._log.emit("working_memory_summarised", agent=ctx.agent.id, daily=logged)

    def _update(self, agent: str, change: Callable[[WorkingMemory], WorkingMemory]) -> None:
        ctx = self.context(agent)
        if ctx is None:
            return
        file = self._memory.working_file(ctx)
        self._guarded(agent, "update the working memory", file.update, change)

    def _guarded(self, agent: str, what: str, action: Callable[..., object], *args: object) -> None:
        try:
            action(*args)
        except (SquadError, OSError) as exc:
            self._log.emit("working_memory_failed", agent=agent, action=what, error=str(exc))


def _unchanged(state: WorkingMemory) -> WorkingMemory:
    """No change of its own: an update that writes what is held back."""
    return state
