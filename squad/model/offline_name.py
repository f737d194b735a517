"""How a spec names the built-in offline model, and the window it declares: what planning a
prompt needs of it (:mod:`squad.model.window`) without loading the model
(:mod:`squad.model.offline`, which re-exports these)."""

from __future__ import annotations

__all__ = ["CONTEXT_WINDOW", "MODEL_NAME", "is_offline"]

MODEL_NAME = "offline"
"""The model string that names the built-in offline model (the default of every squad)."""

CONTEXT_WINDOW = 8192
"""The context window the offline model declares. It reads a prompt of any length, but its
prompts are planned as an ordinary small model's are, so an offline squad's regions are the
ones a real 8,192-token model gets (memory 2,000, recall 1,000, ...)."""


def is_offline(name: str) -> bool:
    """Whether a spec's model ``name`` is the built-in offline model."""
    return name == MODEL_NAME
