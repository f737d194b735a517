"""What a model string needs before a call can start, read without importing litellm.

``squad validate`` must catch what ``squad run`` would refuse, in about the time of ``squad
--help``: litellm takes seconds to import, so this module reads the two things it needs
directly. Prices come from the cost map litellm ships (``model_prices_and_context_window_
backup.json`` in its package folder: the map it loads itself, as squad runs it with
``LITELLM_LOCAL_MODEL_COST_MAP``), parsed on first use. Key variables come from
:data:`KEY_VARIABLES`, litellm's own names (``litellm.validate_environment``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from squad.model.offline import is_offline

__all__ = [
    "KEYLESS_PROVIDERS",
    "KEY_VARIABLES",
    "KeyNeed",
    "cost_map",
    "key_need",
    "listed_price",
    "provider_of",
]

COST_MAP_FILE = "model_prices_and_context_window_backup.json"

KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "text-completion-openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "codestral": ("CODESTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
    "azure": ("AZURE_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "fireworks_ai": (
        "FIREWORKS_AI_API_KEY",
        "FIREWORKS_API_KEY",
        "FIREWORKSAI_API_KEY",
        "FIREWORKS_AI_TOKEN",
    ),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "huggingface": ("HUGGINGFACE_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
}
"""Per litellm provider, the variables any one of which holds its key (litellm's names, from
``litellm.validate_environment``). A provider not listed (bedrock and vertex_ai, which take
cloud credentials in many forms; anything new) is not checked: its call will say."""

KEYLESS_PROVIDERS = frozenset(
    {"ollama", "ollama_chat", "hosted_vllm", "vllm", "lm_studio", "llamafile", "offline"}
)
"""Providers that run on the user's own machine and take no key."""


@dataclass(frozen=True)
class KeyNeed:
    """The variables, any one of which must be set, for a model's calls to carry a key, and
    where that requirement comes from (``api_key_env`` or the provider's usual ones)."""

    variables: tuple[str, ...]
    named_by: str


def key_need(
    name: str, *, api_base: str | None = None, api_key_env: str | None = None
) -> KeyNeed | None:
    """What key a call to ``name`` needs from the environment, or None when none is needed or
    squad cannot tell: the rule :class:`~squad.model.seam.LiteLLMModel` applies. A variable
    named by ``api_key_env`` is required; a model with ``api_base`` and no ``api_key_env`` is
    a server of the user's own, sent a placeholder when no key is set; otherwise the
    provider's usual variables apply."""
    if is_offline(name):
        return None
    if api_key_env is not None:
        return KeyNeed((api_key_env,), "api_key_env")
    if api_base is not None:
        return None
    provider = provider_of(name)
    if provider is None or provider in KEYLESS_PROVIDERS or provider not in KEY_VARIABLES:
        return None
    return KeyNeed(KEY_VARIABLES[provider], provider)


def provider_of(name: str) -> str | None:
    """The litellm provider ``name`` goes to: its prefix (``anthropic/...``), else the
    provider litellm's cost map lists for the bare name (``gpt-4o-mini``: openai); None when
    neither says."""
    prefix, _, rest = name.partition("/")
    if rest:
        return prefix
    entry = cost_map().get(name)
    provider = entry.get("litellm_provider") if isinstance(entry, dict) else None
    return provider if isinstance(provider, str) else None


def listed_price(name: str) -> tuple[float, float] | None:
    """Dollars per 1,000 input and output tokens that litellm's cost map lists for ``name``
    (by its full name, else without its provider prefix when the entry is that provider's),
    or None: then ``squad run`` refuses the model unless its definition gives both prices
    (:func:`~squad.runtime.prices.require_prices`)."""
    table = cost_map()
    prefix, _, rest = name.partition("/")
    candidates: list[tuple[str, str | None]] = [(name, None)]
    if rest:
        candidates.append((rest, prefix))
    for key, provider in candidates:
        entry = table.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("alias_of"), str):
            entry = table.get(entry["alias_of"])  # `...-latest`: the model it stands for
        if not isinstance(entry, dict) or not isinstance(entry.get("litellm_provider"), str):
            continue  # not a model's entry (the map's sample_spec, its fallback rules)
        if provider is not None and not _same_provider(entry.get("litellm_provider"), provider):
            continue
        # as litellm's get_model_info: a listed model's unlisted cost counts as 0
        given = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        return tuple(float(cost) * 1000 if isinstance(cost, int | float) else 0.0 for cost in given)  # type: ignore[return-value]
    return None


def _same_provider(listed: Any, wanted: str) -> bool:
    return isinstance(listed, str) and (listed == wanted or listed.endswith(f"-{wanted}"))


_KEPT = (
    "litellm_provider",
    "input_cost_per_token",
    "output_cost_per_token",
    "alias_of",
    "max_input_tokens",
    "max_tokens",
)
"""The fields of each entry squad reads; the rest (a few MB in a long-lived daemon) is
dropped once parsed."""


@lru_cache(maxsize=1)
def cost_map() -> dict[str, Any]:
    """litellm's shipped cost map, parsed once, each entry cut to the fields squad reads
    (:data:`_KEPT`); empty when litellm is not installed."""
    path = cost_map_path()
    if path is None:
        return {}
    data = json.loads(path.read_bytes())
    if not isinstance(data, dict):
        return {}
    return {
        key: {field: entry[field] for field in _KEPT if field in entry}
        for key, entry in data.items()
        if isinstance(entry, dict)
    }


def cost_map_path() -> Path | None:
    """Where litellm's shipped cost map is, found without importing litellm."""
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / COST_MAP_FILE
        if path.is_file():
            return path
    return None
