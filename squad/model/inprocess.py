"""In-process test models: :class:`FunctionModel` and :class:`TestModel`.

They answer in this process, with no socket and no litellm, for tests of everything above the
seam (turn loop, chat, extraction) that need a model but not the provider path; that path is
tested against :class:`~squad.model.testing.OpenAIStubServer`. Both are whole
:class:`~squad.model.types.ChatModel` s: they report a price ($0 unless given) and what a call
may cost, so a spend cap treats them as it treats a real model. Import them from
:mod:`squad.model.testing`.

- :class:`FunctionModel`: a function of the messages and the offered tools decides each reply.
- :class:`TestModel`: calls every tool it is offered once, with arguments built from each
  tool's JSON schema, then answers with what the tools returned (in the manner of
  pydantic-ai's ``TestModel``), so a test exercises every tool without writing a script.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from squad.model.types import (
    FREE,
    Message,
    ModelReply,
    Price,
    TokenCallback,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["FunctionModel", "ModelCall", "Reply", "TestModel", "arguments_for"]

Reply = ModelReply | str
"""What a :class:`FunctionModel`'s function returns: a whole reply, or only its text (then
usage is counted and priced by the model)."""
RESERVED_OUTPUT_TOKENS = 1024
"""Output tokens a priced test model reserves against a spend cap, as the seam does for a
model without ``max_tokens``."""


@dataclass(frozen=True)
class ModelCall:
    """One call a test model answered, as it was asked."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    response_format: Mapping[str, Any] | None

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


class _InProcessModel:
    """What both test models share: a name, a price, the calls they answered, usage."""

    def __init__(self, *, name: str, price: Price | None) -> None:
        self.name = name
        self._price = price
        self._lock = threading.Lock()
        self.calls: list[ModelCall] = []
        """Every call answered, in order (threads append under a lock)."""

    def price(self) -> Price | None:
        """The price given to the constructor ($0 when none was)."""
        return self._price

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        """The prompt's tokens (offline tokenizer) plus :data:`RESERVED_OUTPUT_TOKENS` of
        output at the model's price; 0.0 when it is free or unpriced."""
        if self._price is None or self._price.free:
            return 0.0
        prompt = _count(*(m.content for m in messages))
        prompt += _count(*(json.dumps(t.parameters) + t.name + t.description for t in tools))
        return self._price.cost(prompt, RESERVED_OUTPUT_TOKENS)

    def _record(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        response_format: Mapping[str, Any] | None,
    ) -> None:
        with self._lock:
            self.calls.append(ModelCall(tuple(messages), tuple(tools), response_format))

    def _reply(
        self, reply: Reply, messages: Sequence[Message], on_token: TokenCallback | None
    ) -> ModelReply:
        """``reply`` as a :class:`ModelReply` named for this model; a bare text gets usage
        counted with the offline tokenizer and priced. With ``on_token`` the text is
        delivered as one delta."""
        if isinstance(reply, str):
            reply = ModelReply(reply, usage=self._usage(messages, reply, ()))
        if on_token is not None and reply.content:
            on_token(reply.content)
        if reply.model:
            return reply
        return ModelReply(
            reply.content, reply.tool_calls, reply.usage, reply.latency_s, self.name, reply.attempts
        )

    def _usage(
        self, messages: Sequence[Message], content: str, tool_calls: Sequence[ToolCall]
    ) -> Usage:
        prompt = _count(*(m.content for m in messages))
        completion = _count(content, *(c.name + json.dumps(c.arguments) for c in tool_calls))
        price = self._price or FREE
        return Usage(prompt, completion, price.cost(prompt, completion))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class FunctionModel(_InProcessModel):
    """A model whose every reply is ``function(messages, tools)``: a whole
    :class:`ModelReply` (its usage kept as given), or a text. An exception the function
    raises (a :class:`~squad.errors.ModelError`, say) is the call's."""

    def __init__(
        self,
        function: Callable[[Sequence[Message], Sequence[ToolSpec]], Reply],
        *,
        name: str = "function",
        price: Price | None = FREE,
    ) -> None:
        super().__init__(name=name, price=price)
        self.function = function

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        self._record(messages, tools, response_format)
        return self._reply(self.function(messages, tools), messages, on_token)


class TestModel(_InProcessModel):
    """A model that calls each tool it is offered once, then answers.

    While no assistant message of the conversation has called a tool, a call offering tools is
    answered with one call of each, its arguments built by :func:`arguments_for` from the
    tool's schema. Once tools have been called, the answer is ``text`` when given, else a JSON
    object of each called tool's name and what it returned. With no tools offered the answer
    is ``text`` (default ``"success (no tool calls)"``), or, for a ``response_format`` with a
    JSON schema, a value built from that schema (``{}`` for a bare ``json_object``).
    """

    __test__ = False  # a pytest-collected name: not a test class

    def __init__(
        self, *, text: str | None = None, name: str = "test", price: Price | None = FREE
    ) -> None:
        super().__init__(name=name, price=price)
        self.text = text

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        self._record(messages, tools, response_format)
        called = any(m.role == "assistant" and m.tool_calls for m in messages)
        if tools and not called:
            calls = tuple(
                ToolCall(f"call_{i}", t.name, arguments_for(t.parameters))
                for i, t in enumerate(tools, start=1)
            )
            return ModelReply("", calls, self._usage(messages, "", calls), model=self.name)
        if called:
            return self._reply(self.text or _tool_results(messages), messages, on_token)
        return self._reply(self._answer(response_format), messages, on_token)

    def _answer(self, response_format: Mapping[str, Any] | None) -> str:
        if self.text is not None:
            return self.text
        if response_format is None:
            return "success (no tool calls)"
        schema = response_format.get("json_schema", {}).get("schema")
        return json.dumps(arguments_for(schema) if isinstance(schema, dict) else {})


def arguments_for(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> Any:
    """A value that fits the JSON ``schema``: its ``default``, ``const`` or first ``enum``
    value when it has one; else the first branch of ``anyOf``/``oneOf``; an object of its
    required properties; ``"a"`` repeated to ``minLength``; the ``minimum`` (or 0) of a
    number; ``minItems`` items of an array; ``False``; ``None``."""
    defs = schema.get("$defs", schema.get("definitions", {})) if defs is None else defs
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return arguments_for(target, defs)
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return arguments_for(schema[key][0], defs)
    kind = schema.get("type", "object" if "properties" in schema else "null")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {k: arguments_for(properties.get(k, {}), defs) for k in schema.get("required", ())}
    if kind == "array":
        items = schema.get("items", {})
        return [arguments_for(items, defs) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "string":
        return "a" * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        low += 1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    return None


def _tool_results(messages: Sequence[Message]) -> str:
    """A JSON object of each tool result in ``messages``, by the name of the tool called."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    results = {
        m.name or names.get(m.tool_call_id or "", m.tool_call_id or "tool"): m.content
        for m in messages
        if m.role == "tool"
    }
    return json.dumps(results, ensure_ascii=False)


def _count(*texts: str) -> int:
    """Tokens of ``texts`` by the offline model's tokenizer."""
    from squad.model.offline import MODEL_NAME
    from squad.text.tokens import counter_for_model

    counter = counter_for_model(MODEL_NAME)
    return sum(counter.count(t) for t in texts)
