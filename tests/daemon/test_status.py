"""``squad status`` built from the lock, the heartbeat, the squads folder and the store."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.clock import FrozenClock
from squad.daemon.lock import DaemonLock, LockState
from squad.daemon.status import build_status, collect_status, daemon_status
from squad.settings import Settings
from squad.store import RunStatus, Store
from squad.store.daemon_state import HeartbeatRecord
from squad.views import DaemonState, RunSummary

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
STARTED = NOW - timedelta(hours=2)


def status_of(settings: Settings, *, now: datetime) -> dict[str, Any]:
    with App.open(settings) as app:
        return collect_status(app, now=now).model_dump()


def daemon(state: str, **more: Any) -> DaemonState:
    """The daemon part of a status: ``up`` or ``down``, nothing else known."""
    empty = dict.fromkeys(
        ("pid", "host", "started_at", "uptime_s", "heartbeat_at", "heartbeat_age_s", "reason")
    )
    return DaemonState.model_validate({**empty, "state": state, **more})


def last_run(run_id: str, status: str) -> RunSummary:
    return RunSummary(
        id=run_id,
        status=status,
        trigger="manual",
        started_at=None,
        ended_at=None,
        duration_s=None,
        tokens_in=0,
        tokens_out=0,
        cost_usd=0.0,
        error=None,
    )


def beat(age_s: float, *, pid: int = 7, stopped: bool = False) -> HeartbeatRecord:
    return HeartbeatRecord(
        home="/h",
        pid=pid,
        host="box",
        started_at=STARTED,
        beat_at=NOW - timedelta(seconds=age_s),
        stopped_at=NOW if stopped else None,
        state={"squads": []},
    )


def state_of(lock: LockState, heartbeat: HeartbeatRecord | None, alive: bool = True) -> Any:
    return daemon_status(
        now=NOW, lock=lock, heartbeat=heartbeat, alive=lambda _: alive
    ).model_dump()


def test_daemon_is_up_with_the_lock_held_by_a_live_pid_and_a_fresh_heartbeat() -> None:
    status = state_of(LockState(True, 7), beat(3))
    assert status["state"] == "up" and status["reason"] is None
    assert (status["pid"], status["host"], status["heartbeat_age_s"]) == (7, "box", 3.0)
    assert status["uptime_s"] == 7200.0


def test_daemon_is_down_for_each_reason_it_can_be() -> None:
    cases = {
        "not running": state_of(LockState(False, None), None),
        "pid 7 in the pid file is gone": state_of(LockState(False, 7), beat(3), alive=False),
        "no heartbeat yet": state_of(LockState(True, 7), None),
        "stuck": state_of(LockState(True, 7), beat(300)),
        "pid 7 is gone": state_of(LockState(True, 7), beat(3), alive=False),
        "stopping": state_of(LockState(True, 7), beat(3, stopped=True)),
    }
    for reason, status in cases.items():
        assert status["state"] == "down", reason
        assert reason in status["reason"]
        assert status["uptime_s"] is None


def test_with_the_daemon_up_squads_come_from_its_heartbeat() -> None:
    state = {
        "squads": [{"name": "a", "file": "a.yaml", "schedule": "every 2h", "next_fire": "T"}],
        "queue": [{"squad": "b", "trigger": "schedule"}],
        "running": [],
        "failed_files": [{"file": "bad.yaml", "error": "boom"}],
        "settings_restart_needed": ["memory.ranking"],
        "jobs": {"retention": {"trigger": "cron[...]", "next_fire": "2026-11-30T03:30:00+00:00"}},
    }
    report = build_status(
        daemon=daemon("up"),
        state=state,
        configured=[{"name": "other"}],
        failed_files=[],
        last_runs={"a": last_run("r1", "succeeded")},
        backlog=[("a", "writer", 4)],
    ).model_dump()
    assert [s["name"] for s in report["squads"]] == ["a"]
    assert report["squads"][0]["next_fire"] == "T"
    assert report["squads"][0]["last_run"]["id"] == "r1"
    assert report["queue_length"] == 1
    assert report["failed_files"] == [{"file": "bad.yaml", "error": "boom"}]
    assert report["extraction_backlog"] == [{"squad": "a", "agent": "writer", "messages": 4}]
    assert report["settings_restart_needed"] == ["memory.ranking"]
    assert report["jobs"]["retention"]["next_fire"] == "2026-11-30T03:30:00+00:00"


def test_with_the_daemon_down_squads_come_from_the_folder_and_nothing_is_due() -> None:
    report = build_status(
        daemon=daemon("down"),
        state={
            "squads": [{"name": "stale", "next_fire": "T"}],
            "queue": [{"squad": "x"}],
            "settings_restart_needed": ["workspaces"],
        },
        configured=[{"name": "a", "file": "a.yaml", "schedule": "every 2h"}],
        failed_files=[{"file": "bad.yaml"}],
        last_runs={"a": last_run("r1", "running")},
        backlog=[],
    ).model_dump()
    assert [(s["name"], s["next_fire"], s["running"]) for s in report["squads"]] == [
        ("a", None, True)
    ]
    assert report["queue_length"] == 0 and report["failed_files"] == [{"file": "bad.yaml"}]
    assert report["settings_restart_needed"] == []  # a stopped daemon needs no restart
    assert report["jobs"] == {}


GOOD = (
    "name: {name}\n"
    "agents: [{{id: a, role: Does}}]\n"
    "tasks: [{{id: t, description: Do., agent: a}}]\n"
)


def test_status_with_no_daemon_reads_the_folder_and_store_without_creating_a_database(
    settings: Settings,
) -> None:
    folder = settings.squads_dir
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text(GOOD.format(name="a") + "schedule: {interval: 2h}\n")
    (folder / "b.yaml").write_text("name: [\n")
    report = status_of(settings, now=NOW)
    assert not Path(settings.database_url.split("///", 1)[1]).exists()
    assert report["daemon"]["state"] == "down"
    assert report["squads"] == [
        {
            "name": "a",
            "file": str(folder / "a.yaml"),
            "schedule": "every 2h",
            "next_fire": None,
            "running": False,
            "queued": False,
            "last_run": None,
            "warnings": [],
            "file_error": None,
            "invalid_since": None,
        }
    ]
    assert [Path(f["file"]).name for f in report["failed_files"]] == ["b.yaml"]


def test_status_reports_the_last_run_with_its_duration_tokens_and_cost(
    settings: Settings,
) -> None:
    folder = settings.squads_dir
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text(GOOD.format(name="a"))
    clock = FrozenClock(NOW - timedelta(seconds=90))
    with Store.open(settings.database_url, clock=clock) as store:
        store.upsert_squad("a", workspace="/ws/a", source=None, definition_sha256="0" * 64)
        run = store.create_run("a", trigger="schedule")
        store.update_run(run.id, status=RunStatus.RUNNING)
        clock.advance(60)
        store.spend.record(
            "a", model="m", prompt_tokens=10, completion_tokens=5, cost_usd=0.25, run_id=run.id
        )
        store.update_run(run.id, status=RunStatus.SUCCEEDED)
    report = status_of(settings, now=NOW)
    last = report["squads"][0]["last_run"]
    assert (last["id"], last["status"], last["trigger"]) == (run.id, "succeeded", "schedule")
    assert (last["tokens_in"], last["tokens_out"], last["cost_usd"]) == (10, 5, 0.25)
    assert last["duration_s"] == 60.0


def test_status_of_a_live_home_uses_the_heartbeat(settings: Settings) -> None:
    with Store.open(settings.database_url) as store:
        store.daemon.beat(
            str(settings.home),
            pid=os.getpid(),
            host="box",
            started_at=datetime.now(UTC),
            state={"configs": "/elsewhere", "squads": [{"name": "z", "schedule": "every 1d"}]},
        )
    with DaemonLock(settings.home):
        report = status_of(settings, now=datetime.now(UTC))
    assert report["daemon"]["state"] == "up"
    assert report["daemon"]["configs"] == "/elsewhere"
    assert [s["name"] for s in report["squads"]] == ["z"]


WARNED = GOOD + "schedule: {{interval: 2h, timezone: UTC}}\n"
"""A valid squad with one warning: a time zone an interval schedule ignores (line 4)."""
TIMEZONE_WARNING = "timezone has no effect on an interval schedule"


def test_each_squad_carries_the_warnings_of_the_heartbeat_or_of_the_folder() -> None:
    warning = {"source": "a.yaml", "line": 4, "column": None, "path": "schedule.timezone"}
    warning |= {"message": "m", "hint": None}
    up = build_status(
        daemon=daemon("up"),
        state={"squads": [{"name": "a", "warnings": [warning]}, {"name": "old"}]},
        configured=[],
        failed_files=[],
        last_runs={},
        backlog=[],
    ).model_dump()
    assert [s["warnings"] for s in up["squads"]] == [[warning], []]  # an older daemon's: none
    down = build_status(
        daemon=daemon("down"),
        state=None,
        configured=[{"name": "a", "warnings": [warning]}],
        failed_files=[],
        last_runs={},
        backlog=[],
    ).model_dump()
    assert down["squads"][0]["warnings"] == [warning]


def test_status_with_no_daemon_shows_the_warnings_of_each_file(settings: Settings) -> None:
    folder = settings.squads_dir
    folder.mkdir(parents=True)
    path = folder / "a.yaml"
    path.write_text(WARNED.format(name="a"))
    [squad] = status_of(settings, now=NOW)["squads"]
    [warning] = squad["warnings"]
    assert (warning["source"], warning["line"], warning["path"]) == (
        str(path),
        4,
        "schedule.timezone",
    )
    assert warning["message"] == TIMEZONE_WARNING


def test_a_running_daemon_logs_a_files_warnings_once_and_its_status_shows_them(
    settings: Settings,
) -> None:
    from tests.daemon.test_service import events, write_squad
    from tests.hostile.test_daemon_hostile import running, scheduled
    from tests.support.waiting import wait_for

    path = write_squad(settings, "a.yaml", WARNED.format(name="alpha"))
    with Store.open(settings.database_url) as store, running(settings, store) as daemon:
        write_squad(settings, "b.yaml", GOOD.format(name="beta"))  # a reload that keeps a.yaml
        wait_for(lambda: scheduled(daemon) == {"alpha", "beta"}, "the second squad loaded")
        [logged] = events(settings, "load_warning")
        assert logged["file"] == str(path)
        assert (
            logged["warnings"].startswith(f"{path}:4:") and TIMEZONE_WARNING in logged["warnings"]
        )
        squads = {s["name"]: s for s in daemon.state()["squads"]}
        assert [w["message"] for w in squads["alpha"]["warnings"]] == [TIMEZONE_WARNING]
        assert squads["beta"]["warnings"] == []

        path.write_text(WARNED.format(name="alpha") + "description: changed\n")
        wait_for(lambda: len(events(settings, "load_warning")) == 2, "the changed file's warning")
        report = collect_status(daemon.app, now=daemon.app.clock()).model_dump()
        assert report["daemon"]["state"] == "up"
        [alpha] = [s for s in report["squads"] if s["name"] == "alpha"]
        assert [w["message"] for w in alpha["warnings"]] == [TIMEZONE_WARNING]


def test_squad_status_prints_each_warning_under_its_squad(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from tests.cli.test_failures import Squad

    squad = Squad(tmp_path, monkeypatch, capsys)
    folder = tmp_path / "configs" / "squads"
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text(WARNED.format(name="alpha"))
    (folder / "b.yaml").write_text(GOOD.format(name="beta"))
    outcome = squad("status")
    assert outcome.code == 0, outcome.stderr
    lines = outcome.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  alpha  every 2h"))
    assert lines[at + 1].strip() == (
        f"{folder.resolve() / 'a.yaml'}:4:36: warning: schedule.timezone: {TIMEZONE_WARNING}; "
        "it is the clock a cron expression is read in; remove it, or use cron:"
    )
    assert lines[at + 2].startswith("  beta ")  # beta has none


def test_a_squad_whose_file_broke_is_flagged_in_status_and_on_the_dashboard() -> None:
    from squad.web.render import environment

    broken = {
        "name": "alpha",
        "file": "/c/a.yaml",
        "schedule": "every 1h",
        "file_error": "a.yaml:2:9: expected a value",
        "invalid_since": "2026-11-29T11:00:00+00:00",
    }
    failed = {"file": "/c/a.yaml", "error": "a.yaml:2:9: x", "running_last_good": "alpha"}
    report = build_status(
        daemon=daemon("up", pid=7, host="box", uptime_s=60),
        state={"squads": [broken, {"name": "beta"}], "failed_files": [failed]},
        configured=[],
        failed_files=[],
        last_runs={},
        backlog=[],
    ).model_dump()
    alpha, beta = report["squads"]
    assert (alpha["file_error"], alpha["invalid_since"]) == (
        broken["file_error"],
        broken["invalid_since"],
    )
    assert (beta["file_error"], beta["invalid_since"]) == (None, None)
    assert report["failed_files"] == [failed]
    for squad in report["squads"]:  # what the dashboard adds (squad.web.overview)
        squad.update(spent_usd=0.0, cap_usd=None)
    html = environment().get_template("overview_body.html").render(status=report, cluster=None)
    assert html.count("running its last good definition") == 1
    assert "squad alpha runs its last good definition" in html


def test_a_heartbeat_stamped_after_the_reading_time_is_zero_seconds_old_not_negative() -> None:
    """The reader's clock was read before the beat was written (or lags the writer's)."""
    status = state_of(LockState(True, 7), beat(-3))
    assert status["state"] == "up" and status["reason"] is None
    assert status["heartbeat_age_s"] == 0.0


def test_status_reads_its_clock_after_the_heartbeat_so_a_fresh_beat_is_never_in_the_future(
    settings: Settings,
) -> None:
    """``collect_status`` without ``now`` takes the time once the heartbeat is read: a beat
    written between a caller's clock reading and the read (a slow start) is not 'ahead'."""
    ticks = iter(NOW + timedelta(seconds=s) for s in range(0, 100, 10))
    with App.open(settings, clock=lambda: next(ticks)) as app:
        app.store.daemon.beat(str(settings.home), pid=7, host="box", started_at=STARTED)
        report = collect_status(app).model_dump()
    assert report["daemon"]["heartbeat_age_s"] is not None
    assert report["daemon"]["heartbeat_age_s"] >= 0


