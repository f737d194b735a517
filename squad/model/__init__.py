"""Model calls: one seam over litellm, the built-in offline model, and test doubles.

Everything outside this package takes a :class:`ChatModel`; :func:`model_for` picks one for
a spec. Only :mod:`squad.model.seam` imports litellm, and only on a real provider's first call;
the offline model (:class:`OfflineModel`) never does. :mod:`squad.model.testing` ships a real
OpenAI-compatible HTTP server on loopback for tests, and in-process test models
(``FunctionModel``, ``TestModel``) for tests above the seam.

The names load on first access (each from its own module): a module that needs one
submodule (the context windows, the types) does not import the seam and the factory with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from squad.lazy import lazy_names

if TYPE_CHECKING:
    from squad.model.factory import ModelFactory, model_for
    from squad.model.offline import OfflineModel
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
    "ModelFactory",
    "ModelReply",
    "OfflineModel",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "model_for",
]

_HOMES = {
    "ChatModel": "types",
    "LiteLLMModel": "seam",
    "Message": "types",
    "ModelEvent": "types",
    "ModelFactory": "factory",
    "ModelReply": "types",
    "OfflineModel": "offline",
    "RetryPolicy": "seam",
    "ToolCall": "types",
    "ToolSpec": "types",
    "Usage": "types",
    "model_for": "factory",
}
"""The module under :mod:`squad.model` each name of :data:`__all__` lives in."""


__getattr__ = lazy_names(__name__, _HOMES, globals())
