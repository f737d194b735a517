"""SquadRunner end to end: real SQLite store and checkpointer, real workspace, real model path.

Models are the built-in offline model (through litellm, as in production) or the OpenAI stub
server on 127.0.0.1; nothing of squad's own is mocked. A model double appears only where a
test needs a model that dies mid-call.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.errors import ConfigError, UsageError
from squad.manager import SquadManager
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy, model_for
from squad.model.factory import ModelFactory
from squad.model.offline import is_offline
from squad.model.stub_answers import (
    answer,
    malformed_tool_arguments,
    no_choices,
    slow,
    status,
    tool_call,
)
from squad.model.testing import FREE_PRICES as FREE
from squad.model.testing import OpenAIStubServer
from squad.model.types import Message, ModelReply, Price, TokenCallback, ToolSpec
from squad.runtime.run_result import RunResult
from squad.runtime.runlog import read_events, run_log_path
from squad.settings import Settings
from squad.spec.models import ModelSpec, SquadSpec
from squad.store import RunStatus
from tests.conftest import BASIC_YAML
from tests.support.child_env import child_env

MakeSpec = Callable[..., SquadSpec]
FAST_RETRY = RetryPolicy(max_attempts=2, base_delay_s=0, jitter=0)

GATED_YAML = """\
name: gated
goal: Ship it.
agents:
  - {id: planner, role: Plans the work}
  - {id: writer, role: Writes the pages}
tasks:
  - {id: outline, description: Outline the guide., agent: planner}
  - {id: draft, description: Write the guide., agent: writer, depends_on: [outline], approval: true}
  - {id: publish, description: Publish the guide., agent: writer, depends_on: [draft]}
"""


# -- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture
def manager(app: App) -> SquadManager:
    return app.squads


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture
def stub_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")


def create(manager: SquadManager, make_spec: MakeSpec, text: str) -> tuple[SquadSpec, Path]:
    spec = make_spec(text)
    return spec, manager.create(spec).path


def fast_models(*, api_base: str | None = None) -> ModelFactory:
    """The real seam with instant retries (the offline model as usual); ``api_base`` re-points
    stub-backed models."""

    def make(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        if is_offline(spec.name):
            return model_for(spec, on_event)
        if api_base is not None and spec.api_base is not None:
            spec = spec.model_copy(update={"api_base": api_base})
        return LiteLLMModel(spec, on_event=on_event, retry=FAST_RETRY, sleep=lambda _: None)

    return make


def events(result: RunResult) -> list[dict[str, Any]]:
    return read_events(run_log_path(result.workspace, result.run_id))


def of_kind(log: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [e for e in log if e["event"] == kind]


def task_status(workspace: Path, task: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (workspace / "tasks" / task / "status.json").read_text(encoding="utf-8")
    )
    return data


def user_messages(body: Any) -> list[str]:
    return [str(m.get("content") or "") for m in body["messages"] if m.get("role") == "user"]


def on_stub(text: str, url: str, *, model: str = "openai/stub") -> str:
    """A squad definition whose default model is the stub server at ``url``: priced at $0
    under the stub's own name, or by litellm's price map under a real one (``gpt-4o-mini``)."""
    name_line, rest = text.split("\n", 1)
    prices = f", {FREE}" if model == "openai/stub" else ""
    model_map = f"{{name: {model}, api_base: '{url}', api_key_env: STUB_KEY{prices}}}"
    return f"{name_line}\nmodel: {model_map}\n{rest}"


NOTES_YAML = """\
name: tooled
goal: Keep notes.
agents:
  - {id: writer, role: Writes the pages}
tasks:
  - {id: notes, description: Write the notes., agent: writer}
