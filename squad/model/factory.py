"""Which :class:`~squad.model.types.ChatModel` a model spec names: the one place that decides.

The built-in offline model answers in this process (:class:`~squad.model.offline.OfflineModel`)
and never loads litellm; every other model string goes through litellm
(:class:`~squad.model.seam.LiteLLMModel`), which is imported on its first call only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from squad.model.offline import OfflineModel, is_offline
from squad.model.types import ChatModel, ModelEvent

if TYPE_CHECKING:
    from squad.spec.models import ModelSpec

__all__ = ["ModelFactory", "model_for"]

ModelFactory = Callable[["ModelSpec", Callable[[ModelEvent], None]], ChatModel]
"""Builds the model for a spec; gets the callback for each attempt's :class:`ModelEvent`."""


def model_for(spec: ModelSpec, on_event: Callable[[ModelEvent], None] | None = None) -> ChatModel:
    """The model ``spec`` names: offline in-process, any other through litellm."""
    if is_offline(spec.name):
        return OfflineModel(on_event=on_event)
    from squad.model.seam import LiteLLMModel

    return LiteLLMModel(spec, on_event=on_event)
