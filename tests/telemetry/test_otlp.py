"""``squad run`` in a subprocess sends its spans to a real OTLP/HTTP receiver on loopback, and
without an endpoint loads nothing of OpenTelemetry's exporting side."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.conftest import BASIC_YAML, REPO

SQUAD = Path(sys.executable).parent / "squad"
pytestmark = pytest.mark.slow


class Receiver:
    """An OTLP/HTTP trace receiver: POST /v1/traces with a protobuf body, as a collector."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                received.paths.append(self.path)
                received.requests.append(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def spans(self) -> list[tuple[str, dict[str, Any], Any]]:
        """(service name, attributes, span) of every span received."""
        found = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = _values(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.append((resource["service.name"], _values(span.attributes), span))
        return found


def _values(attributes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in attributes:
        kind = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, kind) if kind else None
    return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def _squad(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SQUAD_", "OTEL_"))}
    return subprocess.run(
        [str(SQUAD), *args],
        env={
            **base,
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
            **env,
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_squad_run_sends_its_spans_to_the_otlp_endpoint(tmp_path: Path, receiver: Receiver) -> None:
    squad = tmp_path / "demo.yaml"
    squad.write_text(BASIC_YAML)
    result = _squad(tmp_path, "run", str(squad), "--json", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    assert result.returncode == 0, result.stderr

    assert set(receiver.paths) == {"/v1/traces"}
    spans = receiver.spans()
    assert {service for service, _, _ in spans} == {"squad"}
    by_name = {span.name: (attrs, span) for _, attrs, span in spans}
    assert set(by_name) == {
        "invoke_workflow demo",
        "invoke_agent planner",
        "invoke_agent writer",
        "chat offline",
    }
    workflow_attrs, workflow = by_name["invoke_workflow demo"]
    assert workflow_attrs["squad.run.status"] == "succeeded"
    assert workflow_attrs["squad.trigger"] == "manual"
    for name in ("invoke_agent planner", "invoke_agent writer"):
        attrs, turn = by_name[name]
        assert turn.parent_span_id == workflow.span_id
        assert turn.trace_id == workflow.trace_id
        assert attrs["gen_ai.usage.input_tokens"] > 0
    chats = [(attrs, span) for _, attrs, span in spans if span.name == "chat offline"]
    turn_ids = {by_name[n][1].span_id for n in ("invoke_agent planner", "invoke_agent writer")}
    assert len(chats) == 2 and {span.parent_span_id for _, span in chats} == turn_ids
    assert all(attrs["gen_ai.provider.name"] == "offline" for attrs, _ in chats)


PROBE = """\
import sys
from squad.cli import main

sys.argv = ["squad", "run", sys.argv[1]]
try:
    main()
except SystemExit as done:
    assert not done.code, f"squad run exited {done.code}"
loaded = [m for m in ("squad.telemetry.otel", "opentelemetry.exporter") if m in sys.modules]
print(loaded, file=sys.stderr)
"""


def test_a_run_without_an_endpoint_loads_no_exporter(tmp_path: Path) -> None:
    """(langgraph's langsmith imports the OpenTelemetry API, and the SDK when installed, on
    its own: what squad adds, the exporter and its SDK wiring, stays out.)"""
    squad = tmp_path / "demo.yaml"
    squad.write_text(BASIC_YAML)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SQUAD_", "OTEL_"))}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(squad)],
        env={
            **env,
            "SQUAD_HOME": str(tmp_path / "h"),
            "SQUAD_CONFIGS": str(tmp_path / "c"),
            "SQUAD_WORKSPACES": str(tmp_path / "w"),
            "PYTHONPATH": str(REPO),
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[]"


HELP_PROBE = """\
import sys
from squad.cli import main

sys.argv = ["squad", "--help"]
try:
    main()
except SystemExit:
    pass
print([m for m in sys.modules if m.startswith("opentelemetry")], file=sys.stderr)
"""


def test_help_loads_no_opentelemetry_even_with_an_endpoint_set(
    tmp_path: Path, receiver: Receiver
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SQUAD_", "OTEL_"))}
    result = subprocess.run(
        [sys.executable, "-c", HELP_PROBE],
        env={**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "SQUAD_HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[]"
    assert receiver.requests == []
