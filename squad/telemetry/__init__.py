"""Traces of squad's work for an OpenTelemetry backend, through one seam that is off by default.

Everything that traces takes a :class:`Telemetry` (the app makes one, ``App.telemetry``) and
opens spans with :meth:`Telemetry.span`. The base class is the telemetry that is off: its spans
record nothing, cost next to nothing, and nothing of OpenTelemetry is imported. With an OTLP
endpoint configured and the ``otel`` extra installed, :func:`open_telemetry` returns one backed
by the OpenTelemetry SDK: its own ``TracerProvider`` (the global one is left alone), a batch
processor and the OTLP/HTTP exporter, flushed by :meth:`Telemetry.shutdown`. To send spans
to an exporter of your own (the SDK's in-memory one, in tests), build
:class:`squad.telemetry.otel.OtelTelemetry` and hand it to ``App.open(..., telemetry=)``.

Spans name their parent explicitly (``parent=``): work moves between threads (LangGraph runs
the tasks of a step on its workers) and a span must not depend on which thread it opens on.
Prompt and reply text enters a span only through :meth:`Span.content`, which does nothing
unless the user opted in and redacts credentials when they did.
"""

from __future__ import annotations

from squad.telemetry._spans import (
    NO_SPAN,
    NO_TELEMETRY,
    Attributes,
    AttributeValue,
    Span,
    SpanKind,
    Telemetry,
    open_telemetry,
)

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
