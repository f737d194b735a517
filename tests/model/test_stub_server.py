"""The stub OpenAI server itself, spoken to with the standard library's HTTP client."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from squad.model.stub_answers import (
    answer,
    malformed_json,
    malformed_tool_arguments,
    slow,
    status,
    stream,
    tool_call,
)
from squad.model.testing import OpenAIStubServer


def post(url: str, body: Any, *, timeout: float = 5) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


def chat(server: OpenAIStubServer, **extra: Any) -> tuple[int, dict[str, str], bytes]:
    body = {"model": "gpt-x", "messages": [{"role": "user", "content": "two words"}], **extra}
    return post(f"{server.url}/chat/completions", body)


def test_url_is_loopback_with_the_v1_prefix(server: OpenAIStubServer) -> None:
    assert server.url == f"http://127.0.0.1:{server.port}/v1"


def test_plain_answer_in_openai_shape_with_usage(server: OpenAIStubServer) -> None:
    server.script(answer("hi there", completion_tokens=9))
    code, headers, raw = chat(server)
    body = json.loads(raw)
    assert code == 200
    assert headers["Content-Type"] == "application/json"
    assert body["object"] == "chat.completion"
    assert body["model"] == "gpt-x"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "hi there"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 9, "total_tokens": 11}


def test_every_request_is_recorded_in_order(server: OpenAIStubServer) -> None:
    chat(server, temperature=0.1)
    post(f"http://127.0.0.1:{server.port}/chat/completions", {"model": "m", "messages": []})
    assert [r.path for r in server.requests] == ["/v1/chat/completions", "/chat/completions"]
    assert server.bodies[0]["temperature"] == 0.1
    assert server.requests[0].headers["content-type"] == "application/json"


def test_without_a_script_it_echoes_or_asks_the_handler() -> None:
    with OpenAIStubServer() as echo:
        _, _, raw = chat(echo)
        assert json.loads(raw)["choices"][0]["message"]["content"] == "stub reply to: two words"
    with OpenAIStubServer(handler=lambda body: answer(f"{len(body['messages'])} message")) as h:
        _, _, raw = chat(h)
        assert json.loads(raw)["choices"][0]["message"]["content"] == "1 message"


def test_script_runs_in_order_then_falls_back(server: OpenAIStubServer) -> None:
    server.script(status(500), answer("second"))
    assert server.pending == 2
    assert chat(server)[0] == 500
    assert json.loads(chat(server)[2])["choices"][0]["message"]["content"] == "second"
    assert server.pending == 0
    assert chat(server)[0] == 200


def test_tool_call_answers(server: OpenAIStubServer) -> None:
    server.script(tool_call("lookup", {"q": "x"}), malformed_tool_arguments("lookup", "{oops"))
    good = json.loads(chat(server)[2])["choices"][0]
    assert good["finish_reason"] == "tool_calls"
    (call,) = good["message"]["tool_calls"]
    assert call["function"] == {"name": "lookup", "arguments": '{"q": "x"}'}
    bad = json.loads(chat(server)[2])["choices"][0]["message"]["tool_calls"][0]
    assert bad["function"]["arguments"] == "{oops"


def test_errors_carry_openai_error_bodies_and_retry_after(server: OpenAIStubServer) -> None:
    server.script(status(429, "slow down", retry_after=3), status(401, "bad key"))
    code, headers, raw = chat(server)
    assert (code, headers["Retry-After"]) == (429, "3")
    assert json.loads(raw)["error"]["message"] == "slow down"
    code, headers, raw = chat(server)
    assert code == 401
    assert "Retry-After" not in headers
    assert json.loads(raw)["error"]["type"] == "authentication_error"


def test_malformed_json_is_sent_as_is(server: OpenAIStubServer) -> None:
    server.script(malformed_json())
    code, _, raw = chat(server)
    assert code == 200
    with pytest.raises(ValueError):
        json.loads(raw)


def test_stream_is_server_sent_events_ending_in_done(server: OpenAIStubServer) -> None:
    server.script(stream("Hel", "lo"))
    code, headers, raw = chat(server, stream=True, stream_options={"include_usage": True})
    assert code == 200
    assert headers["Content-Type"] == "text/event-stream"
    events = [line.removeprefix("data: ") for line in raw.decode().split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    deltas = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert "".join(d or "" for d in deltas) == "Hello"
    assert chunks[-1]["usage"]["completion_tokens"] == 1


def test_a_cut_stream_stops_mid_event_without_done(server: OpenAIStubServer) -> None:
    server.script(stream("a", "b", "c", cut_after=1))
    raw = chat(server, stream=True)[2].decode()
    assert '"content": "a"' in raw
    assert '"content": "b"' not in raw
    assert "[DONE]" not in raw
    assert raw.endswith('"choi')


def test_slow_answer_waits_then_answers(server: OpenAIStubServer) -> None:
    server.script(slow(0.05, answer("late")))
    _, _, raw = chat(server)
    assert json.loads(raw)["choices"][0]["message"]["content"] == "late"


def test_unknown_paths_are_404_and_leave_the_script_alone(server: OpenAIStubServer) -> None:
    server.script(answer("for the chat route"))
    assert post(f"{server.url}/embeddings", {"input": "x"})[0] == 404
    assert server.pending == 1


def test_a_failing_handler_is_recorded_not_hidden(capsys: pytest.CaptureFixture[str]) -> None:
    def broken(body: Any) -> Any:
        raise LookupError("no such scenario")

    with OpenAIStubServer(handler=broken) as server:
        with pytest.raises(OSError):
            chat(server)
        assert [type(e) for e in server.errors] == [LookupError]
    assert "no such scenario" in capsys.readouterr().err


def test_closing_wakes_a_slow_answer_and_frees_the_port() -> None:
    server = OpenAIStubServer().start()
    port = server.port
    server.script(slow(60))
    client = threading.Thread(target=lambda: _swallow(lambda: chat(server)))
    client.start()
    while not server.requests:  # the request is in, its handler is sleeping
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 5  # not the 60 s the answer would have slept
    client.join()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    with pytest.raises(RuntimeError, match="not running"):
        server.url  # noqa: B018 - the property raises
    server.close()  # closing twice is harmless


def _swallow(call: Any) -> None:
    with contextlib.suppress(OSError):  # the server goes away mid-answer, as the test intends
        call()
