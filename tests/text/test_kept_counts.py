"""Short texts' token counts kept between processes are the encoder's counts, named for what
a count depends on, bounded, and read back without importing the tokenizer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from squad.text import kept_counts
from squad.text.kept_counts import KeptCounts, counts_path
from tests.text.test_tokens import COUNTED_TEXTS

ROOT = Path(__file__).resolve().parents[2]


def _never(text: str) -> int:
    raise AssertionError(f"counted again: {text[:40]!r}")


def test_a_kept_count_is_the_whole_encoders_count_and_is_read_back(tmp_path: Path) -> None:
    from squad.text import tokens

    whole = tokens._load_tiktoken("cl100k_base", tokens._bundled_tokenizers())
    path = tmp_path / "counts.marshal"
    short = [text for text in COUNTED_TEXTS if len(text) <= 600]
    first = KeptCounts(path)
    for text in short:
        assert first.count(text, lambda t: len(whole.encode(t, disallowed_special=()))) >= 0
    assert not path.exists()  # written once, as the process exits
    first.flush()
    again = KeptCounts(path)
    for text in short:
        assert again.count(text, _never) == len(whole.encode(text, disallowed_special=()))


def test_a_process_keeps_only_its_budget_and_no_long_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_counts, "BUDGET_CHARS", 10)
    path = tmp_path / "counts.marshal"
    counts = KeptCounts(path)
    assert counts.count("x" * (kept_counts.LONGEST + 1), len) == kept_counts.LONGEST + 1
    assert not path.exists()  # a long text is neither looked up nor kept
    for text in ("abcdef", "ghij", "k"):
        counts.count(text, len)
    counts.flush()
    again = KeptCounts(path)
    assert again.count("abcdef", _never) == 6 and again.count("ghij", _never) == 4
    assert again.count("k", lambda text: 99) == 99  # past the budget: counted, not kept


def test_the_file_keeps_the_newest_counts_and_survives_a_torn_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_counts, "KEPT", 3)
    path = tmp_path / "counts.marshal"
    counts = KeptCounts(path)
    for text in ("a", "bb", "ccc", "dddd"):
        counts.count(text, len)
    counts.flush()
    again = KeptCounts(path)
    assert [again.count(text, lambda text: -1) for text in ("bb", "ccc", "dddd", "a")] == [
        2,
        3,
        4,
        -1,
    ]
    path.write_bytes(b"torn")
    torn = KeptCounts(path)
    assert torn.count("bb", lambda text: 7) == 7
    torn.flush()
    assert KeptCounts(path).count("bb", _never) == 7


def test_the_file_is_named_for_the_rank_files_and_the_installed_tiktoken(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    (ranks / "cl100k_base.tiktoken").write_text("abc")
    first = counts_path("cl100k_base", ranks, tmp_path / "cache")
    assert first is not None and first.parent == tmp_path / "cache"
    assert counts_path("cl100k_base", ranks, tmp_path / "cache") == first
    assert counts_path("o200k_base", ranks, tmp_path / "cache") != first
    (ranks / "cl100k_base.tiktoken").write_text("abcd")
    assert counts_path("cl100k_base", ranks, tmp_path / "cache") != first
    assert counts_path("cl100k_base", tmp_path / "missing", tmp_path / "cache") is None


COUNT = """
import sys
from squad.text.tokens import counter_for_model
print(counter_for_model("offline").count(sys.argv[1]), "tiktoken" in sys.modules)
"""


def test_a_later_process_counts_a_kept_text_without_importing_tiktoken(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path)}
    text = COUNTED_TEXTS[3]

    def count() -> str:
        done = subprocess.run(
            [sys.executable, "-c", COUNT, text], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    from squad.text.tokens import counter_for_model

    expected = counter_for_model("offline", remember=False).count(text)
    assert count() == f"{expected} True"
    assert count() == f"{expected} False"
    assert len(list((tmp_path / "squad" / "token-counts").iterdir())) == 1
