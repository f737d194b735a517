"""Background jobs: retention prunes old run logs and old runs' checkpoints, never memory
files and never what an unfinished run needs; consolidation runs memory gc."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.checkpoints import Checkpoints
from squad.clock import FrozenClock
from squad.daemon.jobs import (
    LogFile,
    find_run_logs,
    logs_to_prune,
    orphans_to_prune,
    plans_to_prune,
    prune_plans,
    run_consolidation,
    run_retention,
    unread_agents,
)
from squad.settings import RetentionSettings, Settings
from squad.store import FactStatus, RunStatus, Store

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
MB = 1024 * 1024


def log(run_id: str, age_days: float, size: int = 10) -> LogFile:
    return LogFile(Path(f"/ws/logs/run-{run_id}.jsonl"), run_id, NOW - age_days * DAY, size)


def test_logs_past_the_age_go_and_recent_ones_stay() -> None:
    doomed = logs_to_prune(
        [log("old", 31), log("new", 2), log("edge", 29)],
        now=NOW,
        max_age=30 * DAY,
        max_bytes=MB,
    )
    assert [d.run_id for d in doomed] == ["old"]


def test_past_the_size_cap_the_oldest_logs_go_first_until_under_it() -> None:
    logs = [log("a", 5, 40), log("b", 4, 40), log("c", 3, 40), log("d", 1, 40)]
    doomed = logs_to_prune(logs, now=NOW, max_age=30 * DAY, max_bytes=100)
    assert [d.run_id for d in doomed] == ["a", "b"]


def test_logs_of_unfinished_runs_stay_whatever_their_age_and_size() -> None:
    logs = [log("paused", 90, 500), log("a", 5, 40), log("b", 1, 40)]
    doomed = logs_to_prune(logs, now=NOW, max_age=30 * DAY, max_bytes=100, keep={"paused"})
    assert [d.run_id for d in doomed] == ["a", "b"]  # the kept log still counts toward the cap


def test_only_run_logs_are_found_in_a_workspace(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("run-abc.jsonl", "memory-audit.jsonl", "run-.jsonl", "notes.txt"):
        (logs / name).write_text("{}\n")
    (logs / "run-link.jsonl").symlink_to(logs / "memory-audit.jsonl")
    assert [f.run_id for f in find_run_logs(tmp_path)] == ["abc"]
    assert find_run_logs(tmp_path / "missing") == []


def _checkpoint(checkpoints: Checkpoints, *threads: str, written: datetime | None = None) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    with checkpoints.saver() as saver:
        for thread in threads:
            config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            checkpoint = empty_checkpoint()
            if written is not None:
                checkpoint["ts"] = written.isoformat()
            saver.put(config, checkpoint, {}, {})


def test_orphans_are_unknown_runs_last_written_before_the_cutoff() -> None:
    written = {"gone-old": NOW - 40 * DAY, "gone-new": NOW - DAY, "known-old": NOW - 90 * DAY}
    assert orphans_to_prune(written, {"known-old"}, before=NOW - 30 * DAY) == ["gone-old"]


@pytest.fixture
def store(settings: Settings, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(settings.database_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def app(settings: Settings, store: Store, clock: FrozenClock) -> Iterator[App]:
    with App.open(settings, store=store, clock=clock) as opened:
        yield opened


def retain(app: App, workspaces: list[Path], **options: Any) -> Any:
    options.setdefault("policy", app.settings.daemon.retention)
    return run_retention(app.store, app.checkpoints, workspaces, now=NOW, **options)


def _old(path: Path, text: str = "x\n", days: float = 60) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = (NOW - days * DAY).timestamp()
    os.utime(path, (stamp, stamp))
    return path


def test_retention_prunes_old_logs_and_checkpoints_but_never_memory_or_unfinished_runs(
    settings: Settings, store: Store, clock: FrozenClock, app: App
) -> None:
    workspace = settings.workspaces / "docs"
    store.upsert_squad("docs", workspace=str(workspace), source=None, definition_sha256="0" * 64)
    clock.now = NOW - 60 * DAY
    ids = {}
    for name, status in (
        ("old", RunStatus.SUCCEEDED),
        ("failed", RunStatus.FAILED),
        ("paused", RunStatus.AWAITING_APPROVAL),
        ("interrupted", RunStatus.INTERRUPTED),
    ):
        run = store.create_run("docs")
        store.update_run(run.id, status=RunStatus.RUNNING)
        store.update_run(run.id, status=status)
        ids[name] = run.id
    clock.now = NOW - 2 * DAY
    recent = store.create_run("docs")
    store.update_run(recent.id, status=RunStatus.SUCCEEDED)
    ids["recent"] = recent.id
    clock.now = NOW
    _checkpoint(app.checkpoints, *ids.values())
    for name, run_id in ids.items():
        _old(workspace / "logs" / f"run-{run_id}.jsonl", days=2 if name == "recent" else 60)
    memory = [
        _old(workspace / "logs" / "memory-audit.jsonl"),
        _old(workspace / "agents" / "writer" / "memory.md", "# Insights\n- a\n"),
        _old(workspace / "agents" / "writer" / "daily" / "2026-09-01.md"),
        _old(workspace / "AGENTS.md"),
        _old(settings.home / "SOUL.md"),
        _old(settings.home / "USER.md"),
        _old(settings.home / "memory-audit.jsonl"),
    ]

    report = retain(app, [workspace])

    assert sorted(report.checkpoints) == sorted([ids["old"], ids["failed"]])
    assert set(app.checkpoints.threads()) == {ids["paused"], ids["interrupted"], ids["recent"]}
    left = {f.run_id for f in find_run_logs(workspace)}
    assert left == {ids["paused"], ids["interrupted"], ids["recent"]}
    assert report.to_dict()["logs_deleted"] == 2 and report.log_bytes == 4
    assert all(path.is_file() for path in memory)


def test_retention_prunes_old_checkpoints_of_runs_the_store_no_longer_has(
    store: Store, app: App
) -> None:
    store.upsert_squad("gone", workspace="/ws/gone", source=None, definition_sha256="0" * 64)
    deleted = store.create_run("gone").id
    store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256="0" * 64)
    running = store.create_run("docs").id  # running since long ago: it may still resume
    assert store.delete_squad("gone")
    checkpoints = app.checkpoints
    _checkpoint(checkpoints, deleted, running, "stranger-old", written=NOW - 45 * DAY)
    _checkpoint(checkpoints, "stranger-new", "live", written=NOW - 3 * DAY)
    _checkpoint(checkpoints, "live-old", written=NOW - 60 * DAY)

    report = retain(app, [], keep_runs={"live-old"})

    assert report.orphans == sorted([deleted, "stranger-old"])
    assert sorted(report.checkpoints) == report.orphans
    assert set(checkpoints.threads()) == {running, "stranger-new", "live", "live-old"}
    assert report.to_dict()["orphan_checkpoint_runs_deleted"] == 2


def test_retention_keeps_the_logs_of_running_runs(settings: Settings, app: App) -> None:
    workspace = settings.workspaces / "docs"
    _old(workspace / "logs" / "run-live.jsonl", days=90)
    report = retain(app, [workspace], keep_runs={"live"})
    assert report.logs == [] and (workspace / "logs" / "run-live.jsonl").is_file()


def test_retention_forgets_runs_past_runs_days_with_their_checkpoints(
    store: Store, clock: FrozenClock, app: App
) -> None:
    store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256="0" * 64)
    clock.now = NOW - 10 * DAY
    old = store.create_run("docs")
    store.update_run(old.id, status=RunStatus.SUCCEEDED)
    paused = store.create_run("docs")
    store.update_run(paused.id, status=RunStatus.AWAITING_APPROVAL)
    clock.now = NOW - DAY / 2
    recent = store.create_run("docs")
    store.update_run(recent.id, status=RunStatus.SUCCEEDED)
    clock.now = NOW
    _checkpoint(app.checkpoints, old.id, paused.id, recent.id, written=NOW - DAY)

    report = retain(app, [], policy=RetentionSettings(runs_days=1, checkpoints_days=30))

    assert report.forgotten["runs_forgotten"] == 1 and report.checkpoints == [old.id]
    assert store.get_run(old.id) is None
    assert {r.id for r in store.list_runs("docs")} == {paused.id, recent.id}
    assert set(app.checkpoints.threads()) == {paused.id, recent.id}


def test_messages_of_agents_whose_extractor_is_off_stop_waiting(
    store: Store, app: App, make_spec: Any
) -> None:
    quiet = make_spec(
        "name: quiet\ngoal: Ship it.\nmemory: {extract: false}\n"
        "agents:\n  - {id: writer, role: Writes}\n"
        "tasks:\n  - {id: draft, description: Write., agent: writer}\n"
    )
    assert unread_agents([(quiet, Path("/ws/quiet")), (make_spec(), Path("/ws/demo"))]) == {
        ("quiet", "writer")
    }
    store.conversation.record_message("quiet", "writer", "user", "hello")
    assert store.conversation.extraction_backlog() == [("quiet", "writer", 1)]

    report = retain(app, [], unread_agents={("quiet", "writer")})

    assert report.skipped_messages == 1 and store.conversation.extraction_backlog() == []


def test_deleted_checkpoints_give_their_space_back(app: App) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    with app.checkpoints.saver() as saver:
        for thread in range(200):
            config: Any = {"configurable": {"thread_id": f"t{thread}", "checkpoint_ns": ""}}
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"notes": "x" * 20_000}
            saver.put(config, checkpoint, {}, {"notes": 1})
    app.checkpoints.compact()  # the first time converts the file
    path = Path(app.checkpoints.where)
    full = path.stat().st_size

    app.checkpoints.delete(f"t{thread}" for thread in range(200))
    freed = app.checkpoints.compact()

    assert freed > 2_000_000 and path.stat().st_size < full - 2_000_000


def test_old_plans_go_but_never_the_newest() -> None:
    plans = {
        Path("plans/plan-999.md"): NOW - 9 * DAY,
        Path("plans/plan-1000.md"): NOW - 8 * DAY,
        Path("plans/plan-1001.md"): NOW - 7 * DAY,
        Path("plans/plan-001.md"): NOW,
    }
    assert plans_to_prune(plans, before=NOW - DAY) == [
        Path("plans/plan-999.md"),
        Path("plans/plan-1000.md"),
    ]
    assert plans_to_prune({Path("plans/plan-002.md"): NOW - 9 * DAY}, before=NOW) == []


def test_pruned_plans_are_committed_to_the_history_as_retentions(
    settings: Settings, app: App, make_spec: Any
) -> None:
    workspace = app.squads.create(make_spec()).path
    for number in (1, 2, 3):
        _old(workspace / "plans" / f"plan-{number:03d}.md", f"plan {number}\n", days=30)
    app.history(workspace, "demo").record_all("squad", "plans written")

    report = prune_plans(app, [("demo", workspace)], before=NOW - DAY)

    assert report == {"plans_deleted": 2}
    assert sorted(p.name for p in (workspace / "plans").iterdir()) == ["plan-003.md"]
    import pygit2

    repo = pygit2.Repository(str(workspace))
    head = repo[repo.head.target]
    assert head.author.name == "retention" and "2 plans" in head.message
    assert repo.status() == {}


def test_consolidation_runs_memory_gc_for_real_with_the_daemons_clock(
    settings: Settings, store: Store, clock: FrozenClock, app: App, make_spec: Any
) -> None:
    workspace = app.squads.create(make_spec()).path
    namespace = store.memory.ensure_namespace("squad:demo/writer", "Agent Experience: Writer")
    clock.now = NOW - 90 * DAY
    stale = store.memory.add_fact(namespace.id, "The build used Make", squad="demo", agent="writer")
    clock.now = NOW - DAY
    fresh = store.memory.add_fact(
        namespace.id, "The build uses Bazel", squad="demo", agent="writer"
    )

    report = run_consolidation(app, now=NOW)

    (changes,) = report["namespaces"]
    assert [c["id"] for c in changes["dormant"]] == [stale.id]
    statuses = {f.id: f.status for f in store.memory.facts(namespace.id, include_inactive=True)}
    assert statuses == {stale.id: FactStatus.DORMANT, fresh.id: FactStatus.ACTIVE}
    audit = (workspace / "logs" / "memory-audit.jsonl").read_text().splitlines()
    record = json.loads(audit[-1])
    assert (record["actor"], record["operation"], record["file"]) == (
        "gc",
        "dormant",
        f"fact:{stale.id}",
    )
    assert record["time"] == NOW.isoformat()


def test_consolidation_folds_a_memory_md_over_80_percent_of_its_cap_and_commits_it(
    settings: Settings, app: App, make_spec: Any
) -> None:
    workspace = app.squads.create(make_spec()).path
    path = workspace / "agents" / "writer" / "memory.md"
    cap = settings.memory_file_cap_bytes
    lines = [
        f"- the {('search', 'deploy', 'billing')[n % 3]} job {n} runs at {n % 24}:00"
        f" (2026-03-0{1 + n % 9})"
        for n in range(int(0.85 * cap) // 48)
    ]
    path.write_text(path.read_text() + "\n".join(lines) + "\n")
    assert path.stat().st_size > 0.8 * cap
    planner = (workspace / "agents" / "planner" / "memory.md").read_bytes()
    app.history(workspace, "demo").record_all("squad", "memory filled by hand")

    report = run_consolidation(app, now=NOW)

    (fold,) = report["memory_folds"]
    assert (fold["squad"], fold["agent"]) == ("demo", "writer") and fold["moved"] > 0
    assert path.stat().st_size <= 0.7 * cap
    daily = (workspace / fold["daily"]).read_text()
    kept = path.read_text() + daily
    assert all(line in kept for line in lines)
    assert (workspace / "agents" / "planner" / "memory.md").read_bytes() == planner
    import pygit2

    repo = pygit2.Repository(str(workspace))
    head = repo[repo.head.target]
    assert head.author.name == "consolidation" and "folded" in head.message
    assert repo.status() == {}  # memory.md and the daily log, one commit
    assert run_consolidation(app, now=NOW)["memory_folds"] == []  # under 80% now: no fold
