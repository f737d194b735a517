"""Which :class:`~squad.model.types.ChatModel` a model spec names: the one place that decides.

The built-in offline model answers in this process (:class:`~squad.model.offline.OfflineModel`)
and never loads litellm; every other model string goes through litellm
(:class:`~squad.model.seam.LiteLLMModel`), which is imported on its first call only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from squad.model.offline import OfflineModel, is_offline
from squad.model.types import ChatModel, ModelEvent

if TYPE_CHECKING:
    from squad.model.litellm_load import WaitListener
    from squad.spec.models import ModelSpec, SquadSpec

__all__ = ["ModelFactory", "model_for", "preload_client", "squad_models"]

ModelFactory = Callable[["ModelSpec", Callable[[ModelEvent], None]], ChatModel]
"""Builds the model for a spec; gets the callback for each attempt's :class:`ModelEvent`."""


def model_for(spec: ModelSpec, on_event: Callable[[ModelEvent], None] | None = None) -> ChatModel:
    """The model ``spec`` names: offline in-process, any other through litellm."""
    if is_offline(spec.name):
        return OfflineModel(on_event=on_event)
    from squad.model.seam import LiteLLMModel

    return LiteLLMModel(spec, on_event=on_event)


def squad_models(
    spec: SquadSpec, *, override: str | None = None, agents: Iterable[str] | None = None
) -> list[str]:
    """The model names ``spec``'s agents (or those among ``agents``) call; ``override`` is a
    ``--model`` given for every agent."""
    if override:
        return [override]
    chosen = None if agents is None else set(agents)
    names = [
        (agent.model or spec.model).name
        for agent in spec.agents
        if chosen is None or agent.id in chosen
    ]
    return names or [spec.model.name]


def preload_client(
    names: Iterable[str],
    listener: WaitListener | None = None,
    *,
    factory: ModelFactory = model_for,
) -> bool:
    """Start litellm's import on a background thread when any of ``names`` goes through it
    (:data:`~squad.model.litellm_load.CLIENT`), so it overlaps what the process does before
    its first call; ``listener`` hears of any wait left then. The offline model never loads
    litellm: False, and nothing started, when every name is offline, or when ``factory`` (the
    app's) is not :func:`model_for` (a test model or a benchmark's never needs litellm)."""
    if factory is not model_for or all(is_offline(name) for name in names):
        return False
    from squad.model.litellm_load import CLIENT

    CLIENT.start(listener)
    return True
