"""The LoCoMo benchmark's machinery on a small conversation of our own in LoCoMo's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import locomo


def _sample() -> dict[str, object]:
    session_1 = [
        ("Ana", "Hi Ben! I finally signed up for a pottery class yesterday."),
        ("Ben", "That's great! What are you making first?"),
        ("Ana", "A blue vase for my mum."),
        ("Ben", "She'll love it. I've been training for the harbour 10k."),
    ]
    session_2 = [
        ("Ben", "Ana! I ran the harbour 10k last Sunday, finished in 52 minutes."),
        ("Ana", "Wow, congratulations! Did the vase survive the kiln?"),
        ("Ben", "Ha, tell me about the vase."),
        ("Ana", "It cracked, so I'm glazing a bowl instead."),
    ]

    def turns(session: int, rows: list[tuple[str, str]]) -> list[dict[str, str]]:
        return [
            {"speaker": who, "dia_id": f"D{session}:{i}", "text": text}
            for i, (who, text) in enumerate(rows, start=1)
        ]

    return {
        "sample_id": "ours-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 3 March, 2024",
            "session_1": turns(1, session_1),
            "session_2_date_time": "6:30 pm on 20 March, 2024",
            "session_2": turns(2, session_2),
        },
        "qa": [
            {
                "question": "When did Ana sign up for a pottery class?",
                "answer": "2 March 2024",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {
                "question": "What did Ana make for her mum?",
                "answer": "a blue vase",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {
                "question": "How long did Ben take to run the harbour 10k?",
                "answer": "52 minutes",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {"question": "What is Ben's dog called?", "answer": "none", "category": 5},
        ],
    }


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "ours.json"
    path.write_text(json.dumps([_sample()]), encoding="utf-8")
    return path


def test_sessions_replay_in_order_at_their_dates_and_adversarial_questions_are_left_out(
    data: Path,
) -> None:
    (conv,) = locomo.load(data)
    assert [t.dia for t in conv.turns][:2] == ["D1:1", "D1:2"]
    assert conv.turns[0].when.isoformat() == "2024-03-03T10:00:00+00:00"
    assert conv.turns[4].when.date().isoformat() == "2024-03-20"
    assert [q.category for q in conv.questions] == [2, 4, 4]


def test_answer_in_context_needs_a_span_close_to_the_gold_answer() -> None:
    gold = locomo.answer_tokens("The blue vase")
    assert gold == ["blu", "vas"]
    assert locomo.holds_answer(["- Ana: A blue vase for my mum."], gold)
    gold = ["red", "glass", "flower", "vas"]
    assert not locomo.holds_answer(["- Ana: a red bowl", "- Ben: glass skies"], gold)
    assert locomo.holds_answer(["- Ana: a red glass bowl"], gold)  # F1 0.57
    assert locomo.holds_answer(["#### 2 March 2024 (Saturday) - Ana: hi"], ["2", "march", "2024"])


def test_the_benchmark_finds_the_evidence_in_squads_memory_and_reports_every_figure(
    data: Path,
) -> None:
    result = locomo.evaluate(data)
    assert result["conversations"] == 1 and result["questions"] == 3
    at_2000 = result["budgets"]["2000"]
    assert at_2000["evidence_hit_rate"] == 1.0
    assert 0 < at_2000["tokens_mean"] <= 2000
    assert set(at_2000["by_category"]) == {"temporal", "single-hop"}
    for name in ("bm25_raw", "recent"):
        assert set(result["baselines"][name]) == {"500", "1000", "2000"}
    assert result["baselines"]["full"]["evidence_hit_rate"] == 1.0
    assert result["per_conversation"][0]["archived"] == 8
    assert result["ingest_s_per_conversation"] > 0
    lines = list(locomo.render(result))
    assert any(line.startswith("squad        2000") for line in lines)


def test_a_missing_or_malformed_file_is_refused_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert locomo.main([str(tmp_path / "nope.json")]) == 2
    bad = tmp_path / "bad.json"
    for text in ("{not json", '[{"sample_id": "x"}]', '{"a": 1}'):
        bad.write_text(text, encoding="utf-8")
        assert locomo.main([str(bad)]) == 2
        assert "is not LoCoMo data" in capsys.readouterr().err


def test_evidence_packed_into_one_string_is_split_into_dia_ids() -> None:
    assert locomo._dia_ids(["D8:6; D9:17", "D1:3"]) == {"D8:6", "D9:17", "D1:3"}
