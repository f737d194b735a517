"""The nightly fold of a full memory.md asks the agent's real model for its summary lines
(real HTTP to the OpenAI stub on 127.0.0.1, through litellm), charges the call, and keeps the
extractive lines whenever the model's answer cannot be used."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from squad.app import App
from squad.daemon.jobs import fold_memory_files
from squad.memory.agent import AgentContext
from squad.memory.fold import SUMMARY_MAX_CHARS
from squad.memory.fold_summary import parse_summaries
from squad.model.stub_answers import answer
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from tests.memory.test_fold import CAP, _filled

TOPICS = ["the search indexer", "the deploy pipeline", "the billing service", "the docs build"]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture
def small_cap(settings: Settings) -> Settings:
    return replace(settings, memory_file_cap_bytes=CAP)


def _squad(url: str, prices: str = FREE_PRICES, cap: float = 5.0) -> str:
    return (
        "name: folders\n"
        f"model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {prices}}}\n"
        f"limits: {{max_cost_usd: {cap}}}\n"
        "agents:\n"
        "  - {id: planner, role: Plans the work}\n"
        "tasks:\n"
        "  - {id: plan, description: Plan it., agent: planner}\n"
    )


def _over_the_nightly_mark(app: App, yaml: str) -> tuple[AgentContext, str]:
    spec = squad_from_text(yaml, source="folders.yaml")
    workspace = app.squads.create(spec).path
    ctx = AgentContext.of(spec, "planner", workspace)
    memory = app.memory.memory_file(ctx).path
    lines = [
        f"- {TOPICS[n % 4]} needs check number {n} before release (2026-0{1 + n % 9}-1{n % 10})"
        for n in range(70)
    ]
    memory.write_text(memory.read_text() + "\n".join(lines) + "\n")
    assert memory.stat().st_size > 0.8 * CAP
    return ctx, memory.read_text()


def _summaries_answer(body: Mapping[str, object]) -> str:
    """One summary per topic the fold asked about, read from the request itself."""
    listing = str(body["messages"][-1]["content"])  # type: ignore[index]
    topics = [
        line.removeprefix("Topic: ") for line in listing.splitlines() if line.startswith("Topic: ")
    ]
    return json.dumps(
        {"summaries": [{"topic": t, "summary": f"model summary of {t}"} for t in topics]}
    )


def test_parse_summaries_keeps_only_one_clean_line_per_topic_asked_for() -> None:
    answer_text = json.dumps(
        {
            "summaries": [
                {"topic": "deploy", "summary": "Deploys  go\nout on Tuesdays"},
                {"topic": "deploy", "summary": "a second line for the same topic"},
                {"topic": "unasked", "summary": "not asked for"},
                {"topic": "billing", "summary": "x" * (SUMMARY_MAX_CHARS + 1)},
                {"topic": "search", "summary": "key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"},
                {"topic": "docs", "summary": "   "},
            ]
        }
    )
    asked = ["deploy", "billing", "search", "docs"]
    assert parse_summaries(answer_text, asked) == {"deploy": "Deploys go out on Tuesdays"}
    assert parse_summaries(f"```json\n{answer_text}\n```", asked) == {
        "deploy": "Deploys go out on Tuesdays"
    }
    assert parse_summaries("Sure! Here are the summaries.", asked) == {}
    assert parse_summaries('{"summaries": "none"}', asked) == {}


@pytest.fixture
def summarising(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    """A stub that answers every fold with one summary per topic it was asked about."""
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=lambda body: answer(_summaries_answer(body))) as server:
        yield server


def test_the_nightly_fold_on_a_real_model_writes_its_lines_and_charges_the_call(
    small_cap: Settings, summarising: OpenAIStubServer
) -> None:
    stub = summarising
    with App.open(small_cap) as app:
        ctx, before = _over_the_nightly_mark(app, _squad(stub.url))
        spent_before = app.store.spend.of_squad("folders")
        (entry,) = fold_memory_files(app, {"folders": ctx.workspace})
        after = app.memory.memory_file(ctx).path.read_text()
        spent_after = app.store.spend.of_squad("folders")
    assert entry["moved"] > 0 and len(stub.requests) == 1
    summaries = [line for line in after.splitlines() if "model summary of" in line]
    assert summaries and len(summaries) == entry["summaries"]
    assert all(
        re.fullmatch(r"- (.+): model summary of \1 \(\d{4}-.* lines? of .*\)", line)
        for line in summaries
    ), summaries
    prompt = str(stub.requests[0].body["messages"][-1]["content"])
    assert "Topic: " in prompt and "needs check number 0 before release" in prompt
    assert spent_after.calls == spent_before.calls + 1
    daily = "".join(p.read_text() for p in (ctx.workspace / "agents/planner/daily").iterdir())
    assert all(line in after + daily for line in before.splitlines())


def test_an_answer_the_fold_cannot_use_leaves_the_extractive_lines(
    small_cap: Settings, stub: OpenAIStubServer
) -> None:
    stub.script(answer("I would be happy to summarise these notes for you!"))
    with App.open(small_cap) as app:
        ctx, _ = _over_the_nightly_mark(app, _squad(stub.url))
        (entry,) = fold_memory_files(app, {"folders": ctx.workspace})
        after = app.memory.memory_file(ctx).path.read_text()
    assert entry["moved"] > 0 and len(stub.requests) == 1
    assert "happy to summarise" not in after
    assert any(
        re.fullmatch(r"- .+: the .+ needs check number \d+ before release.* lines? of .*", x)
        for x in after.splitlines()
    )


def test_a_fold_the_spend_cap_cannot_pay_for_stays_extractive_and_calls_nothing(
    small_cap: Settings, stub: OpenAIStubServer
) -> None:
    priced = "cost_per_1k_input: 1.0, cost_per_1k_output: 1.0"
    with App.open(small_cap) as app:
        ctx, _ = _over_the_nightly_mark(app, _squad(stub.url, prices=priced, cap=0.001))
        (entry,) = fold_memory_files(app, {"folders": ctx.workspace})
    assert entry["moved"] > 0 and stub.requests == []


def test_the_model_lines_are_dropped_when_the_file_changed_while_it_answered(
    tmp_path: Path,
) -> None:
    file, _ = _filled(tmp_path, int(0.9 * CAP))
    added = "- a person added this while the model was answering (2026-12-06)"

    def slow_model(topics: Mapping[str, Sequence[str]]) -> dict[str, str]:
        with file.path.open("a") as handle:  # a person's editor, mid-call
            handle.write(added + "\n")
        return {topic: f"model summary of {topic}" for topic in topics}

    folded = file.consolidate(summarise=slow_model)
    after = file.path.read_text()
    assert folded is not None and folded.moved > 0
    assert added in after and "model summary of" not in after
