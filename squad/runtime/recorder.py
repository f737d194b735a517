"""What one agent's turn in a run leaves behind: its messages and spend, its events.

Messages and the spend of each model call go to the executor's journal (written at the end of
the step); model and tool calls are events of the run log, a tool's answer cut where no
credential is split.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from squad.model.types import ModelReply
from squad.runtime.mcp_client.tools import TurnTools
from squad.text.secrets import CUE_MESSAGES

if TYPE_CHECKING:
    from squad.runtime.executor import RunExecutor

__all__ = ["TurnRecorder", "logged"]


class TurnRecorder:
    """Turns of one agent: messages and spend go to the executor's journal, events to the log."""

    def __init__(
        self,
        executor: RunExecutor,
        agent: str,
        mcp: TurnTools | None = None,
        *,
        task: str | None = None,
    ) -> None:
        self._executor = executor
        self._agent = agent
        self._mcp = mcp or TurnTools()
        self._task = task
        """The task the turn works for (events of tasks running at once say whose they are)."""
        self._recent: list[str] = []
        """The turn's last messages as said: where a bare value's cue may be."""

    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None:
        shown = self._mcp.shown.get(tool_name, tool_name) if tool_name else tool_name
        self._executor.seen.learn(content, previous=self._recent)
        self._recent = [*self._recent, content][-CUE_MESSAGES:]
        self._executor.journal_message(self._agent, role, content, shown)

    def model_call(self, reply: ModelReply) -> None:
        ex, agent = self._executor, self._agent
        ex.journal(
            lambda store: store.spend.record(
                ex.spec.name, run_id=ex.run_id, agent=agent, **reply.spend()
            ),
            keep_on_abort=True,
        )
        ex.log.emit(
            "model_call",
            agent=self._agent,
            task=self._task,
            model=reply.model,
            prompt_tokens=reply.usage.prompt_tokens,
            completion_tokens=reply.usage.completion_tokens,
            cost_usd=reply.usage.cost_usd,
            latency_s=round(reply.latency_s, 4),
            attempts=reply.attempts,
        )

    def tool_call(self, name: str, arguments: dict[str, Any], result: str) -> None:
        mcp = self._mcp.take(name)
        if mcp is None:
            self._executor.log.emit(
                "tool_call",
                agent=self._agent,
                task=self._task,
                tool=name,
                arguments=arguments,
                result=logged(result, self._executor.seen),
            )
            return
        self._executor.log.emit(
            "tool_call",
            agent=self._agent,
            task=self._task,
            tool=mcp.tool,
            server=mcp.server,
            arguments=arguments,
            result=logged(result, self._executor.seen),
            duration_s=mcp.duration_s,
            is_error=mcp.is_error,
            replayed=mcp.replayed,
        )


def logged(result: str, known: Collection[str] = ()) -> str:
    """A tool's answer as the run log keeps it: the first 300 characters, cut where no
    credential (nor ``known`` value) is split into a fragment the log's redaction would no
    longer recognise."""
    from squad.runtime.mcp_client.journal import bound_answer

    return bound_answer(result, 300, known=known)[0]
