"""The price and key rules ``squad validate`` reads without litellm agree with litellm's."""

from __future__ import annotations

from squad.model.providers import cost_map, key_need, listed_price, provider_of
from squad.model.seam import _litellm_price

# Providers whose get_model_info asks a server or cloud credentials: not a map lookup; and
# an embedding price list whose provider name litellm's calls do not take.
LOOKED_UP_ELSEWHERE = (
    "ollama",
    "vertex",
    "bedrock",
    "sagemaker",
    "azure",
    "fireworks_ai-embedding-models/",
)
CHOSEN = [
    "gpt-4o-mini",
    "openai/gpt-4o-mini",
    "openai/llama3",
    "openai/my-gateway-alias",
    "hosted_vllm/qwen",
    "anthropic/claude-haiku-4-5",
    "claude-haiku-4-5",
    "mistral/mistral-small-latest",
    "deepseek/deepseek-chat",
    "openrouter/openai/gpt-4o-mini",
    "together_ai/meta-llama/Llama-3-8b-chat-hf",
    "some-alias",
]


def test_the_shipped_map_prices_a_model_exactly_when_litellm_does() -> None:
    names = sorted(cost_map())[::20]
    names += [f"{cost_map()[n]['litellm_provider']}/{n}" for n in names if "/" not in n]
    names = [n for n in [*names, *CHOSEN] if not n.startswith(LOOKED_UP_ELSEWHERE)]

    disagree = [
        name for name in names if (listed_price(name) is None) != (_litellm_price(name) is None)
    ]

    assert len(names) > 200
    assert disagree == []


def test_priced_figures_are_litellms_per_1k_tokens() -> None:
    price = _litellm_price("openai/gpt-4o-mini")

    assert price is not None
    assert listed_price("openai/gpt-4o-mini") == (price.input_per_1k, price.output_per_1k)


def test_key_variables_follow_the_provider_prefix_or_the_map() -> None:
    assert provider_of("gemini/gemini-2.5-flash") == "gemini"
    assert provider_of("gpt-4o-mini") == "openai"
    assert provider_of("not-a-model") is None
    gemini = key_need("gemini/gemini-2.5-flash")
    assert gemini is not None and gemini.variables == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert key_need("ollama/llama3") is None
    assert key_need("openai/llama3", api_base="http://127.0.0.1:8080/v1") is None
    assert key_need("offline") is None
    assert key_need("bedrock/anthropic.claude-v2") is None  # cloud credentials: not checked
