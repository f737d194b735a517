"""Spans of real runs, recorded by the OpenTelemetry SDK's in-memory exporter.

Runs go through the real runner, graph, store and workspace; the model is the built-in offline
one or a double that calls a tool and then answers (it never leaves the process).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from squad.app import App
from squad.errors import ModelError
from squad.model.testing import FunctionModel
from squad.model.types import (
    ChatModel,
    Message,
    ModelReply,
    ToolCall,
    ToolSpec,
    Usage,
)
from squad.runtime.agent import run_turn
from squad.runtime.runlog import read_events, run_log_path
from squad.runtime.tools import tool_from_function
from squad.runtime.tracing import TurnTrace, provider_name
from squad.spec.loader import squad_from_text
from squad.telemetry import NO_SPAN, NO_TELEMETRY, open_telemetry
from tests.conftest import BASIC_YAML
from tests.telemetry.conftest import Traced, attrs, every_value

KEY = "sk-proj-Zx81Qm47Lp20Vb93Nc56Tr18"
CONTENT_KEYS = {
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}

TEAM_YAML = f"""\
name: traced
goal: Ship it.
model: openai/gpt-4o-mini
agents:
  - {{id: planner, role: Plans the work}}
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: outline, description: "Outline the guide; deploy with {KEY}.", agent: planner}}
  - {{id: draft, description: Write the guide., agent: writer, depends_on: [outline]}}
"""

FAN_YAML = """\
name: fan
goal: Ship it.
model: openai/gpt-4o-mini
limits: {max_parallel: 3}
agents:
  - {id: worker, role: Does one part}
tasks:
  - {id: a, description: Write part a., agent: worker}
  - {id: b, description: Write part b., agent: worker}
  - {id: c, description: Write part c., agent: worker}
