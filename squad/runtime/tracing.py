"""Spans of runs, agent turns, model calls and tool calls, in the OpenTelemetry GenAI conventions.

A run is ``invoke_workflow {squad}``; each agent turn inside it ``invoke_agent {agent}``; each
model call of the turn ``chat {model}`` and each tool call ``execute_tool {tool}``. Names and
attributes follow the GenAI semantic conventions (``gen_ai.*``); what they have no name for
(the run id, the task, the cost) is under ``squad.*``. Prompts, replies, tool arguments and
results enter only through :meth:`~squad.telemetry.Span.content` (the user's opt-in).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from squad.errors import ModelError
from squad.model.offline import is_offline
from squad.model.types import Message, ModelReply, ToolCall, Usage
from squad.telemetry import NO_TELEMETRY, Attributes, Span, Telemetry

if TYPE_CHECKING:
    from squad.spec.models import ModelSpec, SquadSpec

__all__ = [
    "NO_TRACE",
    "TurnTrace",
    "asked",
    "model_attributes",
    "model_failed",
    "provider_name",
    "replied",
    "run_attributes",
    "run_ended",
    "run_span_name",
    "tool_called",
    "usage_attributes",
]

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
COST = "squad.cost_usd"

# litellm's provider prefixes whose GenAI name differs; any other prefix is its own name.
_PROVIDERS = {
    "azure": "azure.ai.openai",
    "azure_ai": "azure.ai.inference",
    "bedrock": "aws.bedrock",
    "vertex_ai": "gcp.vertex_ai",
    "gemini": "gcp.gemini",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "watsonx": "ibm.watsonx.ai",
}
# Model names litellm knows without a prefix, by how they start.
_UNPREFIXED = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-", "text-"), "openai"),
    (("claude",), "anthropic"),
    (("gemini",), "gcp.gemini"),
    (("command",), "cohere"),
    (("mistral", "codestral"), "mistral_ai"),
)


def provider_name(model: str) -> str:
    """``gen_ai.provider.name`` of a litellm model string: ``openai/gpt-4o`` -> ``openai``,
    ``ollama/llama3`` -> ``ollama``, ``claude-3-haiku`` -> ``anthropic``; ``offline`` for the
    built-in model, ``unknown`` when the string does not say."""
    if is_offline(model):
        return "offline"
    prefix, slash, _ = model.partition("/")
    if slash:
        return _PROVIDERS.get(prefix.lower(), prefix.lower())
    lowered = model.lower()
    for starts, provider in _UNPREFIXED:
        if lowered.startswith(starts):
            return provider
    return "unknown"


def _model_part(model: str) -> str:
    """The model name as the provider knows it: ``openai/gpt-4o`` -> ``gpt-4o``."""
    _, slash, rest = model.partition("/")
    return rest if slash and rest else model


def model_attributes(spec: ModelSpec) -> Attributes:
    """The request attributes of calls to the model ``spec`` names."""
    return {
        PROVIDER: provider_name(spec.name),
        REQUEST_MODEL: _model_part(spec.name),
        "squad.model": spec.name,
        "gen_ai.request.temperature": spec.temperature,
        "gen_ai.request.max_tokens": spec.max_tokens,
        "server.address": _host(spec.api_base) if spec.api_base else None,
    }


def _host(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]


def usage_attributes(usage: Usage) -> Attributes:
    """Tokens and cost, as ``gen_ai.usage.*`` and ``squad.cost_usd``."""
    return {
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
        COST: usage.cost_usd,
    }


def run_span_name(spec: SquadSpec) -> str:
    return f"invoke_workflow {spec.name}"


def run_attributes(
    spec: SquadSpec, run_id: str, *, trigger: str | None, resumed: bool
) -> Attributes:
    """The attributes a run's span starts with."""
    return {
        OPERATION: "invoke_workflow",
        "gen_ai.workflow.name": spec.name,
        "gen_ai.conversation.id": run_id,
        "squad.name": spec.name,
        "squad.run_id": run_id,
        "squad.trigger": trigger,
        "squad.process": spec.process.type,
        "squad.resumed": resumed,
    }


def run_ended(span: Span, status: str, error: str | None, *, turns: int, usage: Usage) -> None:
    """What a run's span learns as the run stops: its status (a failed run fails its span),
    turns, tokens and cost, as the run's result reports them."""
    if not span.recording:
        return
    span.update({"squad.run.status": status, "squad.turns": turns, **usage_attributes(usage)})
    if status == "failed":
        span.fail("failed", error or "")


