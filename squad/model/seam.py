"""The model seam: the one module that calls litellm (:mod:`squad.model.litellm_load` loads it).

:class:`LiteLLMModel` turns a :class:`~squad.spec.models.ModelSpec` of a real provider into a
:class:`ChatModel`: every call goes through ``litellm.completion`` by its model string (OpenAI,
Anthropic, Ollama, vLLM, llama.cpp, any OpenAI-compatible gateway). The built-in offline model
is not a provider: :mod:`squad.model.factory` gives it its own in-process model.

Retries are ours, not litellm's or the OpenAI SDK's: both are turned off per call
(``num_retries=0`` and ``max_retries=0``) and :class:`RetryPolicy` retries rate limits (429),
server errors (5xx), timeouts, connection failures and empty answers with bounded exponential
back-off, honouring ``Retry-After``. tenacity runs the attempts; what is worth retrying is
squad's own reading of each error (:func:`~squad.model.retry.classify`). Anything else fails
fast with a :class:`~squad.errors.ModelError` naming the model and the status. Every attempt
is reported as a :class:`ModelEvent`.

Keys: ``api_key_env`` names the variable holding the key. A mapping with ``api_base`` and no
``api_key_env`` is a server of the user's own: the provider's usual variable
(``OPENAI_API_KEY``, ...) is used when it is set, and otherwise :data:`NO_KEY` is sent, since
local servers (llama.cpp, Ollama, vLLM) take no key but the OpenAI client will not send a
request without one. A call the client refuses to send fails at once, naming what to set.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from squad.errors import ModelError
from squad.model.litellm_load import (
    CLIENT,
    ClientLoader,
    isolated,
    load_litellm,
    quiet_litellm,
    unlogged,
)
from squad.model.providers import listed_price
from squad.model.retry import (
    CONNECTION_FAILED,
    CONNECTION_REFUSED,
    DEFAULT_RETRY,
    NOT_CONFIGURED,
    STATUS_HINTS,
    Failure,
    RetryPolicy,
    classify,
)
from squad.model.types import (
    EventKind,
    Message,
    ModelEvent,
    ModelReply,
    Price,
    TokenCallback,
    ToolSpec,
    Usage,
)
from squad.model.wire import (
    WireMessage,
    WireTool,
    message_dict,
    parse_answer,
    tool_dict,
)

if TYPE_CHECKING:
    import tenacity

    from squad.spec.models import ModelSpec

__all__ = ["NO_KEY", "LiteLLMModel", "RetryPolicy", "model_window"]


class CompletionRequest(TypedDict):
    """The keywords of one ``litellm.completion`` call; the optional ones are left out
    when the squad's model spec does not set them."""

    model: str
    messages: list[WireMessage]
    num_retries: int
    max_retries: int
    api_key: NotRequired[str]
    api_base: NotRequired[str]
    temperature: NotRequired[float]
    max_tokens: NotRequired[int]
    timeout: NotRequired[float]
    tools: NotRequired[list[WireTool]]
    response_format: NotRequired[dict[str, Any]]
    stream: NotRequired[bool]
    stream_options: NotRequired[dict[str, bool]]


NO_KEY = "no-key"
"""The API key sent to an ``api_base`` when no ``api_key_env`` is named and the provider's own
key variable is not set: a placeholder for servers that take no key."""
RESERVED_OUTPUT_TOKENS = 1024
"""Output tokens reserved against a spend cap for a call whose model sets no ``max_tokens``."""


