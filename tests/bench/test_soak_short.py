"""The soak's short form: 4 squads for about a minute against a real ``squad daemon``.

It checks the report's shape and the run accounting (none lost, duplicated or left
running), not timings or plateaus: those need the long form (``python -m bench.soak``).
"""

from __future__ import annotations

import pytest

from bench.soak import KINDS, soak
from bench.soak_report import TERMINAL

pytestmark = pytest.mark.slow


def test_a_short_soak_reports_every_metric_and_accounts_for_every_run() -> None:
    report = soak(
        4,
        1.2,
        interval_range=(10, 15),
        retention_minutes=0.5,
        sample_s=3.0,
        status_every_s=15.0,
    )

    assert report["kinds"] == dict.fromkeys(KINDS, 1)
    assert report["daemon"]["exit_code"] == 0
    metrics = report["metrics"]
    for metric in (
        "rss_bytes",
        "fds",
        "threads",
        "home_bytes",
        "home_without_log_bytes",
        "daemon_log_bytes",
        "db_bytes",
        "checkpoints_bytes",
        "workspaces_bytes",
        "git_bytes",
        "workspace_files",
        "approvals_waiting",
        "approvals_waiting_max_per_squad",
        "status_latency_s",
        "rows.runs",
        "rows.run_tasks",
        "rows.conversation_messages",
        "rows.checkpoints.checkpoints",
    ):
        row = metrics[metric]
        assert row["samples"] >= 2, metric
        assert isinstance(row["plateaued"], bool), metric
        for key in ("start", "end", "slope_per_h", "first_half_slope_per_h"):
            assert isinstance(row[key], float), (metric, key)
    assert metrics["rss_bytes"]["start"] > 0
    assert metrics["approvals_waiting_max_per_squad"]["max"] == 1
    runs = report["runs"]
    assert runs["started"] >= 4  # every squad fired at least once in 72 s at 10-15 s
    assert runs["lost"] == 0
    assert runs["duplicated"] == 0
    assert runs["left_running"] == 0
    assert runs["waiting_approval"] == 1  # the gated squad paused once; nobody approved
    ended = sum(runs["statuses"].get(status, 0) for status in TERMINAL)
    assert runs["finished"] == ended
    assert runs["started"] == sum(runs["statuses"].values())
    assert report["status_vs_help"]["ratio"] > 0
    assert report["problems"] == []