"""


# -- sequential runs ---------------------------------------------------------------------------


def test_sequential_run_on_the_offline_model_writes_outputs_status_log_and_messages(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML)
    progress: list[str] = []

    result = app.runner(progress=progress.append).run(spec, workspace)

    assert result.succeeded and result.error is None
    assert result.tasks == {"outline": "done", "draft": "done"}
    assert result.turns == 2 and result.prompt_tokens > 0 and result.completion_tokens > 0
    for task in ("outline", "draft"):
        assert (workspace / "tasks" / task / "output.md").read_text(encoding="utf-8").strip()
        status_file = task_status(workspace, task)
        assert (status_file["status"], status_file["run_id"]) == ("done", result.run_id)
        assert status_file["output"] == f"tasks/{task}/output.md"
    assert "draft: done" in progress

    log = events(result)
    assert log[0]["event"] == "run_start" and log[-1]["event"] == "run_end"
    assert log[-1]["status"] == "succeeded"
    assert [e["node"] for e in of_kind(log, "node_start")] == ["outline", "draft"]
    assert [e["node"] for e in of_kind(log, "node_end")] == ["outline", "draft"]
    calls = of_kind(log, "model_call")
    assert [c["agent"] for c in calls] == ["planner", "writer"]
    assert all(c["model"] == "offline" and c["prompt_tokens"] > 0 for c in calls)
    assert all(c["completion_tokens"] > 0 for c in calls)

    run = manager.store.get_run(result.run_id)
    assert run is not None and run.status is RunStatus.SUCCEEDED
    assert (run.tokens_in, run.tokens_out) == (result.prompt_tokens, result.completion_tokens)
    assert run.tokens_in == sum(c["prompt_tokens"] for c in calls)
    assert run.started_at is not None and run.ended_at is not None
    assert {t.task_id: str(t.status) for t in manager.store.run_state.tasks(result.run_id)} == {
        "outline": "done",
        "draft": "done",
    }
    for agent in ("planner", "writer"):
        messages = manager.store.conversation.messages("demo", agent)
        assert [m.role.value for m in messages] == ["user", "assistant"]
        assert [m.seq for m in messages] == [1, 2]
        assert {m.run_id for m in messages} == {result.run_id}
        assert manager.store.conversation.turn_count("demo", agent) == 1


def test_second_run_continues_each_agents_seq(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML)
    runner = app.runner()
    first = runner.run(spec, workspace)
    second = runner.run(spec, workspace)

    assert first.succeeded and second.succeeded and first.run_id != second.run_id
    messages = manager.store.conversation.messages("demo", "writer")
    assert [m.seq for m in messages] == [1, 2, 3, 4]
    assert [m.run_id for m in messages] == [first.run_id] * 2 + [second.run_id] * 2
    assert manager.store.conversation.turn_count("demo", "writer") == 2


def test_an_agent_whose_extractor_is_off_keeps_no_conversation_of_its_runs(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    text = BASIC_YAML.replace(
        "role: Writes the pages}", "role: Writes the pages, memory: {extract: false}}"
    )
    spec, workspace = create(manager, make_spec, text)

    result = app.runner().run(spec, workspace)

    assert result.succeeded
    assert manager.store.conversation.messages("demo", "writer") == []
    assert [m.seq for m in manager.store.conversation.messages("demo", "planner")] == [1, 2]
    assert manager.store.conversation.extraction_backlog() == [("demo", "planner", 2)]
    assert (workspace / "tasks" / "draft" / "output.md").is_file()


def test_a_task_prompt_carries_the_output_of_the_tasks_it_depends_on(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML)

    result = app.runner().run(spec, workspace)

    assert result.succeeded
    outline = (workspace / "tasks" / "outline" / "output.md").read_text(encoding="utf-8")
    [planner_prompt] = [
        m.content
        for m in manager.store.conversation.messages("demo", "planner")
        if m.role.value == "user"
    ]
    [writer_prompt] = [
        m.content
        for m in manager.store.conversation.messages("demo", "writer")
        if m.role.value == "user"
    ]
    assert "Task: Write the guide." in writer_prompt
    assert "Work from task outline (tasks/outline/output.md):" in writer_prompt
    assert outline.strip() in writer_prompt
    assert "Work from task" not in planner_prompt  # outline depends on nothing


def test_dependency_output_reaches_the_model_over_http(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, on_stub(BASIC_YAML, stub.url))
    stub.script(answer("1. Install\n2. Configure\n3. Deploy"), answer("The guide."))

    result = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert result.succeeded
    first, second = stub.bodies
    assert "Task: Outline the guide." in user_messages(first)[-1]
    draft_prompt = user_messages(second)[-1]
    assert "Task: Write the guide." in draft_prompt
    assert "Work from task outline" in draft_prompt
    assert "1. Install\n2. Configure\n3. Deploy" in draft_prompt
    assert second["messages"][0]["role"] == "system"
    assert (workspace / "tasks" / "draft" / "output.md").read_text() == "The guide.\n"


# -- faults ------------------------------------------------------------------------------------


def test_model_error_after_retries_fails_the_task_blocks_dependents_and_runs_the_rest(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub_key: None,
    app: App,
) -> None:
    with OpenAIStubServer(handler=lambda body: status(500, "upstream is down")) as failing:
        text = f"""\
name: faulty
agents:
  - {{id: planner, role: Plans the work}}
  - id: writer
    role: Writes the pages
    model: {{name: openai/x, api_base: '{failing.url}', api_key_env: STUB_KEY, {FREE}}}
