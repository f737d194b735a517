"""Working memory in real runs: the system prompt of each turn the model receives ends with the
agent's task, the files its file tool touched, what it decided with ``working_memory_update``
and what remains; the run's end moves it to the daily log and removes its file; a file left
behind by a run that never ended is summarised and replaced; a paused or interrupted run keeps
its own.

Models are the OpenAI stub server on 127.0.0.1 (through litellm) or the built-in offline model;
a model double appears only to die mid-run, wrapped around the real offline model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.memory.agent import AgentContext
from squad.memory.working import WorkingMemory, touch_file
from squad.memory.working_file import WorkingMemoryFile, working_runs
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy, model_for
from squad.model.stub_answers import answer, tool_call
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.runtime.run_result import RunResult
from squad.runtime.runlog import read_events, run_log_path
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec
from tests.conftest import BASIC_YAML
from tests.runtime.test_runner import DiesOnCall

FAST_RETRY = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)

WRITERS_YAML = """\
name: writers
model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {prices}}}
agents:
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: draft, description: Write the guide., agent: writer}}
  - {{id: publish, description: Publish the guide., agent: writer, depends_on: [draft]}}
"""

GATED_YAML = """\
name: gated
agents:
  - {id: planner, role: Plans the work}
  - {id: writer, role: Writes the pages}
tasks:
  - {id: outline, description: Outline the guide., agent: planner}
  - {id: draft, description: Write the guide., agent: writer, depends_on: [outline], approval: true}
