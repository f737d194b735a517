"""Token counting uses the model's own tokenizer, offline, from litellm's bundled files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from squad.memory.tokens import counter_for_model, encoding_for_model


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("offline", "cl100k_base"),
        ("openai/gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("openai/gpt-4", "cl100k_base"),
        ("anthropic/claude-3-5-sonnet", "anthropic"),
        ("deepseek/deepseek-chat", "deepseek"),
        ("ollama/llama3", "cl100k_base"),
        ("openai/o3-mini", "o200k_base"),
    ],
)
def test_model_strings_map_to_their_tokenizer(model: str, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


def test_counts_are_real_bpe_counts_not_word_counts() -> None:
    counter = counter_for_model("openai/gpt-4")
    assert counter.count("hello world") == 2
    assert counter.count("antidisestablishmentarianism") > 1
    assert counter.count("") == 0
    assert counter.count("<|endoftext|>") > 1  # special tokens are plain text here


def test_every_bundled_tokenizer_counts_korean_and_english() -> None:
    for model in ("offline", "openai/gpt-4o", "anthropic/claude-3", "deepseek/chat"):
        assert counter_for_model(model).count("Hello, 안녕하세요 world") >= 3


def test_loading_never_touches_a_user_tiktoken_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from squad.memory import tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokens._counter.cache_clear()
    assert counter_for_model("openai/gpt-4o").count("hi there") == 2
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)
    assert list(tmp_path.iterdir()) == []
