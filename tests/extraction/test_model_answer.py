"""The model's JSON answer, checked at the trust boundary with messages a retry can use."""

from __future__ import annotations

import json

import pytest

from squad.errors import AnswerError
from squad.extraction.model_answer import MAX_FACTS, parse_answer


def one(**fact: object) -> str:
    base: dict[str, object] = {"text": "The API listens on 8080", "scope": "project"}
    return json.dumps({"facts": [{**base, **fact}]})


def test_a_valid_answer_becomes_candidates_with_defaults() -> None:
    [c] = parse_answer(one(subject=" API Port ", source_turns=[1, 0, 1]), batch_size=2)
    assert (c.scope, c.section, c.subject, c.source_turns) == (
        "project",
        "Insights",
        "api port",
        (0, 1),
    )


def test_a_fenced_answer_is_accepted() -> None:
    assert parse_answer(f"```json\n{one()}\n```", batch_size=1)[0].text.startswith("The API")


def test_experiential_facts_have_no_section() -> None:
    [c] = parse_answer(one(scope="experiential", section="Decisions"), batch_size=1)
    assert c.section is None


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("not json", "not JSON"),
        (json.dumps({"facts": [{"text": "x y z", "scope": "global"}]}), "facts.0.scope"),
        (one(text="We ship tomorrow"), "relative date 'tomorrow'"),
        (one(text="내일 배포해요"), "relative date '내일'"),
        (one(text="line one\nline two"), "one line"),
        (one(confidence=1.5), "facts.0.confidence"),
        (one(section="## Decisions"), "plain section name"),
        (one(source_turns=[5]), "not message numbers"),
        (
            json.dumps(
                {"facts": [{"text": f"fact {i}", "scope": "project"} for i in range(MAX_FACTS + 1)]}
            ),
            "facts",
        ),
        (json.dumps({"facts": [], "extra": 1}), "extra"),
    ],
)
def test_invalid_answers_say_what_to_fix(answer: str, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        parse_answer(answer, batch_size=2)