tasks:
  - {{id: draft, description: Write the guide., agent: writer}}
  - {{id: publish, description: Publish the guide., agent: planner, depends_on: [draft]}}
  - {{id: notes, description: Write release notes., agent: planner}}
"""
        spec, workspace = create(manager, make_spec, text)
        result = app.runner(model_factory=fast_models()).run(spec, workspace)
        assert len(failing.requests) == FAST_RETRY.max_attempts

    assert not result.succeeded and result.status == "failed"
    assert result.tasks == {"draft": "failed", "publish": "blocked", "notes": "done"}
    assert result.error == "failed tasks: draft"
    draft = task_status(workspace, "draft")
    assert draft["status"] == "failed"
    assert "failed after 2 attempts" in draft["error"] and "HTTP 500" in draft["error"]
    publish = task_status(workspace, "publish")
    assert (publish["status"], publish["error"]) == ("blocked", "a dependency failed")
    assert not (workspace / "tasks" / "publish" / "output.md").exists()
    assert (workspace / "tasks" / "notes" / "output.md").is_file()

    log = events(result)
    assert [e["attempt"] for e in of_kind(log, "model_retry")] == [1]
    [error] = of_kind(log, "model_error")
    assert error["status"] == 500 and "upstream is down" in error["error"]
    failed = [e for e in of_kind(log, "task_status") if e["status"] == "failed"]
    assert [e["node"] for e in failed] == ["draft"] and "HTTP 500" in failed[0]["error"]
    assert log[-1]["event"] == "run_end" and log[-1]["status"] == "failed"
    run = manager.store.get_run(result.run_id)
    assert run is not None and run.status is RunStatus.FAILED and run.error == result.error


# -- approval ----------------------------------------------------------------------------------


def test_approval_pauses_the_run_until_approved_then_finishes_it(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, GATED_YAML)
    runner = app.runner()

    paused = runner.run(spec, workspace)

    assert (paused.status, paused.awaiting) == ("awaiting_approval", "draft")
    assert paused.error is None
    assert paused.tasks == {"outline": "done", "draft": "awaiting_approval", "publish": "pending"}
    assert task_status(workspace, "draft")["status"] == "awaiting_approval"
    assert not (workspace / "tasks" / "draft" / "output.md").exists()
    run = manager.store.get_run(paused.run_id)
    assert run is not None and run.status is RunStatus.AWAITING_APPROVAL
    assert runner.pending_approval(paused.run_id) == "draft"

    # Another process (a fresh runner) approves it.
    done = app.runner().approve(paused.run_id, "draft", approved=True)

    assert done.succeeded and done.run_id == paused.run_id and done.awaiting is None
    assert done.tasks == {"outline": "done", "draft": "done", "publish": "done"}
    assert (workspace / "tasks" / "draft" / "output.md").is_file()
    log = events(done)
    assert [e["node"] for e in of_kind(log, "node_start")] == ["outline", "draft", "publish"]
    assert [e["status"] for e in of_kind(log, "run_end")] == ["awaiting_approval", "succeeded"]
    assert of_kind(log, "run_resume")[0]["decision"] == {"approved": True, "reason": ""}
    assert runner.pending_approval(paused.run_id) is None


def test_rejected_approval_fails_the_task_with_the_reason_and_blocks_its_dependents(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, GATED_YAML)
    runner = app.runner()
    paused = runner.run(spec, workspace)

    result = runner.approve(paused.run_id, "draft", approved=False, reason="the outline is thin")

    assert result.status == "failed"
    assert result.tasks == {"outline": "done", "draft": "failed", "publish": "blocked"}
    draft = task_status(workspace, "draft")
    assert draft["status"] == "failed"
    assert draft["error"] == "rejected by a person: the outline is thin"
    assert task_status(workspace, "publish")["status"] == "blocked"
    assert not (workspace / "tasks" / "draft" / "output.md").exists()
    assert [e["node"] for e in of_kind(events(result), "node_start")] == ["outline"]
    run = manager.store.get_run(paused.run_id)
    assert run is not None and run.status is RunStatus.FAILED


def test_approving_the_wrong_task_or_a_run_that_is_not_waiting_is_a_usage_error(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, GATED_YAML)
    runner = app.runner()
    paused = runner.run(spec, workspace)

    with pytest.raises(UsageError, match="waits for task 'draft', not 'publish'"):
        runner.approve(paused.run_id, "publish", approved=True)
    assert runner.pending_approval(paused.run_id) == "draft"  # still waiting, untouched

    finished = runner.approve(paused.run_id, "draft", approved=True)
    assert finished.succeeded
    with pytest.raises(UsageError, match="is not waiting for an approval"):
        runner.approve(paused.run_id, "draft", approved=True)
    with pytest.raises(UsageError, match="is not waiting for an approval"):
        runner.approve("no-such-run", "draft", approved=True)


# -- interruption and crash resume -------------------------------------------------------------


def test_resuming_an_unknown_run_is_a_usage_error(
    settings: Settings,
    manager: SquadManager,
    app: App,
) -> None:
    with pytest.raises(UsageError, match="no run 'no-such-run'"):
        app.runner().resume("no-such-run")


class DiesOnCall:
    """A model that, on its ``die_on``-th call (None: never), raises what Ctrl-C raises; else
    the real one. Keeps the system prompt of every call in :attr:`systems`."""

    def __init__(self, inner: ChatModel, die_on: int | None) -> None:
        self._inner = inner
        self._die_on = die_on
        self.calls = 0
        self.systems: list[str] = []

    def price(self) -> Price | None:
        return self._inner.price()

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        return self._inner.reserve_usd(messages, tools)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        self.calls += 1
        self.systems.append(messages[0].content)
        if self.calls == self._die_on:
            raise KeyboardInterrupt
        return self._inner.complete(
            messages,
            tools=tools,
            response_format=response_format,
            timeout_s=timeout_s,
            on_token=on_token,
        )


def assert_each_task_ran_once(result: RunResult, manager: SquadManager) -> None:
    log = events(result)
    assert [e["node"] for e in of_kind(log, "node_end")] == ["outline", "draft"]
    assert [e["agent"] for e in of_kind(log, "model_call")] == ["planner", "writer"]
    planner = manager.store.conversation.messages("demo", "planner")
    assert [m.role.value for m in planner] == ["user", "assistant"]


def test_a_stop_asked_before_the_run_starts_stops_it_and_the_runners_next_run_starts_clean(
    manager: SquadManager, make_spec: MakeSpec, app: App
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML)
    runner = app.runner()
    runner.stop.set()  # Ctrl-C while the command was still starting

    stopped = runner.run(spec, workspace)

    assert stopped.status == "interrupted"
    assert stopped.tasks.get("draft") != "done"
    assert not runner.stop.is_set()
    resumed = runner.resume(stopped.run_id)
    assert resumed.succeeded and resumed.tasks == {"outline": "done", "draft": "done"}
    assert_each_task_ran_once(resumed, manager)


def test_ctrl_c_mid_run_leaves_it_interrupted_and_resume_does_not_redo_finished_tasks(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML)
    models: list[DiesOnCall] = []

    def dies_on_second_call(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        models.append(DiesOnCall(model_for(spec, on_event), die_on=2))
        return models[-1]

    interrupted = app.runner(model_factory=dies_on_second_call).run(spec, workspace)

    assert interrupted.status == "interrupted"
    assert [m.calls for m in models] == [2]  # both agents share the offline model
    run = manager.store.get_run(interrupted.run_id)
    assert run is not None and run.status is RunStatus.INTERRUPTED
    assert run in manager.store.interrupted_runs("demo")
    outline = workspace / "tasks" / "outline" / "output.md"
    before = (outline.read_bytes(), outline.stat().st_mtime_ns)
    assert not (workspace / "tasks" / "draft" / "output.md").exists()
    assert of_kind(events(interrupted), "run_end")[-1]["status"] == "interrupted"

    resumed = app.runner().resume(interrupted.run_id)

    assert resumed.succeeded and resumed.tasks == {"outline": "done", "draft": "done"}
    assert (outline.read_bytes(), outline.stat().st_mtime_ns) == before
    assert (workspace / "tasks" / "draft" / "output.md").is_file()
    assert_each_task_ran_once(resumed, manager)
    run = manager.store.get_run(interrupted.run_id)
    assert run is not None and run.status is RunStatus.SUCCEEDED


def test_stop_request_after_a_task_stops_at_its_checkpoint_and_resume_finishes(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML)

    def stop_after_outline(line: str) -> None:
        if line == "outline: done":
            runner.stop.set()  # what the CLI's SIGTERM handler does

    runner = app.runner(progress=stop_after_outline)
    stopped = runner.run(spec, workspace)

    assert stopped.status == "interrupted"
    assert stopped.tasks["outline"] == "done" and stopped.tasks["draft"] != "done"
    run = manager.store.get_run(stopped.run_id)
    assert run is not None and run.status is RunStatus.INTERRUPTED
    assert run.error is not None and "squad resume" in run.error

    resumed = app.runner().resume(stopped.run_id)

    assert resumed.succeeded
    assert_each_task_ran_once(resumed, manager)
    assert len(of_kind(events(resumed), "run_resume")) == 1


HARD_KILL_CHILD = """\
import sys
from squad.app import App
from squad.settings import Settings

