"""MCP servers that misbehave as processes: helpers that outlive them, huge results, stdout
full of garbage. Real server processes over stdio, the OpenAI stub server as the model.

Helpers and fixtures come from ``test_mcp_tools``; the servers are in ``mcp_servers/``.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from squad.app import App
from squad.manager import SquadManager
from squad.model.testing import OpenAIStubServer, answer, slow, tool_call
from squad.runtime.mcp_bridge import server_pids
from squad.settings import Settings
from tests.runtime.test_mcp_tools import (
    PY,
    SERVERS,
    alive,
    create,
    definition,
    models,
    run_ids,
    start_child,
    tool_results,
    wait_for,
)


@pytest.fixture
def manager(app: App) -> SquadManager:
    return app.squads


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test saw; any still alive at its end are killed, pass or fail."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def processes_naming(text: str) -> list[int]:
    """Live processes whose command line mentions ``text`` (a run id: its launchers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


# -- a server's own children -------------------------------------------------------------------


def spawning(pidfile: Path) -> str:
    return f"  spawn: {{command: {PY}, args: ['{SERVERS / 'spawning.py'}', '{pidfile}']}}\n"


def test_a_servers_own_children_are_stopped_when_the_run_ends(
    manager: SquadManager,
    stub: OpenAIStubServer,
    app: App,
    tmp_path: Path,
    leftovers: list[int],
) -> None:
    pidfile = tmp_path / "helper.pid"
    spec, workspace = create(manager, definition(stub.url, spawning(pidfile), "[spawn]"))
    stub.script(tool_call("spawn__ping", {}), answer("Pinged."))

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert tool_results(stub.bodies[1]) == ["pong"]
    helper = int(pidfile.read_text())
    leftovers.append(helper)
    # The helper ignores SIGTERM: it takes the SIGKILL that follows a grace period.
    wait_for(lambda: not alive(helper), "the server's helper to die", 30)
    wait_for(lambda: not processes_naming(result.run_id), "the run's launchers to exit", 30)
    assert server_pids(result.run_id) == {}


def test_sigkill_of_the_squad_process_kills_the_servers_own_children_too(
    settings: Settings,
    manager: SquadManager,
    stub: OpenAIStubServer,
    tmp_path: Path,
    leftovers: list[int],
) -> None:
    pidfile = tmp_path / "helper.pid"
    _, workspace = create(manager, definition(stub.url, spawning(pidfile), "[spawn]"))
    stub.script(slow(120, answer("too late")))
    child = start_child(settings, "tooled", tmp_path)
    try:
        wait_for(lambda: bool(stub.requests) or child.poll() is not None, "the first model call")
        assert child.poll() is None, child.communicate()[1].decode()
        [run_id] = run_ids(workspace)
        server = server_pids(run_id)["spawn"]
        helper = int(pidfile.read_text())
        leftovers += [server, helper]
        assert alive(server) and alive(helper)
    finally:
        child.kill()  # SIGKILL: no handler, no finally, no close
        _, stderr = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL, stderr.decode()

    wait_for(lambda: not alive(server), "the server to die", 30)
    wait_for(lambda: not alive(helper), "the server's helper to die", 30)
    wait_for(lambda: not processes_naming(run_id), "the run's launchers to exit", 30)
