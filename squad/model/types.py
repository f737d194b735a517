"""What goes into and comes out of a model call: plain frozen data, and the ``ChatModel`` protocol.

Everything above the seam (runtime, extractor, CLI) speaks these types only; none of them
imports litellm. Test models (:mod:`squad.model.testing`) implement :class:`ChatModel` whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

__all__ = [
    "ChatModel",
    "EventKind",
    "Message",
    "ModelEvent",
    "ModelReply",
    "Price",
    "Role",
    "Spend",
    "TokenCallback",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]
EventKind = Literal["call", "retry", "error", "load"]
TokenCallback = Callable[[str], None]
"""Gets each streamed text delta, in order."""


@dataclass(frozen=True)
class ToolCall:
    """One tool the model asked to call; ``arguments`` already JSON-decoded."""

    id: str
    name: str
    arguments: dict[str, Any]
    malformed: str | None = None
    """Why the call cannot be made as asked (its arguments are not a JSON object; then
    ``arguments`` is empty): the turn answers it with a refusal saying so, and the model may
    call again, as a small model that writes broken JSON now and then needs."""


@dataclass(frozen=True)
class Message:
    """One chat message. ``tool_calls`` on assistant messages; ``tool_call_id`` on tool results."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str, tool_calls: Sequence[ToolCall] = ()) -> Message:
        return cls("assistant", content, tuple(tool_calls))

    @classmethod
    def tool(cls, tool_call_id: str, content: str, *, name: str | None = None) -> Message:
        return cls("tool", content, tool_call_id=tool_call_id, name=name)


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model; ``parameters`` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class Usage:
    """Tokens of one call and what they cost (0.0 when the price is unknown or free)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
        )


@dataclass(frozen=True)
class Price:
    """What a model charges, in US dollars per 1,000 tokens."""

    input_per_1k: float
    output_per_1k: float

    @property
    def free(self) -> bool:
        return self.input_per_1k == 0 and self.output_per_1k == 0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_1k + completion_tokens * self.output_per_1k) / 1000


FREE = Price(0.0, 0.0)


class Spend(TypedDict):
    """One model call as the spend ledger records it (``store.spend.record`` keywords)."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float


@dataclass(frozen=True)
class ModelReply:
    """The answer of one :meth:`ChatModel.complete` call.

    ``usage`` is the successful attempt's; ``latency_s`` is what the caller waited, retries and
    back-off included; ``attempts`` counts requests made (1 when nothing was retried).
    """

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    latency_s: float = 0.0
    model: str = ""
    attempts: int = 1

    def spend(self) -> Spend:
        """The call as the spend ledger records it (``store.spend.record`` keywords)."""
        return {
            "model": self.model or "unknown",
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "cost_usd": self.usage.cost_usd,
            "latency_s": self.latency_s,
        }


@dataclass(frozen=True)
class ModelEvent:
    """One attempt of a model call, for run logs and spend ledgers.

    ``call``: the attempt succeeded (usage filled in). ``retry``: it failed and will be retried
    after ``delay_s``. ``error``: it failed and the call gives up (a :class:`ModelError` follows).
    ``load``: before its first attempt the call (or the prompt built for it) waited
    ``latency_s`` for the model client's import to finish.
    """

    kind: EventKind
    model: str
    attempt: int
    latency_s: float
    usage: Usage | None = None
    error: str | None = None
    status: int | None = None
    delay_s: float = 0.0


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers chat messages: the litellm seam, the offline model, test models.

    Besides answering, a model says what it costs, so a spend cap can be kept: there is no
    default, so a model that leaves out :meth:`price` is a type error, not a free model.
    """

    def price(self) -> Price | None:
        """What the model charges; :data:`FREE` for a free one, ``None`` when it has a price
        but nobody knows it (a model litellm does not map), so no spend cap can be kept."""
        ...

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        """The most one call with ``messages`` and ``tools`` may cost, reserved against a
        spend cap before the call is made; 0.0 for a free or unpriced model."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        """Answer ``messages``. With ``on_token`` the call streams: the callback gets each text
        delta in order and the returned reply is their aggregate. Failures raise ``ModelError``."""
        ...
