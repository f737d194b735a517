"""The daemon's catalog of squads under edits: schedules keep their rhythm, and a file that
breaks keeps its last good definition scheduled until it is fixed or removed.

Real files, a real APScheduler (its jobs far enough ahead that none fires during a test),
the real workspace manager and daemon log.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.clock import FrozenClock
from squad.daemon.catalog import SquadCatalog
from squad.daemon.eventlog import DaemonLog, read_daemon_log
from squad.daemon.scheduler import JobScheduler
from squad.settings import Settings
from tests.conftest import BASIC_YAML


def squad_yaml(name: str, schedule: str, goal: str = "Ship it.") -> str:
    text = BASIC_YAML.replace("name: demo", f"name: {name}").replace("Ship it.", goal)
    return text + f"schedule: {schedule}\n"


@dataclass
class Daemonish:
    """What the daemon wires around its catalog: folder, scheduler, log, fired squads."""

    folder: Path
    catalog: SquadCatalog
    scheduler: JobScheduler
    log: Path
    clock: FrozenClock
    app: App
    logger: DaemonLog

    def write(self, file: str, text: str) -> Path:
        path = self.folder / file
        path.write_text(text)
        return path

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in read_daemon_log(self.log) if e["event"] == kind]

    def next_fire(self, name: str) -> datetime | None:
        return self.scheduler.next_fire(name)

    def described(self, name: str) -> dict[str, Any]:
        (found,) = [s for s in self.catalog.describe(self.next_fire) if s["name"] == name]
        return found


@pytest.fixture
def daemon(settings: Settings, tmp_path: Path) -> Iterator[Daemonish]:
    folder = settings.squads_dir
    folder.mkdir(parents=True)
    clock = FrozenClock()
    log = DaemonLog(tmp_path / "daemon.jsonl", clock=clock)
    scheduler = JobScheduler(
        misfire_grace_s=60, on_error=lambda *_: None, on_missed=lambda *_: None
    )
    scheduler.start()
    with App.open(settings) as app:
        catalog = SquadCatalog(
            folder, app.squads, log, scheduler=scheduler, fire=lambda _: None, clock=clock
        )
        try:
            yield Daemonish(folder, catalog, scheduler, log.path, clock, app, log)
        finally:
            scheduler.shutdown()


def test_an_edit_that_keeps_the_schedule_keeps_the_next_fire(daemon: Daemonish) -> None:
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.write("b.yaml", squad_yaml("beta", "{cron: '0 9 * * 1-5'}"))
    daemon.catalog.reconcile(starting=True)
    alpha, beta = daemon.next_fire("alpha"), daemon.next_fire("beta")
    assert alpha is not None and beta is not None

    for goal in ("Ship it soon.", "Ship it today.", "Ship it now."):
        daemon.write("a.yaml", squad_yaml("alpha", "{interval: 24h}", goal=goal))
        daemon.write("b.yaml", squad_yaml("beta", "{cron: '0 9 * * 1-5'}", goal=goal))
        daemon.catalog.reconcile()
        assert (daemon.next_fire("alpha"), daemon.next_fire("beta")) == (alpha, beta)

    assert daemon.events("reschedule") == []
    updates = daemon.events("update")
    assert [(e["squad"], e["next_fire"]) for e in updates[:2]] == [
        ("alpha", alpha.astimezone(UTC).isoformat()),
        ("beta", beta.astimezone(UTC).isoformat()),
    ]
    assert len(updates) == 6
    assert daemon.catalog.get("alpha") is not None
    assert daemon.catalog.get("alpha").spec.goal == "Ship it now."  # type: ignore[union-attr]


def test_an_edit_that_changes_the_schedule_says_when_it_fires_next(daemon: Daemonish) -> None:
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 2d}"))
    daemon.catalog.reconcile()
    (event,) = daemon.events("reschedule")
    assert (event["schedule"], event["previous"]) == ("every 2d", "every 1d")
    fire = daemon.next_fire("alpha")
    assert fire is not None
    assert event["next_fire"] == fire.astimezone(UTC).isoformat()


def test_a_restart_keeps_an_intervals_rhythm(daemon: Daemonish, settings: Settings) -> None:
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    before = daemon.next_fire("alpha")
    again = JobScheduler(misfire_grace_s=60, on_error=lambda *_: None, on_missed=lambda *_: None)
    again.start()
    try:
        with App.open(settings) as app:
            log = DaemonLog(daemon.log, clock=daemon.clock)
            SquadCatalog(
                daemon.folder, app.squads, log, scheduler=again, fire=lambda _: None
            ).reconcile(starting=True)
        assert again.next_fire("alpha") == before
    finally:
        again.shutdown()


BROKEN = "name: alpha\nagents: [\n"


def test_a_file_that_breaks_keeps_its_last_good_definition_flagged_until_fixed(
    daemon: Daemonish,
) -> None:
    path = daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    fire = daemon.next_fire("alpha")
    assert daemon.described("alpha")["file_error"] is None

    broke_at = daemon.clock.advance(10)
    daemon.write("a.yaml", BROKEN)
    daemon.catalog.reconcile()
    daemon.clock.advance(10)
    daemon.write("a.yaml", BROKEN + "  - oops\n")  # still broken, broken differently
    daemon.catalog.reconcile()

    squad = daemon.catalog.get("alpha")
    assert squad is not None and squad.spec.goal == "Ship it."
    assert daemon.next_fire("alpha") == fire
    entry = daemon.described("alpha")
    assert entry["invalid_since"] == broke_at.isoformat()
    assert "a.yaml" in entry["file_error"]
    (failed,) = daemon.catalog.failed_files()
    assert (failed["file"], failed["running_last_good"]) == (str(path), "alpha")
    assert daemon.events("unschedule") == []
    (kept,) = daemon.events("keep_last_good")
    assert (kept["squad"], kept["file"]) == ("alpha", str(path))
    assert kept["next_fire"] == fire.astimezone(UTC).isoformat()  # type: ignore[union-attr]

    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}", goal="Ship it now."))
    daemon.catalog.reconcile()
    squad = daemon.catalog.get("alpha")
    assert squad is not None and squad.spec.goal == "Ship it now."
    assert (daemon.described("alpha")["file_error"], daemon.catalog.failed_files()) == (None, [])
    assert daemon.next_fire("alpha") == fire
    assert [e["squad"] for e in daemon.events("file_fixed")] == ["alpha"]


def test_a_file_broken_then_restored_byte_for_byte_is_no_longer_flagged(
    daemon: Daemonish,
) -> None:
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    daemon.write("a.yaml", BROKEN)
    daemon.catalog.reconcile()
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile()
    assert daemon.described("alpha")["invalid_since"] is None
    assert daemon.catalog.failed_files() == []


def test_a_broken_file_that_is_removed_unschedules_its_squad(daemon: Daemonish) -> None:
    path = daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    daemon.write("a.yaml", BROKEN)
    daemon.catalog.reconcile()
    path.unlink()
    daemon.catalog.reconcile()
    assert daemon.catalog.get("alpha") is None
    assert daemon.next_fire("alpha") is None
    (event,) = daemon.events("unschedule")
    assert (event["squad"], event["reason"]) == ("alpha", "file removed")


def test_a_file_broken_before_a_restart_runs_its_last_registered_definition(
    daemon: Daemonish, settings: Settings
) -> None:
    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    fire = daemon.next_fire("alpha")
    daemon.write("a.yaml", BROKEN)
    again = JobScheduler(misfire_grace_s=60, on_error=lambda *_: None, on_missed=lambda *_: None)
    again.start()
    try:
        with App.open(settings) as app:
            catalog = SquadCatalog(
                daemon.folder, app.squads, daemon.logger, scheduler=again, fire=lambda _: None
            )
            catalog.reconcile(starting=True)
            squad = catalog.get("alpha")
            assert squad is not None and squad.spec.goal == "Ship it."
            assert again.next_fire("alpha") == fire
            (entry,) = catalog.describe(again.next_fire)
            assert entry["file_error"] is not None
    finally:
        again.shutdown()


def test_a_queued_run_of_a_briefly_broken_file_runs_on_its_last_good_definition(
    daemon: Daemonish,
) -> None:
    from squad.daemon.runqueue import RunRequest
    from squad.daemon.runs import RunDispatcher

    daemon.write("a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon.catalog.reconcile(starting=True)
    runs = RunDispatcher(daemon.app, daemon.logger, lookup=daemon.catalog.get, workers=1)
    assert runs.submit(RunRequest("alpha", "schedule"))  # queued, not started yet
    daemon.write("a.yaml", BROKEN)
    daemon.catalog.reconcile()
    runs.queue.start()
    deadline = time.monotonic() + 120
    while not runs.queue.idle():
        assert time.monotonic() < deadline, "the queued run never ended"
        time.sleep(0.05)
    runs.queue.close()
    assert runs.queue.join(timeout=120)
    assert daemon.events("run_dropped") == []
    (end,) = daemon.events("run_end")
    assert (end["squad"], end["status"]) == ("alpha", "succeeded")
