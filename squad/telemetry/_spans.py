"""The interface of every telemetry, the telemetry that is off, and the one factory.

Nothing here imports OpenTelemetry: :func:`open_telemetry` imports :mod:`.otel` only when an
endpoint is configured, so a squad that traces nothing pays for nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from types import TracebackType

__all__ = [
    "NO_SPAN",
    "NO_TELEMETRY",
    "AttributeValue",
    "Attributes",
    "Span",
    "SpanKind",
    "Telemetry",
    "open_telemetry",
]

AttributeValue: TypeAlias = (
    str | bool | int | float | Sequence[str] | Sequence[bool] | Sequence[int] | Sequence[float]
)
"""What an OpenTelemetry attribute may hold."""
Attributes: TypeAlias = Mapping[str, AttributeValue | None]
"""Attributes by name; a ``None`` value leaves its attribute unset."""
SpanKind = Literal["internal", "client"]
"""``client`` for a call to another service (a model provider), ``internal`` for the rest."""


class Span:
    """One traced operation, open for attributes while its ``with`` block runs.

    This base is every span of the telemetry that is off: it records nothing.
    """

    __slots__ = ()

    @property
    def recording(self) -> bool:
        """Whether anything set on this span goes anywhere."""
        return False

    def set(self, key: str, value: AttributeValue | None) -> None:
        """Set attribute ``key``; ``None`` leaves it unset."""

    def update(self, attributes: Attributes) -> None:
        """Set each of ``attributes`` (``None`` values are left unset)."""
        for key, value in attributes.items():
            self.set(key, value)

    def content(self, key: str, value: Callable[[], object]) -> None:
        """Set ``key`` to prompt or reply content, only if the user opted in (``capture_content``).

        ``value`` makes it (a string, or data sent as JSON) and is not called otherwise; every
        string in it is redacted of credentials first.
        """

    def fail(self, error_type: str, description: str = "") -> None:
        """Mark the operation failed: ``error.type`` and an error status (``description``,
        redacted and cut short). An exception leaving the span's block does this by itself."""


class _NoSpanContext(AbstractContextManager[Span]):
    __slots__ = ()

    def __enter__(self) -> Span:
        return NO_SPAN

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class Telemetry:
    """Where spans go. This base is the telemetry that is off: spans cost one method call."""

    capture_content: bool = False
    """Whether :meth:`Span.content` puts prompt and reply text in the spans."""

    @property
    def enabled(self) -> bool:
        """Whether spans are recorded and sent."""
        return False

    def span(
        self,
        name: str,
        attributes: Attributes | None = None,
        *,
        parent: Span | None = None,
        kind: SpanKind = "internal",
    ) -> AbstractContextManager[Span]:
        """A span called ``name`` for the ``with`` block, a child of ``parent``.

        Without ``parent`` it is a child of the thread's current span (the innermost open
        ``with`` of this thread), or a root. Pass the parent whenever the work may have moved
        to another thread. An exception leaving the block marks the span failed.
        """
        return _NO_SPAN_CONTEXT

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Send the spans still queued (waiting up to ``timeout_s``), then stop sending."""


NO_SPAN = Span()
"""The span of the telemetry that is off."""
NO_TELEMETRY = Telemetry()
"""The telemetry that is off (the default of everything that traces)."""
_NO_SPAN_CONTEXT = _NoSpanContext()


def open_telemetry(
    traces_url: str | None,
    *,
    capture_content: bool = False,
    service_name: str = "squad",
) -> Telemetry:
    """The telemetry that sends spans to the OTLP/HTTP ``traces_url``; off when it is None.

    When the ``otel`` extra is not installed, spans cannot be sent: a warning says how to
    install it and the telemetry is off.
    """
    if traces_url is None:
        return NO_TELEMETRY
    try:
        from squad.telemetry.otel import OtelTelemetry, otlp_exporter
    except ImportError as exc:
        warnings.warn(
            f"traces are configured to go to {traces_url!r}, but OpenTelemetry is not "
            f"installed ({exc.name or exc}): no spans are sent; pip install 'squad[otel]'",
            RuntimeWarning,
            stacklevel=2,
        )
        return NO_TELEMETRY
    return OtelTelemetry(
        otlp_exporter(traces_url), capture_content=capture_content, service_name=service_name
    )
