"""The telemetry backed by the OpenTelemetry SDK (the ``otel`` extra): importing this module
imports OpenTelemetry, so :func:`squad.telemetry.open_telemetry` does only when tracing is on.

It keeps a ``TracerProvider`` of its own rather than setting the process-wide one, so an
application embedding squad keeps its tracing as it is, and tests run side by side.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind as OtelSpanKind
from opentelemetry.trace import Status, StatusCode

from squad.telemetry._spans import Attributes, AttributeValue, Span, SpanKind, Telemetry
from squad.text.secrets import redact, redact_fields

__all__ = ["OtelSpan", "OtelTelemetry", "otlp_exporter"]

DESCRIPTION_CHARS = 500
"""An error status's description is cut to this many characters."""
_KINDS = {"internal": OtelSpanKind.INTERNAL, "client": OtelSpanKind.CLIENT}


def otlp_exporter(traces_url: str) -> SpanExporter:
    """The OTLP/HTTP (protobuf) exporter posting to ``traces_url``; headers, timeout and TLS
    files come from the standard ``OTEL_EXPORTER_OTLP_*`` variables, as the SDK reads them."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=traces_url)


class OtelSpan(Span):
    """A span of the OpenTelemetry SDK."""

    __slots__ = ("_capture", "otel")

    def __init__(self, otel: trace.Span, *, capture_content: bool) -> None:
        self.otel = otel
        self._capture = capture_content

    @property
    def recording(self) -> bool:
        return self.otel.is_recording()

    def set(self, key: str, value: AttributeValue | None) -> None:
        if value is not None:
            self.otel.set_attribute(key, value)

    def content(self, key: str, value: Callable[[], object]) -> None:
        if not self._capture:
            return
        made = value()
        if isinstance(made, str):
            self.otel.set_attribute(key, redact(made)[0])
        else:
            self.otel.set_attribute(
                key, json.dumps(redact_fields(made), ensure_ascii=False, default=str)
            )

    def fail(self, error_type: str, description: str = "") -> None:
        text = redact(description)[0][:DESCRIPTION_CHARS] if description else ""
        self.otel.set_attribute("error.type", error_type)
        self.otel.set_status(Status(StatusCode.ERROR, text or None))
        self.otel.add_event("exception", {"exception.type": error_type, "exception.message": text})


class OtelTelemetry(Telemetry):
    """Spans recorded by the SDK and handed to ``exporter``: in batches from a background
    thread (``batch``), or one by one as each ends (tests)."""

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        capture_content: bool = False,
        service_name: str = "squad",
        batch: bool = True,
    ) -> None:
        release = _release()
        self.capture_content = capture_content
        self._provider = TracerProvider(
            resource=Resource.create({"service.name": service_name, "service.version": release})
        )
        processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
        self._provider.add_span_processor(processor)
        self._tracer = self._provider.get_tracer("squad", release)

    @property
    def enabled(self) -> bool:
        return True

    @contextmanager
    def span(
        self,
        name: str,
        attributes: Attributes | None = None,
        *,
        parent: Span | None = None,
        kind: SpanKind = "internal",
    ) -> Iterator[Span]:
        context = trace.set_span_in_context(parent.otel) if isinstance(parent, OtelSpan) else None
        given = {k: v for k, v in (attributes or {}).items() if v is not None}
        with self._tracer.start_as_current_span(
            name,
            context=context,
            kind=_KINDS[kind],
            attributes=given,
            record_exception=False,  # its stack trace and message are not redacted
            set_status_on_exception=False,
        ) as otel:
            span = OtelSpan(otel, capture_content=self.capture_content)
            try:
                yield span
            except BaseException as exc:
                span.fail(_error_type(exc), str(exc))
                raise

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Send the queued spans and stop, waiting ``timeout_s`` at most. The SDK takes no
        timeout here and waits as long as the exporter retries (10 s by default), which would
        hold the process at exit while the receiver is down; spans unsent by then are lost."""
        stopping = threading.Thread(
            target=self._provider.shutdown, name="squad-telemetry-shutdown", daemon=True
        )
        stopping.start()
        stopping.join(timeout_s)


def _error_type(exc: BaseException) -> str:
    """``error.type`` of an exception: its class, qualified unless it is a builtin."""
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def _release() -> str:
    try:
        return version("squad")
    except PackageNotFoundError:
        return "unknown"