"""


MODEL = "openai/gpt-4o-mini"


def writes_then_answers(
    barrier: threading.Barrier | None = None, threads: set[int] | None = None
) -> FunctionModel:
    """A model double: a turn's first call writes notes.md, the second answers in text.

    With a ``barrier``, first calls wait until that many are in flight at once, which only
    happens when the turns run in parallel; ``threads`` collects the threads that called.
    """

    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelReply:
        if threads is not None:
            threads.add(threading.get_ident())
        if messages[-1].role == "tool":
            return ModelReply("Done: notes written.", usage=Usage(150, 30, 0.002), model=MODEL)
        if barrier is not None:
            barrier.wait()
        call = ToolCall("call_1", "write_file", {"path": "notes.md", "content": "Notes."})
        return ModelReply("", (call,), usage=Usage(100, 20, 0.001), model=MODEL)

    return FunctionModel(answer, name=MODEL)


def run(app: App, yaml: str, model: ChatModel) -> Any:
    spec = squad_from_text(yaml, source="team.yaml")
    runner = app.runner(model_factory=lambda _spec, _on_event: model)
    result = runner.run(spec, app.squads.create(spec).path)
    assert result.succeeded, result.error
    return result


def test_a_run_is_one_workflow_span_with_a_turn_span_per_turn(
    traced_app: App, traced: Traced
) -> None:
    result = run(traced_app, TEAM_YAML, writes_then_answers())

    workflow = traced.one("invoke_workflow ")
    assert workflow.name == "invoke_workflow traced"
    assert workflow.parent is None
    assert attrs(workflow) == attrs(workflow) | {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": "traced",
        "squad.name": "traced",
        "squad.run_id": result.run_id,
        "squad.trigger": "manual",
        "squad.process": "sequential",
        "squad.resumed": False,
        "squad.run.status": "succeeded",
        "gen_ai.usage.input_tokens": 500,
        "gen_ai.usage.output_tokens": 100,
    }
    assert attrs(workflow)["squad.cost_usd"] == pytest.approx(0.006)
    turns = traced.children(workflow, "invoke_agent ")
    assert sorted(t.name for t in turns) == ["invoke_agent planner", "invoke_agent writer"]
    assert len(traced.named("invoke_agent ")) == 2  # no turn outside the run
    assert {s.context.trace_id for s in traced.spans if s.context} == {
        workflow.context.trace_id  # type: ignore[union-attr]
    }


def test_a_turn_span_holds_its_model_calls_and_tool_calls(traced_app: App, traced: Traced) -> None:
    result = run(traced_app, TEAM_YAML, writes_then_answers())

    planner = traced.one("invoke_agent planner")
    assert attrs(planner) == attrs(planner) | {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "planner",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.conversation.id": result.run_id,
        "squad.task": "outline",
        "gen_ai.usage.input_tokens": 250,
        "gen_ai.usage.output_tokens": 50,
        "squad.model_calls": 2,
        "squad.tool_calls": 1,
    }
    chats = sorted(traced.children(planner, "chat "), key=lambda s: s.start_time or 0)
    assert [c.name for c in chats] == ["chat gpt-4o-mini", "chat gpt-4o-mini"]
    assert [c.kind for c in chats] == [SpanKind.CLIENT, SpanKind.CLIENT]
    first, second = (attrs(c) for c in chats)
    assert first == first | {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini",
        "squad.model": "openai/gpt-4o-mini",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 20,
        "squad.cost_usd": 0.001,
    }
    assert (second["gen_ai.usage.input_tokens"], second["gen_ai.usage.output_tokens"]) == (150, 30)
    [tool] = traced.children(planner, "execute_tool ")
    assert tool.name == "execute_tool write_file"
    assert attrs(tool) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "write_file",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
    }
    assert chats[0].end_time <= tool.start_time <= tool.end_time <= chats[1].start_time  # type: ignore[operator]
    assert all(s.status.status_code is StatusCode.UNSET for s in traced.spans)


def test_spans_carry_no_prompt_or_reply_text_by_default(traced_app: App, traced: Traced) -> None:
    run(traced_app, TEAM_YAML, writes_then_answers())

    keys = {key for span in traced.spans for key in attrs(span)}
    assert keys & CONTENT_KEYS == set()
    text = every_value(traced.spans)
    for said in ("Outline the guide", KEY, "Notes.", "Done: notes written", "Plans the work"):
        assert said not in text


def test_captured_content_is_redacted(settings: Any, traced_content: Traced) -> None:
    with App.open(settings, telemetry=traced_content.telemetry) as app:
        run(app, TEAM_YAML, writes_then_answers())

    assert KEY not in every_value(traced_content.spans)
    planner = traced_content.one("invoke_agent planner")
    first, second = sorted(
        traced_content.children(planner, "chat "), key=lambda s: s.start_time or 0
    )
    asked = json.loads(attrs(first)["gen_ai.input.messages"])
    assert asked[0]["role"] == "user"
    assert asked[0]["parts"][0]["content"].startswith(
        "Task: Outline the guide; deploy with [REDACTED:"
    )
    assert "Plans the work" in attrs(first)["gen_ai.system_instructions"]
    answered = json.loads(attrs(second)["gen_ai.output.messages"])
    assert answered == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Done: notes written."}]}
    ]
    [tool] = traced_content.children(planner, "execute_tool ")
    assert json.loads(attrs(tool)["gen_ai.tool.call.arguments"]) == {
        "path": "notes.md",
        "content": "Notes.",
    }
    assert "notes.md" in attrs(tool)["gen_ai.tool.call.result"]


def test_turns_of_parallel_tasks_are_children_of_the_run_span(
    traced_app: App, traced: Traced
) -> None:
    threads: set[int] = set()
    run(traced_app, FAN_YAML, writes_then_answers(threading.Barrier(3, timeout=30), threads))

    assert threading.get_ident() not in threads and len(threads) >= 3
    workflow = traced.one("invoke_workflow fan")
    turns = traced.named("invoke_agent ")
    assert sorted(attrs(t)["squad.task"] for t in turns) == ["a", "b", "c"]
    assert traced.children(workflow, "invoke_agent ") == turns
    for turn in turns:
        assert len(traced.children(turn, "chat ")) == 2
        assert len(traced.children(turn, "execute_tool ")) == 1
    assert len(traced.named("chat ")) == 6  # every model call sits in its own turn


def test_a_turn_on_a_fresh_thread_is_a_child_of_the_parent_it_is_given(traced: Traced) -> None:
    """Threads do not inherit the span that is current where they were started: the parent
    must be passed, as the executor passes the run's span to every turn."""
    model = writes_then_answers()
    tools = [tool_from_function(_write_file)]

    def turn(parent: Any) -> None:
        trace = TurnTrace(traced.telemetry, "writer", {}, parent)
        run_turn(
            model=model,
            system_prompt="S",
            user_message="Go.",
            tools=tools,
            recorder=_Quiet(),
            trace=trace,
        )

    with traced.telemetry.span("invoke_workflow demo") as workflow:
        for parent in (workflow, None):
            worker = threading.Thread(target=turn, args=(parent,))
            worker.start()
            worker.join()

    given, orphan = sorted(traced.named("invoke_agent "), key=lambda s: s.start_time or 0)
    [root] = traced.named("invoke_workflow")
    assert traced.children(root, "invoke_agent ") == [given]
    assert orphan.parent is None  # what every turn of a parallel step would be without it


