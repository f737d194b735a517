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
    env = {
        "SQUAD_HOME": str(settings.home),
        "SQUAD_WORKSPACES": str(settings.workspaces),
        "SQUAD_CONFIGS": str(settings.configs),
        "PATH": os.environ.get("PATH", ""),
    }
    if os.environ.get("PYTHONPATH"):  # a worktree's squad, not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


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


def _gone(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_runs_asked_for_in_a_short_session_go_on_after_the_host_disconnects(
    home: App, tmp_path: Path
) -> None:
    """A host that calls run_start (and run_approve) and ends the session at once: each run
    still completes, in a process of its own, and the tool said which run it was."""
    import re
    import time

    from squad.store.records import RunStatus

    store = home.store
    (paused,) = [r for r in store.list_runs("docs-site") if r.status.value == "awaiting_approval"]
    before = {r.id for r in store.list_runs("code-review")}

    async def body(client: Any) -> Any:
        started = payload(await client.call_tool("run_start", {"squad": "code-review"}))
        answered = payload(
            await client.call_tool(
                "run_approve", {"run_id": paused.id, "task": "publish", "approved": True}
            )
        )
        return started, answered  # and the session ends here, runs under way

    started, answered = _serve(home, tmp_path, body)
    new = [r for r in store.list_runs("code-review") if r.id not in before]
    assert [r.id for r in new] == [started["run_id"]] and started["accepted"] is True
    assert "goes on after this MCP session ends" in started["message"]
    assert new[0].trigger == "mcp:codex"
    found = [re.search(r"process (\d+)", m) for m in (started["message"], answered["message"])]
    pids = [int(match.group(1)) for match in found if match is not None]
    assert len(pids) == 2, (started, answered)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ended = [store.get_run(started["run_id"]), store.get_run(paused.id)]
        if all(r is not None and r.status.is_terminal for r in ended) and all(map(_gone, pids)):
            break
        time.sleep(0.2)
    ran, approved = store.get_run(started["run_id"]), store.get_run(paused.id)
    assert ran is not None and ran.status is RunStatus.SUCCEEDED, ran
    assert approved is not None and approved.status is RunStatus.SUCCEEDED, approved
    assert all(map(_gone, pids)), "the run processes did not end"
    log = (home.settings.home / "mcp-runs.log").read_text()
    assert f"run {ran.id}: succeeded" in log and f"run {paused.id}: succeeded" in log


def test_a_run_that_cannot_start_is_a_tool_error_quoting_why(home: App) -> None:
    """The squad's run lock is held (a run elsewhere): the process asked to run it ends at
    once, and the tool says so instead of "accepted"."""
    from squad.daemon.runqueue import RunRequest
    from squad.errors import UsageError
    from squad.mcp.detached import ProcessControl
    from squad.runtime.runlock import run_slot

    control = ProcessControl(home, wait_s=60)
    before = [r.id for r in home.store.list_runs("code-review")]
    held = run_slot(home.settings.locks_dir, "code-review", "elsewhere")
    with held, pytest.raises(UsageError) as refused:
        control.launch(RunRequest("code-review", "mcp:test"))
    text = str(refused.value)
    assert text.startswith("the run did not start: error: squad 'code-review' is already running")
    assert "run elsewhere" in text and str(control.log) in text
    assert [r.id for r in home.store.list_runs("code-review")] == before
