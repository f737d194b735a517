"""Agents record and look up their squad's decisions with tools, in a real run on the stub
model server: the decision lands in the store and decisions.md, credited to the agent, and a
later search finds it; a refused record comes back to the model as text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from squad.app import App
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy
from squad.model.stub_answers import answer, tool_call
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec

FAST_RETRY = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def _litellm(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
    return LiteLLMModel(spec, on_event=on_event, retry=FAST_RETRY, sleep=lambda _: None)


def _squad(url: str) -> str:
    return (
        "name: deciders\n"
        f"model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {FREE_PRICES}}}\n"
        "agents:\n"
        "  - {id: architect, role: Decides how the service is built}\n"
        "tasks:\n"
        "  - {id: choose, description: Choose the queue., agent: architect}\n"
        "  - {id: recall, description: Say what was chosen., agent: architect,"
        " depends_on: [choose]}\n"
    )


def _tool_messages(body: Any) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def test_an_agent_records_a_decision_and_a_later_task_finds_it(
    app: App, stub: OpenAIStubServer
) -> None:
    spec = squad_from_text(_squad(stub.url), source="deciders.yaml")
    workspace = app.squads.create(spec).path
    stub.script(
        tool_call(
            "decision_record",
            {"title": "No secret here", "decision": "d", "reasons": "key sk-proj-"
             + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90"},
        ),
        tool_call(
            "decision_record",
            {
                "title": "Use Postgres as the job queue",
                "decision": "Jobs go through procrastinate on the Postgres we already run.",
                "reasons": "No new service to operate\nTransactions cover job and data",
                "alternatives": "- Redis with RQ\n- RabbitMQ",
            },
            call_id="call_2",
        ),
        answer("We use Postgres for jobs."),
        tool_call("decision_search", {"query": "job queue"}, call_id="call_3"),
        answer("Postgres, through procrastinate."),
    )  # fmt: skip

    result = app.runner(model_factory=_litellm).run(spec, workspace)

    assert result.succeeded, result.error
    offered = {t["function"]["name"] for t in stub.bodies[0]["tools"]}
    assert {"decision_record", "decision_search", "memory_append"} <= offered
    refused, recorded = _tool_messages(stub.bodies[2])
    assert refused.startswith("refused:") and "credential" in refused
    assert recorded == "recorded decision 1 in decisions.md"
    [found] = _tool_messages(stub.bodies[4])
    assert "decision 1: Use Postgres as the job queue" in found
    assert "No new service to operate; Transactions cover job and data" in found
    [decision] = app.decisions.list("deciders")
    assert decision.decided_by == "agent:architect"
    assert decision.alternatives == ("Redis with RQ", "RabbitMQ")
    text = (workspace / "decisions.md").read_text()
    assert "## 1. Use Postgres as the job queue" in text and "sk-proj" not in text
    system = stub.bodies[3]["messages"][0]["content"]
    assert "Use Postgres as the job queue" not in system  # not in the always-loaded block
