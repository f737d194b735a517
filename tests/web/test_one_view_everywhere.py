"""One run, shown by the three front ends: ``squad runs status --json``, the HTTP API and
MCP's ``run_status`` give the same keys and values for it, because each answers the same
view (:mod:`squad.views`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from squad.app import App
from squad.views import RunDetail, RunPage, RunStatus
from tests.support.web import serve
from tests.web.conftest import example_settings


def _cli_json(app: App, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    """The CLI, run in this process on ``app``'s folders and database."""
    from typer.testing import CliRunner

    from squad.cli.app import app as cli

    settings = app.settings
    for name, value in (
        ("SQUAD_HOME", settings.home),
        ("SQUAD_WORKSPACES", settings.workspaces),
        ("SQUAD_CONFIGS", settings.configs),
    ):
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("SQUAD_DATABASE_URL", raising=False)
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _api_json(app: App, path: str) -> Any:
    """``path`` of the HTTP API, over a real server on loopback."""
    with serve(app) as site:
        answer = site.get(path)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _mcp_json(app: App, tool: str, **arguments: Any) -> Any:
    """A tool's answer from the MCP server, through the SDK's in-memory client."""
    from mcp import Client

    from squad.mcp.server import build_server

    async def main() -> Any:
        async with Client(build_server(app)) as client:
            return await client.call_tool(tool, arguments)

    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_a_run_has_the_same_keys_and_values_in_the_cli_the_api_and_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from squad.spec.loader import squad_from_file

    with App.open(example_settings(tmp_path)) as app:
        path = app.settings.configs / "squads" / "code-review.yaml"
        spec = squad_from_file(path)
        workspace = app.squads.create(spec, source=path).path
        run_id = app.runner().run(spec, workspace).run_id

        api = _api_json(app, f"/api/v1/runs/{run_id}")
        mcp = _mcp_json(app, "run_status", run_id=run_id)
    cli = _cli_json(app, monkeypatch, "runs", "status", run_id)

    assert set(cli) == set(RunStatus.model_fields)
    assert mcp == cli  # the same view: keys, values, task outputs redacted alike
    assert set(api) == set(RunPage.model_fields)
    shared = set(api) & set(cli)
    assert shared == set(RunDetail.model_fields)  # the run itself; the rest is each one's
    assert {key: api[key] for key in shared} == {key: cli[key] for key in shared}
    assert cli["id"] == run_id and cli["status"] == "succeeded"
    assert cli["tasks"] and all(task["output"] for task in cli["tasks"])
    assert cli["commit"] and cli["changes"]  # the history part, which the API has apart
