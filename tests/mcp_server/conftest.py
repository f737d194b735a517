"""The example squads run once in a squad home of their own, and an MCP client on it: in
memory (the SDK's ``Client`` on the server object) for most tests; ``test_stdio`` and
``test_http`` reach the same server over its real transports."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from squad.app import App
from squad.mcp.server import build_server
from squad.mcp.tools import Scope
from tests.web.conftest import example_settings, run_examples


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The example squads' home, run once (docs-site pauses at its approval gate)."""
    root = tmp_path_factory.mktemp("mcp")
    app = App.open(example_settings(root))
    run_examples(app)
    yield app
    app.close()


Session = Callable[..., Coroutine[Any, Any, Any]]


def with_client(app: App, body: Callable[[Any], Coroutine[Any, Any, Any]], **scope: Any) -> Any:
    """Run ``body(client)`` with an in-memory SDK client on the app's server."""
    from mcp import Client

    server = build_server(app, scope=Scope(**scope))

    async def main() -> Any:
        async with Client(server) as client:
            return await body(client)

    return anyio.run(main)


def payload(result: Any) -> dict[str, Any]:
    """The JSON a tool answered (it must not be an error)."""
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert isinstance(data, dict)
    return data


def error_text(result: Any) -> str:
    assert result.is_error, result.content[0].text
    return str(result.content[0].text)


def audit_lines(workspace: Path) -> list[dict[str, Any]]:
    path = workspace / "logs" / "memory-audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def call(client: Any, tool: str, **arguments: Any) -> Any:
    """The client's answer to one tool call."""
    return await client.call_tool(tool, arguments)


async def ok(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    """The JSON of a tool call that must succeed."""
    return payload(await client.call_tool(tool, arguments))
