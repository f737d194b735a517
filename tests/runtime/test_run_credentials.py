"""A credential given to a run (in its goal, or an approval's reason) never reaches the disk:
not the stored conversation, the run log, a task's output, the plan, the checkpoints (tasks,
review feedback, approvals), working memory, memory or decisions, nor the runs table.

The lead, the worker and the reviewer are :mod:`tests.support.echo_model` on the OpenAI stub
server: each repeats what it read raw, in its plan, its answer and every write tool it has. The
goals carry one class each: a provider token, a password in prose, and a password the worker
then repeats where the detector alone would not see it ("OK, Blu3Whale$2024 is saved").
:func:`tests.support.leaks.assert_nowhere_on_disk` searches every file, SQLite row (store and
checkpoints) and git object under the test's folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.model.stub_answers import Behaviour, status
from squad.model.testing import OpenAIStubServer
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from tests.runtime.test_runner import GATED_YAML, TEAM_YAML, on_stub
from tests.support.echo_model import echoing
from tests.support.leaks import assert_nowhere_on_disk
from tests.text.secrets_corpus import URLSAFE, fake

KEY = "sk-" + "proj-" + fake(URLSAFE, 40)
PASSWORD = "Blu3Whale$2024"


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=echoing) as server:
        yield server


def test_a_goals_credential_and_every_echo_of_it_stay_off_the_disk(
    settings: Settings, app: App, stub: OpenAIStubServer, tmp_path: Path
) -> None:
    spec = squad_from_text(on_stub(TEAM_YAML, stub.url), source="team.yaml")
    workspace = app.squads.create(spec).path
    runner = app.runner()
    goals = [
        f"Deploy the docs with the key {KEY}.",
        f"Deploy the docs; my password is {PASSWORD}, remember it.",
    ]
    results = [runner.run(spec, workspace, goal=goal) for goal in goals]
    app.drain_extraction()

    assert all(r.succeeded for r in results), [r.error for r in results]
    # The worker repeated the value raw, in its answer and with each write tool it had.
    rows = runner.store.conversation.messages("team", "writer")
    assert any(m.content.startswith("OK, [REDACTED:echo] is saved.") for m in rows)
    refused = [m.tool_name for m in rows if m.role == "tool" and m.content.startswith("refused")]
    assert refused == ["memory_append", "decision_record", "working_memory_update"]
    output = (workspace / "tasks" / "work" / "output.md").read_text(encoding="utf-8")
    assert output.startswith("OK, [REDACTED:echo] is saved.")
    plan = (workspace / "plans" / "plan-002.md").read_text(encoding="utf-8")
    assert "Deploy with [REDACTED:" in plan
    assert Path(app.checkpoints.where).is_relative_to(tmp_path)  # searched below
    for value in (KEY, PASSWORD):
        assert_nowhere_on_disk(value, tmp_path)


def test_a_rejection_reason_with_a_credential_is_kept_redacted(
    settings: Settings, app: App, tmp_path: Path
) -> None:
    spec = squad_from_text(GATED_YAML, source="gated.yaml")
    workspace = app.squads.create(spec).path
    runner = app.runner()
    paused = runner.run(spec, workspace)
    assert paused.awaiting == "draft"

    result = runner.approve(
        paused.run_id, "draft", approved=False, reason=f"not with the key {KEY} in it"
    )

    assert result.tasks["draft"] == "failed"
    task = runner.store.run_state.get_task(paused.run_id, "draft")
    assert task is not None and "[REDACTED:openai_api_key]" in (task.error or "")
    assert_nowhere_on_disk(KEY, tmp_path)


def test_a_logged_tool_answer_is_never_cut_inside_a_value_the_run_found() -> None:
    from squad.runtime.mcp_client.journal import bound_answer

    answer = "a" * 295 + f" {PASSWORD} " + "b" * 200
    cut, _ = bound_answer(answer, 300, known=[PASSWORD])
    assert cut.startswith("a" * 295) and "Blu3" not in cut


def _echoed_in_an_error(body: Any) -> Behaviour:
    """A gateway that quotes the request back in its error (some do, on a 400)."""
    said = " ".join(str(m.get("content") or "") for m in body.get("messages", []))
    goal = re.search(r"^Goal: .*$", said, re.M)
    return status(400, f"invalid request near: {goal[0] if goal else said[:200]}")


def test_a_model_error_that_quotes_the_goals_credential_is_kept_redacted(
    settings: Settings, app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lead's call fails with the goal in the provider's message: the run stops with that
    # message as its error, in the runs table, the run log and the checkpoint's state.
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=_echoed_in_an_error) as server:
        spec = squad_from_text(on_stub(TEAM_YAML, server.url), source="team.yaml")
        workspace = app.squads.create(spec).path
        result = app.runner().run(spec, workspace, goal=f"Deploy the docs with the key {KEY}.")

    assert not result.succeeded
    assert result.error is not None and "[REDACTED:" in result.error
    assert_nowhere_on_disk(KEY, tmp_path)
