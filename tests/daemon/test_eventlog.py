"""The daemon's log: JSON lines, secrets redacted, rotated by size so weeks of events stay
bounded."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from squad.daemon.eventlog import DaemonLog, read_daemon_log


def test_events_are_json_lines_and_secrets_are_redacted(tmp_path: Path) -> None:
    log = DaemonLog(tmp_path / "daemon.jsonl")
    key = "ghp_" + "a1B2c3D4" * 5
    log.emit("run_error", squad="docs", error=f"bad token {key}", skipped=None)
    [event] = read_daemon_log(log.path)
    assert event["event"] == "run_error" and event["squad"] == "docs"
    assert key not in log.path.read_text() and "skipped" not in event


def test_past_the_size_the_log_rotates_and_only_the_newest_files_are_kept(
    tmp_path: Path,
) -> None:
    log = DaemonLog(tmp_path / "daemon.jsonl", max_bytes=1000, keep=2)
    for i in range(100):
        log.emit("tick", n=i, pad="x" * 60)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["daemon.jsonl", "daemon.jsonl.1", "daemon.jsonl.2"]
    assert all(p.stat().st_size < 1000 + 200 for p in tmp_path.iterdir())
    newest = [e["n"] for e in read_daemon_log(log.path)]
    older = [e["n"] for e in read_daemon_log(log.rotated(1))]
    oldest = [e["n"] for e in read_daemon_log(log.rotated(2))]
    # Nothing lost or repeated across the files kept: one run of consecutive events ending at 99.
    together = oldest + older + newest
    assert together == list(range(together[0], 100)) and together[0] > 0


def test_threads_emitting_through_rotations_lose_no_line_of_the_kept_files(
    tmp_path: Path,
) -> None:
    log = DaemonLog(tmp_path / "daemon.jsonl", max_bytes=4000, keep=50)

    def emit(worker: int) -> None:
        for i in range(100):
            log.emit("tick", worker=worker, n=i)

    threads = [threading.Thread(target=emit, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    kept = [log.path, *(log.rotated(g) for g in range(1, 51))]
    events = [e for path in kept if path.exists() for e in read_daemon_log(path)]
    assert sorted((e["worker"], e["n"]) for e in events) == [
        (w, i) for w in range(4) for i in range(100)
    ]


def test_a_size_or_count_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        DaemonLog(tmp_path / "daemon.jsonl", max_bytes=0)
    with pytest.raises(ValueError, match="positive"):
        DaemonLog(tmp_path / "daemon.jsonl", keep=0)


def test_new_limits_apply_from_the_next_event(tmp_path: Path) -> None:
    log = DaemonLog(tmp_path / "daemon.jsonl", max_bytes=10_000, keep=1)
    for i in range(5):
        log.emit("tick", n=i)
    assert not log.rotated(1).exists()
    log.set_limits(max_bytes=100, keep=2)
    log.emit("tick", n=5)
    assert log.rotated(1).exists() and not log.path.exists()
    with pytest.raises(ValueError, match="positive"):
        log.set_limits(max_bytes=0, keep=1)