def _publish_for(home: Path, *, pid: int, phase: str = "running", age_s: float = 0.0) -> None:
    from squad.daemon.status import PUBLISHED_FILE, publish

    home.mkdir(parents=True, exist_ok=True)
    state = {"phase": phase, "configs": str(home / "squads"), "squads": [{"name": "a"}]}
    view = {
        "last_runs": {},
        "extraction_backlog": [["a", "writer", 3]],
        "waiting_approvals": [
            {"run_id": "r1", "squad": "a", "task": "t", "agent": "w", "since": STARTED.isoformat()}
        ],
        "history_paused": [],
        "checkpoints": None,
    }
    publish(
        home,
        {
            "pid": pid,
            "host": "box",
            "started_at": STARTED.isoformat(),
            "state": state,
            "store": view,
        },
    )
    moment = datetime.now(UTC).timestamp() - age_s
    os.utime(home / PUBLISHED_FILE, (moment, moment))


def test_the_published_status_is_used_only_from_the_live_lock_holder_with_a_fresh_beat(
    tmp_path: Path,
) -> None:
    from squad.daemon.status import published_status

    home = tmp_path / "home"
    _publish_for(home, pid=os.getpid())
    assert published_status(home) is None  # nobody holds the home's lock
    with DaemonLock(home):
        report = published_status(home)
        assert report is not None and report.daemon.state == "up"
        assert report.daemon.heartbeat_age_s is not None and report.daemon.heartbeat_age_s >= 0
        assert report.summary.waiting_approvals == 1
        assert report.summary.backlog_messages == 3
        assert [s.name for s in report.squads] == ["a"]

        _publish_for(home, pid=os.getpid(), age_s=300)
        assert published_status(home) is None  # stale: the store's heartbeat says why
        _publish_for(home, pid=os.getpid() + 1)
        assert published_status(home) is None  # another process's file
        _publish_for(home, pid=os.getpid(), phase="starting")
        assert published_status(home) is None
        _publish_for(home, pid=os.getpid())
        assert published_status(home, squads_dir=tmp_path / "elsewhere") is None
        (home / "daemon-status.json").write_text("{not json")
        assert published_status(home) is None


