"""The agent turn loop: tool calls run, refusals come back as text, limits stop turns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from squad.errors import LimitReached
from squad.model.testing import FunctionModel
from squad.model.types import Message, ModelReply, ToolCall, ToolSpec, Usage
from squad.runtime.agent import run_turn
from squad.runtime.limits import RunBudget
from squad.runtime.tools import tool_from_function


@dataclass
class Recorder:
    events: list[tuple[str, ...]] = field(default_factory=list)

    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None:
        self.events.append(("message", role, content))

    def model_call(self, reply: ModelReply) -> None:
        self.events.append(("model", reply.content))

    def tool_call(self, name: str, arguments: dict[str, Any], result: str) -> None:
        self.events.append(("tool", name, result))


def save_note(text: str, title: str = "note") -> str:
    """Save a note."""
    return f"saved {title}: {text}"


def test_plain_answer_is_one_call_recorded_as_user_then_assistant() -> None:
    model = FunctionModel(lambda m, t: ModelReply("hello there", usage=Usage(10, 3, 0.01)))
    recorder = Recorder()
    result = run_turn(model=model, system_prompt="SYS", user_message="hi", recorder=recorder)
    assert (result.text, result.model_calls, result.tool_calls) == ("hello there", 1, 0)
    assert result.usage == Usage(10, 3, 0.01)
    assert recorder.events == [
        ("message", "user", "hi"),
        ("model", "hello there"),
        ("message", "assistant", "hello there"),
    ]
    messages = model.calls[0].messages
    assert [m.role for m in messages] == ["system", "user"] and messages[0].content == "SYS"


def test_tool_calls_run_and_their_results_go_back_to_the_model() -> None:
    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelReply:
        if messages[-1].role == "tool":
            return ModelReply(f"done ({messages[-1].content})")
        return ModelReply(
            "",
            (ToolCall("c1", "save_note", {"text": "x", "title": "t"}), ToolCall("c2", "nope", {})),
        )

    model = FunctionModel(answer)
    recorder = Recorder()
    result = run_turn(
        model=model,
        system_prompt="S",
        user_message="save x",
        tools=[tool_from_function(save_note)],
        recorder=recorder,
    )
    assert result.text == "done (refused: there is no tool named 'nope')"
    assert ("tool", "save_note", "saved t: x") in recorder.events
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert model.calls[0].tool_names == ["save_note"]


def test_a_model_that_keeps_calling_tools_is_made_to_answer() -> None:
    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelReply:
        if not tools:
            return ModelReply("final")
        return ModelReply("", (ToolCall("c", "save_note", {"text": "again"}),))

    model = FunctionModel(answer)
    result = run_turn(
        model=model,
        system_prompt="S",
        user_message="loop",
        tools=[tool_from_function(save_note)],
        recorder=Recorder(),
        max_tool_rounds=3,
    )
    assert result.text == "final" and result.model_calls == 4 and result.tool_calls == 3


def test_bad_tool_arguments_are_refused_as_text() -> None:
    tool = tool_from_function(save_note)
    assert tool.call({"wrong": 1}).startswith("refused: bad arguments for save_note")
    assert tool.spec.parameters == {
        "type": "object",
        "properties": {"text": {"type": "string"}, "title": {"type": "string"}},
        "required": ["text"],
    }


def test_turn_and_spend_limits_stop_before_the_turn() -> None:
    model = FunctionModel(lambda m, t: ModelReply("ok", usage=Usage(1, 1, 0.6)))
    budget = RunBudget(max_turns=5, max_cost_usd=1.0)
    run_turn(model=model, system_prompt="S", user_message="1", recorder=Recorder(), budget=budget)
    run_turn(model=model, system_prompt="S", user_message="2", recorder=Recorder(), budget=budget)
    with pytest.raises(LimitReached) as caught:
        run_turn(
            model=model, system_prompt="S", user_message="3", recorder=Recorder(), budget=budget
        )
    assert caught.value.kind == "max_cost_usd"
    turns = RunBudget(max_turns=1, max_cost_usd=0.0)
    run_turn(
        model=FunctionModel(lambda m, t: ModelReply("free")),
        system_prompt="S",
        user_message="a",
        recorder=Recorder(),
        budget=turns,
    )
    with pytest.raises(LimitReached, match="1 agent turns"):
        run_turn(
            model=model, system_prompt="S", user_message="b", recorder=Recorder(), budget=turns
        )
