"""The lead's plan is asked for as structured output (a JSON schema naming the squad's agents),
and a provider that refuses that response format is asked again without it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from squad.app import App
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy
from squad.model.stub_answers import answer, status
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.runtime.plan import plan_response_format
from squad.runtime.runlog import read_events, run_log_path
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec

RESEARCH = {"id": "research", "description": "Research it.", "agent": "researcher"}
WRITE = {"id": "write", "description": "Write it.", "agent": "writer"}
PLAN = json.dumps(
    {"tasks": [{**RESEARCH, "depends_on": []}, {**WRITE, "depends_on": ["research"]}]}
)  # fmt: skip


def _team(url: str) -> str:
    return (
        "name: team\n"
        "goal: Research the market, then write the report.\n"
        "process: hierarchical\n"
        f"model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {FREE_PRICES}}}\n"
        "agents:\n"
        "  - {id: lead, role: Plans the work, lead: true}\n"
        "  - {id: researcher, role: Researches markets}\n"
        "  - {id: writer, role: Writes reports}\n"
    )


def _models(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
    retry = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)
    return LiteLLMModel(spec, on_event=on_event, retry=retry, sleep=lambda _: None)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")


def test_the_plan_schema_allows_only_the_squads_agents_and_slug_ids() -> None:
    spec = squad_from_text(_team("http://127.0.0.1:9/v1"), source="team.yaml")
    schema = plan_response_format(spec)["json_schema"]["schema"]  # type: ignore[index]
    task = schema["properties"]["tasks"]["items"]
    assert task["properties"]["agent"]["enum"] == ["lead", "researcher", "writer"]
    assert task["required"] == ["id", "description", "agent", "depends_on"]
    assert schema["properties"]["tasks"]["maxItems"] == 20


def test_the_plan_is_asked_for_with_its_json_schema(app: App) -> None:
    def handler(body: Any) -> Any:
        return answer(PLAN) if "response_format" in body else answer("Done.")

    with OpenAIStubServer(handler) as stub:
        spec = squad_from_text(_team(stub.url), source="team.yaml")
        result = app.runner(model_factory=_models).run(spec, app.squads.create(spec).path)
        first = stub.bodies[0]

    assert result.succeeded, result.error
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["name"] == "plan"
    assert set(result.tasks) == {"research", "write"}
    assert all("response_format" not in b for b in stub.bodies[1:])  # the tasks answer freely


@pytest.mark.parametrize("code", [400, 500])  # 500: llama-cpp-python's server
def test_a_provider_refusing_the_response_format_is_asked_again_without_it(
    app: App, code: int
) -> None:
    def handler(body: Any) -> Any:
        if "response_format" in body:
            return status(code, "response_format json_schema is not supported")
        return answer(PLAN) if "Plan" in str(body["messages"]) else answer("Done.")

    with OpenAIStubServer(handler) as stub:
        spec = squad_from_text(_team(stub.url), source="team.yaml")
        workspace = app.squads.create(spec).path
        result = app.runner(model_factory=_models).run(spec, workspace)
        with_format = sum("response_format" in b for b in stub.bodies)

    assert result.succeeded, result.error
    assert with_format == 2  # each form refused once (no retries), then never asked again
    events = read_events(run_log_path(workspace, result.run_id))
    refused = [e for e in events if e["event"] == "plan_format_refused"]
    assert [e["format"] for e in refused] == ["json_schema", "json_object"]
    assert all(e["agent"] == "lead" and str(code) in e["error"] for e in refused)


def test_llama_cpp_python_s_json_object_with_a_schema_is_tried_next(app: App) -> None:
    """llama-cpp-python takes a schema as ``json_object`` plus ``schema`` and turns it into a
    grammar: the form a weak local model cannot break."""

    def handler(body: Any) -> Any:
        wanted = body.get("response_format")
        if wanted and wanted["type"] == "json_schema":
            return status(500, "Input should be 'text' or 'json_object'")
        if wanted:
            assert wanted["schema"]["properties"]["tasks"]["items"]["properties"]["agent"]
            return answer(PLAN)
        return answer("Done.")

    with OpenAIStubServer(handler) as stub:
        spec = squad_from_text(_team(stub.url), source="team.yaml")
        result = app.runner(model_factory=_models).run(spec, app.squads.create(spec).path)
        kinds = [b["response_format"]["type"] for b in stub.bodies if "response_format" in b]

    assert result.succeeded, result.error
    assert kinds == ["json_schema", "json_object"]


def test_a_rate_limited_plan_is_not_taken_for_a_refused_format(app: App) -> None:
    with OpenAIStubServer(lambda body: status(429, "slow down")) as stub:
        spec = squad_from_text(_team(stub.url), source="team.yaml")
        result = app.runner(model_factory=_models).run(spec, app.squads.create(spec).path)
        bodies = stub.bodies

    assert result.status == "failed" and result.error is not None and "429" in result.error
    assert all("response_format" in b for b in bodies)  # no second try without the format
