"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for tests.

It ships in the package (like httpx's ``MockTransport``) so any test, here or in a project
built on squad, can drive the real litellm path over a real socket::

    with OpenAIStubServer() as server:
        server.script(status(429, retry_after=2), answer("hello"))
        model = LiteLLMModel(ModelSpec(name="openai/gpt-4o-mini", api_base=server.url, ...))
        ...
        assert len(server.requests) == 2

Each request takes the next scripted behaviour (:mod:`squad.model.stub_answers`); when the
script is empty the ``handler`` given to the constructor decides, and without one the server
echoes the last user message. The
server speaks HTTP/1.0 (one request per connection), so no keep-alive socket or handler
thread outlives a response, and leaving the ``with`` block wakes any slow answer still
sleeping, joins every handler thread and closes the listening socket.

Beside it, in-process models for tests that need a model but not the provider path:
:class:`FunctionModel` (a function decides each reply) and :class:`TestModel` (calls every
offered tool once, then answers with their results); see :mod:`squad.model.inprocess`.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypedDict

from squad.model.inprocess import FunctionModel, ModelCall, TestModel, arguments_for
from squad.model.stub_answers import (
    CREATED,
    Answer,
    Behaviour,
    Slow,
    Status,
    Stream,
    ToolCallAnswer,
)

if TYPE_CHECKING:
    from squad.model.seam import LiteLLMModel

__all__ = [
    "FREE_PRICES",
    "FunctionModel",
    "ModelCall",
    "OpenAIStubServer",
    "RecordedRequest",
    "TestModel",
    "arguments_for",
]

FREE_PRICES = "cost_per_1k_input: 0, cost_per_1k_output: 0"
"""Model-mapping keys (YAML flow style) that price a stub-backed model at $0: litellm has no
price for the stub's model names, and a run refuses an unpriced model under a spend cap."""
_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the stub received it."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names lowercased."""
    body: Any
    """The JSON-decoded body (the raw text when it was not JSON)."""


@dataclass
class _State:
    script: deque[Behaviour] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    handler: Callable[[Any], Behaviour] | None = None
    errors: list[BaseException] = field(default_factory=list)


class OpenAIStubServer:
    """A scripted OpenAI-compatible chat-completions server on an ephemeral loopback port."""

    def __init__(self, handler: Callable[[Any], Behaviour] | None = None) -> None:
        """``handler`` gets each request body when the script is empty; it returns a behaviour."""
        self._state = _State(handler=handler)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAIStubServer:
        if self._server is not None:
            raise RuntimeError("the stub server is already running")
        self._state.closing.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.state = self._state
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-stub-{server.server_address[1]}",
            daemon=True,
        )
        thread.start()
        self._server, self._thread = server, thread
        return self

    def close(self) -> None:
        """Stop serving, wake slow answers, join every thread and close the socket."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._state.closing.set()
        server.shutdown()
        thread.join()
        server.server_close()  # joins the handler threads (block_on_close)
        self._server = self._thread = None

    def __enter__(self) -> OpenAIStubServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- use ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stub server is not running; use it in a `with` block")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give a client as ``api_base``: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def model(self, *, attempts: int = 1, key_env: str = "STUB_KEY") -> LiteLLMModel:
        """A client of this server through the real seam (``openai/stub``): ``attempts``
        requests per call at most, retried without waiting; the key is read from
        ``key_env``."""
        from squad.model.retry import RetryPolicy
        from squad.model.seam import LiteLLMModel
        from squad.spec.models import ModelSpec

        spec = ModelSpec(name="openai/stub", api_base=self.url, api_key_env=key_env)
        retry = RetryPolicy(max_attempts=attempts, base_delay_s=0, jitter=0)
        return LiteLLMModel(spec, retry=retry, sleep=lambda _: None)

    def script(self, *behaviours: Behaviour) -> OpenAIStubServer:
        """Queue behaviours; each request takes the next one."""
        with self._state.lock:
            self._state.script.extend(behaviours)
        return self

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of :attr:`requests`."""
        return [r.body for r in self.requests]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised while answering (a failing handler, say); empty when all is well."""
        with self._state.lock:
            return list(self._state.errors)

    @property
    def pending(self) -> int:
        """How many scripted behaviours are still unused."""
        with self._state.lock:
            return len(self._state.script)


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so server_close() joins the handler threads
    block_on_close = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout) leaves a broken pipe: expected. Anything else is a
        bug in a script or handler: kept in :attr:`OpenAIStubServer.errors` and printed."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            return
        if error is not None:
            with self.state.lock:
                self.state.errors.append(error)
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server: _Server
    timeout = 30  # a stuck client cannot pin a handler thread forever

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests assert on :attr:`OpenAIStubServer.requests`, not on stderr."""

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
        else:
            self._send_json(404, _error_body(404, f"no route {self.path!r}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        text = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body: Any = json.loads(text)
        except ValueError:
            body = text
        state = self.server.state
        routed = self.path.split("?", 1)[0] in _PATHS
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
            )
            behaviour = state.script.popleft() if state.script and routed else None
        if not routed:
            self._send_json(404, _error_body(404, f"no route {self.path!r}"))
            return
        if behaviour is None:
            behaviour = state.handler(body) if state.handler else _echo(body)
        self._perform(behaviour, body)

    def _perform(self, behaviour: Behaviour, body: Any) -> None:
        while isinstance(behaviour, Slow):
            if self.server.state.closing.wait(behaviour.seconds):
                return  # the server is closing; the client gave up long ago
            behaviour = behaviour.then
        model = body.get("model", "stub") if isinstance(body, dict) else "stub"
        prompt_tokens = _prompt_words(body)
        if isinstance(behaviour, Answer):
            message: dict[str, Any] = {"role": "assistant", "content": behaviour.content}
            usage = _usage(
                behaviour.prompt_tokens,
                prompt_tokens,
                behaviour.completion_tokens,
                len(behaviour.content.split()),
            )
            self._send_json(200, _completion(model, message, "stop", usage))
        elif isinstance(behaviour, ToolCallAnswer):
            arguments = behaviour.arguments
            encoded = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
            message = {
                "role": "assistant",
                "content": behaviour.content,
                "tool_calls": [
                    {
                        "id": behaviour.call_id,
                        "type": "function",
                        "function": {"name": behaviour.name, "arguments": encoded},
                    }
                ],
            }
            usage = _usage(None, prompt_tokens, None, len(encoded.split()) + 1)
            self._send_json(200, _completion(model, message, "tool_calls", usage))
        elif isinstance(behaviour, Stream):
            self._send_stream(model, behaviour, prompt_tokens, body)
        elif isinstance(behaviour, Status):
            headers = {"Retry-After": behaviour.retry_after} if behaviour.retry_after else {}
            self._send_json(behaviour.code, _error_body(behaviour.code, behaviour.message), headers)
        else:
            self._send(behaviour.code, behaviour.body.encode(), behaviour.content_type)

    def _send_stream(self, model: str, behaviour: Stream, prompt_tokens: int, body: Any) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        base = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
        }
        events: list[dict[str, Any]] = [
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                ],
            }
        ]
        events += [
            {**base, "choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]}
            for d in behaviour.deltas
        ]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        options = body.get("stream_options") if isinstance(body, dict) else None
        if isinstance(options, dict) and options.get("include_usage"):
            text = "".join(behaviour.deltas)
            usage = _usage(
                behaviour.prompt_tokens,
                prompt_tokens,
                behaviour.completion_tokens,
                len(text.split()),
            )
            events.append({**base, "choices": [], "usage": usage})
        if behaviour.cut_after is not None:
            events = events[: 1 + behaviour.cut_after]
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        if behaviour.cut_after is not None:
            self.wfile.write(b'data: {"id": "chatcmpl-stub", "choi')
            self.wfile.flush()
            return
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _send_json(self, code: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(code, json.dumps(payload).encode(), "application/json", headers)

    def _send(
        self, code: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Choice(TypedDict):
    index: int
    message: dict[str, Any]
    finish_reason: str


class _Completion(TypedDict):
    """A chat-completions answer, as the OpenAI API writes it."""

    id: str
    object: str
    created: int
    model: str
    choices: list[_Choice]
    usage: dict[str, int]


class _ErrorDetail(TypedDict):
    message: str
    type: str
    param: None
    code: str


class _ErrorBody(TypedDict):
    """An error answer, as the OpenAI API writes it."""

    error: _ErrorDetail


def _completion(
    model: str, message: dict[str, Any], finish: str, usage: dict[str, int]
) -> _Completion:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _usage(
    prompt: int | None, prompt_default: int, completion: int | None, completion_default: int
) -> dict[str, int]:
    p = prompt if prompt is not None else prompt_default
    c = completion if completion is not None else completion_default
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _error_body(code: int, message: str) -> _ErrorBody:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }
    return {
        "error": {
            "message": message,
            "type": kinds.get(code, "server_error"),
            "param": None,
            "code": str(code),
        }
    }


def _messages(body: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        return [m for m in body["messages"] if isinstance(m, dict)]
    return []


def _prompt_words(body: Any) -> int:
    return sum(len(str(m.get("content") or "").split()) for m in _messages(body))


def _echo(body: Any) -> Behaviour:
    last = next((m for m in reversed(list(_messages(body))) if m.get("role") == "user"), None)
    text = str(last.get("content") or "") if last else ""
    return Answer(f"stub reply to: {text}")