def test_a_running_daemons_published_status_is_what_the_store_says(settings: Settings) -> None:
    from squad.daemon.status import published_status
    from tests.daemon.test_service import events, write_squad
    from tests.hostile.test_daemon_hostile import running
    from tests.support.waiting import wait_for

    write_squad(settings, "a.yaml", GOOD.format(name="alpha") + "schedule: {interval: 2h}\n")
    with Store.open(settings.database_url) as store, running(settings, store) as daemon:
        run = store.create_run("alpha", trigger="manual")
        store.update_run(run.id, status=RunStatus.FAILED, error="boom")
        daemon.request_reload("test")  # a change: the next beat reads the store again
        wait_for(
            lambda: (
                (p := published_status(settings.home)) is not None
                and p.squads[0].last_run is not None
            ),
            "the run in the published status",
        )
        published = published_status(settings.home)
        stored = collect_status(daemon.app)
        assert published is not None
        assert published.squads == stored.squads
        assert published.summary == stored.summary
        assert published.summary.failed_runs == 1
        last = published.squads[0].last_run
        assert last is not None and last.error == "boom"
        assert not events(settings, "job_error")
    assert not (settings.home / "daemon-status.json").exists()  # a clean stop removes it


HEAVY = ("sqlalchemy", "ruamel", "squad.store", "squad.spec.loader", "squad.spec.models")
"""What reading a squad file or opening the store imports (the context-window bounds module
under squad/spec is not one of them)."""


