"""``squad mcp`` as an MCP host launches it: a subprocess spoken to over stdin and stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import Implementation

from squad.app import App
from tests.mcp_server.conftest import audit_lines, error_text, ok, payload

pytestmark = pytest.mark.slow  # every test here starts a process

SQUAD = str(Path(sys.executable).parent / "squad")


def _env(app: App) -> dict[str, str]:
    import os

    settings = app.settings
    return {
        "SQUAD_HOME": str(settings.home),
        "SQUAD_WORKSPACES": str(settings.workspaces),
        "SQUAD_CONFIGS": str(settings.configs),
        "PATH": os.environ.get("PATH", ""),
    }


def _serve(app: App, tmp_path: Path, body: Any, *args: str) -> Any:
    """Launch ``squad mcp ARGS`` as a host would and run ``body(client)`` against it."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=SQUAD, args=["mcp", *args], env=_env(app), cwd=str(tmp_path)
    )
    errlog = (tmp_path / "stderr.txt").open("w")

    async def main() -> Any:
        transport = stdio_client(params, errlog=errlog)
        client = Client(transport, client_info=Implementation(name="codex", version="1"))
        async with client:
            return await body(client)

    try:
        return anyio.run(main)
    finally:
        errlog.close()


def test_squad_mcp_serves_the_tools_over_stdio_and_audits_the_client(
    home: App, tmp_path: Path
) -> None:
    workspace = home.squads.locate("code-review").path

    async def body(client: Any) -> Any:
        tools = {t.name for t in (await client.list_tools()).tools}
        squads = await ok(client, "squads")
        saved = payload(
            await client.call_tool(
                "remember",
                {
                    "squad": "code-review",
                    "agent": "developer",
                    "layer": "project",
                    "text": "The export command validates its input",
                },
            )
        )
        found = await ok(client, "memory_search", query="validates its input")
        resource = await client.read_resource("squad://code-review/manifest")
        return tools, squads, saved, found, resource

    tools, squads, saved, found, resource = _serve(home, tmp_path, body)
    assert {"memory_search", "remember", "run_start"} <= tools
    assert {s["name"] for s in squads["squads"]} == {"code-review", "docs-site"}
    assert saved["where"] == "agents/developer/memory.md#Insights"
    assert [h["where"] for h in found["hits"]] == ["agents/developer/memory.md"]
    assert json.loads(resource.contents[0].text)["squad"] == "code-review"
    assert audit_lines(workspace)[-1]["actor"] == "mcp:codex"
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


def test_squad_mcp_read_only_and_limited_to_a_squad_reaches_no_further(
    home: App, tmp_path: Path
) -> None:
    async def body(client: Any) -> Any:
        tools = {t.name for t in (await client.list_tools()).tools}
        squads = await ok(client, "squads")
        other = await client.call_tool(
            "memory_read", {"squad": "code-review", "agent": "developer"}
        )
        write = await client.call_tool(
            "remember", {"squad": "docs-site", "agent": "writer", "text": "x", "layer": "project"}
        )
        return tools, squads, other, write

    tools, squads, other, write = _serve(
        home, tmp_path, body, "--squad", "docs-site", "--read-only"
    )
    assert not tools & {"remember", "forget", "decision_record", "run_start", "run_approve"}
    assert [s["name"] for s in squads["squads"]] == ["docs-site"]
    assert "no squad 'code-review'" in error_text(other)
    assert "Unknown tool: remember" in error_text(write)


def test_squad_mcp_with_an_unknown_squad_exits_2_before_serving(home: App, tmp_path: Path) -> None:
    done = subprocess.run(
        [SQUAD, "mcp", "--squad", "no-such"],
        env=_env(home),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""  # stdout is the protocol's: nothing else ever goes there
    assert "no-such" in done.stderr and "Traceback" not in done.stderr


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def test_squad_mcp_ends_cleanly_when_the_host_closes_its_stdin(home: App, tmp_path: Path) -> None:
    done = subprocess.run(
        [SQUAD, "mcp"],
        env=_env(home),
        cwd=tmp_path,
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, "stdout must carry protocol messages only"
    answer = json.loads(lines[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "squad"


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_squad_mcp_stops_on_a_signal_without_a_traceback(
    home: App, tmp_path: Path, sig: str
) -> None:
    import signal

    process = subprocess.Popen(
        [SQUAD, "mcp"],
        env=_env(home),
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(INITIALIZE) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # serving now
        process.send_signal(getattr(signal, sig))
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "Traceback" not in err