"""


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def _litellm(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
    return LiteLLMModel(spec, on_event=on_event, retry=FAST_RETRY, sleep=lambda _: None)


def _system(body: Any) -> str:
    return str(body["messages"][0]["content"])


def _tool_messages(body: Any) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def _working_section(system: str) -> str:
    assert system.count("## Working memory") == 1
    return system[system.index("## Working memory") :]


def _daily(workspace: Path, agent: str) -> str:
    return "\n".join(p.read_text() for p in (workspace / "agents" / agent / "daily").glob("*.md"))


def _events(result: RunResult, kind: str) -> list[dict[str, Any]]:
    log = read_events(run_log_path(result.workspace, result.run_id))
    return [e for e in log if e["event"] == kind]


def _file(workspace: Path, agent: str, run_id: str) -> WorkingMemoryFile:
    return WorkingMemoryFile(workspace, agent, run_id)


def _left(workspace: Path, agent: str) -> list[str]:
    return working_runs(workspace, agent)


def test_the_prompt_ends_with_the_task_files_decisions_and_what_remains(
    app: App, stub: OpenAIStubServer
) -> None:
    spec = squad_from_text(WRITERS_YAML.format(url=stub.url, prices=FREE_PRICES), source="w.yaml")
    workspace = app.squads.create(spec).path
    stub.script(
        tool_call("write_file", {"path": "guide.md", "content": "# Guide\n"}),
        tool_call(
            "working_memory_update",
            {"decisions": "Use MkDocs", "blockers": "No DNS name yet"},
            call_id="call_2",
        ),
        answer("The guide is in guide.md."),
        answer("Published."),
    )

    result = app.runner(model_factory=_litellm).run(spec, workspace)

    assert result.succeeded, result.error
    assert "working_memory_update" in {t["function"]["name"] for t in stub.bodies[0]["tools"]}
    first = _working_section(_system(stub.bodies[0]))
    assert first.startswith("## Working memory\n<untrusted-memory>\n")
    assert "Task: draft: Write the guide." in first
    assert "Remaining:\n- publish: Publish the guide." in first
    assert "Files touched" not in first
    assert _system(stub.bodies[2]) == _system(stub.bodies[0])  # built once per turn
    [receipt] = _tool_messages(stub.bodies[2])[1:]
    assert (
        receipt == "working memory updated: decisions 1, blockers 1, done 0, remaining 1, notes 0"
    )
    publish = _working_section(_system(stub.bodies[3]))
    assert "Task: publish: Publish the guide." in publish
    assert "Task: draft" not in publish and "Done:\n- draft: Write the guide." in publish
    assert "Files touched (newest last): tasks/draft/guide.md" in publish
    assert "Decisions:\n- Use MkDocs" in publish and "Blockers:\n- No DNS name yet" in publish
    assert "Remaining:" not in publish

    assert _left(workspace, "writer") == []
    daily = _daily(workspace, "writer")
    assert f"Working memory of run {result.run_id}, which ended succeeded:" in daily
    assert "- Done: draft: Write the guide.; publish: Publish the guide." in daily
    assert "- Decisions: Use MkDocs" in daily and "- Files touched: tasks/draft/guide.md" in daily
    assert [e["agent"] for e in _events(result, "working_memory_summarised")] == ["writer"]
    ctx = AgentContext.of(spec, "writer", workspace)
    assert app.memory.working_memory(ctx) is None


def test_a_working_memory_a_dead_run_left_is_summarised_and_replaced(
    app: App, stub: OpenAIStubServer
) -> None:
    spec = squad_from_text(WRITERS_YAML.format(url=stub.url, prices=FREE_PRICES), source="w.yaml")
    workspace = app.squads.create(spec).path
    _file(workspace, "writer", "dead-run").update(lambda s: touch_file(s, "tasks/old/notes.md"))
    stub.script(answer("Draft."), answer("Published."))

    result = app.runner(model_factory=_litellm).run(spec, workspace)

    assert result.succeeded, result.error
    first = _working_section(_system(stub.bodies[0]))
    assert "tasks/old/notes.md" not in first and "Task: draft: Write the guide." in first
    daily = _daily(workspace, "writer")
    assert "Working memory of run dead-run, which was left behind by a run that did not" in daily
    assert "- Files touched: tasks/old/notes.md" in daily
    assert daily.index("run dead-run") < daily.index(f"run {result.run_id}")
    [found] = _events(result, "working_memory_left_behind")
    assert found["previous_run"] == "dead-run" and found["agent"] == "writer"
    assert _left(workspace, "writer") == []


def test_a_run_waiting_for_approval_keeps_its_working_memory_until_it_ends(app: App) -> None:
    spec = squad_from_text(GATED_YAML, source="gated.yaml")
    workspace = app.squads.create(spec).path

    paused = app.runner().run(spec, workspace)

    assert paused.status == "awaiting_approval"
    planner = _file(workspace, "planner", paused.run_id).read()
    assert planner is not None and planner.run_id == paused.run_id
    assert planner.state == WorkingMemory(done=("outline: Outline the guide.",))
    assert _daily(workspace, "planner") == ""
    other = app.runner().run(spec, workspace)  # another run meanwhile, paused at the gate too
    assert other.status == "awaiting_approval"
    assert _left(workspace, "planner") == sorted([paused.run_id, other.run_id])

    done = app.runner().approve(paused.run_id, "draft", approved=True)

    assert done.succeeded
    assert _left(workspace, "planner") == [other.run_id]
    assert _left(workspace, "writer") == []  # its task waited; it began after the approval
    assert "left behind" not in _daily(workspace, "planner")
    assert f"run {paused.run_id}, which ended succeeded" in _daily(workspace, "planner")
    assert "- Done: draft: Write the guide." in _daily(workspace, "writer")


def test_a_resumed_run_keeps_the_working_memory_it_had_when_killed(app: App) -> None:
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")
    workspace = app.squads.create(spec).path
    models: list[DiesOnCall] = []

    def factory(die_on: int | None) -> Callable[..., ChatModel]:
        def make(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
            models.append(DiesOnCall(model_for(spec, on_event), die_on))
            return models[-1]

        return make

    interrupted = app.runner(model_factory=factory(die_on=2)).run(spec, workspace)
    assert interrupted.status == "interrupted"
    writer = _file(workspace, "writer", interrupted.run_id).read()
    assert writer is not None and writer.state.tasks == ("draft: Write the guide.",)
    _file(workspace, "writer", interrupted.run_id).update(
        lambda s: touch_file(s, "tasks/draft/notes.md")
    )

    resumed = app.runner(model_factory=factory(die_on=None)).resume(interrupted.run_id)

    assert resumed.succeeded
    [system] = models[-1].systems
    assert "Files touched (newest last): tasks/draft/notes.md" in _working_section(system)
    daily = _daily(workspace, "writer")
    assert daily.count("Working memory of run") == 1 and "left behind" not in daily
    assert "- Files touched: tasks/draft/notes.md" in daily
