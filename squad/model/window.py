"""A model's context window: how many tokens one call may hold, prompt and answer together.

The prompt's regions are sized from it (:mod:`squad.memory.regions`). Where it comes from,
first found wins:

1. ``option``: a figure given for this look-up (``squad memory context --context-window``);
2. ``spec``: the model mapping's ``context_window``;
3. ``offline``: the built-in offline model's declared window
   (:data:`~squad.model.offline.CONTEXT_WINDOW`, 8,192), without loading litellm;
4. ``litellm``: litellm's model map for a real model (``max_input_tokens``, else
   ``max_tokens``), read through the seam, the one module that imports litellm, with its
   network look-ups off; a figure below :data:`~squad.spec.models.MIN_CONTEXT_WINDOW` is
   raised to it (squad cannot plan a smaller prompt);
5. ``default``: :data:`DEFAULT_CONTEXT_WINDOW` (8,192) for a model litellm does not map.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from squad.model.offline_name import CONTEXT_WINDOW as OFFLINE_CONTEXT_WINDOW
from squad.model.offline_name import is_offline
from squad.spec.window import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW

if TYPE_CHECKING:
    from squad.spec.models import ModelSpec

__all__ = ["DEFAULT_CONTEXT_WINDOW", "ContextWindow", "WindowSource", "context_window"]

DEFAULT_CONTEXT_WINDOW = 8192
"""The window assumed for a model neither its mapping nor litellm gives one for."""

WindowSource = Literal["option", "spec", "offline", "litellm", "default"]


@dataclass(frozen=True)
class ContextWindow:
    """A model's window in tokens and where the figure came from."""

    tokens: int
    source: WindowSource


def context_window(
    spec: ModelSpec,
    *,
    option: int | None = None,
    lookup: Callable[[str], int | None] | None = None,
) -> ContextWindow:
    """The window of the model ``spec`` names (see the module docstring for the order).

    ``lookup`` asks a model map for a model name (default: litellm's, through the seam); it
    is called only for a real model whose mapping gives no window."""
    if option is not None:
        return ContextWindow(option, "option")
    if spec.context_window is not None:
        return ContextWindow(spec.context_window, "spec")
    if is_offline(spec.name):
        return ContextWindow(OFFLINE_CONTEXT_WINDOW, "offline")
    if lookup is None:
        from squad.model.seam import model_window

        lookup = model_window
    found = lookup(spec.name)
    if found is None:
        return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
    return ContextWindow(min(max(found, MIN_CONTEXT_WINDOW), MAX_CONTEXT_WINDOW), "litellm")