class LiteLLMModel:
    """A :class:`~squad.model.types.ChatModel` backed by litellm, with our own retries.

    ``environ`` is where ``spec.api_key_env`` is looked up (default: ``os.environ``), read at
    each call. ``sleep`` waits between attempts (tests pass a recorder). ``on_event`` gets one
    :class:`ModelEvent` per attempt, and a ``load`` event when the call waited for the
    client's import (``loader``, the process's :data:`~squad.model.litellm_load.CLIENT`).
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        on_event: Callable[[ModelEvent], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        environ: Mapping[str, str] | None = None,
        loader: ClientLoader = CLIENT,
    ) -> None:
        self.spec = spec
        self._loader = loader
        self.retry = retry
        self._on_event = on_event
        self._sleep = sleep
        self._environ = environ
        self._random = random.Random()
        self._price: list[Price | None] = []

    @property
    def name(self) -> str:
        return self.spec.name

    def price(self) -> Price | None:
        """The spec's ``cost_per_1k_*`` if given, else litellm's local price map; ``None`` when
        neither knows the model (then no spend cap can be kept for it)."""
        if not self._price:
            self._price.append(_price(self.spec))
        return self._price[0]

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        """The most a call with ``messages`` may cost: the prompt's tokens, counted with the
        model's tokenizer, plus ``max_tokens`` (or :data:`RESERVED_OUTPUT_TOKENS`) of output."""
        price = self.price()
        if price is None or price.free:
            return 0.0
        from squad.text.tokens import counter_for_model

        counter = counter_for_model(self.spec.name)
        prompt = sum(counter.count(m.content) + 4 for m in messages)
        prompt += sum(counter.count(json.dumps(tool_dict(t))) for t in tools)
        return price.cost(prompt, self.spec.max_tokens or RESERVED_OUTPUT_TOKENS)

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.spec.name!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        import tenacity  # here, not at import time: `squad --help` never pays for it

        litellm = self._loader.load()
        waited = self._loader.take_wait()
        if waited:
            self._emit("load", 0, waited)
        request = self._request(litellm, messages, tools, response_format, timeout_s, on_token)
        keyless = request.get("api_key") is NO_KEY
        started = time.perf_counter()
        spent = [Usage()]  # what every attempt that got an answer cost, empty ones included
        attempts = [0]

        def attempt() -> ModelReply:
            attempts[0] += 1
            try:
                reply = self._attempt(litellm, request, on_token, attempts[0], keyless)
            except _Again as again:
                spent[0] += again.usage or Usage()
                raise
            spent[0] += reply.usage
            return ModelReply(
                content=reply.content,
                tool_calls=reply.tool_calls,
                usage=spent[0],
                latency_s=time.perf_counter() - started,
                model=self.spec.name,
                attempts=attempts[0],
            )

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.retry.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_Again),
            before_sleep=self._before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except _Again as last:
            self._emit("error", attempts[0], last.latency, usage=last.usage, failure=last.failure)
            if last.usage is None:  # a provider error, retried to the last attempt
                error = self._error(last.failure, attempts[0], False, keyless)
                raise error from last.__cause__
            raise ModelError(
                f"model {self.spec.name!r} gave no answer (neither text nor a tool call) "
                f"in {attempts[0]} attempts: {last.failure.detail}",
                model=self.spec.name,
                attempts=attempts[0],
                cost_usd=spent[0].cost_usd,
            ) from None

    def _attempt(
        self,
        litellm: Any,
        request: Mapping[str, Any],
        on_token: TokenCallback | None,
        attempt: int,
        keyless: bool,
    ) -> ModelReply:
        """One request and its reply. Raises :class:`_Again` for a provider error worth
        retrying or an empty answer, and a :class:`ModelError` (evented) for anything else
        the provider did wrong."""
        stream = _StreamState(on_token)
        attempt_started = time.perf_counter()
        try:
            quiet_litellm()
            response = isolated(partial(_call, litellm, request, stream))
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise  # not a provider error: a bug, or the caller's on_token raised
            latency = time.perf_counter() - attempt_started
            if failure.retryable and not stream.delivered:
                raise _Again(failure, latency) from exc
            self._emit("error", attempt, latency, failure=failure)
            raise self._error(failure, attempt, stream.delivered, keyless) from exc
        latency = time.perf_counter() - attempt_started
        content, tool_calls = parse_answer(response)
        usage = self._usage(litellm, response)
        if not content.strip() and not tool_calls:
            # Nothing to act on: no choices, or a choice with neither text nor a tool
            # call. Passing it on would finish a task with an empty output.
            raise _Again(_empty_answer(response), latency, usage)
        self._emit("call", attempt, latency, usage=usage)
        return ModelReply(content, tool_calls, usage, latency)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """The back-off after a failed attempt: :class:`RetryPolicy`, honouring Retry-After."""
        failed = _again(state)
        rand = self._random.random()
        return self.retry.delay(state.attempt_number, failed.failure.retry_after, rand)

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        """Report the failed attempt as a ``retry`` event, with the delay about to be slept."""
        failed = _again(state)
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        self._emit(
            "retry",
            state.attempt_number,
            failed.latency,
            usage=failed.usage,
            failure=failed.failure,
            delay_s=delay,
        )

    # -- building the request ------------------------------------------------------------------

    def _request(
        self,
        litellm: Any,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        response_format: Mapping[str, Any] | None,
        timeout_s: float | None,
        on_token: TokenCallback | None,
    ) -> CompletionRequest:
        spec = self.spec
        request: CompletionRequest = {
            "model": spec.name,
            "messages": [message_dict(m) for m in messages],
            # Retries are ours: litellm's wrapper retries only when num_retries is truthy, and
            # the OpenAI SDK client defaults to 2 retries unless max_retries reaches it.
            "num_retries": 0,
            "max_retries": 0,
        }
        api_key = self._api_key(litellm)
        if api_key is not None:
            request["api_key"] = api_key
        if spec.api_base is not None:
            request["api_base"] = spec.api_base
        if spec.temperature is not None:
            request["temperature"] = spec.temperature
        if spec.max_tokens is not None:
            request["max_tokens"] = spec.max_tokens
        timeout = timeout_s if timeout_s is not None else spec.timeout_s
        if timeout is not None:
            request["timeout"] = float(timeout)
        if tools:
            request["tools"] = [tool_dict(t) for t in tools]
        if response_format is not None:
            request["response_format"] = dict(response_format)
        if on_token is not None:
            request["stream"] = True
            request["stream_options"] = {"include_usage": True}
        return request

    def _api_key(self, litellm: Any) -> str | None:
        variable = self.spec.api_key_env
        if variable is None:
            if self.spec.api_base is not None and _provider_key_missing(litellm, self.spec):
                return NO_KEY
            return None  # the provider's usual variables (OPENAI_API_KEY, ...) apply
        environ = os.environ if self._environ is None else self._environ
        value = environ.get(variable)
        if not value:
            raise ModelError(
                f"model {self.spec.name!r} needs an API key: set the environment variable "
                f"{variable!r} (named by api_key_env)",
                model=self.spec.name,
            )
        return value

    # -- outcomes ------------------------------------------------------------------------------

    def _usage(self, litellm: Any, response: Any) -> Usage:
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        price = self.price() if self.spec.cost_per_1k_input is not None else None
        if price:
            return Usage(prompt, completion, price.cost(prompt, completion))
        stated = _priced_in_the_call(response)
        return Usage(prompt, completion, _cost(litellm, response) if stated is None else stated)

    def _emit(
        self,
        kind: EventKind,
        attempt: int,
        latency: float,
        *,
        usage: Usage | None = None,
        failure: Failure | None = None,
        error: str | None = None,
        delay_s: float = 0.0,
    ) -> None:
        if self._on_event is None:
            return
        event = ModelEvent(
            kind=kind,
            model=self.spec.name,
            attempt=attempt,
            latency_s=latency,
            usage=usage,
            error=failure.describe() if failure else error,
            status=failure.status if failure else None,
            delay_s=delay_s,
        )
        self._on_event(event)

    def _error(self, failure: Failure, attempt: int, delivered: bool, keyless: bool) -> ModelError:
        name = self.spec.name
        if failure.reason == NOT_CONFIGURED:
            text = f"model {name!r} cannot be called as configured: {failure.detail} "
            text += "Set the provider's key variable, or name the variable that holds the key "
            text += "with api_key_env in the model mapping; a local server that takes no key "
            text += "needs only api_base."
        elif failure.reason in (CONNECTION_REFUSED, CONNECTION_FAILED):
            base = self.spec.api_base
            where = _host_port(base) if base else "the provider"
            verb = "was refused" if failure.reason == CONNECTION_REFUSED else "failed"
            text = f"model {name!r}: the connection to {where} {verb} ({failure.detail}; "
            text += f"tried {attempt} time{'s' if attempt != 1 else ''}); "
            text += f"is the server at {base} running?" if base else "check the network"
        elif delivered:
            text = f"model {name!r}: the stream broke after text was delivered, so it was not "
            text += f"retried: {failure.describe()}"
        elif failure.retryable:
            text = f"model {name!r} failed after {attempt} attempts: {failure.describe()}"
        elif failure.reason == "malformed response":
            where = self.spec.api_base or "the provider"
            text = f"model {name!r} answered with a body that is not valid JSON ({failure.detail});"
            text += f" is {where!r} an OpenAI-compatible endpoint?"
        else:
            text = f"model {name!r} refused the request: {failure.describe()}"
            hint = STATUS_HINTS.get(failure.status or 0)
            if keyless and failure.status in (401, 403):
                text += f"; the server at {self.spec.api_base!r} wants an API key: name the "
                text += "environment variable that holds it with api_key_env"
            elif hint:
                key = self.spec.api_key_env or "the provider's key variable"
                text += f"; {hint.format(key=key)}"
        return ModelError(text, model=name, status=failure.status, attempts=attempt)


