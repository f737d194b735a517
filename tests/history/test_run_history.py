"""Runs in the workspace's history: a commit per run with its figures, runs listed and
diffed from it, a late approval that never writes over newer runs, memory changes of a run."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2
import pytest

from squad.app import App
from squad.errors import NotFound, UsageError
from squad.history.log import commits, run_entries
from squad.history.message import parse_trailers
from squad.model.testing import OpenAIStubServer
from squad.settings import Settings
from squad.spec.models import SquadSpec
from squad.store import RunStatus
from tests.runtime.test_runner import on_stub

MakeSpec = Callable[..., SquadSpec]

GATED = """\
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

PLAIN = """\
name: weekly
goal: Audit the dependencies.
agents:
  - {id: auditor, role: Audits dependencies}
tasks:
  - {id: audit, description: List outdated dependencies., agent: auditor}
"""


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    """A model that answers with the task's prompt, goal included: runs differ by goal."""
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def repo(workspace: Path) -> pygit2.Repository:
    return pygit2.Repository(str(workspace))


def subjects(workspace: Path) -> list[str]:
    return [c.message.split("\n", 1)[0] for c in commits(repo(workspace))]


def test_each_run_is_a_commit_named_on_the_run_with_its_tasks_and_figures(
    app: App, make_spec: MakeSpec, stub: OpenAIStubServer
) -> None:
    spec = make_spec(on_stub(PLAIN, stub.url))
    workspace = app.squads.create(spec).path
    first = app.runner().run(spec, workspace, goal="Audit for week 1.")
    second = app.runner().run(spec, workspace, goal="Audit for week 2.")
    assert subjects(workspace) == [
        f"run {second.run_id} succeeded: weekly (manual)",
        f"run {first.run_id} succeeded: weekly (manual)",
        "history starts: weekly",
    ]
    head = str(repo(workspace).head.target)
    assert str(repo(workspace).references[f"refs/runs/{second.run_id}"].target) == head
    trailers = parse_trailers(repo(workspace)[repo(workspace).head.target].message)
    assert trailers.get("Squad-Tokens-In") == str(second.prompt_tokens)
    assert trailers.all("Squad-Task") == ["audit auditor done"]
    assert repo(workspace).status() == {}, "nothing the run wrote is left out"

    listed = app.runs.recent("weekly")
    assert [v.run_id for v in listed] == [second.run_id, first.run_id]
    assert listed[0].commit == head and listed[0].source == "history"

    diff = app.runs.diff(second.run_id)
    assert diff.old_run == first.run_id
    paths = [c.path for c in diff.stat]
    (daily,) = [p for p in paths if p.startswith("agents/auditor/daily/")]  # working memory
    assert [p for p in paths if p != daily] == ["tasks/audit/output.md", "tasks/audit/status.json"]
    assert diff.patch is not None and "+" in diff.patch and "week 2" in diff.patch
    only = app.runs.diff(second.run_id, paths=["tasks/audit/output.md"])
    assert [c.path for c in only.stat] == ["tasks/audit/output.md"]
    assert "status.json" not in (only.patch or "")
    shown = app.runs.show(second.run_id[:8])
    assert shown.previous == first.run_id
    assert {c.path for c in shown.changes} == {
        daily,
        "tasks/audit/output.md",
        "tasks/audit/status.json",
    }


def test_an_unknown_run_or_one_of_another_squad_is_refused(app: App, make_spec: MakeSpec) -> None:
    plain = make_spec(PLAIN)
    other = make_spec(PLAIN.replace("name: weekly", "name: monthly"))
    a = app.runner().run(plain, app.squads.create(plain).path)
    b = app.runner().run(other, app.squads.create(other).path)
    with pytest.raises(NotFound):
        app.runs.diff("0123456789abcdef")
    with pytest.raises(UsageError, match="different squads"):
        app.runs.diff(a.run_id, b.run_id)
    with pytest.raises(UsageError, match="too short"):
        app.runs.show("ab")


