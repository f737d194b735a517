"""What the OpenAI stub server answers to one request: the scripted behaviours.

Each is a frozen value a test puts in :meth:`~squad.model.testing.OpenAIStubServer.script`
(or returns from its handler): a plain answer, a tool call, a stream, an HTTP error, any raw
body, or a wait before one of these. The helpers build the usual ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

__all__ = [
    "CREATED",
    "Answer",
    "Behaviour",
    "Raw",
    "Slow",
    "Status",
    "Stream",
    "ToolCallAnswer",
    "answer",
    "malformed_json",
    "malformed_tool_arguments",
    "no_choices",
    "slow",
    "status",
    "stream",
    "tool_call",
]


CREATED = 1_700_000_000  # a fixed timestamp: stub answers are byte-for-byte reproducible


@dataclass(frozen=True)
class Answer:
    """A plain assistant message (usage counted in whitespace words unless given)."""

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class ToolCallAnswer:
    """An assistant message calling one tool; ``arguments`` as a string is sent verbatim."""

    name: str
    arguments: Mapping[str, Any] | str
    call_id: str = "call_stub_1"
    content: str | None = None


@dataclass(frozen=True)
class Stream:
    """A streamed answer: one SSE chunk per delta, a usage chunk, then ``data: [DONE]``.

    With ``cut_after`` the stream breaks after that many deltas: half an event, then the
    connection closes (a proxy or server dying mid-answer).
    """

    deltas: tuple[str, ...]
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cut_after: int | None = None


@dataclass(frozen=True)
class Status:
    """An HTTP error in OpenAI's error shape, with an optional ``Retry-After`` header."""

    code: int
    message: str = "stub error"
    retry_after: str | None = None


@dataclass(frozen=True)
class Raw:
    """Any body, sent as is (for malformed answers)."""

    body: str
    code: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` (or until the server closes), then behave like ``then``."""

    seconds: float
    then: Behaviour


Behaviour = Answer | ToolCallAnswer | Stream | Status | Raw | Slow
"""What the stub does with one request."""


def answer(
    content: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None
) -> Answer:
    return Answer(content, prompt_tokens, completion_tokens)


def tool_call(
    name: str, arguments: Mapping[str, Any], *, call_id: str = "call_stub_1"
) -> ToolCallAnswer:
    return ToolCallAnswer(name, dict(arguments), call_id)


def malformed_tool_arguments(name: str, raw: str = '{"path": "notes.md",') -> ToolCallAnswer:
    """A tool call whose ``arguments`` string is not valid JSON."""
    return ToolCallAnswer(name, raw)


def stream(*deltas: str, cut_after: int | None = None) -> Stream:
    return Stream(tuple(deltas), cut_after=cut_after)


def status(
    code: int, message: str = "stub error", *, retry_after: float | str | None = None
) -> Status:
    return Status(code, message, None if retry_after is None else _header_value(retry_after))


def slow(seconds: float, then: Behaviour | None = None) -> Slow:
    return Slow(seconds, then if then is not None else Answer("finally"))


def malformed_json() -> Raw:
    """A 200 answer whose body is not JSON at all."""
    return Raw('{"id": "chatcmpl-broken", "choices": [')


def no_choices() -> Raw:
    """A 200 answer with an empty ``choices`` list (some gateways send it on a filtered reply)."""
    body = {
        "id": "chatcmpl-empty",
        "object": "chat.completion",
        "created": CREATED,
        "model": "stub",
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5},
    }
    return Raw(json.dumps(body))


def _header_value(value: float | str) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