def _host_port(url: str) -> str:
    """``127.0.0.1:8000`` of ``http://127.0.0.1:8000/v1`` (the default port named)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return url
    if not parts.hostname:
        return url
    return f"{parts.hostname}:{port}" if port else parts.hostname


# -- litellm, lazily -------------------------------------------------------------------------


class _StreamState:
    """Forwards streamed text to ``on_token`` and remembers whether any was delivered."""

    def __init__(self, on_token: TokenCallback | None) -> None:
        self.on_token = on_token
        self.delivered = False

    def deliver(self, text: str) -> None:
        if self.on_token is not None and text:
            self.delivered = True
            self.on_token(text)


class _Again(Exception):
    """An attempt worth retrying, as tenacity sees it: the failure read from the provider's
    error, or an empty answer (then ``usage`` is what that answer cost)."""

    def __init__(self, failure: Failure, latency: float, usage: Usage | None = None) -> None:
        super().__init__(failure.describe())
        self.failure = failure
        self.latency = latency
        self.usage = usage


def _again(state: tenacity.RetryCallState) -> _Again:
    """The :class:`_Again` the attempt of ``state`` raised (retried only on those)."""
    failed = state.outcome.exception() if state.outcome is not None else None
    assert isinstance(failed, _Again)
    return failed


def _call(litellm: Any, request: Mapping[str, Any], stream: _StreamState) -> Any:
    """One attempt: the response, with a stream drained into one aggregate response."""
    with unlogged(litellm):
        response = litellm.completion(**request)
    if not request.get("stream"):
        return response
    chunks: list[Any] = []
    with response:  # closes the HTTP response even when on_token raises
        for chunk in response:
            chunks.append(chunk)
            if chunk.choices:
                stream.deliver(chunk.choices[0].delta.content or "")
    return litellm.stream_chunk_builder(chunks, messages=request["messages"])


def _price(spec: ModelSpec) -> Price | None:
    """The spec's prices, else the shipped map's (read without waiting for litellm's import:
    a run checks prices before it starts), else what ``get_model_info`` finds, which also
    asks some providers' own model lists."""
    if spec.cost_per_1k_input is not None and spec.cost_per_1k_output is not None:
        return Price(spec.cost_per_1k_input, spec.cost_per_1k_output)
    listed = listed_price(spec.name)
    if listed is not None:
        return Price(*listed)
    return _litellm_price(spec.name)


