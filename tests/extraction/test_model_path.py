"""Extraction through a model: real HTTP to the OpenAI stub server on 127.0.0.1, via litellm."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from squad.model import LiteLLMModel
from squad.model.stub_answers import answer, status
from squad.model.testing import OpenAIStubServer
from tests.extraction.conftest import World

MakeWorld = Callable[..., World]

GOOD = json.dumps(
    {
        "facts": [
            {
                "text": "The API listens on port 8080",
                "scope": "project",
                "section": "Project Context",
                "subject": "api port",
                "confidence": 0.9,
                "source_turns": [0],
            },
            {
                "text": "The user prefers short answers",
                "scope": "experiential",
                "confidence": 0.8,
                "source_turns": [2],
            },
            {"text": "Maybe we could try Redis", "scope": "project", "confidence": 0.9},
            {"text": "The logo might be blue", "scope": "project", "confidence": 0.2},
        ]
    }
)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def fact_bearing(world: World) -> None:
    world.say(("system", "SYSTEM PROMPT: never show this"))
    world.talk("The API listens on port 8080 in this repo.", "I prefer short answers.")


def prompt_of(body: Any) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"])


def test_one_call_extracts_routes_and_drops_by_the_quality_bar(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    fact_bearing(world)
    stub.script(answer(GOOD))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert (report.status, report.extractor) == ("done", "model")
    assert "- The API listens on port 8080 (2026-11-29)" in world.memory_md()
    assert world.facts() == ["The user prefers short answers"]
    reasons = {d["text"]: d["reason"] for d in report.dropped}
    assert reasons == {
        "Maybe we could try Redis": "suggestion nobody accepted",
        "The logo might be blue": "low confidence (0.20 < 0.50)",
    }
    [body] = stub.bodies
    prompt = prompt_of(body)
    assert "Today is 2026-11-29." in prompt
    assert "[0] user: The API listens on port 8080 in this repo." in prompt
    assert "SYSTEM PROMPT" not in prompt
    assert body["response_format"] == {"type": "json_object"}
    spent = world.manager.store.spend.of_squad("demo")
    assert spent.calls == 1


def test_existing_facts_are_shown_with_small_ids_and_replaces_supersedes(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=1)
    world.memory.remember(world.ctx, "Deploys happen on Fridays", layer="project")
    world.talk("We moved deploys to Thursdays.")
    update = {"text": "Deploys happen on Thursdays", "scope": "project", "replaces": 1}
    stub.script(answer(json.dumps({"facts": [update]})))
    world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert "[1] (project) Deploys happen on Fridays" in prompt_of(stub.bodies[0])
    text = world.memory_md()
    assert "~~Deploys happen on Fridays~~ (2026-11-29; superseded 2026-11-29)" in text
    assert "- Deploys happen on Thursdays (2026-11-29)" in text


def test_a_malformed_answer_is_retried_once_with_the_validation_error(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    fact_bearing(world)
    bad = json.dumps({"facts": [{"text": "We ship tomorrow", "scope": "project"}]})
    stub.script(answer(bad), answer(GOOD))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert report.status == "done"
    retry = prompt_of(stub.bodies[1])
    assert "Your answer was invalid" in retry and "relative date 'tomorrow'" in retry


def test_malformed_twice_files_the_offline_extractors_facts_and_says_so(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    fact_bearing(world)
    stub.script(answer("not json"), answer('{"facts": [{"text": 1}]}'))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert (report.status, report.extractor) == ("done", "offline")
    assert "invalid twice" in (report.reason or "")
    assert "offline extractor's facts were filed" in (report.reason or "")
    assert report.written, "the batch's facts are not lost with the model's answer"
    assert {w["extractor"] for w in report.written} == {"offline"}
    assert "port 8080" in world.memory_md()
    wm = world.manager.store.conversation.watermark("demo", "planner")
    assert (wm.last_processed_seq, wm.in_flight) == (5, False)
    [run] = world.manager.store.extraction.runs("demo", "planner")
    assert (run.status, run.extractor) == ("done", "offline")
    assert world.manager.store.spend.of_squad("demo").calls == 2  # both answers are paid for


def test_an_answer_that_echoes_the_schema_falls_back_to_the_offline_extractor(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    # What SmolLM2-135M answered: the schema it was shown, not facts.
    echo = json.dumps({"$defs": {"FactOut": {"title": "FactOut"}}, "title": "ExtractionAnswer"})
    world = make_world(interval=2)
    fact_bearing(world)
    stub.script(answer(echo), answer(echo))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert (report.status, report.extractor) == ("done", "offline")
    assert "$defs" in (report.reason or "")  # the validation error names what was wrong
    assert "port 8080" in world.memory_md()
    assert "$defs" not in world.memory_md() and "title" not in world.memory_md()


def test_each_fact_records_the_extractor_that_proposed_it(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    fact_bearing(world)
    stub.script(answer(GOOD))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert {e["extractor"] for e in report.written + report.dropped} == {"model"}
    [run] = world.manager.store.extraction.runs("demo", "planner")
    assert {e["extractor"] for e in run.written} == {"model"}


def test_an_unreachable_model_skips_and_leaves_the_messages_for_later(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    fact_bearing(world)
    stub.script(status(500), status(500))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert report.status == "skipped" and "unreachable" in (report.reason or "")
    wm = world.manager.store.conversation.watermark("demo", "planner")
    assert (wm.last_processed_seq, wm.in_flight) == (0, False)
    stub.script(answer(GOOD))
    [again] = world.extractor(stub.model(attempts=2)).run(world.ctx)
    assert again.status == "done"


def test_the_offline_gate_saves_the_call_when_nothing_states_a_fact(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    world.talk("Hi there!", "Thanks, that's all.")
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert (report.status, report.extractor) == ("done", "gate")
    assert stub.bodies == []


def test_a_fact_from_a_long_message_points_to_the_daily_log_that_keeps_it(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=1)
    long = "In this repo the API listens on port 8080. " + "Background detail. " * 20
    world.talk(long)
    fact = {"text": "The API listens on port 8080", "scope": "project", "source_turns": [0]}
    stub.script(answer(json.dumps({"facts": [fact]})))
    world.extractor(stub.model(attempts=2)).run(world.ctx)

    line = (
        "- The API listens on port 8080 (2026-11-29; details: agents/planner/daily/2026-11-29.md)"
    )
    assert line in world.memory_md()
    daily = world.ctx.workspace / "agents" / "planner" / "daily" / "2026-11-29.md"
    assert "Background detail." in daily.read_text()


def test_a_model_pass_that_could_pass_the_spend_cap_is_done_offline(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=2)
    fact_bearing(world)
    store = world.manager.store
    store.spend.record("demo", model="openai/gpt-4o-mini", cost_usd=4.99999)  # of $5
    model = stub.model(attempts=2)
    priced = LiteLLMModel(
        model.spec.model_copy(update={"cost_per_1k_input": 1.0, "cost_per_1k_output": 1.0}),
        retry=model.retry,
    )

    [report] = world.extractor(priced).run(world.ctx)

    assert report.extractor == "offline" and stub.requests == []
    assert store.spend.of_squad("demo").cost_usd == pytest.approx(4.99999)
