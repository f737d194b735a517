"""``/mcp`` on the dashboard's real uvicorn server: streamable HTTP behind the API's token,
in the current protocol and in the ``initialize`` handshake most hosts still speak; runs
started and approved through it go to the server's run queue."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp_types import Implementation

from squad.app import App
from squad.web.control import LocalControl
from squad.web.server import WebServer
from squad.web.tokens import load_or_create_token
from tests.mcp_server.conftest import audit_lines, call, error_text, ok, payload
from tests.support.waiting import wait_for
from tests.web.conftest import example_settings, run_examples


@dataclass
class Endpoint:
    url: str
    token: str
    app: App


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    from squad.mcp.http import mcp_endpoint

    root = tmp_path_factory.mktemp("mcp-http")
    app = App.open(example_settings(root))
    run_examples(app)
    control = LocalControl(app)
    server = WebServer(app, control, host="127.0.0.1", port=0, extensions=[mcp_endpoint()])
    bound = server.start()
    try:
        yield Endpoint(f"{bound.url}mcp", load_or_create_token(app.settings.home), app)
    finally:
        server.stop()
        control.close(30)
        app.close()


def _call(endpoint: Endpoint, body: Any, *, mode: str = "auto", token: str | None = None) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {endpoint.token if token is None else token}"}

    async def main() -> Any:
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(endpoint.url, http_client=http)
            client = Client(
                transport, mode=mode, client_info=Implementation(name="cursor", version="1")
            )
            async with client:
                return await body(client)

    return anyio.run(main)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_mcp_over_http_serves_the_tools_and_audits_the_client(
    endpoint: Endpoint, mode: str
) -> None:
    workspace = endpoint.app.squads.locate("docs-site").path

    async def body(client: Any) -> Any:
        tools = {t.name for t in (await client.list_tools()).tools}
        squads = await ok(client, "squads")
        saved = payload(
            await client.call_tool(
                "remember",
                {
                    "squad": "docs-site",
                    "agent": "writer",
                    "layer": "project",
                    "text": f"Guides are tested in CI ({mode})",
                },
            )
        )
        listed = (await client.list_resources()).resources
        return tools, squads, saved, listed

    tools, squads, saved, listed = _call(endpoint, body, mode=mode)
    assert {"memory_search", "run_start", "run_approve"} <= tools
    assert {s["name"] for s in squads["squads"]} == {"code-review", "docs-site"}
    assert saved["layer"] == "project"
    assert (
        f"Guides are tested in CI ({mode})" in (workspace / "agents/writer/memory.md").read_text()
    )
    assert any(str(r.uri) == "squad://docs-site/manifest" for r in listed)
    assert audit_lines(workspace)[-1]["actor"] == "mcp:cursor"


@pytest.mark.parametrize("token", ["", "wrong-token"])
def test_mcp_over_http_needs_the_token(endpoint: Endpoint, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = httpx.post(
        endpoint.url,
        headers={**headers, "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        timeout=30,
    )
    assert answer.status_code == 401
    assert "tools" not in answer.text


def test_mcp_over_http_refuses_a_foreign_host_header(endpoint: Endpoint) -> None:
    answer = httpx.post(
        endpoint.url,
        headers={"Authorization": f"Bearer {endpoint.token}", "Host": "evil.example"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        timeout=30,
    )
    assert answer.status_code in (400, 403, 421)


def test_a_run_started_over_mcp_runs_pauses_and_goes_on_when_approved(
    endpoint: Endpoint,
) -> None:
    from squad.store.records import RunStatus

    store = endpoint.app.store
    before = {r.id for r in store.list_runs("docs-site")}

    async def start(client: Any) -> Any:
        return payload(await call(client, "run_start", squad="docs-site", goal="A page on MCP"))

    started = _call(endpoint, start)
    assert started["accepted"] is True

    def paused() -> Any:
        fresh = [r for r in store.list_runs("docs-site") if r.id not in before]
        return fresh[0] if fresh and fresh[0].status is RunStatus.AWAITING_APPROVAL else None

    run = wait_for(paused, "the new run to pause at its approval gate")
    assert run.trigger == "mcp:cursor" and run.goal == "A page on MCP"

    async def answer(client: Any) -> Any:
        status = await ok(client, "run_status", run_id=run.id)
        wrong = await client.call_tool(
            "run_approve", {"run_id": run.id, "task": "draft", "approved": True}
        )
        bare_no = await client.call_tool(
            "run_approve", {"run_id": run.id, "task": status["awaiting"], "approved": False}
        )
        yes = payload(
            await client.call_tool(
                "run_approve", {"run_id": run.id, "task": status["awaiting"], "approved": True}
            )
        )
        return status, wrong, bare_no, yes

    status, wrong, bare_no, yes = _call(endpoint, answer)
    assert status["awaiting"] == "publish"
    assert "does not wait on task 'draft'" in error_text(wrong)
    assert "a rejection needs a reason" in error_text(bare_no)
    assert yes["approved"] is True
    done = wait_for(
        lambda: (r := store.get_run(run.id)) and r.status is RunStatus.SUCCEEDED and r,
        "the approved run to finish",
    )
    assert done.status is RunStatus.SUCCEEDED


def test_the_daemon_settings_can_turn_the_mcp_endpoint_off(tmp_path: Path) -> None:
    from squad.settings import Settings

    settings = Settings.load({"SQUAD_HOME": str(tmp_path / "home")}, cwd=tmp_path)
    assert settings.daemon.http.mcp is True
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "settings.yaml").write_text("daemon:\n  http:\n    mcp: false\n")
    off = Settings.load({"SQUAD_HOME": str(tmp_path / "home")}, cwd=tmp_path)
    assert off.daemon.http.mcp is False


def _initialize(url: str, token: str) -> httpx.Response:
    """Open a session the way every client does: an ``initialize`` with no session id."""
    return httpx.post(
        url,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "1"},
            },
        },
        timeout=30,
    )


def _ping(url: str, token: str, session: str) -> int:
    """The status of a request in ``session``: 404 once the server has forgotten it."""
    return httpx.post(
        url,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": "2025-06-18",
        },
        json={"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {}},
        timeout=30,
    ).status_code


def test_idle_mcp_sessions_expire_and_their_number_is_capped(tmp_path: Path) -> None:
    """Sessions a client opens and leaves (300 of them grew the daemon 7 MB, issue 30) end
    after the idle timeout, and past the cap a new one is refused (503) rather than kept:
    here a 2 s timeout and a cap of 3, on a real server."""
    from squad.mcp.http import mcp_endpoint

    app = App.open(example_settings(tmp_path))
    control = LocalControl(app)
    extension = mcp_endpoint(session_idle_timeout=2.0, max_sessions=3)
    server = WebServer(app, control, host="127.0.0.1", port=0, extensions=[extension])
    bound = server.start()
    url, token = f"{bound.url}mcp", load_or_create_token(app.settings.home)
    try:
        opened = [_initialize(url, token) for _ in range(3)]
        assert [r.status_code for r in opened] == [200, 200, 200]
        sessions = [r.headers["mcp-session-id"] for r in opened]
        assert [_ping(url, token, s) for s in sessions] == [200, 200, 200]
        refused = _initialize(url, token)
        assert refused.status_code == 503
        assert "Too many open sessions" in refused.text
        # Asking for a new session touches none of the old ones (a ping would keep them alive)
        again = wait_for(
            lambda: (r := _initialize(url, token)).status_code == 200 and r,
            "room for a new session once the idle ones expire",
        )
        assert again.headers["mcp-session-id"] not in sessions
        assert [_ping(url, token, s) for s in sessions] == [404, 404, 404]
    finally:
        server.stop()
        control.close(30)
        app.close()
