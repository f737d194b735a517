"""A telemetry whose spans land in the SDK's in-memory exporter, and helpers to read them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from squad.app import App
from squad.settings import Settings
from squad.telemetry.otel import OtelTelemetry


@dataclass
class Traced:
    """An OpenTelemetry-backed telemetry and what it recorded."""

    telemetry: OtelTelemetry
    exporter: InMemorySpanExporter

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans if (s.name or "").startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        [span] = self.named(prefix)
        return span

    def children(self, parent: ReadableSpan, prefix: str = "") -> list[ReadableSpan]:
        assert parent.context is not None
        return [
            s
            for s in self.named(prefix)
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def every_value(spans: list[ReadableSpan]) -> str:
    """All attribute values, event attributes and status descriptions of ``spans``, as text."""
    parts: list[str] = []
    for span in spans:
        parts += [str(v) for v in (span.attributes or {}).values()]
        for event in span.events:
            parts += [str(v) for v in (event.attributes or {}).values()]
        parts.append(span.status.description or "")
    return "\n".join(parts)


def _traced(capture_content: bool) -> Iterator[Traced]:
    exporter = InMemorySpanExporter()
    telemetry = OtelTelemetry(exporter, capture_content=capture_content, batch=False)
    yield Traced(telemetry, exporter)
    telemetry.shutdown()


@pytest.fixture
def traced() -> Iterator[Traced]:
    yield from _traced(capture_content=False)


@pytest.fixture
def traced_content() -> Iterator[Traced]:
    yield from _traced(capture_content=True)


@pytest.fixture
def traced_app(settings: Settings, traced: Traced) -> Iterator[App]:
    with App.open(settings, telemetry=traced.telemetry) as app:
        yield app
