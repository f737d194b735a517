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
from squad.model.stub_answers import answer, slow, tool_call
from squad.model.testing import OpenAIStubServer
from squad.runtime.mcp_client.bridge import server_pids
from squad.runtime.mcp_client.journal import bound_answer, journal_path
from squad.runtime.mcp_client.stdio import MAX_MESSAGE_BYTES
from squad.runtime.mcp_client.tools import MAX_RESULT_CHARS
from squad.runtime.runlog import read_events, run_log_path
from squad.settings import Settings
from tests.runtime.test_mcp_tools import (
    PY,
    SERVERS,
    alive,
    create,
    definition,
    events,
    models,
    run_ids,
    start_child,
    tool_results,
)
from tests.support.leaks import assert_nowhere_on_disk
from tests.support.waiting import wait_for


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


@pytest.mark.slow
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
    wait_for(lambda: not alive(helper), "the server's helper to die", timeout=30)
    wait_for(lambda: not processes_naming(result.run_id), "the run's launchers to exit", timeout=30)
    assert server_pids(result.run_id) == {}


@pytest.mark.slow
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

    wait_for(lambda: not alive(server), "the server to die", timeout=30)
    wait_for(lambda: not alive(helper), "the server's helper to die", timeout=30)
    wait_for(lambda: not processes_naming(run_id), "the run's launchers to exit", timeout=30)


# -- huge results ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_multi_megabyte_result_is_cut_before_the_model_and_the_journal_see_it(
    manager: SquadManager, stub: OpenAIStubServer, app: App
) -> None:
    size = 5_000_000
    at = MAX_RESULT_CHARS - 20  # a plain cut would keep the credential's first 20 characters
    servers = f"  big: {{command: {PY}, args: ['{SERVERS / 'big.py'}'], timeout_s: 300}}\n"
    spec, workspace = create(manager, definition(stub.url, servers, "[big]"))
    stub.script(tool_call("big__big", {"size": size, "secret_at": at}), answer("Big."))

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    [seen] = tool_results(stub.bodies[1])
    [entry] = read_events(journal_path(workspace, result.run_id))
    [stored] = [
        m.content
        for m in manager.store.conversation.messages("tooled", "writer")
        if m.role.value == "tool"
    ]
    # Cut where the credential starts: none of it is kept, whole or in part.
    notice = f"\n[... {size - at:,} more characters cut]"
    for text in (seen, entry["text"], stored):
        assert text.startswith("the quick brown fox jumps")
        assert text.endswith(notice) and len(text) == at + len(notice)
        assert "sk-proj-" not in text and "REDACTED" not in text
    assert entry["cut_chars"] == size - at
    [call] = [e for e in events(result) if e["event"] == "tool_call"]
    assert call["tool"] == "big.big" and call["is_error"] is False


@pytest.mark.slow
def test_an_answer_over_the_message_limit_is_refused_at_once_not_read_for_minutes(
    manager: SquadManager, stub: OpenAIStubServer, app: App
) -> None:
    # Read a chunk at a time by joining and splitting the whole line again, an answer this
    # big took minutes: longer than the call's timeout.
    servers = f"  big: {{command: {PY}, args: ['{SERVERS / 'big.py'}'], timeout_s: 60}}\n"
    spec, workspace = create(manager, definition(stub.url, servers, "[big]"))
    stub.script(
        tool_call("big__big", {"size": MAX_MESSAGE_BYTES + 1_000}),
        tool_call("big__big", {"size": 100}, call_id="c2"),
        answer("Too big."),
    )

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    refused, small = tool_results(stub.bodies[2])
    assert refused == (
        f"error from MCP server 'big': the server's answer is over {MAX_MESSAGE_BYTES:,} bytes, "
        "squad's limit; it was not read"
    )
    assert small.startswith("the quick brown fox") and len(small) == 100  # the server goes on
    [noise] = [e for e in events(result) if e["event"] == "mcp_server_noise"]
    assert (noise["server"], noise["lines"], noise["oversized"]) == ("big", 0, 1)
    errlog = (workspace / "logs" / f"run-{result.run_id}.mcp-stderr.log").read_text()
    assert f"a message over {MAX_MESSAGE_BYTES:,} bytes was dropped" in errlog


# -- stdout full of garbage --------------------------------------------------------------------


@pytest.mark.slow
def test_a_server_flooding_stdout_is_counted_in_its_log_and_not_traced_on_squads_stderr(
    settings: Settings, manager: SquadManager, stub: OpenAIStubServer, tmp_path: Path
) -> None:
    servers = f"  flood: {{command: {PY}, args: ['{SERVERS / 'flooding.py'}', --lines, '3000']}}\n"
    _, workspace = create(manager, definition(stub.url, servers, "[flood]"))
    stub.script(tool_call("flood__hello", {}), answer("Flooded."))

    child = start_child(settings, "tooled", tmp_path)
    _, stderr = child.communicate(timeout=300)

    text = stderr.decode(errors="replace")
    assert child.returncode == 0, text[-3000:]
    assert tool_results(stub.bodies[1]) == ["hello from the flood"]
    assert "Traceback" not in text and "JSONRPC" not in text
    assert len(text.splitlines()) <= 1
    [run_id] = run_ids(workspace)
    log = read_events(run_log_path(workspace, run_id))
    [noise] = [e for e in log if e["event"] == "mcp_server_noise"]
    assert (noise["server"], noise["lines"]) == ("flood", 3000)
    errlog = (workspace / "logs" / f"run-{run_id}.mcp-stderr.log").read_text()
    assert "DEBUG log line 1: not JSON at all" in errlog  # a sample, to see what it was
    assert "DEBUG log line 3000" not in errlog  # not all of them
    assert "3,000 lines" in errlog and len(errlog) < 5_000


def test_a_cut_keeps_no_part_of_a_password_crossing_it_and_cutting_again_changes_nothing() -> None:
    text = "x " * 9_990 + "password: Hunter2xyz! " + "y " * 5_000  # the value spans 20,000
    cut, dropped = bound_answer(text)
    assert dropped == len(text) - 19_990 == 10_012
    assert cut == "x " * 9_990 + "password: \n[... 10,012 more characters cut]"
    assert bound_answer(cut) == (cut, 0)
    assert bound_answer("short") == ("short", 0)


@pytest.mark.slow
def test_a_servers_stderr_and_stdout_noise_reach_its_log_with_credentials_redacted(
    manager: SquadManager,
    stub: OpenAIStubServer,
    app: App,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A server that prints the token it was configured with: on stderr (copied to the run's
    # MCP log line by line) and in a stdout line that is no message (sampled into that log).
    token = "ghp_" + "Wq4Xe8Rt2Yu6Io0Pa3Sd7Fg1Hj5Kl9Zx2Cv4B"
    monkeypatch.setenv("FLOOD_SAYS", token)
    servers = (
        f"  flood: {{command: {PY}, args: ['{SERVERS / 'flooding.py'}', --lines, '4'], "
        "env: [FLOOD_SAYS]}\n"
    )
    spec, workspace = create(manager, definition(stub.url, servers, "[flood]"))
    stub.script(tool_call("flood__hello", {}), answer("Flooded."))

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    errlog = (workspace / "logs" / f"run-{result.run_id}.mcp-stderr.log").read_text()
    assert "flooding: starting with api_token=[REDACTED:" in errlog
    assert "(token=[REDACTED:github_token])" in errlog
    assert "Authorization: Bearer [REDACTED:" in errlog  # the last line, without its newline
    assert "x" * 4096 + " [... 95,904 more bytes of this line cut]" in errlog
    assert_nowhere_on_disk(token, tmp_path)
