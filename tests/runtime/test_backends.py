"""The whole product on each store backend: the same code on SQLite and on PostgreSQL.

The store's contract tests prove each store method on both backends; this proves what is
built on them: the example squads run (sequential with an approval, hierarchical with a
plan and reviews), a run stopped mid-way resumes, a chat feeds the background extractor,
memory gc runs, and the daemon starts, runs and beats. All on the offline model, through
litellm, with the SQLite checkpointer beside the store as in production.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.daemon.service import Daemon
from squad.manager import SquadManager
from squad.memory.gc import run_gc
from squad.settings import Settings
from squad.store import RunStatus, Store

EXAMPLES = Path(__file__).resolve().parents[2] / "configs" / "squads"
CHAT = [
    "We deploy the docs site with GitHub Pages from the main branch.",
    "What should the first page cover?",
    "The docs search index runs on PostgreSQL 16.",
    "Thanks, and the second page?",
    "Our style guide requires American spelling in every page.",
    "Good. What about the third page?",
    "Release notes go out every second Tuesday.",
]


@pytest.fixture
def settings(tmp_path: Path, store_url: str) -> Settings:
    configs = tmp_path / "configs"
    (configs / "squads").mkdir(parents=True)
    for example in EXAMPLES.glob("*.yaml"):
        shutil.copy(example, configs / "squads" / example.name)
    return Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(configs),
            "SQUAD_DATABASE_URL": store_url,
        },
        cwd=tmp_path,
    )


@pytest.fixture
def manager(app: App) -> SquadManager:
    return app.squads


def test_the_example_squads_run_pause_for_approval_and_resume(
    settings: Settings,
    manager: SquadManager,
    app: App,
) -> None:
    docs, _ = manager.create_from_file(settings.squads_dir / "docs-site.yaml")
    review, _ = manager.create_from_file(settings.squads_dir / "code-review.yaml")
    runner = app.runner()
    try:
        paused = runner.run(docs, manager.locate("docs-site").path)
        assert paused.status == "awaiting_approval" and paused.awaiting == "publish"
        done = runner.approve(paused.run_id, "publish", approved=True)
        planned = runner.run(review, manager.locate("code-review").path)
    finally:
        app.drain_extraction()

    assert done.succeeded and set(done.tasks.values()) == {"done"}
    assert planned.succeeded, planned.error
    store = manager.store
    for result in (done, planned):
        run = store.get_run(result.run_id)
        assert run is not None and run.status is RunStatus.SUCCEEDED
        assert {t.status for t in store.run_state.tasks(result.run_id)} == {"done"}
        assert store.spend.of_run(result.run_id).calls >= len(result.tasks)
    messages = store.conversation.messages("docs-site", "writer", run_id=done.run_id)
    assert [m.role for m in messages].count("assistant") >= 2
    workspace = manager.locate("code-review").path
    assert (workspace / "plans" / "plan-001.md").is_file()


def test_a_stopped_run_resumes_without_redoing_finished_tasks(
    settings: Settings,
    manager: SquadManager,
    app: App,
) -> None:
    docs, _ = manager.create_from_file(settings.squads_dir / "docs-site.yaml")

    def stop_after_outline(line: str) -> None:
        if line == "outline: done":
            runner.stop.set()

    runner = app.runner(progress=stop_after_outline)
    try:
        stopped = runner.run(docs, manager.locate("docs-site").path)
        assert stopped.status == "interrupted" and stopped.tasks["outline"] == "done"
        resumed = app.runner().resume(stopped.run_id)
    finally:
        app.drain_extraction()
    assert resumed.status == "awaiting_approval"
    spend = manager.store.spend.of_run(stopped.run_id)
    assert spend.calls == 3  # outline, draft, review: each once, none redone
    # The checkpoints live beside a SQLite store, and in a Postgres store's own database.
    expected = "postgres" if settings.database_url.startswith("postgresql") else "sqlite"
    assert app.checkpoints.backend == expected
    assert stopped.run_id in app.checkpoints.threads()
    sqlite_file = settings.home / "checkpoints.sqlite"
    assert sqlite_file.is_file() == (expected == "sqlite")


def test_a_chat_feeds_the_extractor_and_gc_runs(
    settings: Settings, manager: SquadManager, app: App
) -> None:
    manager.create_from_file(settings.squads_dir / "docs-site.yaml")
    runner = app.runner()
    try:
        chat = ChatSession.open(runner, "docs-site", "planner")
        for text in CHAT:
            chat.say(text)
    finally:
        app.drain_extraction()  # lets the queued extraction pass finish

    store = manager.store
    [extraction] = store.extraction.runs("docs-site", "planner")
    assert extraction.status == "done" and len(extraction.written) >= 1
    memory = (manager.locate("docs-site").path / "agents" / "planner" / "memory.md").read_text()
    assert "PostgreSQL 16" in memory
    report = run_gc(store, manager.workspace_paths(), now=datetime.now(UTC), dry_run=False)
    assert (report.expired, report.dormant) == (0, 0)  # nothing fresh decays


def test_the_daemon_runs_the_on_start_squad_and_beats(settings: Settings) -> None:
    with Store.open(settings.database_url) as store:
        assert (
            Daemon(App.open(settings, store=store), exit_when_idle=True, auto_approve=True).run()
            == 0
        )
        [run] = store.list_runs("docs-site")
        assert (run.status, run.trigger) == (RunStatus.SUCCEEDED, "on_start")
        heartbeat = store.daemon.get(str(settings.home))
        assert heartbeat is not None and heartbeat.stopped_at is not None


@pytest.mark.postgres
@pytest.mark.parametrize("store_url", ["postgres"], indirect=True)
def test_checkpoints_a_move_to_postgres_left_behind_are_reported_and_never_lost(
    settings: Settings, manager: SquadManager, app: App
) -> None:
    """The home ran on SQLite, then its store moved to PostgreSQL: the old checkpoint file is
    kept and named, a resume of a run it holds is refused with the reason, and the daemon
    leaves that run resumable instead of failing it."""
    from squad.checkpoints.sqlite import SqliteCheckpoints
    from squad.daemon.status import collect_status
    from squad.errors import UsageError

    manager.create_from_file(settings.squads_dir / "docs-site.yaml")
    run = manager.store.create_run("docs-site", trigger="on_start")
    manager.store.update_run(run.id, status=RunStatus.INTERRUPTED)
    old = SqliteCheckpoints(settings.home / "checkpoints.sqlite")
    with old.saver() as saver:
        from langgraph.checkpoint.base import empty_checkpoint

        config: Any = {"configurable": {"thread_id": run.id, "checkpoint_ns": ""}}
        saver.put(config, empty_checkpoint(), {}, {})

    with pytest.raises(UsageError, match="from before this home's store moved to PostgreSQL"):
        app.runner().resume(run.id)
    checkpoints = collect_status(app, now=datetime.now(UTC)).checkpoints
    assert checkpoints is not None and checkpoints.backend == "postgres"
    assert checkpoints.left_behind is not None and checkpoints.left_behind.runs == [run.id]

    for name in ("code-review.yaml",):
        (settings.squads_dir / name).unlink()
    assert Daemon(app, exit_when_idle=True, auto_approve=True).run() == 0
    log = [json.loads(line) for line in (settings.home / "daemon.jsonl").read_text().splitlines()]
    [kept] = [e for e in log if e["event"] == "checkpoints_left_behind"]
    assert kept["runs"] == 1
    [skipped] = [e for e in log if e["event"] == "resume_skipped"]
    assert skipped["run_id"] == run.id and "not migrated" in skipped["reason"]
    still = manager.store.get_run(run.id)
    assert still is not None and still.status is RunStatus.INTERRUPTED
    assert old.threads() == [run.id]
