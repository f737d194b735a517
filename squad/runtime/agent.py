"""One agent turn: a message in, the model (and its tool calls) until a final answer out.

Collaborators are passed in (model, tools, recorder, budget), so the loop is the same for a
squad run, ``squad chat`` and tests. The system prompt is built by the caller for every turn,
so memory and boot files are always fresh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from squad.errors import ModelError
from squad.model.types import (
    ChatModel,
    Message,
    ModelReply,
    TokenCallback,
    ToolCall,
    ToolSpec,
    Usage,
)
from squad.runtime import tracing
from squad.runtime.limits import RunBudget
from squad.runtime.tools import Tool, tools_by_name
from squad.runtime.tracing import NO_TRACE, TurnTrace
from squad.telemetry import Span

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
    response_format: Mapping[str, Any] | None = None,
    trace: TurnTrace = NO_TRACE,
) -> TurnResult:
    """Answer ``user_message``; raises ``LimitReached`` before the turn when a limit is hit.

    ``trace`` says where the turn's spans go (``invoke_agent``, and a ``chat`` per model call
    and an ``execute_tool`` per tool call inside it); by default nowhere."""
    if budget is not None:
        budget.before_turn()
    with trace.turn() as span:
        result = _turn(
            span,
            model=model,
            system_prompt=system_prompt,
            user_message=user_message,
            history=history,
            by_name=tools_by_name(tools),
            specs=[tool.spec for tool in tools],
            recorder=recorder,
            budget=budget,
            timeout_s=timeout_s,
            on_token=on_token,
            max_tool_rounds=max_tool_rounds,
            response_format=response_format,
            trace=trace,
        )
        if span.recording:
            span.update(
                {
                    **tracing.usage_attributes(result.usage),
                    "squad.model_calls": result.model_calls,
                    "squad.tool_calls": result.tool_calls,
                }
            )
        return result


def _turn(
    span: Span,
    *,
    model: ChatModel,
    system_prompt: str,
    user_message: str,
    history: Sequence[Message],
    by_name: Mapping[str, Tool],
    specs: list[ToolSpec],
    recorder: TurnRecorder,
    budget: RunBudget | None,
    timeout_s: float | None,
    on_token: TokenCallback | None,
    max_tool_rounds: int,
    response_format: Mapping[str, Any] | None,
    trace: TurnTrace,
) -> TurnResult:
    recorder.message("user", user_message)
    turn: list[Message] = [Message.user(user_message)]
    usage = Usage()
    tool_calls = 0
    for round_ in range(max_tool_rounds + 1):
        offered = specs if round_ < max_tool_rounds else []  # last round: answer in text
        messages = [Message.system(system_prompt), *history, *turn]
        reserved = model.reserve_usd(messages, offered) if budget is not None else 0.0
        if budget is not None:
            budget.reserve(reserved)
        with trace.chat(span, streaming=on_token is not None) as chat:
            tracing.asked(chat, messages)
            try:
                reply = model.complete(
                    messages,
                    tools=offered,
                    response_format=response_format,
                    timeout_s=timeout_s,
                    on_token=on_token,
                )
            except ModelError as exc:
                if budget is not None:  # the unusable answers it got still cost money
                    budget.settle(reserved, 0, 0, exc.cost_usd)
                tracing.model_failed(chat, exc)
                raise
            except BaseException:
                if budget is not None:
                    budget.settle(reserved, 0, 0, 0.0)
                raise
            tracing.replied(chat, reply)
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
            with trace.tool(span, call) as tool_span:
                result = _call(call, by_name)
                tracing.tool_called(tool_span, call, result)
            tool_calls += 1
            recorder.tool_call(call.name, call.arguments, result)
            recorder.message("tool", result, tool_name=call.name)
            turn.append(Message.tool(call.id, result, name=call.name))
    raise AssertionError("unreachable: the last round offers no tools")


def _call(call: ToolCall, by_name: Mapping[str, Tool]) -> str:
    """The tool's result, or a refusal the model can act on (it may call again)."""
    if call.malformed is not None:
        return f"refused: {call.malformed}; call {call.name} again with one JSON object"
    tool = by_name.get(call.name)
    if tool is None:
        return f"refused: there is no tool named {call.name!r}"
    return tool.call(call.arguments)