with App.open(Settings.load()) as app:
    spec, workspace = app.squads.definition(sys.argv[1])
    app.runner().run(spec, workspace)
"""


@pytest.mark.slow
def test_hard_kill_mid_task_resumes_without_redoing_the_finished_task(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub_key: None,
    tmp_path: Path,
    app: App,
) -> None:
    with OpenAIStubServer() as first_stub:
        _, workspace = create(manager, make_spec, on_stub(BASIC_YAML, first_stub.url))
        first_stub.script(answer("The outline."), slow(60, answer("too late")))
        env = child_env(settings)
        child = subprocess.Popen(
            [sys.executable, "-c", HARD_KILL_CHILD, "demo"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            # The second request is the draft's: the outline's step is checkpointed by then.
            deadline = time.monotonic() + 60
            while len(first_stub.requests) < 2 and child.poll() is None:
                assert time.monotonic() < deadline, "the child never reached the second task"
                time.sleep(0.05)
        finally:
            child.kill()  # SIGKILL: no handler runs, nothing is flushed or recorded
            _, stderr = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL, stderr.decode()
        outline_prompts = [
            b for b in first_stub.bodies if "Task: Outline the guide." in user_messages(b)[-1]
        ]

    outline = workspace / "tasks" / "outline" / "output.md"
    before = (outline.read_bytes(), outline.stat().st_mtime_ns)
    assert before[0] == b"The outline.\n"
    [run] = manager.store.interrupted_runs("demo")
    assert run.status is RunStatus.RUNNING  # the process died: nobody recorded the end
    assert task_status(workspace, "draft")["status"] == "running"

    with OpenAIStubServer() as fresh:
        fresh.script(answer("The guide."))
        runner = app.runner(model_factory=fast_models(api_base=fresh.url))
        result = runner.resume(run.id)
        resumed_prompts = fresh.bodies

    assert result.succeeded and result.tasks == {"outline": "done", "draft": "done"}
    assert len(outline_prompts) == 1
    [resumed_prompt] = [user_messages(b)[-1] for b in resumed_prompts]
    assert "Task: Write the guide." in resumed_prompt and "The outline." in resumed_prompt
    assert (outline.read_bytes(), outline.stat().st_mtime_ns) == before
    assert (workspace / "tasks" / "draft" / "output.md").read_text() == "The guide.\n"
    assert [e["node"] for e in of_kind(events(result), "node_end")] == ["outline", "draft"]


# -- hierarchical squads -----------------------------------------------------------------------

TEAM_YAML = """\
name: team
goal: Research the market, then write the report.
process: hierarchical
agents:
  - {id: lead, role: Plans and coordinates the work, lead: true}
  - {id: researcher, role: Researches markets}
  - {id: writer, role: Writes reports}
  - {id: reviewer, role: Reviews the work}
