"""The OpenAI chat-completions format, squad's side: messages and tools out, an answer in.

Pure conversions between :mod:`squad.model.types` and the dictionaries litellm takes and
returns; nothing here imports litellm.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, TypedDict

from squad.model.types import Message, ToolCall, ToolSpec

__all__ = ["WireMessage", "WireTool", "message_dict", "parse_answer", "tool_dict"]


class WireFunctionCall(TypedDict):
    name: str
    arguments: str
    """The arguments as JSON text."""


class WireToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: WireFunctionCall


class WireMessage(TypedDict):
    """A chat message as the chat-completions API takes it."""

    role: str
    content: str | None
    tool_calls: NotRequired[list[WireToolCall]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


class WireFunction(TypedDict):
    name: str
    description: str
    parameters: dict[str, Any]
    """The tool's JSON schema."""


class WireTool(TypedDict):
    """A tool as the chat-completions API takes it."""

    type: Literal["function"]
    function: WireFunction


_DETAIL_LIMIT = 500
"""Characters of a malformed answer quoted in its error."""


def message_dict(message: Message) -> WireMessage:
    out: WireMessage = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def tool_dict(tool: ToolSpec) -> WireTool:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


def parse_answer(response: Any) -> tuple[str, tuple[ToolCall, ...]]:
    """The answer's text and tool calls; a call whose arguments are not a JSON object is kept,
    marked :attr:`~squad.model.types.ToolCall.malformed`, for the turn to refuse."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return "", ()
    message = choices[0].message
    calls: list[ToolCall] = []
    for raw in getattr(message, "tool_calls", None) or ():
        function = raw.function
        name = str(function.name or "")
        text = function.arguments or ""
        try:
            arguments = json.loads(text) if text.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            problem = f"the arguments are not a JSON object: {text[:_DETAIL_LIMIT]!r}"
            calls.append(ToolCall(str(raw.id or ""), name, {}, malformed=problem))
            continue
        calls.append(ToolCall(str(raw.id or ""), name, arguments))
    return str(getattr(message, "content", None) or ""), tuple(calls)
