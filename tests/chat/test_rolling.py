"""A chat's rolling summary: the model is asked again only when enough new messages have been
folded; in between, its saved summary plus offline bullets for the newest stand in."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from squad.chat.rolling import RollingSummariser, digest
from squad.chat.summarise import offline_summary
from squad.model.types import Message


class Words:
    """One token per word: easy arithmetic for budgets."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


WORDS = Words()


def exchange(i: int) -> list[Message]:
    return [
        Message("user", f"Question {i}: how do we configure part {i}?"),
        Message("assistant", f"Part {i} is configured in section {i} of the settings."),
    ]


def history(exchanges: int) -> list[Message]:
    return [m for i in range(exchanges) for m in exchange(i)]


class FakeModel:
    """Stands in for the model: records what it was asked, answers a numbered summary."""

    def __init__(self, *, fail: bool = False) -> None:
        self.asked: list[tuple[str, list[str]]] = []
        self.fail = fail

    def __call__(self, previous: str, messages: Sequence[Message], max_tokens: int) -> str | None:
        self.asked.append((previous, [m.content for m in messages]))
        if self.fail:
            return None
        return f"- summary {len(self.asked)} of {len(messages)} new messages"


def test_below_the_threshold_the_offline_summary_stands_in_without_a_call(
    tmp_path: Path,
) -> None:
    model = FakeModel()
    rolling = RollingSummariser(tmp_path / "chat-summary.json", model, refresh=6)
    dropped = history(2)
    assert rolling(dropped, 200, WORDS) == offline_summary(dropped, 200, WORDS)
    assert model.asked == [] and not (tmp_path / "chat-summary.json").exists()


def test_the_model_summarises_at_the_threshold_and_its_summary_is_reused_until_the_next(
    tmp_path: Path,
) -> None:
    model = FakeModel()
    path = tmp_path / "agents" / "writer" / "chat-summary.json"
    rolling = RollingSummariser(path, model, model="openai/x", refresh=6)

    first = rolling(history(3), 200, WORDS)  # six folded messages: the first call
    assert first == "- summary 1 of 6 new messages" and len(model.asked) == 1
    saved = json.loads(path.read_text())
    assert saved["summary"] == first and saved["model"] == "openai/x"
    assert set(saved["covered"]) == {digest(m) for m in history(3)}

    later = rolling(history(5), 200, WORDS)  # four new: no call
    assert len(model.asked) == 1
    newest = offline_summary(history(5)[6:], 200 - WORDS.count(first) - 1, WORDS)
    assert later == f"{first}\n{newest}" and "Question 4" in later

    rolling(history(6), 200, WORDS)  # six new since the summary: merged into it
    assert model.asked[1] == (first, [m.content for m in history(6)[6:]])
    assert json.loads(path.read_text())["summary"] == "- summary 2 of 6 new messages"


def test_a_failed_call_keeps_the_saved_summary_and_asks_again_next_turn(tmp_path: Path) -> None:
    path = tmp_path / "chat-summary.json"
    RollingSummariser(path, FakeModel(), refresh=2)(history(1), 200, WORDS)
    saved = path.read_text()
    failing = FakeModel(fail=True)
    rolling = RollingSummariser(path, failing, refresh=2)

    text = rolling(history(2), 200, WORDS)

    assert text.startswith("- summary 1 of 2 new messages\n- User: Question 1")
    assert path.read_text() == saved
    rolling(history(2), 200, WORDS)
    assert len(failing.asked) == 2


def test_a_sliding_window_brings_no_new_messages_and_no_call(tmp_path: Path) -> None:
    model = FakeModel()
    rolling = RollingSummariser(tmp_path / "chat-summary.json", model, refresh=4)
    rolling(history(4), 200, WORDS)
    assert len(model.asked) == 1
    assert rolling(history(4)[2:], 200, WORDS) == "- summary 1 of 8 new messages"
    assert len(model.asked) == 1


def test_an_unreadable_file_is_a_missing_cache(tmp_path: Path) -> None:
    path = tmp_path / "chat-summary.json"
    model = FakeModel()
    for junk in ("{not json", '{"summary": 3, "covered": []}', "[]", '{"summary": "x"}'):
        path.write_text(junk)
        rolling = RollingSummariser(path, model, refresh=100)
        assert rolling.load() is None
        assert rolling(history(2), 200, WORDS) == offline_summary(history(2), 200, WORDS)
    assert model.asked == []
