"""A model's context window: the mapping's, the offline model's, litellm's, else the default."""

from __future__ import annotations

from squad.model.window import DEFAULT_CONTEXT_WINDOW, ContextWindow, context_window
from squad.spec.models import ModelSpec
from squad.spec.window import MIN_CONTEXT_WINDOW


def test_the_window_comes_from_the_option_the_mapping_the_offline_model_or_the_default() -> None:
    asked: list[str] = []

    def lookup(name: str) -> int | None:
        asked.append(name)
        return {"openai/big": 128_000, "tiny/one": 512}.get(name)

    real = ModelSpec(name="openai/big")
    assert context_window(real, lookup=lookup) == ContextWindow(128_000, "litellm")
    assert context_window(real, option=4096, lookup=lookup) == ContextWindow(4096, "option")
    declared = ModelSpec(name="openai/big", context_window=32_000)
    assert context_window(declared, lookup=lookup) == ContextWindow(32_000, "spec")
    offline = ModelSpec(name="offline")
    assert context_window(offline, lookup=lookup) == ContextWindow(8192, "offline")
    unknown = ModelSpec(name="openai/who-knows")
    assert context_window(unknown, lookup=lookup) == ContextWindow(
        DEFAULT_CONTEXT_WINDOW, "default"
    )
    tiny = context_window(ModelSpec(name="tiny/one"), lookup=lookup)
    assert tiny == ContextWindow(MIN_CONTEXT_WINDOW, "litellm")  # raised to what squad can plan
    assert asked == ["openai/big", "openai/who-knows", "tiny/one"]  # only real, undeclared ones


def test_litellms_model_map_gives_a_known_models_window() -> None:
    assert context_window(ModelSpec(name="openai/gpt-4o-mini")) == ContextWindow(128_000, "litellm")
    assert context_window(ModelSpec(name="openai/no-such-model-here")).source == "default"
