"""Model calls: one seam over litellm, the built-in offline model, and test doubles.

Everything outside this package takes a :class:`ChatModel`; only :mod:`squad.model.seam`
imports litellm, and only on the first call. :mod:`squad.model.testing` ships a real
OpenAI-compatible HTTP server on loopback for tests.
"""

from __future__ import annotations

from squad.model.seam import LiteLLMModel, RetryPolicy
from squad.model.types import (
    ChatModel,
    Message,
    ModelEvent,
    ModelReply,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "ChatModel",
    "LiteLLMModel",
    "Message",
    "ModelEvent",
    "ModelReply",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "Usage",
]
