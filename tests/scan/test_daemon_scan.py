"""The daemon scans stored text once after the detector changes, in the background."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from squad.app import App
from squad.daemon.service import Daemon
from squad.scan import STATE_FILE, last_scanned, needs_scan
from squad.settings import Settings
from squad.text.secrets import detector_version
from tests.daemon.test_service import WAIT, events
from tests.scan.seed import files_holding, needles, seed_home
from tests.support.waiting import wait_for


def _run_daemon(settings: Settings, until: Callable[[], bool], what: str) -> None:
    with App.open(settings) as app:
        daemon = Daemon(app, heartbeat_s=0.2, debounce_s=0.1)
        codes: list[int] = []
        thread = threading.Thread(target=lambda: codes.append(daemon.run()))
        thread.start()
        try:
            wait_for(until, what)
        finally:
            daemon.request_stop("test")
            thread.join(WAIT)
    assert codes == [0]


def _scan_events(settings: Settings, kind: str) -> list[dict[str, object]]:
    return [e for e in events(settings, kind) if e.get("job") == "secrets_scan"]


def test_the_daemon_scans_with_fix_once_after_the_detector_changes_and_not_again(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seed_home(settings, monkeypatch)
    (settings.home / STATE_FILE).write_text(json.dumps({"detector": "an-older-detector"}))
    assert needs_scan(settings.home)

    _run_daemon(settings, lambda: bool(_scan_events(settings, "job_end")), "the scan's end")

    (end,) = _scan_events(settings, "job_end")
    report = end["report"]
    assert isinstance(report, dict)
    assert report["found"] == report["fixed"] > 0 and report["remaining"] == 0
    assert report["recorded"] is True and report["detector"] == detector_version()
    assert last_scanned(settings.home) == detector_version()
    assert files_holding(tmp_path, needles()) == {}

    _run_daemon(settings, lambda: len(events(settings, "ready")) == 2, "the second start")

    assert len(_scan_events(settings, "job_start")) == 1
    assert len(events(settings, "start")) == 2
