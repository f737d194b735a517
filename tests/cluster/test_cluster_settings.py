"""Cluster mode is chosen in settings and refused, with the file, line and a fix, on a store
that is not PostgreSQL; the cluster's schedulers agree on every fire time; the commands that
need a cluster say so on a home that is not one; extraction in a cluster is deferred, not run
here. None of these needs a Postgres server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from squad.app import App
from squad.cluster.dispatch import fire_time
from squad.daemon.triggers import build_trigger, next_fire
from squad.errors import ConfigError
from squad.jobqueue.extraction import ClusterExtraction
from squad.jobqueue.view import node_state
from squad.memory.agent import AgentContext
from squad.settings import Settings
from squad.spec.models import Schedule, SquadSpec

SQUAD = Path(sys.executable).parent / "squad"


def _settings(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Settings:
    configs = tmp_path / "configs"
    configs.mkdir(exist_ok=True)
    (configs / "settings.yaml").write_text(text)
    return Settings.load(
        {"SQUAD_HOME": str(tmp_path / "home"), "SQUAD_CONFIGS": str(configs), **(env or {})},
        cwd=tmp_path,
    )


def test_cluster_mode_on_a_sqlite_store_is_refused_at_its_line_with_a_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _settings(tmp_path, "daemon:\n  max_concurrent_runs: 2\ncluster:\n  enabled: true\n")
    problem = caught.value.problems[0]
    assert problem.source == str(tmp_path / "configs" / "settings.yaml")
    assert (problem.line, problem.path) == (4, ("cluster", "enabled"))
    assert "PostgreSQL database_url" in problem.message and "sqlite" in problem.message
    assert problem.hint is not None and "SQUAD_DATABASE_URL" in problem.hint


def test_the_environment_can_make_a_cluster_home_valid_and_name_its_node(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        "cluster: {enabled: true, stall_timeout_s: 12}\n",
        {"SQUAD_DATABASE_URL": "postgresql://db.internal/squad", "SQUAD_NODE": "worker-7"},
    )
    assert settings.clustered
    assert (settings.cluster.node, settings.cluster.stall_timeout_s) == ("worker-7", 12.0)
    alone = tmp_path / "alone"
    alone.mkdir()
    assert not Settings.load({"SQUAD_HOME": str(alone / "h")}, cwd=alone).clustered


@pytest.mark.slow
def test_a_refused_cluster_setting_exits_2_with_the_message_and_no_traceback(
    tmp_path: Path,
) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "settings.yaml").write_text("cluster:\n  enabled: true\n")
    env = {"SQUAD_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(SQUAD), "status"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "settings.yaml:2:3: cluster.enabled:" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "home" / "squad.db").exists()  # nothing half made


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["worker"], "squad worker works for a cluster"),
        (["cluster", "nodes"], "not part of a cluster"),
    ],
)
def test_cluster_commands_on_a_home_that_is_not_one_say_how_to_make_one(
    tmp_path: Path, command: list[str], says: str
) -> None:
    env = {"SQUAD_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(SQUAD), *command], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "cluster: {enabled: true}" in done.stderr
    assert "Traceback" not in done.stderr


def test_anchored_intervals_fire_at_the_same_times_whenever_a_scheduler_starts() -> None:
    schedule = Schedule(interval="90s")
    early, late = build_trigger(schedule, anchored=True), build_trigger(schedule, anchored=True)
    now = datetime(2026, 12, 1, 12, 0, 7, tzinfo=UTC)
    a, b = next_fire(early, now), next_fire(late, now + timedelta(seconds=40))
    assert a is not None and b is not None
    assert (b - a).total_seconds() % 90 == 0
    assert int(a.timestamp()) % 90 == int(datetime(2000, 1, 1, tzinfo=UTC).timestamp()) % 90


def test_the_fire_due_now_is_the_latest_scheduled_one_within_the_grace() -> None:
    schedule = Schedule(interval="1m")
    at = datetime(2026, 12, 1, 12, 3, 0, 400_000, tzinfo=UTC)  # 0.4 s after the fire
    assert fire_time(schedule, at, grace_s=300) == datetime(2026, 12, 1, 12, 3, tzinfo=UTC)
    late = at + timedelta(seconds=20)  # a busy scheduler: still the same fire
    assert fire_time(schedule, late, grace_s=300) == datetime(2026, 12, 1, 12, 3, tzinfo=UTC)
    assert fire_time(Schedule(run_on_start=True), at, grace_s=300) is None


def test_a_node_is_up_stopped_or_lost_by_its_heartbeat() -> None:
    assert node_state(3.0, False, 30.0) == "up"
    assert node_state(31.0, False, 30.0) == "lost"
    assert node_state(900.0, True, 30.0) == "stopped"


def test_extraction_in_a_cluster_is_deferred_per_agent_at_its_interval(
    app: App, make_spec: Callable[..., SquadSpec], tmp_path: Path
) -> None:
    spec = make_spec().model_copy(
        update={"memory": make_spec().memory.model_copy(update={"trigger_interval": 3})}
    )
    ctx = AgentContext.of(spec, "writer", tmp_path)
    deferred: list[tuple[str, str]] = []
    extraction = ClusterExtraction(
        app.extraction.extractor, lambda squad, agent: deferred.append((squad, agent))
    )
    extraction.notify(ctx)  # the first reply in this process: look at the store's backlog
    assert deferred == [("demo", "writer")]
    extraction.notify(ctx)
    extraction.notify(ctx)
    assert deferred == [("demo", "writer")]
    extraction.notify(ctx)  # three more replies: the interval
    assert deferred == [("demo", "writer")] * 2
    assert extraction.close(1.0)
