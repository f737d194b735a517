"""Where traces go: ``telemetry:`` in settings.yaml, with the standard ``OTEL_*`` variables
winning over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.errors import ConfigError
from squad.settings import Settings


def load(tmp_path: Path, yaml: str = "", **env: str) -> Settings:
    if yaml:
        (tmp_path / "configs").mkdir(exist_ok=True)
        (tmp_path / "configs" / "settings.yaml").write_text(yaml)
    return Settings.load({"SQUAD_HOME": str(tmp_path / "h"), **env}, cwd=tmp_path)


def test_tracing_is_off_without_an_endpoint(tmp_path: Path) -> None:
    telemetry = load(tmp_path).telemetry
    assert telemetry.traces_url is None
    assert (telemetry.capture_content, telemetry.service_name) == (False, "squad")


def test_the_settings_file_names_the_receiver_and_the_opt_in(tmp_path: Path) -> None:
    telemetry = load(
        tmp_path,
        "telemetry: {otlp_endpoint: 'http://collector:4318/', capture_content: true,"
        " service_name: team-bots}\n",
    ).telemetry
    assert telemetry.traces_url == "http://collector:4318/v1/traces"
    assert (telemetry.capture_content, telemetry.service_name) == (True, "team-bots")


def test_the_otel_variables_win_over_the_file(tmp_path: Path) -> None:
    yaml = "telemetry: {otlp_traces_endpoint: 'http://file:4318/t', capture_content: true}\n"
    telemetry = load(
        tmp_path,
        yaml,
        OTEL_EXPORTER_OTLP_ENDPOINT="http://env:4318",
        OTEL_SERVICE_NAME="nightly",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="false",
    ).telemetry
    assert telemetry.traces_url == "http://env:4318/v1/traces"
    assert (telemetry.capture_content, telemetry.service_name) == (False, "nightly")
    traces = load(
        tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT="http://env:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://traces:9000/in",
    ).telemetry
    assert traces.traces_url == "http://traces:9000/in"


def test_otel_sdk_disabled_turns_tracing_off(tmp_path: Path) -> None:
    telemetry = load(
        tmp_path,
        "telemetry: {otlp_endpoint: 'http://collector:4318'}\n",
        OTEL_EXPORTER_OTLP_ENDPOINT="http://env:4318",
        OTEL_SDK_DISABLED="true",
    ).telemetry
    assert telemetry.traces_url is None


def test_an_endpoint_that_is_not_an_http_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as env_error:
        load(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT="collector:4317")
    assert "OTEL_EXPORTER_OTLP_ENDPOINT='collector:4317' is not an http(s) URL" in str(
        env_error.value
    )
    with pytest.raises(ConfigError) as file_error:
        load(tmp_path, "telemetry: {otlp_endpoint: 'grpc://collector:4317'}\n")
    assert "'grpc://collector:4317' is not an http(s) URL" in str(file_error.value)
    assert "settings.yaml:1" in str(file_error.value)
