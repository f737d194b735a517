"""``squad memory scan`` through the installed console script: output, JSON and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from squad.settings import Settings
from tests.cli.test_cli import Cli
from tests.scan.seed import LEAKS, SQUAD, files_holding, needles, seed_home

pytestmark = pytest.mark.slow


def test_scan_reports_without_values_exits_one_then_fix_exits_zero_and_a_rerun_is_clean(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seed_home(settings, monkeypatch)
    cli = Cli(tmp_path)

    found = cli("memory", "scan")
    assert found.returncode == 1, found.stderr
    assert f"found: {SQUAD}: agents/writer/memory.md line 8: github_token" in found.stdout
    assert "`squad memory scan --fix` redacts them" in found.stdout
    assert "git history (.git) still holds" in found.stdout
    as_json = cli("memory", "scan", "--squad", SQUAD, "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert report["remaining"] == report["found"] > 0 and report["squads"] == [SQUAD]
    for value in needles():
        assert value not in found.stdout + found.stderr + as_json.stdout

    fixed = cli("memory", "scan", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert f"redacted: {SQUAD}: agents/writer/memory.md line 8: github_token" in fixed.stdout
    assert f"committed: {SQUAD} " in fixed.stdout
    assert not any(value in fixed.stdout for value in needles())
    assert files_holding(tmp_path, needles()) == {}

    again = cli("memory", "scan", "--fix")
    assert again.returncode == 0 and "no credentials found" in again.stdout
    assert LEAKS["memory"] not in again.stdout


def test_scan_of_an_unknown_squad_exits_two_with_a_clear_message(tmp_path: Path) -> None:
    cli = Cli(tmp_path)

    result = cli("memory", "scan", "--squad", "nope", "--fix")

    assert result.returncode == 2
    assert "no squad or workspace named 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
