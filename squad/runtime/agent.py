"""One agent turn: a message in, the model (and its tool calls) until a final answer out.

Collaborators are passed in (model, tools, recorder, budget), so the loop is the same for a
squad run, ``squad chat`` and tests. The system prompt is built by the caller for every turn,
so memory and boot files are always fresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from squad.errors import ModelError
from squad.model.types import ChatModel, Message, ModelReply, TokenCallback, Usage, reserve_usd
from squad.runtime.limits import RunBudget
from squad.runtime.tools import Tool, tools_by_name

__all__ = ["TurnRecorder", "TurnResult", "run_turn"]

MAX_TOOL_ROUNDS = 8


class TurnRecorder(Protocol):
    """Where a turn leaves its traces: the store's messages and ledger, the run log."""

    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None: ...

    def model_call(self, reply: ModelReply) -> None: ...

    def tool_call(self, name: str, arguments: dict[str, Any], result: str) -> None: ...


@dataclass(frozen=True)
class TurnResult:
    text: str
    usage: Usage
    model_calls: int
    tool_calls: int
    messages: tuple[Message, ...]
    """The turn's user message, tool exchanges and final answer (for the next turn's history)."""


def run_turn(
    *,
    model: ChatModel,
    system_prompt: str,
    user_message: str,
    history: Sequence[Message] = (),
    tools: Sequence[Tool] = (),
    recorder: TurnRecorder,
    budget: RunBudget | None = None,
    timeout_s: float | None = None,
    on_token: TokenCallback | None = None,
    max_tool_rounds: int = MAX_TOOL_ROUNDS,
) -> TurnResult:
    """Answer ``user_message``; raises ``LimitReached`` before the turn when a limit is hit."""
    if budget is not None:
        budget.before_turn()
    recorder.message("user", user_message)
    turn: list[Message] = [Message.user(user_message)]
    usage = Usage()
    tool_calls = 0
    by_name = tools_by_name(tools)
    specs = [tool.spec for tool in tools]
    for round_ in range(max_tool_rounds + 1):
        offered = specs if round_ < max_tool_rounds else []  # last round: answer in text
        messages = [Message.system(system_prompt), *history, *turn]
        reserved = reserve_usd(model, messages, offered) if budget is not None else 0.0
        if budget is not None:
            budget.reserve(reserved)
        try:
            reply = model.complete(messages, tools=offered, timeout_s=timeout_s, on_token=on_token)
        except ModelError as exc:
            if budget is not None:  # the unusable answers it got still cost money
                budget.settle(reserved, 0, 0, exc.cost_usd)
            raise
        except BaseException:
            if budget is not None:
                budget.settle(reserved, 0, 0, 0.0)
            raise
        usage += reply.usage
        if budget is not None:
            budget.settle(
                reserved,
                reply.usage.prompt_tokens,
                reply.usage.completion_tokens,
                reply.usage.cost_usd,
            )
        recorder.model_call(reply)
        if not reply.tool_calls:
            recorder.message("assistant", reply.content)
            turn.append(Message.assistant(reply.content))
            return TurnResult(reply.content, usage, round_ + 1, tool_calls, tuple(turn))
        turn.append(Message.assistant(reply.content, reply.tool_calls))
        for call in reply.tool_calls:
            tool = by_name.get(call.name)
            result = (
                tool.call(call.arguments)
                if tool is not None
                else f"refused: there is no tool named {call.name!r}"
            )
            tool_calls += 1
            recorder.tool_call(call.name, call.arguments, result)
            recorder.message("tool", result, tool_name=call.name)
            turn.append(Message.tool(call.id, result, name=call.name))
    raise AssertionError("unreachable: the last round offers no tools")