"""


def test_hierarchical_run_on_the_offline_model_writes_a_plan_and_carries_it_out(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, TEAM_YAML)

    result = app.runner().run(spec, workspace)

    assert result.succeeded, result.error
    plan = (workspace / "plans" / "plan-001.md").read_text(encoding="utf-8")
    assert plan.startswith("# Plan 001") and "Planned by: lead" in plan
    assert result.tasks and set(result.tasks.values()) == {"done"}
    for task in result.tasks:
        assert f"`{task}`" in plan
        assert (workspace / "tasks" / task / "output.md").is_file()
        assert task_status(workspace, task)["status"] == "done"
    log = events(result)
    [written] = of_kind(log, "plan_written")
    assert written["path"] == "plans/plan-001.md" and written["tasks"] == list(result.tasks)
    # the plan's graph, for the run page's timeline and the squad page's task graph
    assert [g["id"] for g in written["graph"]] == written["tasks"]
    assert all(g["agent"] and isinstance(g["depends_on"], list) for g in written["graph"])
    assert {e["node"] for e in of_kind(log, "review")} == set(result.tasks)
    assert {e["reviewer"] for e in of_kind(log, "review")} == {"reviewer"}
    assert all(e["approved"] for e in of_kind(log, "review"))
    assert of_kind(log, "model_call")[0]["agent"] == "lead"

    again = app.runner().run(spec, workspace)
    assert again.succeeded and (workspace / "plans" / "plan-002.md").is_file()


def test_plans_are_numbered_on_past_999_without_rewriting_plan_1000(
    manager: SquadManager, make_spec: MakeSpec, app: App
) -> None:
    spec, workspace = create(manager, make_spec, TEAM_YAML)
    plans = workspace / "plans"
    plans.mkdir(exist_ok=True)
    for name in ("plan-500.md", "plan-998.md", "plan-notes.md", "plan-2000.txt", "plan-x1.md"):
        (plans / name).write_text(f"{name}\n")

    written = []
    for _ in range(5):
        result = app.runner().run(spec, workspace)
        assert result.succeeded, result.error
        (event,) = of_kind(events(result), "plan_written")
        written.append(event["path"])

    assert written == [f"plans/plan-{n}.md" for n in (999, 1000, 1001, 1002, 1003)]
    assert (plans / "plan-1000.md").read_text(encoding="utf-8").startswith("# Plan 1000\n")
    assert (plans / "plan-1003.md").read_text(encoding="utf-8").startswith("# Plan 1003\n")
    assert (plans / "plan-998.md").read_text() == "plan-998.md\n"


def test_review_sends_work_back_once_and_the_redo_sees_the_feedback(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, on_stub(TEAM_YAML, stub.url))
    plan = {"tasks": [{"id": "report", "description": "Write the report.", "agent": "writer"}]}
    stub.script(
        answer(json.dumps(plan)),
        answer("A report."),
        answer("CHANGES REQUESTED: add a market size estimate"),
        answer("A report with a market size estimate."),
        answer("APPROVED: complete"),
    )

    result = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert result.succeeded and result.tasks == {"report": "done"}
    bodies = stub.bodies
    assert len(bodies) == 5 and stub.pending == 0
    first_try, redo = user_messages(bodies[1])[-1], user_messages(bodies[3])[-1]
    assert "Review feedback" not in first_try
    assert (
        "Review feedback on your previous attempt: CHANGES REQUESTED: add a market size estimate"
        in redo
    )
    assert "Work:\nA report with a market size estimate." in user_messages(bodies[4])[-1]
    output = (workspace / "tasks" / "report" / "output.md").read_text(encoding="utf-8")
    assert output == "A report with a market size estimate.\n"
    assert task_status(workspace, "report")["rounds"] == 1
    log = events(result)
    assert [e["approved"] for e in of_kind(log, "review")] == [False, True]
    assert [e["node"] for e in of_kind(log, "node_start")] == ["report", "report"]


def test_with_strict_plan_a_plan_that_never_validates_fails_the_run_with_the_plan_error(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    # Without strict_plan the run goes on with a plan of squad's own: test_plan_fallback.py.
    strict = TEAM_YAML.replace(
        "process: hierarchical", "process: {type: hierarchical, strict_plan: true}"
    )
    spec, workspace = create(manager, make_spec, on_stub(strict, stub.url))
    stub.script(answer("We should research first."), answer("Still no plan, sorry."))

    result = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert result.status == "failed" and result.tasks == {}
    assert result.error is not None and "the lead's plan is invalid twice" in result.error
    assert len(stub.requests) == 2
    retry = user_messages(stub.bodies[1])[-1]
    assert "Your previous plan was invalid: the answer holds no JSON object" in retry
    log = events(result)
    assert [e["attempt"] for e in of_kind(log, "plan_invalid")] == [1, 2]
    assert log[-1]["event"] == "run_end" and log[-1]["status"] == "failed"
    assert "invalid twice" in log[-1]["error"]
    assert of_kind(log, "plan_fallback") == []
    assert not (workspace / "plans").exists() or not any((workspace / "plans").iterdir())
    run = manager.store.get_run(result.run_id)
    assert run is not None and run.status is RunStatus.FAILED and run.error == result.error


# -- limits ------------------------------------------------------------------------------------


def test_max_turns_stops_the_run_after_that_many_turns(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, BASIC_YAML + "limits: {max_turns: 1}\n")

    result = app.runner().run(spec, workspace)

    assert result.status == "stopped" and not result.succeeded
    assert result.turns == 1
    assert result.tasks == {"outline": "done", "draft": "pending"}
    assert result.error is not None and "1 agent turns" in result.error
    assert not (workspace / "tasks" / "draft" / "output.md").exists()
    log = events(result)
    assert len(of_kind(log, "model_call")) == 1
    assert log[-1]["event"] == "run_end" and log[-1]["status"] == "stopped"
    run = manager.store.get_run(result.run_id)
    assert run is not None and run.status is RunStatus.STOPPED and run.ended_at is not None


def test_spend_cap_counts_earlier_runs_and_stops_the_call_that_could_pass_it(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(
        manager,
        make_spec,
        on_stub(
            NOTES_YAML + "limits: {max_cost_usd: 0.002}\n", stub.url, model="openai/gpt-4o-mini"
        ),
    )
    # gpt-4o-mini by litellm's local price map: 1,000 in + 1,000 out is $0.00075; a call
    # reserves its prompt (system prompt and tools too) plus 1,024 tokens of output, ~$0.0008.
    stub.script(*[answer("Notes.", prompt_tokens=1000, completion_tokens=1000)] * 2)

    first = app.runner(model_factory=fast_models()).run(spec, workspace)
    second = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert first.succeeded and second.succeeded
    assert first.cost_usd == pytest.approx(0.00075) and second.cost_usd == pytest.approx(0.00075)
    spent = manager.store.spend.of_squad("tooled")
    assert spent.cost_usd == pytest.approx(0.0015)
    assert (spent.prompt_tokens, spent.completion_tokens) == (2000, 2000)
    run = manager.store.get_run(first.run_id)
    assert run is not None and run.cost_usd == pytest.approx(first.cost_usd)

    # A new runner (a restart) still sees the ledger: $0.0015 spent plus a reservation of
    # about $0.0008 could pass the cap, so the third run stops before its call.
    third = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert third.status == "stopped" and third.tasks == {"notes": "pending"}
    assert third.error is not None and re.search(r"may cost up to \$0\.000[678]", third.error)
    assert "of its $0.002 cap" in third.error
    assert len(stub.requests) == 2
    assert manager.store.spend.of_squad("tooled").cost_usd == pytest.approx(0.0015)
    assert third.cost_usd == 0.0
    stopped = manager.store.get_run(third.run_id)
    assert stopped is not None and stopped.status is RunStatus.STOPPED
    assert stopped.summary is not None and stopped.summary["stopped"] == "max_cost_usd"


def test_a_zero_cap_stops_a_priced_model_before_its_first_call(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(
        manager,
        make_spec,
        on_stub(NOTES_YAML + "limits: {max_cost_usd: 0}\n", stub.url, model="openai/gpt-4o-mini"),
    )
    result = app.runner(model_factory=fast_models()).run(spec, workspace)
    assert result.status == "stopped" and result.cost_usd == 0.0
    assert stub.requests == []


def test_an_unpriced_model_under_a_cap_is_refused_before_the_run_starts(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    model = f"{{name: openai/squad-private-xyz, api_base: '{stub.url}', api_key_env: STUB_KEY}}"
    text = NOTES_YAML.replace(
        "{id: writer, role: Writes the pages}", f"{{id: writer, role: Writes, model: {model}}}"
    )
    spec, workspace = create(manager, make_spec, text)

    with pytest.raises(ConfigError) as caught:
        app.runner(model_factory=fast_models()).run(spec, workspace)

    [problem] = caught.value.problems
    assert "'openai/squad-private-xyz' has no price" in problem.message
    assert problem.path == ("agents", 0, "model")
    assert problem.hint is not None and "cost_per_1k_input" in problem.hint
    assert stub.requests == [] and manager.store.list_runs("tooled") == []

    priced = make_spec(
        text.replace(
            "api_key_env: STUB_KEY}",
            "api_key_env: STUB_KEY, cost_per_1k_input: 1, cost_per_1k_output: 2}",
        )
    )
    stub.script(answer("Notes.", prompt_tokens=1000, completion_tokens=500))
    result = app.runner(model_factory=fast_models()).run(priced, workspace)
    assert result.succeeded and result.cost_usd == pytest.approx(1.0 + 1.0)


def test_a_model_that_answers_with_no_choices_fails_its_task_with_a_clear_error(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, on_stub(NOTES_YAML, stub.url))
    stub.script(no_choices(), no_choices())

    result = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert result.status == "failed" and result.tasks == {"notes": "failed"}
    notes = task_status(workspace, "notes")
    assert "gave no answer" in notes["error"] and "no choices" in notes["error"]
    assert not (workspace / "tasks" / "notes" / "output.md").exists()


# -- tools -------------------------------------------------------------------------------------


def test_tool_calls_write_task_files_and_memory_and_are_logged(
    settings: Settings,
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(
        manager, make_spec, on_stub(NOTES_YAML, stub.url, model="openai/gpt-4o-mini")
    )
    stub.script(
        tool_call("write_file", {"path": "extra/facts.md", "content": "# Facts\n\n- one\n"}),
        tool_call(
            "memory_append",
            {"section": "Insights", "text": "- The notes need a changelog."},
            call_id="call_stub_2",
        ),
        answer("Notes written."),
    )

    result = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert result.succeeded and result.turns == 1
    assert (workspace / "tasks" / "notes" / "extra" / "facts.md").read_text() == (
        "# Facts\n\n- one\n"
    )
    assert (workspace / "tasks" / "notes" / "output.md").read_text() == "Notes written.\n"
    memory = (workspace / "agents" / "writer" / "memory.md").read_text(encoding="utf-8")
    assert "- The notes need a changelog." in memory
    log = events(result)
    tools = of_kind(log, "tool_call")
    assert [(e["agent"], e["tool"]) for e in tools] == [
        ("writer", "write_file"),
        ("writer", "memory_append"),
    ]
    assert tools[0]["result"].startswith("wrote tasks/notes/extra/facts.md")
    assert tools[1]["result"].startswith("saved to")
    assert len(of_kind(log, "model_call")) == 3
    offered = {t["function"]["name"] for t in stub.bodies[0]["tools"]}
    assert {"write_file", "read_file", "list_files", "memory_append"} <= offered
    assert stub.bodies[1]["messages"][-1]["role"] == "tool"
    messages = manager.store.conversation.messages("tooled", "writer")
    assert [(m.role.value, m.tool_name) for m in messages] == [
        ("user", None),
        ("tool", "write_file"),
        ("tool", "memory_append"),
        ("assistant", None),
    ]


def test_a_tool_call_with_broken_json_is_refused_to_the_model_which_calls_again(
    manager: SquadManager,
    make_spec: MakeSpec,
    stub: OpenAIStubServer,
    stub_key: None,
    app: App,
) -> None:
    spec, workspace = create(manager, make_spec, on_stub(NOTES_YAML, stub.url))
    stub.script(
        malformed_tool_arguments("write_file", '{"path": "extra/facts.md", "content": "x'),
        tool_call("write_file", {"path": "extra/facts.md", "content": "- one\n"}),
        answer("Notes written."),
    )

    result = app.runner(model_factory=fast_models()).run(spec, workspace)

    assert result.succeeded and result.tasks == {"notes": "done"}
    assert (workspace / "tasks" / "notes" / "extra" / "facts.md").read_text() == "- one\n"
    refusal = stub.bodies[1]["messages"][-1]
    assert refusal["role"] == "tool" and refusal["content"].startswith(
        'refused: the arguments are not a JSON object: \'{"path": "extra/facts.md"'
    )
    assert "call write_file again with one JSON object" in refusal["content"]
    tools = of_kind(events(result), "tool_call")
    assert tools[0]["result"].startswith("refused: the arguments are not a JSON object")
    assert tools[1]["result"].startswith("wrote tasks/notes/extra/facts.md")


def test_resuming_a_finished_run_or_one_without_a_checkpoint_is_refused(
    settings: Settings,
    manager: SquadManager,
    app: App,
) -> None:
    from squad.spec.loader import squad_from_text

    spec = squad_from_text(BASIC_YAML)
    workspace = manager.create(spec).path
    runner = app.runner()
    finished = runner.run(spec, workspace)
    assert finished.succeeded
    with pytest.raises(UsageError, match="already ended"):
        runner.resume(finished.run_id)
    orphan = manager.store.create_run(spec.name)
    with pytest.raises(UsageError, match="has no checkpoint"):
        runner.resume(orphan.id)


def test_a_write_failure_stops_the_run_resumably_without_a_traceback(
    settings: Settings,
    manager: SquadManager,
    app: App,
) -> None:
    from squad.errors import WorkspaceError
    from squad.spec.loader import squad_from_text

    spec = squad_from_text(BASIC_YAML)
    workspace = manager.create(spec).path
    runner = app.runner()
    blocker = workspace / "tasks" / "draft"
    blocker.write_text("a file where the task folder should be")  # stands in for a full disk
    with pytest.raises(WorkspaceError, match="squad resume"):
        runner.run(spec, workspace)
    run = manager.store.list_runs(spec.name)[0]
    assert run.status == RunStatus.INTERRUPTED and "cannot write" in (run.error or "")
    assert (workspace / "tasks" / "outline" / "output.md").is_file()
    blocker.unlink()
    resumed = runner.resume(run.id)
    assert resumed.succeeded and resumed.tasks == {"outline": "done", "draft": "done"}
