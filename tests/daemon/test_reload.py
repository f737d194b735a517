"""Editing settings.yaml under a running daemon: what changes live, what waits for a restart,
and a bad edit that changes nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from squad.app import App
from squad.daemon.reload import LIVE_FIELDS, RESTART_FIELDS, compare
from squad.daemon.runqueue import RunQueue, RunRequest
from squad.daemon.service import Daemon
from squad.settings import Settings
from squad.store import Store
from tests.daemon.test_service import WAIT, events, squad_yaml, write_squad
from tests.support.waiting import wait_for


def load(tmp_path: Path, text: str | None = None) -> Settings:
    configs = tmp_path / "configs"
    configs.mkdir(exist_ok=True)
    settings_file = configs / "settings.yaml"
    if text is None:
        settings_file.unlink(missing_ok=True)
    else:
        settings_file.write_text(text)
    return Settings.load(
        {"SQUAD_HOME": str(tmp_path / "home"), "SQUAD_CONFIGS": str(configs)}, cwd=tmp_path
    )


def test_live_fields_are_applied_and_the_rest_waits_for_a_restart(tmp_path: Path) -> None:
    running = load(tmp_path)
    edited = load(
        tmp_path,
        "memory: {ranking: hashing}\n"
        "daemon:\n"
        "  max_concurrent_runs: 5\n"
        "  misfire_grace_s: 60\n"
        "  retention_cron: '0 4 * * *'\n"
        "  retention: {logs_days: 7}\n",
    )
    change = compare(running, edited)
    assert change.applied == (
        "daemon.retention_cron",
        "daemon.max_concurrent_runs",
        "daemon.retention",
    )
    assert change.restart_needed == ("memory.ranking", "daemon.misfire_grace_s")
    effective = change.effective
    assert effective.daemon.max_concurrent_runs == 5 and effective.daemon.retention.logs_days == 7
    assert effective.daemon.misfire_grace_s == running.daemon.misfire_grace_s
    assert effective.memory_ranking == running.memory_ranking == "lexical"
    assert set(LIVE_FIELDS).isdisjoint(RESTART_FIELDS)


def test_a_changed_http_section_needs_a_restart_and_keeps_the_bound_address(
    tmp_path: Path,
) -> None:
    running = load(tmp_path, "daemon: {http: {port: 8765}}\n")
    change = compare(running, load(tmp_path, "daemon: {http: {port: 9000, enabled: false}}\n"))
    assert change.restart_needed == ("daemon.http",)
    assert change.effective.daemon.http.port == 8765
    assert change.effective.daemon.http.enabled is True


def test_an_unchanged_file_changes_nothing(tmp_path: Path) -> None:
    text = "daemon: {max_concurrent_runs: 3}\n"
    change = compare(load(tmp_path, text), load(tmp_path, text))
    assert change.applied == () and change.restart_needed == ()


def test_a_larger_queue_starts_waiting_runs_and_a_smaller_one_starts_none_past_it() -> None:
    gates = {name: threading.Event() for name in "abcd"}
    started: list[str] = []
    lock = threading.Lock()

    def work(request: RunRequest) -> None:
        with lock:
            started.append(request.squad)
        gates[request.squad].wait(WAIT)

    queue = RunQueue(1, work)
    queue.start()
    try:
        for name in "abcd":
            queue.submit(RunRequest(name, "schedule"))
        wait_for(lambda: started == ["a"], "one run at a time")
        queue.resize(3)
        wait_for(lambda: sorted(started) == ["a", "b", "c"], "two more runs")
        queue.resize(1)
        gates["a"].set()
        gates["b"].set()
        wait_for(lambda: len(queue.snapshot()[0]) == 1, "down to one run")
        assert "d" not in started  # c still runs: no room under the new limit
        gates["c"].set()
        wait_for(lambda: "d" in started, "d once c is done")
        assert queue.limit == 1
        with pytest.raises(ValueError, match="at least 1"):
            queue.resize(0)
    finally:
        for gate in gates.values():
            gate.set()
        queue.close()
        assert queue.join(WAIT)


def test_a_running_daemon_applies_an_edited_settings_file(tmp_path: Path) -> None:
    settings = load(tmp_path)
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    with Store.open(settings.database_url) as store:
        daemon = Daemon(
            App.open(settings, store=store),
            heartbeat_s=0.2,
            debounce_s=0.1,
            reload_settings=lambda: _read(tmp_path),
        )
        codes: list[int] = []
        thread = threading.Thread(target=lambda: codes.append(daemon.run()))
        thread.start()
        try:
            wait_for(lambda: bool(events(settings, "ready")), "the daemon ready")
            (settings.configs / "settings.yaml").write_text(
                "daemon: {max_concurrent_runs: 4, extraction_cron: '*/5 * * * *'}\n"
            )
            before = daemon.state()["jobs"]["extraction"]["trigger"]
            wait_for(lambda: bool(events(settings, "settings_reloaded")), "the reload")
            state = daemon.state()
            assert state["max_concurrent_runs"] == 4
            assert "minute='0,10,20,30,40,50'" in before  # the default, */10
            assert "minute='0,5,10,15," in state["jobs"]["extraction"]["trigger"]
            assert "hour='3', minute='30'" in state["jobs"]["retention"]["trigger"]  # unchanged
            (settings.configs / "settings.yaml").write_text("daemon: {max_concurrent_runs: 0}\n")
            wait_for(lambda: bool(events(settings, "settings_error")), "the bad edit refused")
            assert daemon.state()["max_concurrent_runs"] == 4
            (settings.configs / "settings.yaml").write_text(
                "memory: {file_cap_kb: 10}\n"
                "daemon: {max_concurrent_runs: 4, extraction_cron: '*/5 * * * *'}\n"
            )
            wait_for(lambda: len(events(settings, "settings_reloaded")) == 2, "second reload")
            wait_for(
                lambda: daemon.state()["settings_restart_needed"] == ["memory.file_cap_kb"],
                "the restart reported",
            )
        finally:
            daemon.request_stop("test")
            thread.join(WAIT)
    assert codes == [0]
    first, second = events(settings, "settings_reloaded")
    assert first["applied"] == ["daemon.extraction_cron", "daemon.max_concurrent_runs"]
    assert "restart_needed" not in first
    assert second["restart_needed"] == ["memory.file_cap_kb"] and "applied" not in second
    (error,) = events(settings, "settings_error")
    assert "settings.yaml:1" in error["error"] and "max_concurrent_runs" in error["error"]


def _read(tmp_path: Path) -> Settings:
    return Settings.load(
        {"SQUAD_HOME": str(tmp_path / "home"), "SQUAD_CONFIGS": str(tmp_path / "configs")},
        cwd=tmp_path,
    )
