"""Background jobs: retention prunes old run logs and old runs' checkpoints, never memory
files and never what an unfinished run needs; consolidation calls squad.memory.gc."""

from __future__ import annotations

import os
import sqlite3
import sys
import types
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from squad.clock import FrozenClock
from squad.daemon.jobs import (
    LogFile,
    checkpoint_threads,
    find_run_logs,
    last_checkpoint_times,
    logs_to_prune,
    orphans_to_prune,
    prune_checkpoints,
    run_consolidation,
    run_retention,
)
from squad.errors import SquadError
from squad.settings import Settings
from squad.store import RunStatus, Store

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


def _checkpoint(database: Path, *threads: str, written: datetime | None = None) -> None:
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(database, check_same_thread=False)
    try:
        saver = SqliteSaver(connection)
        for thread in threads:
            config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            checkpoint = empty_checkpoint()
            if written is not None:
                checkpoint["ts"] = written.isoformat()
            saver.put(config, checkpoint, {}, {})
    finally:
        connection.close()


def _threads(database: Path) -> set[str]:
    with sqlite3.connect(database) as connection:
        return {row[0] for row in connection.execute("SELECT thread_id FROM checkpoints")}


def test_checkpoints_of_the_given_runs_are_deleted_and_others_kept(tmp_path: Path) -> None:
    database = tmp_path / "checkpoints.sqlite"
    assert prune_checkpoints(database, {"a"}) == []  # no database yet
    _checkpoint(database, "a", "b", "c")
    assert prune_checkpoints(database, {"a", "c", "never-checkpointed"}) == ["a", "c"]
    assert _threads(database) == {"b"}


def test_orphans_are_unknown_runs_last_written_before_the_cutoff() -> None:
    written = {"gone-old": NOW - 40 * DAY, "gone-new": NOW - DAY, "known-old": NOW - 90 * DAY}
    assert orphans_to_prune(written, {"known-old"}, before=NOW - 30 * DAY) == ["gone-old"]


def test_last_checkpoint_times_read_each_threads_newest_checkpoint(tmp_path: Path) -> None:
    database = tmp_path / "checkpoints.sqlite"
    assert checkpoint_threads(database) == [] and last_checkpoint_times(database, ["a"]) == {}
    _checkpoint(database, "a", written=NOW - 9 * DAY)
    _checkpoint(database, "a", "b", written=NOW - 2 * DAY)
    assert checkpoint_threads(database) == ["a", "b"]
    assert last_checkpoint_times(database, ["a", "b", "none"]) == {
        "a": NOW - 2 * DAY,
        "b": NOW - 2 * DAY,
    }


@pytest.fixture
def store(settings: Settings, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(settings.database_url, clock=clock) as opened:
        yield opened


def _old(path: Path, text: str = "x\n", days: float = 60) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = (NOW - days * DAY).timestamp()
    os.utime(path, (stamp, stamp))
    return path


def test_retention_prunes_old_logs_and_checkpoints_but_never_memory_or_unfinished_runs(
    settings: Settings, store: Store, clock: FrozenClock
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
    settings.home.mkdir(parents=True, exist_ok=True)
    _checkpoint(settings.home / "checkpoints.sqlite", *ids.values())
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

    report = run_retention(settings, store, [workspace], now=NOW)

    assert sorted(report.checkpoints) == sorted([ids["old"], ids["failed"]])
    assert _threads(settings.home / "checkpoints.sqlite") == {
        ids["paused"],
        ids["interrupted"],
        ids["recent"],
    }
    left = {f.run_id for f in find_run_logs(workspace)}
    assert left == {ids["paused"], ids["interrupted"], ids["recent"]}
    assert report.to_dict()["logs_deleted"] == 2 and report.log_bytes == 4
    assert all(path.is_file() for path in memory)


def test_retention_prunes_old_checkpoints_of_runs_the_store_no_longer_has(
    settings: Settings, store: Store
) -> None:
    store.upsert_squad("gone", workspace="/ws/gone", source=None, definition_sha256="0" * 64)
    deleted = store.create_run("gone").id
    store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256="0" * 64)
    running = store.create_run("docs").id  # running since long ago: it may still resume
    assert store.delete_squad("gone")
    settings.home.mkdir(parents=True, exist_ok=True)
    database = settings.home / "checkpoints.sqlite"
    _checkpoint(database, deleted, running, "stranger-old", written=NOW - 45 * DAY)
    _checkpoint(database, "stranger-new", "live", written=NOW - 3 * DAY)
    _checkpoint(database, "live-old", written=NOW - 60 * DAY)

    report = run_retention(settings, store, [], now=NOW, keep_runs={"live-old"})

    assert report.orphans == sorted([deleted, "stranger-old"])
    assert sorted(report.checkpoints) == report.orphans
    assert _threads(database) == {running, "stranger-new", "live", "live-old"}
    assert report.to_dict()["orphan_checkpoint_runs_deleted"] == 2


def test_retention_keeps_the_logs_of_running_runs(
    settings: Settings, store: Store, clock: FrozenClock
) -> None:
    workspace = settings.workspaces / "docs"
    _old(workspace / "logs" / "run-live.jsonl", days=90)
    report = run_retention(settings, store, [workspace], now=NOW, keep_runs={"live"})
    assert report.logs == [] and (workspace / "logs" / "run-live.jsonl").is_file()


class _Report:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data


def test_consolidation_runs_memory_gc_for_real_with_the_daemons_clock(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def run_gc(settings_: Settings, store_: Store, **options: Any) -> _Report:
        calls.append({"settings": settings_, "store": store_, **options})
        return _Report({"expired": 3})

    fake = types.ModuleType("squad.memory.gc")
    fake.run_gc = run_gc  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "squad.memory.gc", fake)
    assert run_consolidation(settings, store, now=NOW) == {"expired": 3}
    assert calls == [{"settings": settings, "store": store, "now": NOW, "dry_run": False}]


def test_consolidation_without_the_gc_module_says_it_is_not_available(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "squad.memory.gc", None)
    with pytest.raises(SquadError, match="not available"):
        run_consolidation(settings, store, now=NOW)
