"""The litellm seam against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squad.errors import ModelError, SquadError
from squad.model import LiteLLMModel, Message, RetryPolicy, ToolCall, ToolSpec
from squad.model.litellm_load import load_litellm
from squad.model.providers import listed_price
from squad.model.seam import NO_KEY
from squad.model.stub_answers import (
    answer,
    malformed_json,
    malformed_tool_arguments,
    no_choices,
    slow,
    status,
    stream,
    tool_call,
)
from squad.model.testing import OpenAIStubServer
from squad.model.types import Price
from squad.spec.models import ModelSpec
from tests.model.conftest import MakeModel, Recorder

HELLO = [Message.system("Be brief."), Message.user("Say hello.")]
SAVE = ToolSpec(
    "save_note",
    "Save a note to the workspace.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
        "required": ["path", "text"],
    },
)


# -- answers ------------------------------------------------------------------------------------


def test_plain_answer_records_usage_cost_and_one_call_event(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(answer("Hello!", prompt_tokens=12, completion_tokens=3))
    reply = make_model().complete(HELLO)

    assert reply.content == "Hello!"
    assert reply.tool_calls == ()
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 3)
    assert reply.usage.cost_usd > 0  # gpt-4o-mini is in litellm's local price map
    assert reply.attempts == 1
    assert reply.model == "openai/gpt-4o-mini"
    assert reply.latency_s > 0
    assert recorder.kinds == ["call"]
    assert recorder.events[0].usage == reply.usage
    assert recorder.events[0].model == "openai/gpt-4o-mini"
    body = server.bodies[0]
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello."},
    ]
    assert "stream" not in body


def test_spec_parameters_key_and_response_format_reach_the_server(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(answer('{"ok": true}'))
    model = make_model(temperature=0.3, max_tokens=77)
    model.complete(HELLO, response_format={"type": "json_object"})

    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer x"
    assert request.body["temperature"] == 0.3
    assert request.body["max_tokens"] == 77
    assert request.body["response_format"] == {"type": "json_object"}


def test_a_mapped_models_call_costs_its_listed_prices_priced_once(
    server: OpenAIStubServer, make_model: MakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # litellm prices the response while making the call; pricing it again would be wrong here
    monkeypatch.setattr(load_litellm(), "completion_cost", lambda **_: 99.0)
    server.script(answer("Hello!", prompt_tokens=1200, completion_tokens=300))
    reply = make_model().complete(HELLO)

    listed = listed_price("openai/gpt-4o-mini")
    assert listed is not None and Price(*listed).cost(1200, 300) > 0
    assert reply.usage.cost_usd == pytest.approx(Price(*listed).cost(1200, 300))


def test_a_streamed_answer_costs_its_listed_prices(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(stream("Hel", "lo, ", "world!"))
    reply = make_model().complete(HELLO, on_token=lambda _: None)

    listed = listed_price("openai/gpt-4o-mini")
    assert listed is not None
    usage = reply.usage
    assert usage.cost_usd > 0
    assert usage.cost_usd == pytest.approx(
        Price(*listed).cost(usage.prompt_tokens, usage.completion_tokens)
    )


def test_spec_prices_win_over_the_listed_ones(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(answer("Hello!", prompt_tokens=1000, completion_tokens=1000))
    reply = make_model(cost_per_1k_input=1.0, cost_per_1k_output=2.0).complete(HELLO)
    assert reply.usage.cost_usd == pytest.approx(3.0)


def test_unpriced_model_costs_zero_instead_of_failing(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(answer("hi"))
    reply = make_model("openai/squad-private-model-xyz").complete(HELLO)
    assert reply.content == "hi"
    assert reply.usage.cost_usd == 0.0


def test_tool_call_is_parsed_with_decoded_arguments(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(tool_call("save_note", {"path": "notes.md", "text": "hi"}, call_id="call_7"))
    reply = make_model().complete(HELLO, tools=[SAVE])

    assert reply.tool_calls == (
        ToolCall("call_7", "save_note", {"path": "notes.md", "text": "hi"}),
    )
    assert reply.content == ""
    tools = server.bodies[0]["tools"]
    assert tools == [
        {
            "type": "function",
            "function": {
                "name": "save_note",
                "description": "Save a note to the workspace.",
                "parameters": SAVE.parameters,
            },
        }
    ]


def test_tool_calls_and_results_go_out_in_openai_form(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    call = ToolCall("call_1", "save_note", {"path": "a.md", "text": "x"})
    history = [
        Message.user("Save it."),
        Message.assistant("", [call]),
        Message.tool("call_1", "saved a.md", name="save_note"),
    ]
    server.script(answer("Saved."))
    assert make_model().complete(history, tools=[SAVE]).content == "Saved."

    sent = server.bodies[0]["messages"]
    assert sent[1]["role"] == "assistant"
    assert sent[1]["tool_calls"][0]["id"] == "call_1"
    assert sent[1]["tool_calls"][0]["function"]["name"] == "save_note"
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.md", "text": "x"}'
    assert sent[2]["role"] == "tool"
    assert sent[2]["tool_call_id"] == "call_1"
    assert sent[2]["content"] == "saved a.md"


def test_streaming_hands_each_delta_in_order_and_returns_their_join(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    deltas = ["Hel", "lo, ", "wor", "ld", "!"]
    server.script(stream(*deltas))
    seen: list[str] = []
    reply = make_model().complete(HELLO, on_token=seen.append)

    assert seen == deltas
    assert reply.content == "".join(deltas)
    assert reply.usage.completion_tokens == 2  # from the stub's usage chunk ("Hello, world!")
    assert recorder.kinds == ["call"]
    body = server.bodies[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_an_exception_from_on_token_reaches_the_caller_unretried(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(stream("a", "b"), stream("a", "b"))

    def explode(_: str) -> None:
        raise KeyError("display closed")

    with pytest.raises(KeyError, match="display closed"):
        make_model().complete(HELLO, on_token=explode)
    assert len(server.requests) == 1


def test_a_stream_that_breaks_after_text_was_delivered_is_not_retried(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(stream("a", "b", "c", cut_after=2), answer("never sent"))
    seen: list[str] = []
    with pytest.raises(ModelError, match="stream broke after text was delivered"):
        make_model().complete(HELLO, on_token=seen.append)
    assert seen == ["a", "b"]  # a retry would hand the caller these twice
    assert recorder.kinds == ["error"]
    assert len(server.requests) == 1


def test_a_stream_that_breaks_before_any_text_is_retried(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(stream("a", cut_after=0), stream("ok"))
    seen: list[str] = []
    reply = make_model().complete(HELLO, on_token=seen.append)
    assert (reply.content, reply.attempts, seen) == ("ok", 2, ["ok"])
    assert recorder.kinds == ["retry", "call"]


# -- retries ------------------------------------------------------------------------------------


def test_rate_limit_is_retried_after_the_servers_retry_after(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(status(429, "slow down", retry_after=2), answer("ok"))
    reply = make_model().complete(HELLO)

    assert reply.content == "ok"
    assert reply.attempts == 2
    assert recorder.delays == [2.0]
    assert recorder.kinds == ["retry", "call"]
    retry = recorder.events[0]
    assert (retry.status, retry.attempt, retry.delay_s) == (429, 1, 2.0)
    assert "slow down" in (retry.error or "")
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "retry_after", [60, "Wed, 21 Oct 2099 07:28:00 GMT"], ids=["seconds", "http-date"]
)
def test_retry_after_is_capped_by_max_delay(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder, retry_after: object
) -> None:
    server.script(status(429, retry_after=retry_after), answer("ok"))  # type: ignore[arg-type]
    make_model(retry=RetryPolicy(max_delay_s=8.0, jitter=0)).complete(HELLO)
    assert recorder.delays == [8.0]


def test_server_errors_exhaust_the_attempts_with_every_attempt_evented(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(status(500), status(500), status(500), status(500))
    with pytest.raises(ModelError) as caught:
        make_model().complete(HELLO)

    error = caught.value
    assert (error.status, error.attempts, error.model) == (500, 4, "openai/gpt-4o-mini")
    assert "'openai/gpt-4o-mini' failed after 4 attempts" in str(error)
    assert "HTTP 500" in str(error)
    assert recorder.kinds == ["retry", "retry", "retry", "error"]
    assert [e.attempt for e in recorder.events] == [1, 2, 3, 4]
    assert recorder.delays == [0.5, 1.0, 2.0]
    # exactly max_attempts requests: neither litellm nor the OpenAI SDK retried on its own
    assert len(server.requests) == 4
    assert isinstance(error, SquadError) and error.exit_code == 1


def test_service_unavailable_then_success(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(status(503), status(502), answer("back"))
    reply = make_model().complete(HELLO)
    assert (reply.content, reply.attempts) == ("back", 3)
    assert [e.status for e in recorder.events] == [503, 502, None]
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        (400, "rejected the request"),
        (401, "check the API key in STUB_KEY"),
        (403, "lacks access"),
        (404, "check the model name and api_base"),
    ],
)
def test_client_errors_fail_fast_naming_model_and_status(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder, code: int, hint: str
) -> None:
    server.script(status(code, "nope"), answer("never sent"))
    with pytest.raises(ModelError) as caught:
        make_model().complete(HELLO)

    message = str(caught.value)
    assert "'openai/gpt-4o-mini'" in message
    assert f"HTTP {code}" in message
    assert hint in message
    assert caught.value.status == code
    assert caught.value.attempts == 1
    assert len(server.requests) == 1
    assert recorder.kinds == ["error"]
    assert recorder.delays == []


def test_timeouts_are_retried_then_fail(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(slow(30), slow(30))
    model = make_model(retry=RetryPolicy(max_attempts=2, jitter=0))
    with pytest.raises(ModelError, match="failed after 2 attempts: timed out"):
        model.complete(HELLO, timeout_s=0.5)
    assert recorder.kinds == ["retry", "error"]
    assert recorder.delays == [0.5]
    assert len(server.requests) == 2


def test_spec_timeout_applies_and_a_slow_answer_then_a_fast_one_succeeds(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(slow(30), answer("in time"))
    reply = make_model(timeout_s=0.5).complete(HELLO)
    assert (reply.content, reply.attempts) == ("in time", 2)
    assert recorder.events[0].error is not None and "timed out" in recorder.events[0].error


def test_a_refused_connection_is_retried_then_named_with_host_and_port_never_http_500(
    recorder: Recorder,
) -> None:
    with socket.socket() as probe:  # a port nobody listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = LiteLLMModel(
        ModelSpec(name="openai/gpt-4o-mini", api_base=f"http://127.0.0.1:{port}/v1"),
        retry=RetryPolicy(max_attempts=3, jitter=0),
        on_event=recorder.events.append,
        sleep=recorder.sleep,
        environ={},
    )
    with pytest.raises(ModelError) as raised:
        model.complete(HELLO)
    assert recorder.kinds == ["retry", "retry", "error"]
    # litellm wraps a refused connection as an HTTP 500; no server answered, so none is named.
    text = str(raised.value)
    assert text.startswith(
        f"model 'openai/gpt-4o-mini': the connection to 127.0.0.1:{port} was refused ("
    )
    assert text.endswith(f"; tried 3 times); is the server at http://127.0.0.1:{port}/v1 running?")
    assert "Connection refused" in text and "HTTP" not in text
    assert raised.value.status is None
    for event in recorder.events:
        assert event.status is None and event.error is not None
        assert event.error.startswith("connection refused: ") and "500" not in event.error


def test_jitter_only_shortens_the_delay(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(status(500), status(500), answer("ok"))
    make_model(retry=RetryPolicy(jitter=0.5)).complete(HELLO)
    assert 0.25 <= recorder.delays[0] <= 0.5
    assert 0.5 <= recorder.delays[1] <= 1.0


# -- malformed answers and bad set-up -----------------------------------------------------------


def test_malformed_json_body_is_a_model_error_and_not_retried(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(malformed_json(), answer("never sent"))
    with pytest.raises(ModelError, match="not valid JSON") as caught:
        make_model().complete(HELLO)
    assert server.url in str(caught.value)
    assert recorder.kinds == ["error"]
    assert len(server.requests) == 1


def test_an_answer_with_no_choices_is_retried_then_a_model_error(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    server.script(no_choices(), no_choices())
    with pytest.raises(ModelError, match="gave no answer") as caught:
        make_model(retry=RetryPolicy(max_attempts=2, jitter=0)).complete(HELLO)
    assert "no choices" in str(caught.value)
    assert caught.value.attempts == 2
    assert recorder.kinds == ["retry", "error"]
    assert len(server.requests) == 2


@pytest.mark.parametrize("content", ["", "  \n "])
def test_an_empty_answer_is_retried_and_the_next_real_one_is_returned_with_both_costs(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder, content: str
) -> None:
    server.script(
        answer(content, prompt_tokens=10, completion_tokens=0),
        answer("Hello!", prompt_tokens=10, completion_tokens=2),
    )
    reply = make_model(retry=RetryPolicy(max_attempts=2, jitter=0)).complete(HELLO)
    assert reply.content == "Hello!" and reply.attempts == 2
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (20, 2)
    assert recorder.kinds == ["retry", "call"]
    assert "finish_reason 'stop'" in (recorder.events[0].error or "")


def test_a_stream_that_ends_without_any_text_is_an_empty_answer(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(stream(), stream())
    with pytest.raises(ModelError, match="gave no answer"):
        make_model(retry=RetryPolicy(max_attempts=2, jitter=0)).complete(
            HELLO, on_token=lambda _: None
        )


def test_malformed_tool_arguments_come_back_as_a_marked_call_quoting_them(
    server: OpenAIStubServer, make_model: MakeModel, recorder: Recorder
) -> None:
    # A small model's broken JSON is the turn's to refuse (the model may call again), not a
    # failed call that fails the task.
    server.script(malformed_tool_arguments("save_note", '{"path": "notes.md",'))
    reply = make_model().complete(HELLO, tools=[SAVE])
    (call,) = reply.tool_calls
    assert (call.name, call.arguments) == ("save_note", {})
    assert call.malformed is not None and "not a JSON object" in call.malformed
    assert '{"path": "notes.md",' in call.malformed
    assert recorder.kinds == ["call"]  # answered and paid for like any call


def test_tool_arguments_that_are_json_but_not_an_object_are_marked_malformed(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    server.script(malformed_tool_arguments("save_note", "[1, 2]"))
    (call,) = make_model().complete(HELLO, tools=[SAVE]).tool_calls
    assert call.malformed is not None and "[1, 2]" in call.malformed


def test_missing_api_key_variable_is_named_and_nothing_is_sent(
    server: OpenAIStubServer, make_model: MakeModel
) -> None:
    model = make_model(api_key_env="SQUAD_TEST_MISSING_KEY", environ={})
    with pytest.raises(ModelError) as caught:
        model.complete(HELLO)
    assert "'SQUAD_TEST_MISSING_KEY'" in str(caught.value)
    assert caught.value.attempts == 0
    assert server.requests == []


def test_a_keyless_local_server_needs_only_api_base(
    server: OpenAIStubServer, make_model: MakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(answer("Hello!"))
    reply = make_model("openai/smollm2", api_key_env=None, environ={}).complete(HELLO)
    assert reply.content == "Hello!"
    assert server.requests[0].headers["authorization"] == f"Bearer {NO_KEY}"


def test_with_api_base_and_no_key_variable_named_the_providers_own_variable_is_used(
    server: OpenAIStubServer, make_model: MakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    server.script(answer("Hello!"))
    make_model("openai/smollm2", api_key_env=None, environ={}).complete(HELLO)
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-the-environment"


def test_a_keyless_server_that_wants_a_key_after_all_says_to_name_its_variable(
    server: OpenAIStubServer, make_model: MakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(status(401, "invalid api key"))
    with pytest.raises(ModelError) as caught:
        make_model("openai/smollm2", api_key_env=None, environ={}).complete(HELLO)
    assert "wants an API key" in str(caught.value)
    assert "api_key_env" in str(caught.value)
    assert caught.value.attempts == 1


def test_a_client_that_refuses_to_send_without_a_key_fails_at_once_saying_what_to_set(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No api_base and no key anywhere: the OpenAI client refuses before any request, and
    # litellm reports that as an HTTP 500. It is configuration, not a server in trouble.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = LiteLLMModel(
        ModelSpec(name="openai/gpt-4o-mini"),
        retry=RetryPolicy(jitter=0),
        on_event=recorder.events.append,
        sleep=recorder.sleep,
    )
    with pytest.raises(ModelError) as caught:
        model.complete(HELLO)
    message = str(caught.value)
    assert "cannot be called as configured" in message
    assert "api_key_env" in message
    assert "OPENAI_API_KEY" in message
    assert "HTTP 500" not in message
    assert caught.value.attempts == 1
    assert caught.value.status is None
    assert recorder.delays == []
    assert recorder.kinds == ["error"]


# -- the retry policy on its own ----------------------------------------------------------------


def test_backoff_doubles_from_the_base_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, jitter=0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(1, retry_after=1.5) == 1.5
    assert policy.delay(1, retry_after=-4) == 0.0


@given(
    attempt=st.integers(1, 30),
    rand=st.floats(0, 1, exclude_max=True),
    jitter=st.floats(0, 1),
    retry_after=st.none() | st.floats(-10, 1e6),
)
def test_a_delay_never_passes_the_cap_nor_goes_negative(
    attempt: int, rand: float, jitter: float, retry_after: float | None
) -> None:
    policy = RetryPolicy(jitter=jitter)
    assert 0.0 <= policy.delay(attempt, retry_after, rand) <= policy.max_delay_s


@pytest.mark.parametrize("kwargs", [{"max_attempts": 0}, {"base_delay_s": -1}, {"jitter": 1.5}])
def test_nonsense_retry_policies_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


# -- packaging ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_importing_the_model_package_does_not_import_litellm() -> None:
    code = (
        "import sys, squad.model, squad.model.testing, squad.model.offline; "
        "print('litellm' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
