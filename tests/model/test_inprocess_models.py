"""The in-process test models: FunctionModel and TestModel, whole ChatModels without a socket."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from squad.errors import LimitReached, ModelError
from squad.model.testing import FunctionModel, TestModel, arguments_for
from squad.model.types import FREE, Message, ModelReply, Price, ToolCall, ToolSpec, Usage
from squad.runtime.agent import run_turn
from squad.runtime.limits import RunBudget
from squad.runtime.tools import tool_from_function


class Quiet:
    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None:
        pass

    def model_call(self, reply: ModelReply) -> None:
        pass

    def tool_call(self, name: str, arguments: dict[str, object], result: str) -> None:
        pass


def save_note(text: str, title: str = "note") -> str:
    """Save a note."""
    return f"saved {title}: {text}"


def pick(count: int, loud: bool) -> str:
    """Pick some."""
    return f"{count} picked, loud {loud}"


def test_a_function_model_answers_with_its_function_and_records_each_call() -> None:
    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        return f"{messages[-1].content} with {len(tools)} tools"

    model = FunctionModel(answer, name="fn")
    tool = ToolSpec("look", "Look.")
    reply = model.complete([Message.user("hi")], tools=[tool], response_format={"type": "x"})

    assert (reply.content, reply.model, reply.attempts) == ("hi with 1 tools", "fn", 1)
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.usage.cost_usd == 0.0
    [call] = model.calls
    assert call.messages == (Message.user("hi"),)
    assert call.tool_names == ["look"] and call.response_format == {"type": "x"}


def test_a_function_models_whole_reply_keeps_its_usage_and_streams_its_text() -> None:
    given = ModelReply("streamed", usage=Usage(7, 3, 0.25), model="named")
    deltas: list[str] = []
    reply = FunctionModel(lambda m, t: given).complete([Message.user("x")], on_token=deltas.append)
    assert reply == given and deltas == ["streamed"]


def test_a_function_models_error_is_the_calls() -> None:
    def refuse(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        raise ModelError("no", status=500)

    with pytest.raises(ModelError, match="no"):
        FunctionModel(refuse).complete([Message.user("x")])


def test_test_models_are_free_unless_priced_and_a_priced_one_reserves_and_charges() -> None:
    prompt = [Message.user("a long prompt " * 50)]
    for free in (FunctionModel(lambda m, t: "ok"), TestModel()):
        assert free.price() == FREE and free.reserve_usd(prompt, ()) == 0.0

    priced = TestModel(price=Price(1.0, 2.0))
    assert priced.price() == Price(1.0, 2.0)
    # 1,024 output tokens at $2 per 1,000, plus the prompt's tokens at $1 per 1,000
    assert 2.048 < priced.reserve_usd(prompt, ()) < 2.5
    reply = priced.complete(prompt)
    assert reply.usage.cost_usd == pytest.approx(
        (reply.usage.prompt_tokens * 1.0 + reply.usage.completion_tokens * 2.0) / 1000
    )
    assert FunctionModel(lambda m, t: "x", price=None).price() is None


def test_a_spend_cap_refuses_a_priced_test_models_call_before_it_is_made() -> None:
    model = FunctionModel(lambda m, t: "ok", price=Price(1.0, 2.0))
    budget = RunBudget(max_turns=5, max_cost_usd=1.0)
    with pytest.raises(LimitReached) as caught:
        run_turn(model=model, system_prompt="S", user_message="go", recorder=Quiet(), budget=budget)
    assert caught.value.kind == "max_cost_usd"
    assert model.calls == []


def test_the_test_model_calls_every_offered_tool_once_then_answers_with_their_results() -> None:
    model = TestModel()
    result = run_turn(
        model=model,
        system_prompt="S",
        user_message="go",
        tools=[tool_from_function(save_note), tool_from_function(pick)],
        recorder=Quiet(),
    )

    assert (result.model_calls, result.tool_calls) == (2, 2)
    assert json.loads(result.text) == {
        "save_note": "saved note: a",
        "pick": "0 picked, loud False",
    }
    first, second = model.calls
    assert first.tool_names == ["save_note", "pick"]
    assert [m.role for m in second.messages][-3:] == ["assistant", "tool", "tool"]
    assert second.messages[-3].tool_calls == (
        ToolCall("call_1", "save_note", {"text": "a"}),
        ToolCall("call_2", "pick", {"count": 0, "loud": False}),
    )


def test_the_test_model_answers_its_text_or_a_value_of_the_asked_schema() -> None:
    assert TestModel().complete([Message.user("x")]).content == "success (no tool calls)"
    assert TestModel(text="Done.").complete([Message.user("x")]).content == "Done."
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    wanted = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema}}
    reply = TestModel().complete([Message.user("x")], response_format=wanted)
    assert json.loads(reply.content) == {"n": 0}
    bare = TestModel().complete([Message.user("x")], response_format={"type": "json_object"})
    assert bare.content == "{}"


def test_arguments_fit_the_schema_they_are_built_from() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 3},
            "mode": {"enum": ["fast", "slow"]},
            "count": {"type": "integer", "minimum": 2},
            "ratio": {"type": "number", "exclusiveMinimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "flag": {"type": "boolean"},
            "size": {"type": "integer", "default": 10},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "either": {"type": ["null", "integer"]},
            "point": {"$ref": "#/$defs/Point"},
            "optional": {"type": "string"},
        },
        "required": [
            "name",
            "mode",
            "count",
            "ratio",
            "tags",
            "flag",
            "size",
            "maybe",
            "either",
            "point",
        ],
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}},
                "required": ["x"],
            }
        },
    }
    assert arguments_for(schema) == {
        "name": "aaa",
        "mode": "fast",
        "count": 2,
        "ratio": 1.0,
        "tags": ["a", "a"],
        "flag": False,
        "size": 10,
        "maybe": "a",
        "either": 0,
        "point": {"x": 0.0},
    }
