"""Agents using MCP tools in real runs: real servers over stdio and streamable HTTP.

The servers are the third-party ``mcp-server-time`` and ``mcp-server-git`` from PyPI, small
misbehaving ones in ``mcp_servers/`` (crashing, hanging, malformed, counting), and an
``MCPServer`` served by uvicorn on 127.0.0.1; the model is the OpenAI stub server scripting
the tool calls. Nothing reaches the network, and no server process outlives its run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.manager import SquadManager
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy
from squad.model.factory import ModelFactory
from squad.model.stub_answers import answer, slow, tool_call
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.runtime.mcp_client.bridge import server_pids
from squad.runtime.mcp_client.journal import journal_path
from squad.runtime.mcp_client.tools import offered_name
from squad.runtime.run_result import RunResult
from squad.runtime.runlog import read_events, run_log_path
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec, SquadSpec
from squad.store import RunStatus
from tests.support.child_env import child_env
from tests.support.waiting import wait_for

BIN = Path(sys.executable).parent
TIME_SERVER = BIN / "mcp-server-time"
GIT_SERVER = BIN / "mcp-server-git"
SERVERS = Path(__file__).parent / "mcp_servers"
PY = sys.executable
FAST_RETRY = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)


# -- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def manager(app: App) -> SquadManager:
    return app.squads


@pytest.fixture
def stub_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def models(api_base: str | None = None) -> ModelFactory:
    """The real litellm seam, no retries; ``api_base`` re-points the squad's stub model."""

    def make(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        if api_base is not None:
            spec = spec.model_copy(update={"api_base": api_base})
        return LiteLLMModel(spec, on_event=on_event, retry=FAST_RETRY, sleep=lambda _: None)

    return make


def definition(url: str, servers: str, tools: str, *, name: str = "tooled") -> str:
    """A one-task squad on the stub model whose writer may use ``tools``."""
    return (
        f"name: {name}\n"
        f"model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {FREE_PRICES}}}\n"
        f"mcp_servers:\n{servers}"
        "agents:\n"
        f"  - {{id: writer, role: Writes the notes, tools: {tools}}}\n"
        "tasks:\n"
        "  - {id: notes, description: Write the notes., agent: writer}\n"
    )


def create(manager: SquadManager, text: str) -> tuple[SquadSpec, Path]:
    spec = squad_from_text(text, source="test.yaml")
    return spec, manager.create(spec).path


def events(result: RunResult) -> list[dict[str, Any]]:
    return read_events(run_log_path(result.workspace, result.run_id))


def of_kind(log: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [e for e in log if e["event"] == kind]


def tool_results(body: Any) -> list[str]:
    """The tool messages the model was sent in one request."""
    return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def offered(body: Any) -> dict[str, Any]:
    return {t["function"]["name"]: t["function"] for t in body.get("tools", [])}


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class PidWatch:
    """A model handler answering from ``script`` that notes the run's live MCP server pids
    each time the model is asked something (set ``workspace`` once it exists)."""

    def __init__(self, *script: Any) -> None:
        self.seen: dict[str, int] = {}
        self.workspace: Path | None = None
        self._script = list(script)

    def __call__(self, body: Any) -> Any:
        if self.workspace is not None:
            for run_id in run_ids(self.workspace):
                self.seen.update(server_pids(run_id))
        return self._script.pop(0) if self._script else answer("(script over)")


def run_ids(workspace: Path) -> list[str]:
    logs = sorted((workspace / "logs").glob("run-*.jsonl"))
    return [
        p.name.removeprefix("run-").removesuffix(".jsonl")
        for p in logs
        if not p.name.endswith(".mcp.jsonl")
    ]


# -- third-party servers over stdio ------------------------------------------------------------


@pytest.mark.slow
def test_the_time_servers_answer_reaches_the_model_and_the_run_log(
    manager: SquadManager, stub: OpenAIStubServer, app: App
) -> None:
    servers = f"  time: {{command: {TIME_SERVER}, args: [--local-timezone, UTC]}}\n"
    spec, workspace = create(manager, definition(stub.url, servers, "[time]"))
    stub.script(
        tool_call("time__get_current_time", {"timezone": "Europe/Berlin"}),
        answer("It is late."),
    )

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    tools = offered(stub.bodies[0])
    assert {"time__get_current_time", "time__convert_time", "write_file"} <= set(tools)
    schema = tools["time__get_current_time"]["parameters"]
    assert schema["required"] == ["timezone"]
    assert schema["properties"]["timezone"]["type"] == "string"  # the server's own schema
    [reply] = tool_results(stub.bodies[1])
    answered = json.loads(reply)
    assert answered["timezone"] == "Europe/Berlin"
    assert answered["datetime"].endswith(("+01:00", "+02:00"))
    log = events(result)
    [started] = of_kind(log, "mcp_server_started")
    assert started["server"] == "time" and started["transport"] == "stdio"
    assert started["tools"] == ["get_current_time", "convert_time"]
    [call] = of_kind(log, "tool_call")
    assert call["tool"] == "time.get_current_time" and call["server"] == "time"
    assert call["is_error"] is False and call["replayed"] is False
    assert 0 < call["duration_s"] < 30
    assert call["arguments"] == {"timezone": "Europe/Berlin"}
    assert '"Europe/Berlin"' in call["result"]
    assert of_kind(log, "mcp_servers_stopped")
    messages = manager.store.conversation.messages("tooled", "writer")
    assert [(m.role.value, m.tool_name) for m in messages] == [
        ("user", None),
        ("tool", "time.get_current_time"),
        ("assistant", None),
    ]
    assert json.loads(messages[1].content)["timezone"] == "Europe/Berlin"
    journal = read_events(journal_path(workspace, result.run_id))
    assert [(e["tool"], e["ordinal"], e["is_error"]) for e in journal] == [
        ("time.get_current_time", 0, False)
    ]
    assert server_pids(result.run_id) == {}


def make_repository(path: Path) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    path.mkdir(parents=True)
    (path / "README.md").write_text("# Notes\n", encoding="utf-8")
    for command in (
        ["git", "init", "--quiet", "--initial-branch=main"],
        ["git", "add", "README.md"],
        ["git", "commit", "--quiet", "-m", "Add the notes readme"],
    ):
        subprocess.run(command, cwd=path, env=env, check=True, capture_output=True)


@pytest.mark.slow
def test_the_git_server_reads_a_repository_in_the_workspace_with_only_the_allowed_tools(
    manager: SquadManager, stub: OpenAIStubServer, app: App
) -> None:
    servers = f"  git: {{command: {GIT_SERVER}, args: [--repository, repo]}}\n"
    spec, workspace = create(
        manager, definition(stub.url, servers, "[git.git_log, git.git_status]")
    )
    repo = workspace / "repo"
    make_repository(repo)
    stub.script(
        tool_call("git__git_log", {"repo_path": str(repo), "max_count": 5}),
        tool_call("git__git_commit", {"repo_path": str(repo), "message": "sneaky"}, call_id="c2"),
        answer("One commit."),
    )

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    mcp_tools = {name for name in offered(stub.bodies[0]) if "__" in name}
    assert mcp_tools == {"git__git_log", "git__git_status"}
    log_text, refused = tool_results(stub.bodies[2])
    assert "Add the notes readme" in log_text and "Test" in log_text
    assert refused == "refused: there is no tool named 'git__git_commit'"
    calls = of_kind(events(result), "tool_call")
    assert [(c["tool"], c.get("is_error")) for c in calls] == [
        ("git.git_log", False),
        ("git__git_commit", None),  # never offered: the built-in refusal, not an MCP call
    ]


# -- servers that misbehave --------------------------------------------------------------------


@pytest.mark.slow
def test_a_server_that_crashes_mid_call_gives_the_model_an_error_and_the_run_goes_on(
    manager: SquadManager, stub_key: None, app: App
) -> None:
    watch = PidWatch(
        tool_call("crash__echo", {"text": "hi"}),
        tool_call("crash__boom", {}, call_id="c2"),
        tool_call("crash__echo", {"text": "again"}, call_id="c3"),
        answer("Done anyway."),
    )
    servers = f"  crash: {{command: {PY}, args: ['{SERVERS / 'crashing.py'}']}}\n"
    with OpenAIStubServer(handler=watch) as stub:
        spec, workspace = create(manager, definition(stub.url, servers, "[crash]"))
        watch.workspace = workspace
        result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert (workspace / "tasks" / "notes" / "output.md").read_text() == "Done anyway.\n"
    echo, boom, again = tool_results(stub.bodies[3])
    assert echo == "echo: hi"
    assert boom == "error: MCP server 'crash' closed the connection (it exited?)"
    assert again.startswith("error: MCP server 'crash'")
    log = events(result)
    assert [(c["tool"], c["is_error"]) for c in of_kind(log, "tool_call")] == [
        ("crash.echo", False),
        ("crash.boom", True),
        ("crash.echo", True),
    ]
    errors = of_kind(log, "mcp_error")
    assert [e["tool"] for e in errors] == ["crash.boom", "crash.echo"]
    assert "closed the connection" in errors[0]["error"]
    assert len(read_events(journal_path(workspace, result.run_id))) == 1  # only the answer
    assert set(watch.seen) == {"crash"}
    assert not any(alive(pid) for pid in watch.seen.values())


@pytest.mark.slow
def test_a_hanging_call_times_out_into_a_tool_error_and_the_server_is_stopped(
    manager: SquadManager, stub_key: None, app: App
) -> None:
    servers = (
        f"  hang: {{command: {PY}, args: ['{SERVERS / 'hanging.py'}'], timeout_s: 1}}\n"
        f"  late: {{command: {PY}, args: ['{SERVERS / 'hanging.py'}', --at-start], "
        "startup_timeout_s: 3}\n"
        "  gone: {command: /nonexistent/mcp-server}\n"
    )
    watch = PidWatch(
        tool_call("hang__wait", {}),
        tool_call("hang__quick", {}, call_id="c2"),
        answer("Waited."),
    )
    with OpenAIStubServer(handler=watch) as stub:
        spec, workspace = create(manager, definition(stub.url, servers, "[hang, late, gone.x]"))
        watch.workspace = workspace
        started = time.monotonic()
        result = app.runner(model_factory=models()).run(spec, workspace)
        elapsed = time.monotonic() - started

    assert result.succeeded, result.error
    assert {name for name in offered(stub.bodies[0]) if "__" in name} == {
        "hang__wait",
        "hang__quick",
    }
    waited, quick = tool_results(stub.bodies[2])
    assert waited == "error: MCP server 'hang' did not answer within 1s; the call was abandoned"
    assert quick == "quick answer"
    log = events(result)
    cannot_start = {e["server"]: e["error"] for e in of_kind(log, "mcp_error") if "tool" not in e}
    assert cannot_start == {
        "late": "cannot start: did not start and list its tools within 3s",
        "gone": "cannot start: command '/nonexistent/mcp-server' does not exist or is not "
        "executable",
    }
    [timeout] = [e for e in of_kind(log, "mcp_error") if "tool" in e]
    assert timeout["tool"] == "hang.wait" and "within 1s" in timeout["error"]
    calls = of_kind(log, "tool_call")
    assert [(c["tool"], c["is_error"]) for c in calls] == [
        ("hang.wait", True),
        ("hang.quick", False),
    ]
    assert 1 <= calls[0]["duration_s"] < 5
    assert elapsed < 30
    assert set(watch.seen) == {"hang"}  # 'late' was stopped when it missed its start
    assert not any(alive(pid) for pid in watch.seen.values())
    assert server_pids(result.run_id) == {}


@pytest.mark.slow
def test_malformed_results_and_unofferable_tool_names_become_errors_and_events(
    manager: SquadManager, stub: OpenAIStubServer, app: App
) -> None:
    servers = f"  odd: {{command: {PY}, args: ['{SERVERS / 'malformed.py'}']}}\n"
    spec, workspace = create(manager, definition(stub.url, servers, "[odd]"))
    stub.script(
        tool_call("odd__broken", {}),
        tool_call("odd__noisy", {"n": 1}, call_id="c2"),
        tool_call("odd__fine", {}, call_id="c3"),
        answer("Survived."),
    )

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert {n for n in offered(stub.bodies[0]) if "__" in n} == {
        "odd__broken",
        "odd__noisy",
        "odd__fine",
    }
    broken, noisy, fine = tool_results(stub.bodies[3])
    assert broken == (
        "error: MCP server 'odd' answered with a malformed result: content: Input should be "
        "a valid list"
    )
    assert noisy.startswith("error: MCP server 'odd' answered with a malformed result: ")
    assert fine == "fine answer"
    log = events(result)
    skipped = of_kind(log, "mcp_tool_skipped")
    assert [e["tool"] for e in skipped] == ["has.dot", "x" * 80]
    assert all("cannot be offered as a function name" in e["reason"] for e in skipped)
    assert [e["tool"] for e in of_kind(log, "mcp_error")] == ["odd.broken", "odd.noisy"]


# -- streamable HTTP ---------------------------------------------------------------------------


class HttpMcpServer:
    """An ``MCPServer`` served by uvicorn on 127.0.0.1 (port 0) in a thread."""

    def __init__(self) -> None:
        import uvicorn
        from mcp.server import MCPServer
        from mcp.server.transport_security import TransportSecuritySettings

        server = MCPServer("adder", log_level="WARNING")

        @server.tool()
        def add(a: int, b: int) -> str:
            """Add two whole numbers."""
            return str(a + b)

        inner = server.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        self.headers: list[dict[str, str]] = []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
            await inner(scope, receive, send)

        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="mcp-http-test")

    def __enter__(self) -> HttpMcpServer:
        self._thread.start()
        wait_for(lambda: self._server.started, "uvicorn to start", timeout=20)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(20)

    @property
    def url(self) -> str:
        [sock] = [s for server in self._server.servers for s in server.sockets]
        return f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def test_a_streamable_http_server_gets_its_headers_from_the_environment(
    manager: SquadManager, stub: OpenAIStubServer, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADDER_TOKEN", "Bearer s3cret-adder")
    with HttpMcpServer() as http:
        servers = f"  adder: {{url: '{http.url}', headers_env: {{Authorization: ADDER_TOKEN}}}}\n"
        spec, workspace = create(manager, definition(stub.url, servers, "[adder.add]"))
        stub.script(tool_call("adder__add", {"a": 2, "b": 3}), answer("Five."))

        result = app.runner(model_factory=models()).run(spec, workspace)
        seen = list(http.headers)

    assert result.succeeded, result.error
    assert tool_results(stub.bodies[1]) == ["5"]
    assert seen and all(h.get("authorization") == "Bearer s3cret-adder" for h in seen)
    [started] = of_kind(events(result), "mcp_server_started")
    assert started["transport"] == "http" and started["tools"] == ["add"]
    [call] = of_kind(events(result), "tool_call")
    assert (call["tool"], call["server"], call["result"]) == ("adder.add", "adder", "5")


def test_a_missing_header_variable_leaves_the_http_server_out_of_the_run(
    manager: SquadManager, stub: OpenAIStubServer, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ADDER_TOKEN", raising=False)
    servers = "  adder: {url: 'http://127.0.0.1:9/mcp', headers_env: {X-Key: ADDER_TOKEN}}\n"
    spec, workspace = create(manager, definition(stub.url, servers, "[adder]"))
    stub.script(answer("No tools."))

    result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert not [n for n in offered(stub.bodies[0]) if "__" in n]
    [error] = of_kind(events(result), "mcp_error")
    assert error["error"] == (
        "cannot start: environment variable 'ADDER_TOKEN' (for header 'X-Key') is not set"
    )


# -- kills, orphans and resume -----------------------------------------------------------------

RUN_CHILD = """\
import sys
from squad.app import App
from squad.settings import Settings

with App.open(Settings.load()) as app:
    spec, workspace = app.squads.definition(sys.argv[1])
    app.runner().run(spec, workspace)
"""


def start_child(settings: Settings, squad: str, cwd: Path) -> subprocess.Popen[bytes]:
    env = child_env(settings)
    return subprocess.Popen(
        [sys.executable, "-c", RUN_CHILD, squad],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_sigkill_of_the_squad_process_kills_its_mcp_servers_too(
    settings: Settings, manager: SquadManager, stub: OpenAIStubServer, tmp_path: Path
) -> None:
    # 'stubborn' never reads its stdin: only the kernel's parent-death signal can stop it.
    servers = (
        f"  time: {{command: {TIME_SERVER}}}\n"
        f"  stubborn: {{command: {PY}, args: ['{SERVERS / 'hanging.py'}', --at-start], "
        "startup_timeout_s: 300}\n"
    )
    _, workspace = create(manager, definition(stub.url, servers, "[time, stubborn]"))
    child = start_child(settings, "tooled", tmp_path)
    pids: dict[str, int] = {}
    try:

        def both_up() -> bool:
            pids.update(server_pids(run_ids(workspace)[0]) if run_ids(workspace) else {})
            return set(pids) == {"time", "stubborn"} or child.poll() is not None

        wait_for(both_up, "both MCP servers to start")
        assert child.poll() is None, child.communicate()[1].decode()
    finally:
        child.kill()  # SIGKILL: no handler, no finally, no close
        _, stderr = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL, stderr.decode()
    wait_for(lambda: not any(alive(pid) for pid in pids.values()), "the servers to die", timeout=10)
    assert not stub.requests  # killed while its servers were still starting


@pytest.mark.slow
def test_resume_after_a_kill_mid_task_replays_recorded_calls_instead_of_repeating_them(
    settings: Settings, manager: SquadManager, stub_key: None, app: App, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    servers = f"  counter: {{command: {PY}, args: ['{SERVERS / 'counter.py'}', '{ledger}']}}\n"
    with OpenAIStubServer() as first:
        _, workspace = create(manager, definition(first.url, servers, "[counter]"))
        first.script(
            tool_call("counter__bump", {"note": "a"}),
            tool_call("counter__bump", {"note": "a"}, call_id="c2"),
            slow(120, answer("too late")),
        )
        child = start_child(settings, "tooled", tmp_path)
        try:
            wait_for(lambda: len(first.requests) >= 3 or child.poll() is not None, "3 requests")
            assert child.poll() is None
        finally:
            child.kill()
            _, stderr = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL, stderr.decode()
        first_results = tool_results(first.bodies[2])

    assert first_results == ["bump 1: a", "bump 2: a"]
    assert ledger.read_text() == "a\na\n"
    [run_id] = run_ids(workspace)
    journal = read_events(journal_path(workspace, run_id))
    assert [(e["tool"], e["ordinal"], e["text"]) for e in journal] == [
        ("counter.bump", 0, "bump 1: a"),
        ("counter.bump", 1, "bump 2: a"),
    ]
    [run] = manager.store.interrupted_runs("tooled")
    assert run.status is RunStatus.RUNNING

    with OpenAIStubServer() as fresh:
        fresh.script(
            tool_call("counter__bump", {"note": "a"}),
            tool_call("counter__bump", {"note": "a"}, call_id="c2"),
            tool_call("counter__bump", {"note": "a"}, call_id="c3"),
            tool_call("counter__bump", {"note": "b"}, call_id="c4"),
            answer("Counted."),
        )
        result = app.runner(model_factory=models(fresh.url)).resume(run_id)
        resumed_results = tool_results(fresh.bodies[4])

    assert result.succeeded, result.error
    # The two recorded calls are answered from the journal, the same as the first time; the
    # third identical one and the new one reach the server.
    assert resumed_results == ["bump 1: a", "bump 2: a", "bump 3: a", "bump 4: b"]
    assert ledger.read_text() == "a\na\na\nb\n"
    calls = [e for e in of_kind(events(result), "tool_call") if e["server"] == "counter"]
    assert [c["replayed"] for c in calls] == [False, False, True, True, False, False]
    assert len(read_events(journal_path(workspace, run_id))) == 4
    assert server_pids(run_id) == {}


# -- naming and lazy import --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("time", "get_current_time", "time__get_current_time"),
        ("my-git", "git-log", "my-git__git-log"),
        ("git", "has.dot", None),
        ("git", "with space", None),
        ("git", "x" * 59, "git__" + "x" * 59),
        ("git", "x" * 60, None),
    ],
)
def test_tools_are_offered_as_server__tool_when_that_is_a_valid_function_name(
    server: str, tool: str, expected: str | None
) -> None:
    assert offered_name(server, tool) == expected


@pytest.mark.slow
def test_runs_without_mcp_servers_and_squad_help_never_import_the_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from squad.cli import main\n"
        "sys.argv = ['squad', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "import squad.runtime.runner, squad.runtime.executor, squad.runtime.mcp_client.tools\n"
        "assert not [m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')], 'mcp'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()


def test_the_journal_keys_calls_by_turn_arguments_and_ordinal_and_skips_a_torn_line(
    tmp_path: Path,
) -> None:
    from squad.runtime.mcp_client.journal import JournalEntry, McpJournal

    path = tmp_path / "logs" / "run-r.mcp.jsonl"
    journal = McpJournal(path)
    first = journal.next_key("notes/writer/abc", "time.now", {"b": 1, "a": [1, 2]})
    second = journal.next_key("notes/writer/abc", "time.now", {"a": [1, 2], "b": 1})
    assert (first.ordinal, second.ordinal) == (0, 1)
    assert first.arguments == second.arguments  # key order does not matter
    key = "sk-proj-" + "A1b2C3d4" * 6
    journal.record(first, JournalEntry(f"token {key}", False), server="time")
    journal.close()
    with path.open("ab") as torn:
        torn.write(b'{"turn": "notes/writer/abc", "tool": "time.now", "ordin')

    again = McpJournal(path)
    assert len(again) == 1
    replay = again.recorded(again.next_key("notes/writer/abc", "time.now", {"a": [1, 2], "b": 1}))
    assert replay is not None and replay.is_error is False
    assert key not in replay.text and "[REDACTED" in replay.text
    assert key not in path.read_text()
    # The second identical call was never answered: it is made again.
    assert (
        again.recorded(again.next_key("notes/writer/abc", "time.now", {"b": 1, "a": [1, 2]}))
        is None
    )
    assert again.recorded(again.next_key("other/writer/abc", "time.now", {})) is None