def status_imports(heavy: tuple[str, ...] = HEAVY) -> str:
    """A program running ``squad`` and printing which of ``heavy`` it imported."""
    return f"""\
import sys
from squad.cli import main
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print("HEAVY", heavy)
"""


@pytest.mark.slow
def test_squad_status_with_the_daemon_up_opens_no_store_and_reads_no_squad_file(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from tests.cli.test_cli import Cli
    from tests.daemon.test_daemon_cli import Daemon, write

    cli = Cli(tmp_path)
    daemon = Daemon(cli)
    write(daemon, "a.yaml", "alpha", "{interval: 2h}")
    daemon.start("--no-http")
    try:
        daemon.wait_event("ready")
        daemon.wait_for(lambda: (cli.home / "daemon-status.json").exists(), "the status file")
        done = subprocess.run(
            [sys.executable, "-c", status_imports(), "status", "--json"],
            env=cli.env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith("HEAVY []"), done.stdout[-300:]
        assert '"state": "up"' in done.stdout
    finally:
        assert daemon.stop() == 0


def test_status_opens_with_a_summary_then_problems_then_only_the_squads_with_news(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from squad.spec.loader import squad_from_file
    from squad.store.records import TaskStatus
    from tests.cli.test_failures import Squad

    squad = Squad(tmp_path, monkeypatch, capsys)
    folder = tmp_path / "configs" / "squads"
    folder.mkdir(parents=True)
    settings = Settings.load()
    with App.open(settings) as app:
        for i in range(30):
            path = folder / f"s{i:02d}.yaml"
            path.write_text(GOOD.format(name=f"s{i:02d}") + "schedule: {interval: 2h}\n")
            app.squads.create(squad_from_file(path), source=path)
        store = app.store
        for i in range(30):
            done = store.create_run(f"s{i:02d}")
            store.update_run(done.id, status=RunStatus.SUCCEEDED)
        failed = store.create_run("s03")
        store.update_run(failed.id, status=RunStatus.FAILED, error="the model timed out\nmore")
        gated = store.create_run("s07")
        store.update_run(gated.id, status=RunStatus.AWAITING_APPROVAL)
        store.run_state.set_task(
            gated.id, "t", squad="s07", agent="a", status=TaskStatus.AWAITING_APPROVAL
        )
    (folder / "broken.yaml").write_text("name: broken\nagents: [\n")

    outcome = squad("status")
    assert outcome.code == 0, outcome.stderr
    lines = outcome.stdout.splitlines()
    assert lines[0].startswith("daemon: down")
    assert lines[1] == (
        "  30 squads, 0 running, 0 queued, 1 waiting for approval, 1 failed file, "
        "1 failed run, extraction backlog none"
    )
    text = outcome.stdout
    squads_at = text.index("squads (30; 2 with something to say):")
    assert text.index("files that failed to load (1):") < squads_at
    assert f"  s03 run {failed.id}: the model timed out  (squad logs s03 --run {failed.id})" in text
    assert text.index("failed runs (1") < squads_at
    assert f"squad approve {gated.id} t  (--reject to refuse)" in text
    assert text.index("waiting for approval (1):") < squads_at
    listed = [
        line.split()[0]
        for line in lines[lines.index(text[squads_at:].splitlines()[0]) + 1 :]
        if line.startswith("  s")
    ]
    assert listed == ["s03", "s07"]
    assert (
        "  and 28 more squads with nothing to report (`squad status --all` lists every squad)"
        in lines
    )

    every = squad("status", "--all")
    assert "squads (30):" in every.stdout and "more squads with nothing" not in every.stdout
    assert (
        sum(line.startswith("  s") and "every 2h" in line for line in every.stdout.splitlines())
        == 30
    )
    data = json.loads(squad("status", "--json").stdout)
    assert len(data["squads"]) == 30
    assert data["summary"]["failed_runs"] == 1 and data["summary"]["waiting_approvals"] == 1
    assert data["waiting_approvals"][0]["run_id"] == gated.id
    assert data["waiting_approvals"][0]["task"] == "t"

    # Through plain sqlite3 (above) as through the full store: the same file, named with an
    # option in its URL, takes the full store (issue 35).
    read = [squad(*form).stdout for form in (["status"], ["status", "--all"], ["status", "--json"])]
    monkeypatch.setenv("SQUAD_DATABASE_URL", f"{settings.database_url}?timeout=5")
    full = [squad(*form).stdout for form in (["status"], ["status", "--all"], ["status", "--json"])]
    assert read == full == [outcome.stdout, every.stdout, json.dumps(data, indent=2) + "\n"]


@pytest.mark.slow
def test_with_the_daemon_down_a_squad_file_is_validated_again_only_when_it_changes(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from tests.cli.test_cli import Cli

    cli = Cli(tmp_path)
    cli.home.mkdir()  # status makes no home; the validations are kept in one that exists
    folder = tmp_path / "configs" / "squads"
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text(GOOD.format(name="a") + "schedule: {interval: 2h}\n")
    (folder / "bad.yaml").write_text("name: [\n")
    first = cli.json("status")
    assert isinstance(first, dict) and first["squads"][0]["schedule"] == "every 2h"

    code = status_imports(("ruamel",))
    done = subprocess.run(
        [sys.executable, "-c", code, "status", "--json"],
        env=cli.env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("HEAVY []"), "a file unchanged was parsed again"
    again = json.loads(done.stdout.strip().rsplit("\n", 1)[0])
    assert again["squads"] == first["squads"] and again["failed_files"] == first["failed_files"]

    (folder / "a.yaml").write_text(GOOD.format(name="a") + "schedule: {interval: 3h}\n")
    changed = cli.json("status")
    assert isinstance(changed, dict) and changed["squads"][0]["schedule"] == "every 3h"


def test_the_cached_folder_assigns_squads_and_refuses_twins_as_the_daemon_does(
    tmp_path: Path,
) -> None:
    from squad.daemon.configured import configured_squads
    from squad.daemon.definitions import assign_squads, list_definition_files, load_definition

    folder = tmp_path / "squads"
    folder.mkdir()
    (folder / "a.yaml").write_text(GOOD.format(name="alpha"))
    (folder / "b.yaml").write_text(GOOD.format(name="alpha"))  # a twin
    (folder / "c.yaml").write_text(GOOD.format(name="gamma"))
    (folder / "d.yaml").write_text("agents: [\n")
    owners = {"alpha": folder / "b.yaml"}
    loaded = {p: load_definition(p) for p in list_definition_files(folder)}
    squads, refused = assign_squads({p: d for p, d in loaded.items() if d.spec}, owners)
    failed = [d for d in loaded.values() if d.spec is None] + list(refused.values())
    expected = [d.to_dict() for d in sorted(failed, key=lambda d: d.path)]
    cache = tmp_path / "cache.json"
    for _ in range(2):  # validating, then from the cache
        configured, failures = configured_squads(folder, owners, cache=cache)
        assert {s["name"]: s["file"] for s in configured} == {
            name: str(d.path) for name, d in squads.items()
        }
        assert failures == expected
