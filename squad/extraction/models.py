"""Which model extracts an agent's facts: its own, or none (the offline extractor)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from squad.memory.agent import AgentContext
from squad.model.offline import is_offline
from squad.model.types import ChatModel, ModelEvent
from squad.spec.models import ModelSpec

__all__ = ["ExtractionModels"]


class ExtractionModels:
    """``model_for(ctx)``: the agent's configured model (one instance per spec), or None when
    the agent runs on the built-in offline model."""

    def __init__(
        self, factory: Callable[[ModelSpec, Callable[[ModelEvent], None]], ChatModel]
    ) -> None:
        self._factory = factory
        self._models: dict[str, ChatModel] = {}
        self._lock = threading.Lock()

    def __call__(self, ctx: AgentContext) -> ChatModel | None:
        return self.for_spec(ctx.agent.model or ctx.squad.model)

    def for_spec(self, spec: ModelSpec) -> ChatModel | None:
        """The model for ``spec``; None for the built-in offline model, which counts as "no
        model configured": its agents get the offline extractor, without a call."""
        if is_offline(spec.name):
            return None
        key = spec.model_dump_json()
        with self._lock:
            if key not in self._models:
                self._models[key] = self._factory(spec, lambda event: None)
            return self._models[key]