def test_a_failed_model_call_marks_its_span_and_its_turn(traced: Traced) -> None:
    def refuse(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelReply:
        raise ModelError(f"provider said no to key {KEY}", status=500, attempts=3, cost_usd=0.01)

    trace = TurnTrace(traced.telemetry, "writer", {"gen_ai.request.model": "stub"})
    with pytest.raises(ModelError):
        run_turn(
            model=FunctionModel(refuse),
            system_prompt="S",
            user_message="Go.",
            recorder=_Quiet(),
            trace=trace,
        )

    chat, turn = traced.one("chat stub"), traced.one("invoke_agent writer")
    for span in (chat, turn):
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "squad.errors.ModelError"
        assert span.status.description == "provider said no to key [REDACTED:openai_api_key]"
    assert attrs(chat) == attrs(chat) | {
        "squad.cost_usd": 0.01,
        "squad.attempts": 3,
        "http.response.status_code": 500,
    }
    assert KEY not in every_value(traced.spans)


def test_a_call_of_an_unknown_tool_is_a_failed_tool_span(traced: Traced) -> None:
    def calls_nothing(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelReply:
        if messages[-1].role == "tool":
            return ModelReply("ok")
        return ModelReply("", (ToolCall("c1", "launch_rocket", {}),))

    run_turn(
        model=FunctionModel(calls_nothing),
        system_prompt="S",
        user_message="Go.",
        recorder=_Quiet(),
        trace=TurnTrace(traced.telemetry, "writer"),
    )

    tool = traced.one("execute_tool launch_rocket")
    assert tool.status.status_code is StatusCode.ERROR
    assert attrs(tool)["error.type"] == "refused"
    assert tool.status.description is None  # the refusal is content: not without the opt-in


def test_offline_runs_are_traced_with_the_tokens_the_model_counted(
    traced_app: App, traced: Traced, make_spec: Any
) -> None:
    spec = make_spec(BASIC_YAML)
    workspace = traced_app.squads.create(spec).path
    result = traced_app.runner().run(spec, workspace)
    assert result.succeeded

    chats = traced.named("chat ")
    assert {c.name for c in chats} == {"chat offline"}
    assert {attrs(c)["gen_ai.provider.name"] for c in chats} == {"offline"}
    calls = [
        e for e in read_events(run_log_path(workspace, result.run_id)) if e["event"] == "model_call"
    ]
    assert sorted(attrs(c)["gen_ai.usage.input_tokens"] for c in chats) == sorted(
        e["prompt_tokens"] for e in calls
    )
    assert sum(attrs(c)["gen_ai.usage.output_tokens"] for c in chats) == result.completion_tokens


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("offline", "offline"),
        ("openai/gpt-4o-mini", "openai"),
        ("ollama/llama3", "ollama"),
        ("hosted_vllm/qwen", "hosted_vllm"),
        ("azure/my-deployment", "azure.ai.openai"),
        ("bedrock/anthropic.claude-3", "aws.bedrock"),
        ("gemini/gemini-2.0-flash", "gcp.gemini"),
        ("openrouter/anthropic/claude-3.5", "openrouter"),
        ("gpt-4o", "openai"),
        ("claude-3-5-haiku", "anthropic"),
        ("my-model", "unknown"),
    ],
)
def test_the_provider_name_comes_from_the_litellm_model_string(model: str, provider: str) -> None:
    assert provider_name(model) == provider