@dataclass(frozen=True)
class TurnTrace:
    """Where one agent turn's spans go: the telemetry, and what they say about the turn.

    ``parent`` is the span the turn belongs to (a run's), passed on explicitly because the
    turn may run on another thread than the one that opened it.
    """

    telemetry: Telemetry = NO_TELEMETRY
    agent: str = "agent"
    model: Attributes = field(default_factory=dict)
    """:func:`model_attributes` of the agent's model."""
    parent: Span | None = None
    attributes: Attributes = field(default_factory=dict)
    """More attributes of the turn's span (``squad.task``, ``gen_ai.conversation.id``)."""

    def turn(self) -> AbstractContextManager[Span]:
        """The span of the whole turn: ``invoke_agent {agent}``."""
        return self.telemetry.span(
            f"invoke_agent {self.agent}",
            {
                OPERATION: "invoke_agent",
                "gen_ai.agent.name": self.agent,
                PROVIDER: self.model.get(PROVIDER),
                REQUEST_MODEL: self.model.get(REQUEST_MODEL),
                **self.attributes,
            },
            parent=self.parent,
        )

    def chat(self, turn: Span, *, streaming: bool) -> AbstractContextManager[Span]:
        """The span of one model call of the turn: ``chat {model}``."""
        return self.telemetry.span(
            f"chat {self.model.get(REQUEST_MODEL) or 'unknown'}",
            {OPERATION: "chat", **self.model, "gen_ai.request.stream": streaming},
            parent=turn,
            kind="client",
        )

    def tool(self, turn: Span, call: ToolCall) -> AbstractContextManager[Span]:
        """The span of one tool call of the turn: ``execute_tool {tool}``."""
        return self.telemetry.span(
            f"execute_tool {call.name}",
            {
                OPERATION: "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id or None,
                "gen_ai.tool.type": "function",
            },
            parent=turn,
        )


NO_TRACE = TurnTrace()
"""A turn traced nowhere."""


def asked(chat: Span, messages: Sequence[Message]) -> None:
    """What a model call's span says of the request: its messages, if the user opted in."""
    if not chat.recording:
        return
    chat.content(
        "gen_ai.system_instructions",
        lambda: [{"type": "text", "content": m.content} for m in messages if m.role == "system"],
    )
    chat.content(
        "gen_ai.input.messages", lambda: [_message(m) for m in messages if m.role != "system"]
    )


def replied(chat: Span, reply: ModelReply) -> None:
    """What a model call's span learns from its answer."""
    if not chat.recording:
        return
    chat.update(
        {
            "gen_ai.response.model": _model_part(reply.model) if reply.model else None,
            **usage_attributes(reply.usage),
            "squad.attempts": reply.attempts,
        }
    )
    chat.content(
        "gen_ai.output.messages",
        lambda: [_message(Message.assistant(reply.content, reply.tool_calls))],
    )


def model_failed(chat: Span, exc: ModelError) -> None:
    """What a model call's span learns from its failure (the error status comes by itself)."""
    chat.update(
        {
            COST: exc.cost_usd,
            "squad.attempts": exc.attempts,
            "http.response.status_code": exc.status,
        }
    )


def tool_called(tool: Span, call: ToolCall, result: str) -> None:
    """What a tool call's span learns from the tool's answer (and its arguments, if the user
    opted in to content)."""
    if not tool.recording:
        return
    tool.content("gen_ai.tool.call.arguments", lambda: call.arguments)
    if result.startswith("refused:"):
        tool.fail("refused")  # the refusal itself is content: it may quote the arguments
    tool.content("gen_ai.tool.call.result", lambda: result)


class _TextPart(TypedDict):
    type: Literal["text"]
    content: str


class _ToolCallPart(TypedDict):
    type: Literal["tool_call"]
    id: str
    name: str
    arguments: dict[str, Any]


class _ToolResponsePart(TypedDict):
    type: Literal["tool_call_response"]
    id: str | None
    response: str


class _GenAIMessage(TypedDict):
    """A message in ``gen_ai.input.messages`` / ``gen_ai.output.messages``."""

    role: str
    parts: list[_TextPart | _ToolCallPart | _ToolResponsePart]


def _message(message: Message) -> _GenAIMessage:
    """A message as the GenAI conventions write it: a role and its parts."""
    parts: list[_TextPart | _ToolCallPart | _ToolResponsePart] = []
    if message.role == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}
        )
    elif message.content:
        parts.append({"type": "text", "content": message.content})
    parts += [
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    ]
    return {"role": message.role, "parts": parts}