def _litellm_price(name: str) -> Price | None:
    """What litellm's ``get_model_info`` says ``name`` costs; None when it has no price."""
    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model=name)
    except Exception:  # noqa: BLE001 - litellm raises assorted errors for a model it does not map
        return None
    given = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if given[0] is None or given[1] is None:
        return None
    return Price(float(given[0]) * 1000, float(given[1]) * 1000)


@lru_cache(maxsize=256)
def model_window(name: str) -> int | None:
    """The context window litellm's model map gives for the model ``name``:
    ``max_input_tokens``, else ``max_tokens``; None when litellm does not map it. Imports
    litellm (with its look-ups off, :func:`load_litellm`); remembered per name for the process.

    Read from the shipped map (``litellm.model_cost``, by the full name, then without its
    provider prefix), never through ``get_model_info``, which asks some providers' servers
    (Ollama's ``/api/show``, Hugging Face's API) and so could reach the network."""
    litellm = load_litellm()
    table = getattr(litellm, "model_cost", None) or {}
    for key in dict.fromkeys((name, name.split("/", 1)[-1])):
        info = table.get(key)
        if not isinstance(info, dict):
            continue
        for field in ("max_input_tokens", "max_tokens"):
            value = info.get(field)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def _provider_key_missing(litellm: Any, spec: ModelSpec) -> bool:
    """Whether litellm finds none of the provider's key variables set for ``spec.name``."""
    try:
        found = litellm.validate_environment(model=spec.name, api_base=spec.api_base)
    except Exception:  # noqa: BLE001 - an unknown provider: leave the key to litellm
        return False
    missing = found.get("missing_keys") or ()
    return any("KEY" in str(name).upper() for name in missing)


def _empty_answer(response: Any) -> Failure:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return Failure("empty answer", None, True, None, "the response had no choices")
    reason = getattr(choices[0], "finish_reason", None)
    detail = "the first choice had no content and no tool call"
    return Failure("empty answer", None, True, None, f"{detail} (finish_reason {reason!r})")


def _priced_in_the_call(response: Any) -> float | None:
    """The cost litellm put on the response while making the call (``response_cost``, priced
    from its map with what it knew of the request), or None when it put none (a stream's
    aggregate, a model it could not price). Reading it spares pricing the response twice."""
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, Mapping):
        cost = hidden.get("response_cost")
    else:
        cost = getattr(hidden, "response_cost", None)
    if isinstance(cost, bool) or not isinstance(cost, int | float):
        return None
    if not math.isfinite(cost) or cost < 0:
        return None
    return float(cost)


def _cost(litellm: Any, response: Any) -> float:
    """What the call cost by litellm's local price map; 0.0 when the model is not priced."""
    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:  # noqa: BLE001 - pricing is best effort; unknown models raise assorted errors
        return 0.0
    return float(cost or 0.0)
