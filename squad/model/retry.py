"""When a failed model call is retried, and after how long.

:class:`RetryPolicy` is the back-off; :func:`classify` reads a provider error (litellm raises
the OpenAI SDK's exception types for every provider) into a :class:`Failure` that says whether
it is worth retrying: rate limits (429), server errors (5xx), timeouts and connection failures
are; refusals (400, 401, 403, 404...), malformed answers and a client that cannot be set up
(no API key where the provider's client insists on one) are not.
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

__all__ = [
    "CONNECTION_FAILED",
    "CONNECTION_REFUSED",
    "DEFAULT_RETRY",
    "NOT_CONFIGURED",
    "STATUS_HINTS",
    "Failure",
    "RetryPolicy",
    "classify",
]

_DETAIL_LIMIT = 500
NOT_CONFIGURED = "not configured"
"""The :attr:`Failure.reason` of a call the provider's client refused to send (no API key)."""
CONNECTION_REFUSED = "connection refused"
"""The :attr:`Failure.reason` of a call nothing listened for (no server on that port)."""
CONNECTION_FAILED = "connection failed"
"""The :attr:`Failure.reason` of a call that reached no server for another reason (DNS, reset)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a failed call is retried: ``max_attempts`` requests in all, exponential back-off.

    The delay after attempt ``n`` is ``base_delay_s * 2**(n-1)``, capped at ``max_delay_s`` and
    shortened by up to ``jitter`` (a fraction, 0 = deterministic) so that clients do not retry in
    step. A ``Retry-After`` from the server replaces the computed delay, still capped.
    """

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {self.max_attempts!r}")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry delays cannot be negative")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter is a fraction from 0 to 1, not {self.jitter!r}")

    def delay(self, attempt: int, retry_after: float | None = None, rand: float = 0.0) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based); ``rand`` is in [0, 1)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        computed = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return computed * (1 - self.jitter * rand)


DEFAULT_RETRY = RetryPolicy()
"""4 attempts; 0.5 s, 1 s, 2 s between them (8 s at most), up to 10% shorter by jitter."""

STATUS_HINTS = {  # what to tell the user about a refusal; {key} names the key's variable
    400: "the provider rejected the request (messages, tools or response_format)",
    401: "check the API key in {key}",
    403: "the key in {key} lacks access to this model",
    404: "check the model name and api_base",
    422: "the provider could not process the request's parameters",
}


@dataclass(frozen=True)
class Failure:
    """A provider error, read: why, the HTTP status if any, and whether retrying can help."""

    reason: str
    status: int | None
    retryable: bool
    retry_after: float | None
    detail: str

    def describe(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.reason}{status}: {self.detail}"


def classify(exc: BaseException) -> Failure | None:
    """What went wrong, if ``exc`` is a provider error; ``None`` for anything else."""
    openai = importlib.import_module("openai")
    if not isinstance(exc, openai.OpenAIError):
        return None
    detail = _shorten(getattr(exc, "message", None) or str(exc))
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(exc, openai.APITimeoutError):
        return Failure("timed out", None, True, None, detail)
    if _client_refused(exc, openai.OpenAIError):
        # litellm reports these as HTTP 500, but no request was sent: retrying cannot help.
        return Failure(NOT_CONFIGURED, None, False, None, detail)
    if _caused_by(exc, openai.APIConnectionError):
        # litellm reports these as HTTP 500 too, but no server answered at all: say what the
        # socket said (connection refused, name not resolved), which the user can act on.
        refused = _caused_by(exc, ConnectionRefusedError)
        reason = CONNECTION_REFUSED if refused else CONNECTION_FAILED
        return Failure(reason, None, True, None, _shorten(str(_root(exc))) or detail)
    if _caused_by(exc, json.JSONDecodeError):
        return Failure("malformed response", None, False, None, detail)
    if status == 429:
        return Failure("rate limited", 429, True, _retry_after(exc), detail)
    if status == 408:
        return Failure("timed out", 408, True, _retry_after(exc), detail)
    if status is not None and status >= 500:
        return Failure("server error", status, True, _retry_after(exc), detail)
    return Failure("refused", status, False, None, detail)


def _root(exc: BaseException) -> BaseException:
    """The first error of ``exc``'s chain (what the socket said, under the wrappers)."""
    seen: set[int] = set()
    current = exc
    while id(current) not in seen:
        seen.add(id(current))
        below = current.__cause__ or current.__context__
        if below is None:
            break
        current = below
    return current


def _client_refused(exc: BaseException, base: type[BaseException]) -> bool:
    """Whether the provider's client refused to send anything: the OpenAI SDK raises a bare
    ``OpenAIError`` (no status, no response) when it cannot be built, as without an API key;
    litellm wraps it in an error that claims HTTP 500."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if type(current) is base:
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    response = getattr(exc, "response", None)
    sources = [getattr(response, "headers", None), getattr(exc, "headers", None)]
    for headers in sources:
        if not headers:
            continue
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        if "retry-after-ms" in lowered:
            seconds = _number(lowered["retry-after-ms"])
            if seconds is not None:
                return seconds / 1000
        if "retry-after" in lowered:
            return _retry_after_value(lowered["retry-after"])
    return None


def _retry_after_value(value: str) -> float | None:
    seconds = _number(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _number(value: str) -> float | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number == number and number != float("inf") else None


def _shorten(text: str) -> str:
    """The provider's message on one line, credentials redacted, cut to ``_DETAIL_LIMIT``.

    A provider's message can quote the request (a gateway's 400) or the key it refused, and it
    travels on into run errors, logs and chat replies. Redacted before the cut, so no cut
    leaves a fragment the detector would no longer recognise."""
    from squad.text.secrets import redact

    text = " ".join(str(text)[: _DETAIL_LIMIT * 8].split())
    text = redact(text)[0]
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"