def test_no_endpoint_is_the_telemetry_that_is_off() -> None:
    assert open_telemetry(None) is NO_TELEMETRY
    assert not NO_TELEMETRY.enabled
    with NO_TELEMETRY.span("anything", {"a": 1}) as span:
        assert span is NO_SPAN and not span.recording
        span.content("gen_ai.input.messages", lambda: pytest.fail("content made while off"))


def test_without_the_extra_an_endpoint_warns_and_traces_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "squad.telemetry.otel", None)  # as if not installed
    with pytest.warns(RuntimeWarning, match=r"pip install 'squad\[otel\]'"):
        telemetry = open_telemetry("http://127.0.0.1:4318/v1/traces")
    assert telemetry is NO_TELEMETRY


class _Quiet:
    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None:
        pass

    def model_call(self, reply: ModelReply) -> None:
        pass

    def tool_call(self, name: str, arguments: dict[str, Any], result: str) -> None:
        pass


def _write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {path}"


GATED_YAML = """\
name: gated
goal: Ship it.
agents:
  - {id: writer, role: Writes the pages}
tasks:
  - {id: draft, description: Write the guide., agent: writer, approval: true}
  - {id: publish, description: Publish the guide., agent: writer, depends_on: [draft]}
"""


def test_a_resumed_run_is_a_second_workflow_span_with_the_same_run_id(
    traced_app: App, traced: Traced
) -> None:
    spec = squad_from_text(GATED_YAML, source="gated.yaml")
    runner = traced_app.runner()
    paused = runner.run(spec, traced_app.squads.create(spec).path)
    assert paused.status == "awaiting_approval"
    done = runner.approve(paused.run_id, "draft", approved=True)
    assert done.succeeded, done.error

    first, second = sorted(traced.named("invoke_workflow gated"), key=lambda s: s.start_time or 0)
    assert attrs(first) == attrs(first) | {
        "squad.run_id": paused.run_id,
        "squad.resumed": False,
        "squad.run.status": "awaiting_approval",
    }
    assert attrs(second) == attrs(second) | {
        "squad.run_id": paused.run_id,
        "squad.resumed": True,
        "squad.trigger": "manual",
        "squad.run.status": "succeeded",
    }
    assert traced.children(first, "invoke_agent ") == []  # the gate comes before the task
    turns = traced.children(second, "invoke_agent ")
    assert sorted(attrs(t)["squad.task"] for t in turns) == ["draft", "publish"]


def test_an_extraction_pass_is_an_extract_span_per_batch(
    traced_app: App, traced: Traced, make_spec: Any
) -> None:
    spec = make_spec(BASIC_YAML)
    workspace = traced_app.squads.create(spec).path
    assert traced_app.runner().run(spec, workspace).succeeded
    from squad.extraction.job import AgentExtractor
    from squad.extraction.models import ExtractionModels

    agent = AgentExtractor(
        traced_app.memory,
        ExtractionModels(traced_app.model_factory),
        telemetry=traced_app.telemetry,
    )
    ctx = traced_app.agent(spec.name, spec.agents[0].id)
    reports = agent.run(ctx, force=True)

    assert reports and reports[-1].status == "done"
    [span] = traced.named("extract ")
    assert span.name == f"extract {ctx.agent.id}"
    assert attrs(span)["squad.operation"] == "extract"
    assert attrs(span)["squad.extraction.messages"] > 0


def test_a_chat_turn_is_a_trace_of_its_own_with_its_model_call_inside(
    traced_app: App, traced: Traced, make_spec: Any
) -> None:
    from squad.chat.session import ChatSession

    spec = make_spec(BASIC_YAML)
    traced_app.squads.create(spec)
    agent = spec.agents[0].id
    with ChatSession.open(traced_app.runner(), spec.name, agent) as chat:
        chat.say("Remember that the docs use MkDocs.")
        session = chat.session_id

    [turn] = traced.named("invoke_agent ")
    assert turn.name == f"invoke_agent {agent}" and turn.parent is None
    assert attrs(turn)["gen_ai.conversation.id"] == session
    assert attrs(turn)["squad.name"] == spec.name
    chats = traced.children(turn, "chat ")
    assert chats and all(attrs(c)["gen_ai.provider.name"] == "offline" for c in chats)
