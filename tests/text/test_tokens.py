"""Token counting uses the model's own tokenizer, offline, from litellm's bundled files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from squad.text.tokens import CachedCounter, counter_for_model, encoding_for_model


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
    from squad.text import tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokens._counter.cache_clear()
    assert counter_for_model("openai/gpt-4o").count("hi there") == 2
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_parsed_rank_table_is_kept_and_read_back_as_the_same_encoding(tmp_path: Path) -> None:
    from squad.text import tokens

    folder = tokens._bundled_tokenizers()
    text = "Hello, 안녕하세요 world <|endoftext|>\n\n  def f(x): return x ** 2"
    parsed = tokens._load_tiktoken("cl100k_base", folder, cache=tmp_path)
    (kept,) = tmp_path.iterdir()
    assert kept.name.startswith("cl100k_base-") and kept.suffix == ".marshal"
    again = tokens._load_tiktoken("cl100k_base", folder, cache=tmp_path)
    assert list(tmp_path.iterdir()) == [kept]
    for encoding in (parsed, again):
        assert encoding.name == "cl100k_base"
        assert encoding.encode(text, allowed_special="all") == parsed.encode(
            text, allowed_special="all"
        )
        assert encoding.n_vocab == parsed.n_vocab
    kept.write_bytes(b"not marshal")  # a torn or foreign file: parsed again, and replaced
    mended = tokens._load_tiktoken("cl100k_base", folder, cache=tmp_path)
    assert mended.encode(text, allowed_special="all") == parsed.encode(text, allowed_special="all")
    assert tokens._read_ranks(kept) is not None


class Counting:
    """A counter that counts words and how often it was asked."""

    name = "words"

    def __init__(self) -> None:
        self.asked = 0

    def count(self, text: str) -> int:
        self.asked += 1
        return len(text.split())


def test_a_cached_counter_answers_repeats_without_tokenizing_again() -> None:
    inner = Counting()
    cached = CachedCounter(inner)
    long_text = "word " * 5_000  # keyed by its digest
    for _ in range(3):
        assert cached.count("two words") == 2
        assert cached.count(long_text) == 5_000
    assert inner.asked == 2 and cached.name == "words"
    assert cached.count(long_text + "more") == 5_001 and inner.asked == 3


def test_the_cache_forgets_the_least_recently_used_past_its_size() -> None:
    inner = Counting()
    cached = CachedCounter(inner, maxsize=2)
    cached.count("a")
    cached.count("b b")
    cached.count("a")  # now the most recent
    cached.count("c c c")  # evicts "b b"
    cached.count("a")
    assert inner.asked == 3
    cached.count("b b")
    assert inner.asked == 4


def test_model_counters_remember_unless_asked_not_to() -> None:
    text = "The billing service pools its Postgres connections."
    remembering = counter_for_model("openai/gpt-4o")
    fresh = counter_for_model("openai/gpt-4o", remember=False)
    assert isinstance(remembering, CachedCounter) and not isinstance(fresh, CachedCounter)
    assert remembering.count(text) == fresh.count(text) > 0
    assert remembering.name == fresh.name == "o200k_base"


COUNTED_TEXTS = [
    "hi there",
    "Hello, 안녕하세요 world <|endoftext|>\n\n  def f(x): return x ** 2",
    "-" * 300 + "\n" + " " * 200 + "=" * 90,
    "# Insights\n- the deploy needs VPN (2026-01-02)\n\n# Decisions\n",
    "emoji 🎉🎉 and math ∑∫ and tabs\t\there\r\n",
    "a",
    "x" * 5000,
    "\ud800 lone surrogate",
]


def whole_encoder_built(counter: object) -> bool:
    return getattr(counter, "_encoding", None) is not None


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_short_texts_are_counted_as_the_whole_encoder_counts_them(encoding: str) -> None:
    """Short texts are counted by an encoder of the ranks found in them (no whole encoder
    built): the counts are the whole encoder's."""
    from squad.text import tokens

    folder = tokens._bundled_tokenizers()
    whole = tokens._load_tiktoken(encoding, folder)  # also keeps the tables
    for text in COUNTED_TEXTS:
        counter = tokens._TiktokenCounter(encoding, folder)
        assert counter.count(text) == len(whole.encode(text, disallowed_special=())), text[:40]
    counter = tokens._TiktokenCounter(encoding, folder)
    for text in COUNTED_TEXTS[:5]:
        assert counter.count(text) == len(whole.encode(text, disallowed_special=()))
    assert not whole_encoder_built(counter)  # a few short texts
    counter.count("y" * counter.SMALL_CHARS)
    assert whole_encoder_built(counter)
    assert counter.count(COUNTED_TEXTS[1]) == len(
        whole.encode(COUNTED_TEXTS[1], disallowed_special=())
    )
    assert counter.count("") == 0


def test_short_texts_read_the_split_table_kept_beside_the_whole_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first short count splits the kept table by byte pairs and keeps the split beside
    it; later counters read only the parts their texts name, and count as the whole encoder;
    a torn split is made again."""
    from squad.text import tokens

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tokens._bundled_tokenizers()
    whole = tokens._load_tiktoken("cl100k_base", folder)  # keeps the whole table only
    (kept,) = tokens._rank_cache().iterdir()
    first = tokens._TiktokenCounter("cl100k_base", folder)
    assert first.count(COUNTED_TEXTS[3]) == len(whole.encode(COUNTED_TEXTS[3]))
    split = kept.with_name(kept.name.replace(".marshal", ".small.marshal"))
    assert sorted(tokens._rank_cache().iterdir()) == sorted([kept, split])
    for text in COUNTED_TEXTS[:5]:
        counter = tokens._TiktokenCounter("cl100k_base", folder)
        assert counter.count(text) == len(whole.encode(text, disallowed_special=())), text[:40]
        assert not whole_encoder_built(counter)
        assert len(counter._ranks) < whole.n_vocab // 4  # the parts its text names
    split.write_bytes(b"torn")
    again = tokens._TiktokenCounter("cl100k_base", folder)
    assert again.count(COUNTED_TEXTS[1]) == len(
        whole.encode(COUNTED_TEXTS[1], disallowed_special=())
    )
    assert tokens._read_ranks(kept) is not None and split.read_bytes() != b"torn"
