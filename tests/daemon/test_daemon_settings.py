"""The ``daemon:`` section of configs/settings.yaml: defaults, values, strict checking."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.errors import ConfigError
from squad.settings import Settings


def load(tmp_path: Path, text: str | None = None) -> Settings:
    (tmp_path / "configs").mkdir(exist_ok=True)
    if text is not None:
        (tmp_path / "configs" / "settings.yaml").write_text(text)
    return Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)


def test_defaults_without_a_daemon_section(tmp_path: Path) -> None:
    daemon = load(tmp_path).daemon
    assert (daemon.max_concurrent_runs, daemon.misfire_grace_s, daemon.shutdown_grace_s) == (
        2,
        300,
        30,
    )
    assert daemon.consolidation_cron == "0 3 * * *"
    retention = daemon.retention
    assert (retention.checkpoints_days, retention.logs_days, retention.logs_max_mb) == (30, 30, 100)
    assert (retention.daemon_log_mb, retention.daemon_log_files) == (20, 3)


def test_values_from_the_settings_file(tmp_path: Path) -> None:
    daemon = load(
        tmp_path,
        "daemon:\n"
        "  max_concurrent_runs: 4\n"
        "  consolidation_cron: '30 2 * * 0'\n"
        "  retention: {logs_days: 7, logs_max_mb: 20}\n",
    ).daemon
    assert daemon.max_concurrent_runs == 4 and daemon.consolidation_cron == "30 2 * * 0"
    assert (daemon.retention.logs_days, daemon.retention.logs_max_mb) == (7, 20)
    assert daemon.retention.checkpoints_days == 30


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("daemon:\n  max_concurent_runs: 3\n", "daemon.max_concurent_runs", "max_concurrent_runs"),
        ("daemon:\n  max_concurrent_runs: 0\n", "daemon.max_concurrent_runs", "1"),
        ("daemon:\n  misfire_grace_s: '300'\n", "daemon.misfire_grace_s", "number"),
        ("daemon:\n  consolidation_cron: '0 3 * *'\n", "daemon.consolidation_cron", "5 fields"),
        ("daemon:\n  retention: {logs_days: -1}\n", "daemon.retention.logs_days", "must be > 0"),
    ],
)
def test_bad_values_are_located_errors(tmp_path: Path, text: str, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    (problem,) = caught.value.problems
    assert problem.dotted_path == where and problem.line == 2
    assert message in problem.render()
