"""A chat's agent uses the MCP servers its ``tools:`` name, as in runs: the real
``mcp-server-time`` is started at the first turn, kept for the session and stopped with it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy
from squad.model.stub_answers import answer, tool_call
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.runtime.mcp_client.bridge import server_pids
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec

TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def _models(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
    retry = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)
    return LiteLLMModel(spec, on_event=on_event, retry=retry, sleep=lambda _: None)


@pytest.mark.slow
def test_a_chat_agent_calls_its_mcp_servers_tools_and_the_server_stops_with_the_session(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as stub:
        text = (
            "name: clocked\n"
            f"model: {{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY,"
            f" {FREE_PRICES}}}\n"
            f"mcp_servers:\n  time: {{command: {TIME_SERVER}, args: [--local-timezone, UTC]}}\n"
            "agents:\n"
            "  - {id: helper, role: Answers questions, tools: [time]}\n"
            "  - {id: other, role: Has no tools}\n"
            "tasks:\n  - {id: t, description: Something., agent: other}\n"
        )
        spec = squad_from_text(text, source="clocked.yaml")
        app.squads.create(spec)
        stub.script(
            tool_call("time__get_current_time", {"timezone": "Asia/Tokyo"}),
            answer("It is evening in Tokyo."),
            answer("Still evening."),
        )
        with ChatSession.open(app.runner(model_factory=_models), "clocked", "helper") as chat:
            first = chat.say("What time is it in Tokyo?")
            running = server_pids(chat.session_id)
            second = chat.say("And now?")
            still = server_pids(chat.session_id)
        after = server_pids(chat.session_id)
        offered = [t["function"]["name"] for t in stub.bodies[0]["tools"]]
        result = next(m for m in stub.bodies[1]["messages"] if m.get("role") == "tool")

    assert (first, second) == ("It is evening in Tokyo.", "Still evening.")
    assert "time__get_current_time" in offered and "memory_append" in offered
    assert json.loads(result["content"])["timezone"] == "Asia/Tokyo"
    assert set(running) == {"time"} and still == running  # one server for the session
    assert after == {}
    stored = app.store.conversation.messages("clocked", "helper", session_id="chat")
    assert [m.tool_name for m in stored if m.role.value == "tool"] == ["time.get_current_time"]


def test_a_chat_agent_without_mcp_tools_starts_no_server(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as stub:
        text = (
            "name: plain\n"
            f"model: {{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY,"
            f" {FREE_PRICES}}}\n"
            f"mcp_servers:\n  time: {{command: {TIME_SERVER}}}\n"
            "agents:\n"
            "  - {id: helper, role: Answers questions, tools: [time]}\n"
            "  - {id: other, role: Has no tools}\n"
            "tasks:\n  - {id: t, description: Something., agent: other}\n"
        )
        app.squads.create(squad_from_text(text, source="plain.yaml"))
        stub.script(answer("Hello."))
        with ChatSession.open(app.runner(model_factory=_models), "plain", "other") as chat:
            assert chat.say("Hi") == "Hello."
            assert server_pids(chat.session_id) == {}
        offered = [t["function"]["name"] for t in stub.bodies[0]["tools"]]

    assert not [name for name in offered if "__" in name]