def test_an_old_run_approved_after_a_newer_one_finished_writes_its_outputs_apart(
    app: App, make_spec: MakeSpec, stub: OpenAIStubServer
) -> None:
    spec = make_spec(on_stub(GATED, stub.url))
    workspace = app.squads.create(spec).path
    old = app.runner().run(spec, workspace, goal="Old goal: the 2025 guide.")
    assert old.status == "awaiting_approval"
    old_outline = (workspace / "tasks/outline/output.md").read_bytes()
    new = app.runner().run(spec, workspace, goal="New goal: the 2026 guide.")
    done_new = app.runner().approve(new.run_id, "draft", approved=True)
    assert done_new.succeeded
    newer = {
        p: (workspace / "tasks" / p / "output.md").read_bytes()
        for p in ("outline", "draft", "publish")
    }

    late = app.runner().approve(old.run_id, "draft", approved=True)

    assert late.succeeded
    own = workspace / "runs" / old.run_id / "tasks"
    for task in ("outline", "draft", "publish"):
        assert (workspace / "tasks" / task / "output.md").read_bytes() == newer[task]
        assert (own / task / "output.md").is_file()
    assert (own / "outline" / "output.md").read_bytes() == old_outline, (
        "the late run's own earlier work is its input, not the newer run's"
    )
    assert b"2025" in old_outline and b"2026" in newer["outline"]
    assert b"2025" in (own / "draft" / "output.md").read_bytes()
    assert b"2025" in (own / "publish" / "output.md").read_bytes()
    entry = run_entries(repo(workspace))[0]
    assert (entry.run_id, entry.outputs) == (old.run_id, f"runs/{old.run_id}/tasks")
    head = repo(workspace)[repo(workspace).head.target]
    changed = {p.delta.new_file.path for p in repo(workspace).diff(head.parents[0], head)}
    # its outputs apart; its agents' working memory summaries appended to their daily logs
    outputs = {path for path in changed if not re.match(r"agents/[\w-]+/daily/", path)}
    assert outputs and all(path.startswith(f"runs/{old.run_id}/") for path in outputs), changed
    tasks = {t.task_id: t.output for t in app.store.run_state.tasks(old.run_id)}
    assert tasks["publish"] == f"runs/{old.run_id}/tasks/publish/output.md"


def test_a_paused_run_is_committed_when_it_pauses_and_again_when_it_ends(
    app: App, make_spec: MakeSpec
) -> None:
    spec = make_spec(GATED)
    workspace = app.squads.create(spec).path
    paused = app.runner().run(spec, workspace)
    assert subjects(workspace)[0] == f"run {paused.run_id} awaiting_approval: gated (manual)"
    app.runner().approve(paused.run_id, "draft", approved=True)
    assert subjects(workspace)[0] == f"run {paused.run_id} succeeded: gated (manual)"
    assert [v.status for v in app.runs.recent("gated")] == ["succeeded"], "listed once"


def test_history_off_keeps_no_repository_and_lists_runs_from_the_store(
    settings: Settings, make_spec: MakeSpec
) -> None:
    from dataclasses import replace

    off = replace(settings, history=settings.history.model_copy(update={"enabled": False}))
    with App.open(off) as app:
        spec = make_spec(PLAIN)
        workspace = app.squads.create(spec).path
        result = app.runner().run(spec, workspace)
        assert not (workspace / ".git").exists()
        listed = app.runs.recent("weekly")
        assert [(v.run_id, v.source) for v in listed] == [(result.run_id, "store")]
        record = app.store.get_run(result.run_id)
        assert record is not None and record.status is RunStatus.SUCCEEDED


def test_a_corrupt_history_never_blocks_a_run_and_is_reported_by_status_and_health(
    app: App, make_spec: MakeSpec
) -> None:
    from squad.daemon.status import collect_status
    from squad.eventlines import read_events
    from squad.runtime.runlog import run_log_path

    spec = make_spec(PLAIN)
    workspace = app.squads.create(spec).path
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git" / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    events: list[tuple[str, dict[str, object]]] = []
    app.on_history_event(lambda event, fields: events.append((event, fields)))

    result = app.runner().run(spec, workspace)

    assert result.succeeded
    assert (workspace / "tasks" / "audit" / "output.md").is_file()
    log = read_events(run_log_path(workspace, result.run_id))
    assert any(e["event"] == "history_paused" for e in log)
    assert events and events[0][0] == "history_paused"
    assert "damaged" in str(events[0][1]["reason"])
    status = collect_status(app, now=app.clock())
    assert [(p.squad, p.state) for p in status.history_paused] == [("weekly", "broken")]
    health = app.history(workspace, "weekly").health()
    assert health.paused and health.state == "broken"


def test_a_history_lock_held_too_long_never_stops_a_run_or_a_memory_write(
    app: App, make_spec: MakeSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import squad.history.lock as history_lock

    spec = make_spec(PLAIN)
    workspace = app.squads.create(spec).path
    head = subjects(workspace)
    monkeypatch.setattr(history_lock, "LOCK_TIMEOUT_S", 0.2)
    events: list[str] = []
    app.on_history_event(lambda event, fields: events.append(str(fields["reason"])))
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:  # another process's commit that does not end
        with history_lock.exclusive(workspace):
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait(5)
    try:
        result = app.runner().run(spec, workspace)
        ctx = app.agent("weekly", "auditor")
        app.memory.remember(ctx, "Written while the lock was held", layer="project")
    finally:
        release.set()
        holder.join()
    assert result.succeeded
    memory = (workspace / "agents" / "auditor" / "memory.md").read_text()
    assert "Written while the lock was held" in memory
    assert subjects(workspace) == head, "nothing committed while the lock was held"
    assert events and all("held" in reason for reason in events)
    app.runner().run(spec, workspace)  # the next run commits what was left
    assert repo(workspace).status() == {}
